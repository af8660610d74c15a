/* lab_down.c — `vigil lab down` and what `status`/`env` read: the lab's
 * marker, the daemons it recorded, the processes carrying its tag, and the
 * teardown (every checked PID: SIGTERM, grace, SIGKILL; then the directory). */
#include "lab/lab.h"
#include "util/log.h"
#include "util/proc.h"
#include "util/rootfs.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <errno.h>
#include <limits.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* slurmctld with running jobs on its books does not finish its SIGTERM
 * shutdown within seconds; the lab's state is thrown away, so it is killed */
#define DOWN_GRACE_MS 2000
#define DOWN_KILL_MS 5000

bool vg_lab_is_lab(const char *dir)
{
    char *p = vg_root_path(dir, "/" VG_LAB_MARKER);
    bool ok = access(p, F_OK) == 0;
    free(p);
    return ok;
}

int vg_lab_info(const char *dir, struct vg_lab_info *info)
{
    memset(info, 0, sizeof *info);
    char *text;
    if (vg_read_file(dir, "/" VG_LAB_MARKER, 1 << 16, &text, NULL)) return -1;
    vg_strlcpy(info->dir, dir, sizeof info->dir);
    char *save = NULL;
    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char *eq = strchr(l, '=');
        long v = 0;
        if (!eq) continue;
        *eq++ = 0;
        if (!strcmp(l, "conf")) vg_strlcpy(info->conf, eq, sizeof info->conf);
        if (!strcmp(l, "controller")) vg_strlcpy(info->controller, eq, sizeof info->controller);
        if (!strcmp(l, "tools")) vg_strlcpy(info->tools, eq, sizeof info->tools);
        if (!strcmp(l, "gpu")) vg_strlcpy(info->gpu, eq, sizeof info->gpu);
        if (!strcmp(l, "store")) vg_strlcpy(info->store, eq, sizeof info->store);
        if (!vg_parse_long(eq, &v) || v < 0 || v > 1000000) continue;
        if (!strcmp(l, "nodes")) info->nodes = (int)v;
        else if (!strcmp(l, "spares")) info->spares = (int)v;
        else if (!strcmp(l, "rack_size")) info->rack_size = (int)v;
        else if (!strcmp(l, "port_base")) info->port_base = (int)v;
        else if (!strcmp(l, "gpus")) info->gpus = (int)v;
        else if (!strcmp(l, "nvl72")) info->nvl72 = v != 0;
        else if (!strcmp(l, "controllers")) info->controllers = (int)v;
    }
    free(text);
    if (!info->gpu[0]) vg_strlcpy(info->gpu, "nvidia", sizeof info->gpu);   /* a lab from before --gpu */
    if (!info->store[0]) vg_strlcpy(info->store, "sqlite", sizeof info->store);   /* from before --store */
    if (!info->controllers) info->controllers = info->controller[0] ? 1 : 0;
    return info->nodes > 0 && info->conf[0] ? 0 : -1;
}

int vg_lab_canon_dir(const char *dir, char *out, size_t n)
{
    char path[PATH_MAX], real[PATH_MAX];
    size_t l = strlen(dir);
    if (!l || l >= sizeof path) return errno = l ? ENAMETOOLONG : ENOENT, -1;
    memcpy(path, dir, l + 1);
    while (l > 1 && path[l - 1] == '/') path[--l] = 0;
    if (realpath(path, real)) return vg_strlcpy(out, real, n) < n ? 0 : (errno = ENAMETOOLONG, -1);
    if (errno != ENOENT) return -1;
    /* not there yet (`up` makes it): its parent resolved, and its own name */
    char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    if (!strcmp(name, ".") || !strcmp(name, "..")) return errno = ENOENT, -1;
    if (slash == path) strcpy(real, "/");
    else {
        if (slash) *slash = 0;
        if (!realpath(slash ? path : ".", real)) return -1;
    }
    int k = snprintf(out, n, "%s/%s", strcmp(real, "/") ? real : "", name);
    return k > 0 && (size_t)k < n ? 0 : (errno = ENAMETOOLONG, -1);
}

/* Whether pid carries the tag of the lab in dir (canonical): the tag as this
 * lab writes it, or another spelling of the same directory (a trailing slash,
 * a symbolic link: labs started before --dir was made canonical). */
