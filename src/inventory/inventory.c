/* inventory.c — the inventory container: components, the sorted package list
 * (binary search), and small helpers the collectors share (version scanning,
 * library file names, C header defines).  See inventory.h. */
#include "inventory/inventory.h"
#include "util/log.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void vg_inventory_init(struct vg_inventory *inv, const char *root)
{
    memset(inv, 0, sizeof *inv);
    inv->root = root && *root ? root : "/";
}

void vg_inventory_free(struct vg_inventory *inv)
{
    for (size_t i = 0; i < inv->n; i++) vg_changelog_free(&inv->items[i].changelog);
    free(inv->items);
    free(inv->pkgs);
    for (size_t i = 0; i < inv->nbufs; i++) free(inv->bufs[i]);
    free(inv->bufs);
    free(inv->rpm_root);
    const char *root = inv->root;
    memset(inv, 0, sizeof *inv);
    inv->root = root;
}

struct vg_component *vg_inventory_add(struct vg_inventory *inv, const char *name, const char *version,
                                      enum vg_ecosystem eco, const char *source)
{
    if (inv->n == inv->cap) {
        inv->cap = inv->cap ? inv->cap * 2 : 32;
        inv->items = vg_xrealloc(inv->items, inv->cap * sizeof *inv->items);
    }
    struct vg_component *c = &inv->items[inv->n++];
    memset(c, 0, sizeof *c);
    vg_strlcpy(c->name, name, sizeof c->name);
    vg_strlcpy(c->version, version, sizeof c->version);
    vg_strlcpy(c->upstream, version, sizeof c->upstream);
    c->eco = eco;
    vg_strlcpy(c->source, source ? source : "", sizeof c->source);
    return c;
}

struct vg_component *vg_inventory_find(struct vg_inventory *inv, const char *name)
{
    for (size_t i = 0; i < inv->n; i++)
        if (!strcmp(inv->items[i].name, name)) return &inv->items[i];
    return NULL;
}

static int pkg_cmp(const void *a, const void *b)
{
    const struct vg_pkg *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c) return c;
    return x < y ? -1 : x > y; /* stable enough: keep the reader's order */
}

void vg_inventory_sort_pkgs(struct vg_inventory *inv)
{
    if (inv->npkgs > 1) qsort(inv->pkgs, inv->npkgs, sizeof *inv->pkgs, pkg_cmp);
}

/* Index of the first package whose name is >= key (or whose first
 * strlen(key) bytes are >= key when prefix). */
