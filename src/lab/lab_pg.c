/* lab_pg.c — the private PostgreSQL server of a lab run with `--store
 * postgres`: initdb and pg_ctl (the newest /usr/lib/postgresql/VERSION/bin)
 * run from an argv, never a shell; as root they run as VG_LAB_PG_USER, the
 * owner of DIR/pg (PostgreSQL refuses root).  The server listens on a unix
 * socket in DIR/pg only (no TCP) and carries the lab's tag like every daemon;
 * `lab down` stops it with pg_ctl stop -m fast. */
#include "lab/lab.h"
#include "util/rootfs.h"
#include "util/spawn.h"
#include "util/strutil.h"
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PG_ROOT "/usr/lib/postgresql"
#define PG_START_S 30
#define PLEN 1024

int vg_lab_pg_bin(char *out, size_t n)
{
    char **names;
    int k = vg_list_dir(NULL, PG_ROOT, &names);
    long best = -1;
    for (int i = 0; i < k; i++) {
        long v;
        char probe[PLEN];
        snprintf(probe, sizeof probe, "%s/%s/bin/initdb", PG_ROOT, names[i]);
        if (vg_parse_long(names[i], &v) && v > best && access(probe, X_OK) == 0) {
            best = v;
            snprintf(out, n, "%s/%s/bin", PG_ROOT, names[i]);
        }
    }
    if (k > 0) vg_free_list(names, k);
    return best >= 0 ? 0 : -1;
}

/* Runs a PostgreSQL program (bin/NAME, then args) as the server's owner; its
 * output on failure into err. */
static int pg_run(const char *bin, const char *name, const char *const args[], const char *const env[], int timeout_s,
                  char *err, size_t errlen)
{
    char prog[PLEN];
    snprintf(prog, sizeof prog, "%s/%s", bin, name);
    const char *argv[24];
    int k = 0;
    if (geteuid() == 0) argv[k++] = "runuser", argv[k++] = "-u", argv[k++] = VG_LAB_PG_USER, argv[k++] = "--";
    argv[k++] = prog;
    for (int i = 0; args[i] && k < 23; i++) argv[k++] = args[i];
    argv[k] = NULL;
    struct vg_spawn_result r;
    int rc = vg_spawn(argv, env, NULL, timeout_s * 1000, &r);
    if (rc || r.status) {
        char *msg = r.err_len ? r.err : r.out;
        snprintf(err, errlen, "%s: %s%s", name, r.timed_out ? "timed out: " : "",
                 msg && *msg ? vg_trim(msg) : "failed (no output)");
        rc = -1;
    }
    vg_spawn_result_free(&r);
    return rc;
}

void vg_lab_pg_conninfo(const char *dir, char *out, size_t n)
{
    snprintf(out, n, "host=%s/pg user=vigil dbname=postgres", dir);
}

int vg_lab_pg_start(const char *dir, const char *const env[], pid_t *pid, char *err, size_t errlen)
{
    char bin[PLEN], pg[PLEN], data[PLEN], log[PLEN], opts[PLEN + 128];
    if (vg_lab_pg_bin(bin, sizeof bin))
        return snprintf(err, errlen, "--store postgres: no PostgreSQL server under %s (Debian package postgresql)",
                        PG_ROOT), -1;
    snprintf(pg, sizeof pg, "%.900s/pg", dir);   /* the lab directory is at most 400 bytes */
    snprintf(data, sizeof data, "%.900s/data", pg);
    snprintf(log, sizeof log, "%.900s/server.log", pg);
    if (mkdir(pg, 0755)) return snprintf(err, errlen, "%s: %s", pg, strerror(errno)), -1;
    if (geteuid() == 0) {
        struct passwd *pw = getpwnam(VG_LAB_PG_USER);
        if (!pw) return snprintf(err, errlen, "--store postgres: no user %s to run PostgreSQL as", VG_LAB_PG_USER), -1;
        if (chown(pg, pw->pw_uid, pw->pw_gid)) return snprintf(err, errlen, "%s: %s", pg, strerror(errno)), -1;
    }
    const char *init[] = { "-D", data, "-U", "vigil", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C", NULL };
    if (pg_run(bin, "initdb", init, env, PG_START_S, err, errlen)) return -1;
    /* the lab's controllers and their followers: a few connections each */
    snprintf(opts, sizeof opts, "-k %s -c listen_addresses= -c fsync=off -c full_page_writes=off -c max_connections=100",
             pg);
    char t[16];
    snprintf(t, sizeof t, "%d", PG_START_S);
    const char *start[] = { "-D", data, "-l", log, "-w", "-t", t, "-o", opts, "start", NULL };
    if (pg_run(bin, "pg_ctl", start, env, PG_START_S + 10, err, errlen)) return -1;
    char line[64] = "", pidfile[PLEN];
    long p = 0;
    snprintf(pidfile, sizeof pidfile, "%.900s/postmaster.pid", data);
    if (vg_read_line(NULL, pidfile, line, sizeof line) || !vg_parse_long(line, &p) || p <= 1)
        return snprintf(err, errlen, "%s: no server pid after pg_ctl start", pidfile), -1;
    *pid = (pid_t)p;
    return 0;
}

int vg_lab_pg_stop(const char *dir, char *err, size_t errlen)
{
    char bin[PLEN], data[PLEN], pidfile[PLEN];
    snprintf(data, sizeof data, "%.900s/pg/data", dir);
    snprintf(pidfile, sizeof pidfile, "%.900s/postmaster.pid", data);
    if (access(pidfile, F_OK)) return 0;   /* never started, or already stopped */
    if (vg_lab_pg_bin(bin, sizeof bin))
        return snprintf(err, errlen, "%s: a PostgreSQL server runs from it but none is installed under %s", data,
                        PG_ROOT), -1;
    char t[16];
    snprintf(t, sizeof t, "%d", PG_START_S);
    const char *stop[] = { "-D", data, "-m", "fast", "-w", "-t", t, "stop", NULL };
    return pg_run(bin, "pg_ctl", stop, NULL, PG_START_S + 10, err, errlen);
}
