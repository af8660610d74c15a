/* sec_node.c — node checks a tenant can make: kernel.dmesg_restrict and
 * kernel.kptr_restrict, /dev/nvidia* modes, world-writable shared directories
 * and other users' directories readable on shared mounts, Docker socket
 * access, the NVIDIA Container Toolkit config (no-cgroups, ldconfig), and
 * sshd's PermitRootLogin and PasswordAuthentication. */
#include "security/security.h"
#include "util/rootfs.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static void sysctl(struct vg_sec_ctx *c, const struct vg_sec_check *k, const char *path, long min, const char *what)
{
    char v[32], e[600];
    long n;
    if (vg_read_line(c->root, path, v, sizeof v)) {
        snprintf(e, sizeof e, "%s: %s", path, strerror(errno));
        vg_sec_emit(c, k, VG_SEC_UNKNOWN, e, "could not check: %s", strerror(errno));
        return;
    }
    snprintf(e, sizeof e, "%s: %s", path, v);
    if (!vg_parse_long(v, &n)) vg_sec_emit(c, k, VG_SEC_UNKNOWN, e, "could not check: not a number");
    else if (n >= min) vg_sec_emit(c, k, VG_SEC_PASS, e, "%s: restricted (%ld)", what, n);
    else vg_sec_emit(c, k, VG_SEC_FAIL, e, "%s: readable by every user (%ld)", what, n);
}

static void dmesg_restrict(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    sysctl(c, k, "/proc/sys/kernel/dmesg_restrict", 1, "the kernel log (other jobs' XIDs, addresses)");
}

static void kptr_restrict(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    sysctl(c, k, "/proc/sys/kernel/kptr_restrict", 1, "kernel pointer values");
}

static void dev_nvidia(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    char **names;
    int n = vg_list_dir(c->root, "/dev", &names);
    struct sbuf e = SBUF_INIT, bad = SBUF_INIT;
    int found = 0, world = 0;
    for (int i = 0; i < n; i++) {
        if (!vg_startswith(names[i], "nvidia")) continue;
        char p[300], mode[16];
        struct stat st;
        snprintf(p, sizeof p, "/dev/%s", names[i]);
        if (vg_sec_stat(c, p, &st)) continue;
        found++;
        vg_sec_mode_str(&st, mode, sizeof mode);
        if (e.len < 300) sbuf_printf(&e, "%s%s %s", e.len ? ", " : "", p, mode);
        if ((st.st_mode & 06) == 06) world++, sbuf_printf(&bad, "%s%s", bad.len ? "," : "", names[i]);
    }
    if (n >= 0) vg_free_list(names, n);
    if (!found) vg_sec_emit(c, k, VG_SEC_UNKNOWN, "/dev: no nvidia* device", "could not check: no /dev/nvidia* device");
    else if (world)
        vg_sec_emit(c, k, VG_SEC_WARN, e.s, "%d GPU device node(s) are world read-write (%s): only cgroup device rules keep jobs apart", world, bad.s);
    else vg_sec_emit(c, k, VG_SEC_PASS, e.s, "%d GPU device node(s), none world-writable", found);
    sbuf_free(&e), sbuf_free(&bad);
}

static void shared_dirs(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    static const char *const defaults[] = { "/home", "/scratch", "/shared", "/data" };
    const char *const *dirs = defaults;
    size_t nd = 4;
    if (c->conf && c->conf->nshared) dirs = (const char *const *)c->conf->shared, nd = c->conf->nshared;
    struct sbuf e = SBUF_INIT, bad = SBUF_INIT;
    int seen = 0, nbad = 0;
    for (size_t d = 0; d < nd; d++) {
        int n = vg_sec_dir_exposure(c, dirs[d], &e, &bad);
        if (n < 0) continue;
        seen++;
        nbad += n;
    }
    if (!seen) vg_sec_emit(c, k, VG_SEC_UNKNOWN, "no shared directory found", "could not check: none of the shared directories exists");
    else if (nbad) vg_sec_emit(c, k, VG_SEC_FAIL, e.s, "%s", bad.s);
    else vg_sec_emit(c, k, VG_SEC_PASS, e.s, "%d shared director%s, no other user's data readable", seen, seen == 1 ? "y" : "ies");
    sbuf_free(&e), sbuf_free(&bad);
}