static size_t lower_bound(const struct vg_inventory *inv, const char *key, bool prefix)
{
    size_t lo = 0, hi = inv->npkgs, kl = strlen(key);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = prefix ? strncmp(inv->pkgs[mid].name, key, kl) : strcmp(inv->pkgs[mid].name, key);
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

const struct vg_pkg *vg_inventory_pkg(const struct vg_inventory *inv, const char *name)
{
    size_t i = lower_bound(inv, name, false);
    return i < inv->npkgs && !strcmp(inv->pkgs[i].name, name) ? &inv->pkgs[i] : NULL;
}

const struct vg_pkg *vg_inventory_pkg_prefix(const struct vg_inventory *inv, const char *prefix, size_t *it)
{
    size_t i = *it ? *it : lower_bound(inv, prefix, true);
    if (i >= inv->npkgs || !vg_startswith(inv->pkgs[i].name, prefix)) return NULL;
    *it = i + 1;
    return &inv->pkgs[i];
}

struct vg_component *vg_inventory_add_pkg(struct vg_inventory *inv, const char *name,
                                          const char *const *pkgnames)
{
    for (int i = 0; pkgnames[i]; i++) {
        const struct vg_pkg *p = NULL;
        size_t l = strlen(pkgnames[i]);
        if (l && pkgnames[i][l - 1] == '*') {
            char prefix[96];
            vg_strlcpy(prefix, pkgnames[i], l < sizeof prefix ? l : sizeof prefix);
            size_t it = 0;
            p = vg_inventory_pkg_prefix(inv, prefix, &it);
        } else {
            p = vg_inventory_pkg(inv, pkgnames[i]);
        }
        if (!p) continue;
        struct vg_component *c = vg_inventory_add(inv, name, p->version, p->eco, inv->pkgdb_source);
        vg_version_upstream(p->eco, p->version, c->upstream, sizeof c->upstream);
        vg_strlcpy(c->package, p->name, sizeof c->package);
        vg_strlcpy(c->srcpkg, p->src && *p->src ? p->src : p->name, sizeof c->srcpkg);
        return c;
    }
    return NULL;
}

int vg_inventory_add_pkg_rules(struct vg_inventory *inv, const struct vg_pkg_rule *rules, size_t n)
{
    int found = 0;
    for (size_t i = 0; i < n; i++) found += vg_inventory_add_pkg(inv, rules[i].name, rules[i].pkgs) != NULL;
    return found;
}

/* The OSV ecosystem prefix of the node's distribution: "Debian:12",
 * "Ubuntu:22.04", "Red Hat:9", "Rocky Linux:9", "AlmaLinux:9"; "" otherwise. */
static void osv_distro(const struct vg_inventory *inv, char *buf, size_t n)
{
    static const struct { const char *id, *eco; bool major; } map[] = {
        { "debian", "Debian", true }, { "ubuntu", "Ubuntu", false }, { "rhel", "Red Hat", true },
        { "rocky", "Rocky Linux", true }, { "almalinux", "AlmaLinux", true },
    };
    buf[0] = 0;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(inv->os_id, map[i].id) && inv->os_version_id[0]) {
            int len = map[i].major ? (int)strcspn(inv->os_version_id, ".") : (int)strlen(inv->os_version_id);
            snprintf(buf, n, "%s:%.*s", map[i].eco, len, inv->os_version_id);
        }
}

/* The distribution of package components.  Their changelogs are read later,
 * only for the packages an audit asks about (vg_inventory_changelogs). */
static void distro_evidence(struct vg_inventory *inv)
{
    char distro[40];
    osv_distro(inv, distro, sizeof distro);
    for (size_t i = 0; i < inv->n; i++) {
        struct vg_component *c = &inv->items[i];
        if (c->package[0] && (c->eco == VG_ECO_DPKG || c->eco == VG_ECO_RPM))
            vg_strlcpy(c->distro, distro, sizeof c->distro);
    }
}

int vg_inventory_collect(struct vg_inventory *inv)
{
    if (!vg_path_exists(inv->root, "/")) return vg_inventory_fail(inv, "%s: root directory not readable", inv->root);
    if (vg_pkgdb_dpkg_load(inv) < 0) return -1;
    if (vg_pkgdb_rpm_load(inv) < 0) return -1;
    for (size_t i = 0; i < vg_ncollectors; i++) {
        const struct vg_collector *c = vg_collectors[i];
        vg_inventory_add_pkg_rules(inv, c->rules, c->nrules);
        if (c->collect && c->collect(inv) < 0) return -1;
    }
    distro_evidence(inv);
    return 0;
}

bool vg_scan_version(const char *s, char *buf, size_t n)
{
    for (const char *p = s; *p; p++) {
        if (!isdigit((unsigned char)*p) || (p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '.'))) continue;
        const char *e = p;
        int dots = 0;
        while (isdigit((unsigned char)*e) || (*e == '.' && isdigit((unsigned char)e[1]))) dots += *e++ == '.';
        if (dots == 0) continue;
        size_t l = (size_t)(e - p);
        vg_strlcpy(buf, p, l + 1 < n ? l + 1 : n);
        return true;
    }
    return false;
}

static const char *const lib_dirs[] = {
    "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib", NULL,
};

