/* col_rocm.c — collector for AMD ROCm: every install under /opt/rocm*
 * (the release in .info/version, "6.1.2-119": release 6.1.2, build 119);
 * /opt/rocm, a link to the versioned directory, is not counted twice; an
 * install without a readable .info/version is listed with version
 * "unknown".  Without any install directory (a package-only root), the
 * rocm-core package's version gives the release ("6.4.0.60400-…" → 6.4.0).
 * Each install carries the node's Instinct part (amdparts.c): AMD's
 * advisories name their fixed ROCm release per part. */
#include "inventory/inventory.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <stdio.h>
#include <string.h>

#define MAX_GPUS 64

/* The node's part ("MI300X") and a detail ("8 AMD Instinct MI300X"); a node
 * with several parts carries the first, the detail names the others. */
static void node_part(const char *root, char *part, size_t pn, char *detail, size_t dn)
{
    struct vg_amd_gpu gpus[MAX_GPUS];
    size_t n = vg_amd_gpus(root, gpus, MAX_GPUS), same = 0;
    part[0] = detail[0] = 0;
    if (!n) return;
    vg_strlcpy(part, gpus[0].part, pn);
    for (size_t i = 0; i < n; i++) same += !strcmp(gpus[i].part, part);
    snprintf(detail, dn, "%zu AMD Instinct %s%s", same, part, same < n ? " and other parts" : "");
}

static void set_part(struct vg_component *c, const char *part, const char *parts)
{
    vg_strlcpy(c->model, part, sizeof c->model);
    if (!parts[0]) return;
    size_t l = strlen(c->detail);
    snprintf(c->detail + l, sizeof c->detail - l, "; %s", parts);
}

static int collect(struct vg_inventory *inv)
{
    char part[32], parts[64];
    node_part(inv->root, part, sizeof part, parts, sizeof parts);
    char **names;
    int n = vg_list_dir(inv->root, "/opt", &names), installs = 0;
    for (int i = 0; i < n; i++) {
        if (!vg_startswith(names[i], "rocm")) continue;
        char dir[300], path[320], target[256], line[128], ver[64];
        snprintf(dir, sizeof dir, "/opt/%s", names[i]);
        if (vg_read_link(inv->root, dir, target, sizeof target) == 0) continue;   /* rocm -> rocm-6.1.2 */
        installs++;
        snprintf(path, sizeof path, "%s/.info/version", dir);
        char src[330];
        snprintf(src, sizeof src, "file:%s", path);
        if (vg_read_line(inv->root, path, line, sizeof line) < 0 || !vg_scan_version(line, ver, sizeof ver)) {
            /* an install whose release cannot be read is listed, never taken as current */
            struct vg_component *c = vg_inventory_add(inv, "rocm", "unknown", VG_ECO_GENERIC, src);
            snprintf(c->detail, sizeof c->detail, "%.40s: .info/version unreadable; version and advisory status unknown", dir);
            set_part(c, part, parts);
            continue;
        }
        struct vg_component *c = vg_inventory_add(inv, "rocm", ver, VG_ECO_GENERIC, src);
        snprintf(c->detail, sizeof c->detail, "%.40s (%.20s)", dir, line);
        set_part(c, part, parts);
    }
    if (n >= 0) vg_free_list(names, n);
    const struct vg_pkg *p = installs ? NULL : vg_inventory_pkg(inv, "rocm-core");
    if (p) {   /* "6.4.0.60400-crdnnh.15158~22.04": the release is the first three fields */
        char up[96], rel[64] = "";
        vg_version_upstream(p->eco, p->version, up, sizeof up);
        size_t dots = 0, i = 0;
        for (; up[i] && i < sizeof rel - 1; i++) {
            if (up[i] == '.' && ++dots == 3) break;
            rel[i] = up[i];
        }
        rel[i] = 0;
        struct vg_component *c = vg_inventory_add(inv, "rocm", rel[0] ? rel : "unknown", VG_ECO_GENERIC,
                                                  inv->pkgdb_source);
        vg_strlcpy(c->package, p->name, sizeof c->package);
        snprintf(c->detail, sizeof c->detail, "package rocm-core %.60s", p->version);
        set_part(c, part, parts);
    }
    return 0;
}

const struct vg_collector vg_col_rocm = { "rocm", collect, NULL, 0 };