/* Members of group gid in the root's /etc/group ("" when none). */
static void group_members(const struct vg_sec_ctx *c, unsigned gid, char *buf, size_t n)
{
    char *text, *save = NULL;
    buf[0] = 0;
    if (vg_read_file(c->root, "/etc/group", 4u << 20, &text, NULL)) return;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *f[4];
        long v;
        if (vg_split(line, ":", f, 4) == 4 && vg_parse_long(f[2], &v) && v == (long)gid) {
            vg_strlcpy(buf, vg_trim(f[3]), n);
            break;
        }
    }
    free(text);
}

static void docker_sock(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    static const char *const socks[] = { "/var/run/docker.sock", "/run/docker.sock" };
    struct stat st;
    const char *path = NULL;
    for (int i = 0; i < 2 && !path; i++)
        if (!vg_sec_stat(c, socks[i], &st)) path = socks[i];
    if (!path) {
        vg_sec_emit(c, k, VG_SEC_PASS, "/var/run/docker.sock: absent", "no Docker socket on this node");
        return;
    }
    char e[600], mode[16], user[64], group[64], members[256];
    vg_sec_mode_str(&st, mode, sizeof mode);
    vg_sec_user_name(c, st.st_uid, user, sizeof user);
    vg_sec_group_name(c, st.st_gid, group, sizeof group);
    group_members(c, st.st_gid, members, sizeof members);
    snprintf(e, sizeof e, "%s: %s %s:%s (members: %s)", path, mode, user, group, *members ? members : "none");
    char *real = vg_root_path(c->root, path);
    bool usable = geteuid() != 0 && access(real, R_OK | W_OK) == 0;
    free(real);
    if (st.st_mode & 02) vg_sec_emit(c, k, VG_SEC_FAIL, e, "the Docker socket is world-writable: any user is root on the node");
    else if (usable) vg_sec_emit(c, k, VG_SEC_FAIL, e, "this user (uid %u) can use the Docker socket: root on the node", (unsigned)geteuid());
    else if (*members) vg_sec_emit(c, k, VG_SEC_WARN, e, "members of group %s (%s) are root-equivalent through the Docker socket", group, members);
    else vg_sec_emit(c, k, VG_SEC_PASS, e, "the Docker socket is not open to tenants");
}

static void toolkit(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    const char *path = "/etc/nvidia-container-runtime/config.toml";
    char *text, e[800];
    if (vg_read_file(c->root, path, 1u << 20, &text, NULL)) {
        int err = errno;
        snprintf(e, sizeof e, "%s: %s", path, strerror(err));
        vg_sec_emit(c, k, VG_SEC_UNKNOWN, e, "could not check: %s", err == ENOENT ? "no NVIDIA Container Toolkit config" : strerror(err));
        return;
    }
    char nocg[16] = "(unset)", ldc[256] = "(unset)", *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        line = vg_trim(line);
        char *eq = strchr(line, '=');
        if (*line == '#' || !eq) continue;
        *eq = 0;
        char *key = vg_trim(line), *val = vg_trim(eq + 1);
        if (*val == '"') {
            val++;
            char *q = strchr(val, '"');
            if (q) *q = 0;
        }
        if (!strcmp(key, "no-cgroups")) vg_strlcpy(nocg, val, sizeof nocg);
        else if (!strcmp(key, "ldconfig")) vg_strlcpy(ldc, val, sizeof ldc);
    }
    free(text);
    snprintf(e, sizeof e, "%s: no-cgroups=%s ldconfig=%s", path, nocg, ldc);
    if (!strcmp(nocg, "true")) vg_sec_emit(c, k, VG_SEC_FAIL, e, "no-cgroups = true: containers are not confined to their GPUs");
    else if (strcmp(ldc, "(unset)") && *ldc != '@')
        vg_sec_emit(c, k, VG_SEC_WARN, e, "the root hook runs the container's own ldconfig (no '@'): image content executes as root");
    else vg_sec_emit(c, k, VG_SEC_PASS, e, "device cgroups on; ldconfig is the host's");
}

/* Looks keyword up in one sshd config file (stopping at a Match block);
 * returns false when the file could not be read. */
static bool sshd_file(const struct vg_sec_ctx *c, const char *path, const char *keyword, char *val, size_t n)
{
    char *text, *save = NULL;
    if (vg_read_file(c->root, path, 1u << 20, &text, NULL)) return false;
    for (char *l = strtok_r(text, "\n", &save); l && !*val; l = strtok_r(NULL, "\n", &save)) {
        char kw[64], v[64];
        if (sscanf(l, " %63s %63s", kw, v) != 2 || *kw == '#') continue;
        if (!strcasecmp(kw, "Match")) break;
        if (!strcasecmp(kw, keyword)) vg_strlcpy(val, v, n);
    }
    free(text);
    return true;
}