static bool tagged_for(pid_t pid, const char *dir)
{
    char v[PATH_MAX], c[PATH_MAX];
    if (vg_proc_env(pid, VG_LAB_TAG, v, sizeof v)) return false;
    return !strcmp(v, dir) || (vg_lab_canon_dir(v, c, sizeof c) == 0 && !strcmp(c, dir));
}

int vg_lab_daemons(const char *dir, struct vg_lab_daemon **d, size_t *n)
{
    *d = NULL;
    *n = 0;
    char *text;
    if (vg_read_file(dir, "/run/daemons", 1 << 20, &text, NULL)) return errno == ENOENT ? 0 : -1;
    char *save = NULL;
    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char *f[3];
        long pid;
        if (vg_split(l, " ", f, 3) != 3 || !vg_parse_long(f[2], &pid) || pid <= 1) continue;
        *d = vg_xrealloc(*d, (*n + 1) * sizeof **d);
        struct vg_lab_daemon *x = &(*d)[(*n)++];
        memset(x, 0, sizeof *x);
        vg_strlcpy(x->name, f[0], sizeof x->name);
        if (strcmp(f[1], "-")) vg_strlcpy(x->node, f[1], sizeof x->node);
        x->pid = (pid_t)pid;
        /* the tag guards against a recycled PID */
        x->alive = vg_proc_alive(x->pid) && tagged_for(x->pid, dir);
    }
    free(text);
    return 0;
}

size_t vg_lab_controllers(const char *dir, struct vg_lab_ctl *c, size_t max)
{
    struct vg_lab_info info;
    struct vg_lab_daemon *d = NULL;
    size_t nd = 0, n = 0;
    if (vg_lab_info(dir, &info) || vg_lab_daemons(dir, &d, &nd)) return 0;
    for (const char *p = info.controller; *p && n < max; p += *p == ',') {
        size_t len = strcspn(p, ",");
        char ck[24] = "";   /* the first is of no node ("-"), the others "c2", … */
        memset(&c[n], 0, sizeof c[n]);
        snprintf(c[n].url, sizeof c[n].url, "%.*s", (int)len, p);
        if (n) snprintf(ck, sizeof ck, "c%zu", n + 1);
        p += len;
        for (size_t k = 0; k < nd; k++)   /* restarted: its latest record */
            if (!strcmp(d[k].name, "serve") && !strcmp(d[k].node, ck)) c[n].pid = d[k].pid, c[n].alive = d[k].alive;
        n++;
    }
    free(d);
    return n;
}

/* A lab process: it carries the tag, or it is a slurmstepd writing to the
 * lab's logs (slurmstepd's setproctitle wipes most of its environment block,
 * tag included, from /proc/<pid>/environ). */
static bool is_lab_proc(pid_t pid, const char *dir)
{
    if (!vg_proc_alive(pid)) return false;
    if (tagged_for(pid, dir)) return true;
    char comm[32];
    return vg_proc_comm(pid, comm, sizeof comm) == 0 && !strcmp(comm, "slurmstepd") &&
           vg_proc_has_fd_under(pid, dir);
}

int vg_lab_tagged(const char *dir, pid_t **pids, size_t *n)
{
    *pids = NULL;
    *n = 0;
    pid_t *all;
    int na = vg_proc_list(&all);
    if (na < 0) return -1;
    for (int i = 0; i < na; i++)
        if (is_lab_proc(all[i], dir)) {
            *pids = vg_xrealloc(*pids, (*n + 1) * sizeof **pids);
            (*pids)[(*n)++] = all[i];
        }
    free(all);
    return 0;
}

static bool in(const pid_t *set, size_t n, pid_t p)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == p) return true;
    return false;
}

/* The lab's processes: its daemons and slurmstepds, and all their live
 * descendants (a job's tasks need not carry the tag); never the caller or its
 * ancestors.  gentle[i] is true for the daemons (tagged, not slurmstepd): they
 * get SIGTERM first; job processes are simply killed. */
