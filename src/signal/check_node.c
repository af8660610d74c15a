/* check_node.c — node-level checks read from /proc and /sys (no helper
 * programs): `driver` (the loaded NVIDIA kernel module's version, and whether
 * NVML reports the same one), `mount` (a path is a mount point, optionally of
 * a type / read-write; with no config, every /etc/fstab entry not marked
 * noauto) and `service` (a process of that name runs: /proc/<pid>/comm,
 * never systemctl).
 *   * || driver version=535.183.01 nvml=match
 *   * || mount /scratch fstype=nfs4 mode=rw
 *   * || service munged slurmd */
#include "signal/checks.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- driver ---- */

/* The loaded driver's version into buf; false when no driver is loaded. */
static bool driver_version(const char *root, char *buf, size_t n)
{
    if (vg_read_line(root, "/sys/module/nvidia/version", buf, n) == 0 && buf[0]) return true;
    char line[512];
    if (vg_read_line(root, "/proc/driver/nvidia/version", line, sizeof line) < 0) return false;
    /* "NVRM version: NVIDIA UNIX [Open ]Kernel Module [for x86_64]  535.183.01  Release Build …" */
    char *m = strstr(line, "Module");
    char *f[32];
    int nf = vg_split(m ? m : line, " \t", f, 32);
    for (int i = 0; i < nf; i++)
        if (isdigit((unsigned char)f[i][0]) && strchr(f[i], '.')) {
            vg_strlcpy(buf, f[i], n);
            return true;
        }
    return false;
}

static const char *const driver_keys[] = { "version=*", "nvml=match", NULL };

/* nvml=match: the driver version the NVIDIA vendor's library reports (the
 * user-space side) is the loaded kernel module's.  They differ after a
 * driver update without a reboot, and then the library's init itself fails
 * (an RM version mismatch).  Runs in the line's watchdog child, so a hung
 * library costs the deadline only. */
static void driver_nvml(const struct vg_check_ctx *ctx, const struct vg_check_line *l, bool loaded, const char *mod,
                        struct vg_check_results *out)
{
    const struct vg_gpu_vendor *b = NULL;
    for (const struct vg_gpu_vendor *const *v = ctx->vendors ? ctx->vendors : vg_gpu_vendors; *v && !b; v++)
        if ((*v)->kmod && strcmp((*v)->kmod, "nvidia") == 0) b = *v;
    if (!b) {
        vg_check_add(out, l, false, "driver nvml", "no GPU vendor of the nvidia kernel module is built in");
        return;
    }
    char err[256] = "", lib[80] = "";
    bool up = b->open(err, sizeof err) == 0;
    bool got = up && b->driver_version && b->driver_version(lib, sizeof lib) == 0;
    if (up) b->close();
    if (!got) {
        if (up) snprintf(err, sizeof err, "%s did not report the driver version", b->source);
        vg_check_add(out, l, false, "driver nvml", "%s%s%s", err, loaded ? "; kernel module " : "", loaded ? mod : "");
    } else if (!loaded)
        vg_check_add(out, l, true, "driver nvml", "%s from %s (no /sys/module/nvidia/version to compare)", lib,
                     b->source);
    else
        vg_check_add(out, l, strcmp(lib, mod) == 0, "driver nvml", "%s reports %s, the kernel module is %s", b->source, lib,
                     mod);
}

static void driver_run(const struct vg_check_ctx *ctx, const struct vg_check_line *l, struct vg_check_results *out)
{
    char v[64] = "";
    const char *want = vg_check_get(l, "version");
    bool loaded = driver_version(ctx->root, v, sizeof v), nvml = vg_check_get(l, "nvml") != NULL;
    if (nvml) driver_nvml(ctx, l, loaded, v, out);
    if (nvml && !want) return;
    if (!loaded) {
        vg_check_add(out, l, false, "driver", "no NVIDIA driver loaded (/sys/module/nvidia/version)");
        return;
    }
    /* a bare `driver`: a driver is loaded */
    vg_check_add(out, l, !want || strcmp(v, want) == 0, "driver version", "%s%s%s", v, want ? ", expected " : "",
                 want ? want : "");
}