/* The first value of keyword in sshd's config: drop-ins first, as Debian's
 * Include at the top does.  Returns false when nothing was readable. */
static bool sshd_value(const struct vg_sec_ctx *c, const char *keyword, char *val, size_t n, char *src, size_t sn)
{
    val[0] = 0;
    char **names;
    int nd = vg_list_dir(c->root, "/etc/ssh/sshd_config.d", &names);
    bool any = false;
    for (int i = 0; i < nd && !*val; i++) {
        if (!vg_endswith(names[i], ".conf")) continue;
        snprintf(src, sn, "/etc/ssh/sshd_config.d/%s", names[i]);
        any |= sshd_file(c, src, keyword, val, n);
    }
    if (nd >= 0) vg_free_list(names, nd);
    if (*val) return true;
    snprintf(src, sn, "/etc/ssh/sshd_config");
    return sshd_file(c, src, keyword, val, n) || any;
}

static void ssh_root(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    char v[64], src[512], e[700];
    if (!sshd_value(c, "PermitRootLogin", v, sizeof v, src, sizeof src)) {
        snprintf(e, sizeof e, "/etc/ssh/sshd_config: %s", strerror(errno));
        vg_sec_emit(c, k, VG_SEC_UNKNOWN, e, "could not check: sshd_config not readable");
        return;
    }
    snprintf(e, sizeof e, "%s: PermitRootLogin %s", src, *v ? v : "(unset: prohibit-password)");
    if (!strcasecmp(v, "yes")) vg_sec_emit(c, k, VG_SEC_FAIL, e, "root may log in over SSH with a password");
    else vg_sec_emit(c, k, VG_SEC_PASS, e, "root cannot log in over SSH with a password");
}

static void ssh_password(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    char v[64], src[512], e[700];
    if (!sshd_value(c, "PasswordAuthentication", v, sizeof v, src, sizeof src)) {
        snprintf(e, sizeof e, "/etc/ssh/sshd_config: %s", strerror(errno));
        vg_sec_emit(c, k, VG_SEC_UNKNOWN, e, "could not check: sshd_config not readable");
        return;
    }
    snprintf(e, sizeof e, "%s: PasswordAuthentication %s", src, *v ? v : "(unset: yes)");
    if (!strcasecmp(v, "no")) vg_sec_emit(c, k, VG_SEC_PASS, e, "SSH accepts keys only");
    else vg_sec_emit(c, k, VG_SEC_FAIL, e, "SSH accepts passwords: open to guessing from any host that reaches it");
}

static const struct vg_sec_check checks[] = {
    { "node.dmesg-restrict", "kernel.dmesg_restrict hides the kernel log from tenants", VG_SEV_MEDIUM,
      "sysctl -w kernel.dmesg_restrict=1 (and persist it in /etc/sysctl.d)", dmesg_restrict },
    { "node.kptr-restrict", "kernel.kptr_restrict hides kernel addresses", VG_SEV_LOW,
      "sysctl -w kernel.kptr_restrict=1 (and persist it in /etc/sysctl.d)", kptr_restrict },
    { "node.dev-nvidia", "/dev/nvidia* are not world read-write", VG_SEV_MEDIUM,
      "load nvidia with NVreg_DeviceFileMode=0660 and a GPU group, and constrain devices with cgroups", dev_nvidia },
    { "node.shared-dirs", "shared directories do not expose other users' data", VG_SEV_HIGH,
      "chmod +t world-writable shared dirs; chmod o-rwx users' home/scratch dirs", shared_dirs },
    { "node.docker-sock", "the Docker socket is not open to tenants", VG_SEV_CRITICAL,
      "remove tenants from the docker group; use rootless Podman/Enroot for jobs", docker_sock },
    { "node.container-toolkit", "NVIDIA Container Toolkit keeps device cgroups and the host's ldconfig", VG_SEV_HIGH,
      "in config.toml: no-cgroups = false and ldconfig = \"@/sbin/ldconfig\"", toolkit },
    { "node.ssh-root-login", "sshd refuses password logins as root", VG_SEV_HIGH,
      "set PermitRootLogin prohibit-password (or no) in sshd_config", ssh_root },
    { "node.ssh-password-auth", "sshd refuses password authentication", VG_SEV_MEDIUM,
      "set PasswordAuthentication no in sshd_config", ssh_password },
};

const struct vg_sec_family vg_sec_node = { "node", checks, sizeof checks / sizeof checks[0] };