static size_t lab_procs(const char *dir, pid_t **out, bool **gentle)
{
    size_t n;
    vg_lab_tagged(dir, out, &n);
    size_t ntagged = n;
    pid_t *all;
    int na = vg_proc_list(&all);
    pid_t *ppid = vg_xcalloc(na > 0 ? (size_t)na : 1, sizeof *ppid);
    for (int i = 0; i < na; i++) ppid[i] = vg_proc_alive(all[i]) ? vg_proc_ppid(all[i]) : -1;
    for (bool grew = true; grew;) {
        grew = false;
        for (int i = 0; i < na; i++)
            if (ppid[i] > 1 && in(*out, n, ppid[i]) && !in(*out, n, all[i])) {
                *out = vg_xrealloc(*out, (n + 1) * sizeof **out);
                (*out)[n++] = all[i];
                grew = true;
            }
    }
    free(ppid);
    free(all);
    *gentle = vg_xcalloc(n + 1, sizeof **gentle);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (vg_proc_is_self_or_ancestor((*out)[i])) continue;
        char comm[32] = "";
        vg_proc_comm((*out)[i], comm, sizeof comm);
        (*gentle)[k] = i < ntagged && strcmp(comm, "slurmstepd");
        (*out)[k++] = (*out)[i];
    }
    return k;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return (flag == FTW_DP ? rmdir(path) : unlink(path)) && errno != ENOENT ? -1 : 0;
}

/* Whether the daemon d still runs: its pid is alive under the same name. */
static bool still_runs(const struct vg_lab_daemon *d)
{
    char comm[32] = "";
    return d->alive && vg_proc_alive(d->pid) && vg_proc_comm(d->pid, comm, sizeof comm) == 0 &&
           !strncmp(comm, d->name, 15);
}

/* Waits until every daemon the lab started has exited, SIGKILLing any left
 * when the grace is over; -1 when one survives the bound. */
static int wait_daemons(const char *dir, struct vg_lab_daemon *d, size_t n, int64_t start, char *err, size_t errlen)
{
    for (;;) {
        size_t left = 0, first = 0;
        for (size_t i = 0; i < n; i++)
            if (still_runs(&d[i]) && left++ == 0) first = i;
        if (!left) return 0;
        int64_t t = vg_mono_ms() - start;
        if (t > DOWN_GRACE_MS + DOWN_KILL_MS)
            return snprintf(err, errlen, "%s: %s (pid %d) survives SIGKILL", dir, d[first].name, (int)d[first].pid), -1;
        if (t > DOWN_GRACE_MS)
            for (size_t i = 0; i < n; i++)
                if (still_runs(&d[i])) kill(d[i].pid, SIGKILL);
        vg_sleep_ms(20);
    }
}

/* A daemon the lab started that still runs from dir after the teardown: alive
 * with the lab's tag (however spelled) or a file open under dir.  Names the
 * first in err; -1, or 0 when none does. */
static int still_running(const char *dir, const struct vg_lab_daemon *d, size_t n, char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        pid_t p = d[i].pid;
        if (!vg_proc_alive(p) || vg_proc_is_self_or_ancestor(p)) continue;
        if (tagged_for(p, dir) || vg_proc_has_fd_under(p, dir))
            return snprintf(err, errlen, "%s: %s%s%s (pid %d) still runs from it; not removed (stop it, then run "
                                         "`vigil lab down --dir %s` again)", dir, d[i].name, d[i].node[0] ? " of " : "",
                            d[i].node, (int)p, dir), -1;
    }
    return 0;
}