/* With no config: the kernel module and NVML agree, wherever either of them
 * is there (a node with neither has no NVIDIA driver to check). */
static void driver_defaults(const struct vg_check_ctx *ctx, struct sbuf *out)
{
    char v[64];
    const struct vg_gpu_probe_vendor *nv = ctx->gpus ? vg_gpu_probe_vendor(ctx->gpus, "nvidia") : NULL;
    if (driver_version(ctx->root, v, sizeof v) || (nv && nv->driver[0]))
        sbuf_puts(out, "* || driver nvml=match\n");
}

static void driver_init(const struct vg_check_ctx *ctx, struct sbuf *out)
{
    char v[64];
    if (driver_version(ctx->root, v, sizeof v)) sbuf_printf(out, "* || driver version=%s\n", v);
}

const struct vg_check vg_check_driver = {
    .name = "driver", .keys = driver_keys, .run = driver_run, .init = driver_init, .defaults = driver_defaults,
};

/* ---- mount ---- */

/* Undoes /proc/mounts' octal escapes (\040 = space) in place. */
static void unescape(char *s)
{
    char *o = s;
    for (; *s; s++) {
        if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
            *o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
            s += 3;
        } else
            *o++ = *s;
    }
    *o = 0;
}

struct mnt {
    char path[256], type[32], opts[256];
};

/* The last mount of path in /proc/mounts (the one visible); false when none. */
static bool find_mount(const char *root, const char *path, struct mnt *m)
{
    char *data;
    if (vg_read_file(root, "/proc/mounts", 1 << 22, &data, NULL) < 0) return false;
    char want[256];
    vg_strlcpy(want, path, sizeof want);
    for (size_t l = strlen(want); l > 1 && want[l - 1] == '/'; l--) want[l - 1] = 0;
    bool found = false;
    char *save = NULL;
    for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *f[6];
        if (vg_split(line, " ", f, 6) < 4) continue;
        unescape(f[1]);
        if (strcmp(f[1], want) != 0) continue;
        vg_strlcpy(m->path, f[1], sizeof m->path);
        vg_strlcpy(m->type, f[2], sizeof m->type);
        vg_strlcpy(m->opts, f[3], sizeof m->opts);
        found = true;
    }
    free(data);
    return found;
}

static const char *const mount_keys[] = { "fstype=*", "mode=ro|rw", NULL };

static void mount_run(const struct vg_check_ctx *ctx, const struct vg_check_line *l, struct vg_check_results *out)
{
    struct mnt m;
    char name[96];
    snprintf(name, sizeof name, "mount %s", l->words[0]);
    if (!find_mount(ctx->root, l->words[0], &m)) {
        vg_check_add(out, l, false, name, "%s is not mounted", l->words[0]);
        return;
    }
    const char *type = vg_check_get(l, "fstype"), *mode = vg_check_get(l, "mode");
    bool rw = strcmp(m.opts, "rw") == 0 || vg_startswith(m.opts, "rw,");
    bool ok = (!type || strcmp(type, m.type) == 0) && (!mode || (strcmp(mode, "rw") == 0) == rw);
    vg_check_add(out, l, ok, name, "%s mounted (%s, %s)%s%s%s%s", m.path, m.type, rw ? "rw" : "ro",
                 type ? ", expected " : "", type ? type : "", mode ? ", expected " : "", mode ? mode : "");
}

static void mount_init(const struct vg_check_ctx *ctx, struct sbuf *out)
{
    /* Shared file systems only: local ones are the OS's business. */
    static const char *const shared[] = { "nfs", "nfs4", "lustre", "gpfs", "beegfs", "wekafs", "cifs", NULL };
    char *data;
    if (vg_read_file(ctx->root, "/proc/mounts", 1 << 22, &data, NULL) < 0) return;
    char *save = NULL;
    for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *f[6];
        if (vg_split(line, " ", f, 6) < 4) continue;
        for (int i = 0; shared[i]; i++)
            if (!strcmp(f[2], shared[i]) && !strchr(f[1], '"') && !strchr(f[1], '\\'))
                sbuf_printf(out, "* || mount %s fstype=%s\n", f[1], f[2]);
    }
    free(data);
}

