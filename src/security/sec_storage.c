/* sec_storage.c — tenant isolation of shared storage, as an ordinary user
 * can see it: the node's NFS exports (the kernel's table /var/lib/nfs/etab,
 * else /etc/exports and the *.exports of /etc/exports.d: no_root_squash, read-write
 * to every host, insecure ports), the network and parallel filesystems it
 * mounts (/proc/mounts: NFS, Lustre, WekaFS, BeeGFS, GPFS, CephFS, CIFS)
 * without nosuid/nodev or with NFS's AUTH_SYS, and whether those mounts keep
 * tenants apart (world-writable tops without the sticky bit, other users'
 * directories readable by everyone). */
#include "security/security.h"
#include "util/rootfs.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- NFS exports ---- */

static bool has_opt(const char *opts, const char *o)
{
    size_t l = strlen(o);
    for (const char *p = opts; (p = strstr(p, o)); p += l)
        if ((p == opts || p[-1] == ',') && (p[l] == 0 || p[l] == ',')) return true;
    return false;
}

/* One export line: "/path host(opts) host2(opts2)…" or "/path (opts)" or
 * etab's "/path\thost(opts)".  Appends problems to bad. */
static int export_line(char *line, const char *file, struct sbuf *bad, int *nexports)
{
    char *save = NULL, *path = strtok_r(line, " \t", &save);
    if (!path || *path == '#') return 0;
    int n = 0;
    for (char *cl = strtok_r(NULL, " \t", &save); cl; cl = strtok_r(NULL, " \t", &save)) {
        (*nexports)++;
        char *paren = strchr(cl, '(');
        const char *opts = paren ? paren + 1 : "";
        if (paren) *paren = 0;
        const char *host = *cl ? cl : "*";
        char o[256];
        vg_strlcpy(o, opts, sizeof o);
        o[strcspn(o, ")")] = 0;
        bool rw = has_opt(o, "rw");   /* exports are read-only unless rw */
        bool world = !strcmp(host, "*") || !strcmp(host, "0.0.0.0/0");
        if (has_opt(o, "no_root_squash"))
            n++, sbuf_printf(bad, "%s%s: %s to %s with no_root_squash (root on that host is root here)", bad->len ? "; " : "",
                             file, path, host);
        if (world && rw)
            n++, sbuf_printf(bad, "%s%s: %s read-write to every host", bad->len ? "; " : "", file, path);
        if (has_opt(o, "insecure"))
            n++, sbuf_printf(bad, "%s%s: %s accepts unprivileged client ports (insecure)", bad->len ? "; " : "", file, path);
    }
    return n;
}

static void nfs_exports(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    static const char *const tables[] = { "/var/lib/nfs/etab", "/etc/exports" };
    struct sbuf bad = SBUF_INIT, e = SBUF_INIT;
    int problems = 0, nexports = 0, read = 0;
    for (size_t t = 0; t < 2 && !read; t++) {
        char *text;
        if (vg_read_file(c->root, tables[t], 1 << 20, &text, NULL) < 0) {
            if (errno != ENOENT && errno != ENOTDIR) {
                char ev[300];
                snprintf(ev, sizeof ev, "%s: %s", tables[t], strerror(errno));
                vg_sec_emit(c, k, VG_SEC_UNKNOWN, ev, "could not check: %s", strerror(errno));
                sbuf_free(&bad);
                return;
            }
            continue;
        }
        read++;
        sbuf_printf(&e, "%s", tables[t]);
        for (char *l = text, *nl; l && *l; l = nl) {
            nl = strchr(l, '\n');
            if (nl) *nl++ = 0;
            problems += export_line(l, tables[t], &bad, &nexports);
        }
        free(text);
    }
    if (!read) {   /* the *.exports of /etc/exports.d, read only when /etc/exports is absent too */
        char **names;
        int n = vg_list_dir(c->root, "/etc/exports.d", &names);
        for (int i = 0; i < n; i++) {
            if (!vg_endswith(names[i], ".exports")) continue;
            char p[300], *text;
            snprintf(p, sizeof p, "/etc/exports.d/%s", names[i]);
            if (vg_read_file(c->root, p, 1 << 20, &text, NULL) < 0) continue;
            read++;
            sbuf_printf(&e, "%s%s", e.len ? ", " : "", p);
            for (char *l = text, *nl; l && *l; l = nl) {
                nl = strchr(l, '\n');
                if (nl) *nl++ = 0;
                problems += export_line(l, p, &bad, &nexports);
            }
            free(text);
        }
        if (n >= 0) vg_free_list(names, n);
    }
    if (!read)
        vg_sec_emit(c, k, VG_SEC_PASS, "/var/lib/nfs/etab, /etc/exports, /etc/exports.d: absent",
                    "this node exports nothing over NFS");
    else if (problems) vg_sec_emit(c, k, VG_SEC_FAIL, e.s, "%s", bad.s);
    else vg_sec_emit(c, k, VG_SEC_PASS, e.s, "%d export%s, each root-squashed and limited to named hosts", nexports,
                     nexports == 1 ? "" : "s");
    sbuf_free(&bad), sbuf_free(&e);
}

/* ---- mounts ---- */

static const char *const shared_fs[] = { "nfs", "nfs4", "lustre", "wekafs", "beegfs", "gpfs", "ceph", "cifs", "smb3", "fuse.weka" };