int vg_lab_down(const char *given, char *err, size_t errlen)
{
    err[0] = 0;
    if (!given || !*given) given = VG_LAB_DEFAULT_DIR;
    char dir[PATH_MAX];
    if (vg_lab_canon_dir(given, dir, sizeof dir) || access(dir, F_OK))
        return snprintf(err, errlen, "%s: not a vigil lab (%s); nothing to take down", given, strerror(errno)), -2;
    if (!vg_lab_is_lab(dir))
        return snprintf(err, errlen, "%s: not a vigil lab (no %s marker); refusing to touch it", dir,
                        VG_LAB_MARKER), -2;
    /* its PostgreSQL server first, the way it is meant to stop (the controllers on it follow) */
    char pgerr[512];
    if (vg_lab_pg_stop(dir, pgerr, sizeof pgerr)) vg_warn("lab down: %s; killing it", pgerr);
    int64_t start = vg_mono_ms();
    /* the daemons it started, by pid: waited for below even once their
     * environment (the tag) can no longer be read while they exit */
    struct vg_lab_daemon *dm = NULL;
    size_t ndm = 0;
    if (vg_lab_daemons(dir, &dm, &ndm)) ndm = 0;
    pid_t *termed = NULL;   /* SIGTERM once each, SIGKILL after the grace */
    size_t nt = 0;
    for (;;) {
        pid_t *p;
        bool *gentle;
        size_t n = lab_procs(dir, &p, &gentle);
        if (!n) { free(p); free(gentle); break; }
        int64_t t = vg_mono_ms() - start;
        if (t > DOWN_GRACE_MS + DOWN_KILL_MS) {
            snprintf(err, errlen, "%s: %zu processes survive SIGKILL (first pid %d)", dir, n, (int)p[0]);
            free(p);
            free(gentle);
            free(termed);
            free(dm);
            return -1;
        }
        for (size_t i = 0; i < n; i++) {
            if (t > DOWN_GRACE_MS || !gentle[i]) {
                if (gentle[i]) {
                    char comm[32] = "?";
                    vg_proc_comm(p[i], comm, sizeof comm);
                    vg_info("lab down: %s (pid %d) outlived SIGTERM by %d ms; killing it", comm, (int)p[i],
                            DOWN_GRACE_MS);
                }
                kill(p[i], SIGKILL);
            }
            else if (!in(termed, nt, p[i])) {
                kill(p[i], SIGTERM);
                termed = vg_xrealloc(termed, (nt + 1) * sizeof *termed);
                termed[nt++] = p[i];
            }
        }
        free(p);
        free(gentle);
        vg_sleep_ms(50);
    }
    free(termed);
    int rc = wait_daemons(dir, dm, ndm, start, err, errlen);
    if (!rc) rc = still_running(dir, dm, ndm, err, errlen);
    free(dm);
    if (rc) return rc;
    if (nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS))
        return snprintf(err, errlen, "%s: cannot remove: %s", dir, strerror(errno)), -1;
    return 0;
}

char *vg_lab_env(const char *dir)
{
    struct vg_lab_info info;
    struct sbuf b = SBUF_INIT;
    if (vg_lab_info(dir, &info)) return sbuf_take(&b);
    sbuf_printf(&b, "export SLURM_CONF=%s\nexport VIGIL_LAB=%s\n", info.conf, dir);
    if (info.controller[0]) sbuf_printf(&b, "export VIGIL_CONTROLLER=%s\n", info.controller);
    char tok[256], *tp = NULL;
    if (asprintf(&tp, "%s/etc/read.token", dir) > 0 && vg_read_line(NULL, tp, tok, sizeof tok) == 0 && tok[0])
        sbuf_printf(&b, "export VIGIL_READ_TOKEN=%s\n", tok); /* the controller's read token (hex) */
    free(tp);
    /* the burn-in's stand-in tools first on PATH: `vigil burnin --lab` runs them as each node */
    if (info.tools[0] && !strchr(info.tools, '\'')) sbuf_printf(&b, "export PATH='%s':\"$PATH\"\n", info.tools);
    return sbuf_take(&b);
}

const char *vg_lab_resolve_dir(const char *dir, char *buf, size_t n)
{
    const char *env = getenv("VIGIL_LAB");
    if (!dir || !*dir) dir = env && *env ? env : VG_LAB_DEFAULT_DIR;
    if (vg_lab_canon_dir(dir, buf, n)) {   /* its parent is missing too: not a lab, as given */
        size_t l = vg_strlcpy(buf, dir, n);
        while (l > 1 && l < n && buf[l - 1] == '/') buf[--l] = 0;
    }
    return buf;
}

pid_t vg_lab_node_daemon(const char *dir, const char *node)
{
    struct vg_lab_daemon *d;
    size_t n;
    pid_t pid = 0;
    if (vg_lab_daemons(dir, &d, &n)) return 0;
    for (size_t i = 0; i < n && !pid; i++)
        if (d[i].alive && !strcmp(d[i].node, node) && !strcmp(d[i].name, "slurmd")) pid = d[i].pid;
    free(d);
    return pid;
}