/* With no config: every /etc/fstab entry that is mounted at boot (not
 * noauto; not swap) must be mounted now.  fstab escapes blanks as \040, like
 * /proc/mounts. */
static void mount_defaults(const struct vg_check_ctx *ctx, struct sbuf *out)
{
    char *data;
    if (vg_read_file(ctx->root, "/etc/fstab", 1 << 20, &data, NULL) < 0) return;
    char *save = NULL;
    for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *f[8], *t = vg_trim(line);
        if (*t == '#') continue;
        for (char *c = t; *c; c++)
            if (*c == '\t') *c = ' ';
        /* fields are split by runs of blanks: vg_split keeps empty ones, so drop them */
        char *raw[32];
        int nr = vg_split(t, " ", raw, 32), nf = 0;
        for (int i = 0; i < nr && nf < 8; i++)
            if (*raw[i]) f[nf++] = raw[i];
        if (nf < 3 || f[1][0] != '/' || !strcmp(f[2], "swap")) continue;
        bool noauto = false;
        if (nf >= 4) {
            char *o[64];
            int no = vg_split(f[3], ",", o, 64);
            for (int i = 0; i < no; i++) noauto |= !strcmp(o[i], "noauto");
        }
        if (noauto) continue;
        unescape(f[1]);
        if (strchr(f[1], '"') || strchr(f[1], '\\')) continue;   /* not writable as a config word */
        sbuf_printf(out, strchr(f[1], ' ') ? "* || mount \"%s\"\n" : "* || mount %s\n", f[1]);
    }
    free(data);
}

const struct vg_check vg_check_mount = {
    .name = "mount", .keys = mount_keys, .min_words = 1, .max_words = 1, .run = mount_run, .init = mount_init,
    .defaults = mount_defaults,
};

/* ---- service ---- */

/* Whether a process named name runs: /proc/<pid>/comm (15 characters kept). */
static bool running(const char *root, const char *name)
{
    char **ents;
    int n = vg_list_dir(root, "/proc", &ents);
    bool hit = false;
    for (int i = 0; i < n && !hit; i++) {
        long pid;
        if (!vg_parse_long(ents[i], &pid)) continue;
        char path[64], comm[64];
        snprintf(path, sizeof path, "/proc/%ld/comm", pid);
        if (vg_read_line(root, path, comm, sizeof comm) == 0 && strncmp(comm, name, 15) == 0 &&
            (strlen(name) >= 15 ? strlen(comm) == 15 : strcmp(comm, name) == 0))
            hit = true;
    }
    if (n > 0) vg_free_list(ents, n);
    return hit;
}

static const char *const no_keys[] = { NULL };

static void service_run(const struct vg_check_ctx *ctx, const struct vg_check_line *l, struct vg_check_results *out)
{
    for (int i = 0; i < l->nwords; i++) {
        char name[96];
        snprintf(name, sizeof name, "service %s", l->words[i]);
        bool ok = running(ctx->root, l->words[i]);
        vg_check_add(out, l, ok, name, "%s", ok ? "running" : "no process of that name");
    }
}

static void service_init(const struct vg_check_ctx *ctx, struct sbuf *out)
{
    static const char *const known[] = { "nvidia-fabricmanager", "nv-fabricmanager", "nvidia-persistenced", "dcgm",
                                         "nv-hostengine", "sshd", NULL };
    struct sbuf names = SBUF_INIT;
    for (int i = 0; ctx->daemons && ctx->daemons[i]; i++)
        if (running(ctx->root, ctx->daemons[i])) sbuf_printf(&names, " %s", ctx->daemons[i]);
    for (int i = 0; known[i]; i++)
        if (running(ctx->root, known[i])) sbuf_printf(&names, " %s", known[i]);
    if (names.len) sbuf_printf(out, "* || service%s\n", names.s);
    sbuf_free(&names);
}

const struct vg_check vg_check_service = {
    .name = "service", .keys = no_keys, .min_words = 1, .max_words = 32, .run = service_run, .init = service_init,
};