struct mount {
    char *dev, *dir, *type, *opts;
};

/* "\040" in /proc/mounts fields is a space. */
static void unoctal(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
            r += 3;
        } else {
            *w++ = *r;
        }
    }
    *w = 0;
}

/* The shared-filesystem mounts of /proc/mounts (text kept alive in *text);
 * -1 with errno when it cannot be read. */
static int shared_mounts(const struct vg_sec_ctx *c, char **text, struct mount *m, int max)
{
    if (vg_read_file(c->root, "/proc/mounts", 1 << 22, text, NULL) < 0) return -1;
    int n = 0;
    for (char *l = *text, *nl; l && *l && n < max; l = nl) {
        nl = strchr(l, '\n');
        if (nl) *nl++ = 0;
        char *save = NULL, *f[4];
        int k = 0;
        for (char *w = strtok_r(l, " ", &save); w && k < 4; w = strtok_r(NULL, " ", &save)) f[k++] = w;
        if (k < 4) continue;
        bool shared = false;
        for (size_t i = 0; i < sizeof shared_fs / sizeof shared_fs[0] && !shared; i++) shared = !strcmp(f[2], shared_fs[i]);
        if (!shared) continue;
        unoctal(f[1]);
        m[n++] = (struct mount){ f[0], f[1], f[2], f[3] };
    }
    return n;
}

static void unreadable_mounts(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    char ev[300];
    snprintf(ev, sizeof ev, "/proc/mounts: %s", strerror(errno));
    vg_sec_emit(c, k, VG_SEC_UNKNOWN, ev, "could not check: %s", strerror(errno));
}

static void mount_options(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    char *text = NULL;
    struct mount m[64];
    int n = shared_mounts(c, &text, m, 64);
    if (n < 0) return unreadable_mounts(c, k);
    struct sbuf e = SBUF_INIT, bad = SBUF_INIT;
    int problems = 0;
    for (int i = 0; i < n; i++) {
        if (e.len < 400) sbuf_printf(&e, "%s%s %s %s", e.len ? "; " : "", m[i].dir, m[i].type, m[i].opts);
        const char *missing = !has_opt(m[i].opts, "nosuid") ? "nosuid" : !has_opt(m[i].opts, "nodev") ? "nodev" : NULL;
        if (missing)
            problems++, sbuf_printf(&bad, "%s%s (%s) is mounted without %s", bad.len ? "; " : "", m[i].dir, m[i].type, missing);
        if (vg_startswith(m[i].type, "nfs") && (has_opt(m[i].opts, "sec=sys") || !strstr(m[i].opts, "sec=")))
            problems++, sbuf_printf(&bad, "%s%s trusts the client's user ids (NFS sec=sys)", bad.len ? "; " : "", m[i].dir);
    }
    if (!n) vg_sec_emit(c, k, VG_SEC_PASS, "/proc/mounts: no network or parallel filesystem", "no shared filesystem mounted");
    else if (problems) vg_sec_emit(c, k, VG_SEC_WARN, e.s, "%s", bad.s);
    else vg_sec_emit(c, k, VG_SEC_PASS, e.s, "%d shared filesystem%s, each nosuid,nodev with per-user authentication", n,
                     n == 1 ? "" : "s");
    sbuf_free(&e), sbuf_free(&bad);
    free(text);
}

static void tenant_separation(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    char *text = NULL;
    struct mount m[64];
    int n = shared_mounts(c, &text, m, 64);
    if (n < 0) return unreadable_mounts(c, k);
    struct sbuf e = SBUF_INIT, bad = SBUF_INIT;
    int seen = 0, problems = 0;
    for (int i = 0; i < n; i++) {
        int p = vg_sec_dir_exposure(c, m[i].dir, &e, &bad);
        if (p < 0) continue;
        seen++;
        problems += p;
    }
    if (!n) vg_sec_emit(c, k, VG_SEC_PASS, "/proc/mounts: no network or parallel filesystem", "no shared filesystem mounted");
    else if (!seen) vg_sec_emit(c, k, VG_SEC_UNKNOWN, "/proc/mounts", "could not check: no shared mount point could be read");
    else if (problems) vg_sec_emit(c, k, VG_SEC_FAIL, e.s, "%s", bad.s);
    else vg_sec_emit(c, k, VG_SEC_PASS, e.s, "%d shared mount%s, no other user's data readable", seen, seen == 1 ? "" : "s");
    sbuf_free(&e), sbuf_free(&bad);
    free(text);
}

static const struct vg_sec_check checks[] = {
    { "storage.nfs-exports", "NFS exports squash root and name their clients", VG_SEV_CRITICAL,
      "export with root_squash (the default) to named hosts or subnets, never '*' read-write; drop 'insecure'", nfs_exports },
    { "storage.mount-options", "shared filesystems are mounted nosuid,nodev with per-user authentication", VG_SEV_MEDIUM,
      "mount NFS/Lustre/Weka with nosuid,nodev; use NFS sec=krb5p (or a per-tenant export) instead of sec=sys", mount_options },
    { "storage.tenant-separation", "shared mounts keep tenants' data apart", VG_SEV_HIGH,
      "chmod +t world-writable tops; chmod o-rwx per-user/per-project dirs; give each tenant its own export or fileset",
      tenant_separation },
};

const struct vg_sec_family vg_sec_storage = { "storage", checks, sizeof checks / sizeof checks[0] };