bool vg_find_lib_in(const char *root, const char *dir, const char *stem, char *ver, size_t vn, char *path, size_t pn)
{
    size_t sl = strlen(stem);
    char **names;
    int n = vg_list_dir(root, dir, &names);
    if (n < 0) return false;
    bool found = false;
    /* The longest name with the stem carries the full X.Y.Z (the others are
     * the soname links); the list is sorted, so take the last one. */
    for (int i = n - 1; i >= 0 && !found; i--) {
        const char *v = names[i] + sl;
        if (strncmp(names[i], stem, sl) || !isdigit((unsigned char)*v) || !strchr(v, '.')) continue;
        vg_strlcpy(ver, v, vn);
        snprintf(path, pn, "%s/%s", dir, names[i]);
        found = true;
    }
    vg_free_list(names, n);
    return found;
}

bool vg_find_lib_version(const char *root, const char *stem, char *ver, size_t vn, char *path, size_t pn)
{
    for (int d = 0; lib_dirs[d]; d++)
        if (vg_find_lib_in(root, lib_dirs[d], stem, ver, vn, path, pn)) return true;
    return false;
}

static bool is_dir(const char *root, const char *path)
{
    char *full = vg_root_path(root, path);
    struct stat st;
    bool d = stat(full, &st) == 0 && S_ISDIR(st.st_mode);
    free(full);
    return d;
}

int vg_cuda_dirs(const char *root, char ***names)
{
    char **all;
    int n = vg_list_dir(root, "/usr/local", &all), k = 0;
    if (n < 0) return -1;
    for (int i = 0; i < n; i++) {
        char path[300], target[256];
        snprintf(path, sizeof path, "/usr/local/%s", all[i]);
        if (vg_startswith(all[i], "cuda") && vg_read_link(root, path, target, sizeof target) < 0 && is_dir(root, path)) {
            all[k++] = all[i];
            continue;
        }
        free(all[i]);
    }
    *names = all;
    return k;
}

int vg_header_defines(const char *root, const char *path, const char *const *names, long *vals, int n)
{
    for (int i = 0; i < n; i++) vals[i] = -1;
    char *text;
    if (vg_read_file(root, path, 1 << 20, &text, NULL) < 0) return 0;
    int found = 0;
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (vg_startswith(p, "#define")) {
            p += 7;
            while (*p == ' ' || *p == '\t') p++;
            size_t nl_len = strcspn(p, " \t");
            char *v = p + nl_len;
            while (*v == ' ' || *v == '\t') v++;
            char *end;
            long x = strtol(v, &end, 10);
            bool num = end != v && (!*end || isspace((unsigned char)*end) || *end == '/');
            for (int i = 0; num && i < n; i++)
                if (vals[i] < 0 && strlen(names[i]) == nl_len && !strncmp(p, names[i], nl_len)) {
                    vals[i] = x;
                    found++;
                }
        }
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    return found;
}

int vg_inventory_fail(struct vg_inventory *inv, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(inv->err, sizeof inv->err, fmt, ap);
    va_end(ap);
    return -1;
}

void vg_nic_model_key(const char *name, char *key, size_t n)
{
    char flat[96];
    size_t k = 0;
    for (const char *p = name ? name : ""; *p && k + 1 < sizeof flat; p++)
        if (isalnum((unsigned char)*p)) flat[k++] = (char)tolower((unsigned char)*p);
    flat[k] = 0;
    key[0] = 0;
    /* as the published bulletins spell them too: 5459 drops the C of
     * ConnectX-5 ("onnectX-5"), 5684 writes "BludField-3" */
    static const struct { const char *word, *prefix; } fam[] = {
        { "onnectx", "cx" }, { "bluefield", "bf" }, { "bludfield", "bf" },
    };
    for (size_t i = 0; i < sizeof fam / sizeof fam[0]; i++) {
        const char *w = strstr(flat, fam[i].word);
        if (!w) continue;
        const char *rest = w + strlen(fam[i].word);
        if (isdigit((unsigned char)*rest)) snprintf(key, n, "%s%s", fam[i].prefix, rest);
        return;
    }
}
