/* col_nvhpc.c — collector for the NVIDIA HPC SDK (nvc, nvfortran, its MPI and
 * math libraries): every release directory under
 * /opt/nvidia/hpc_sdk/{Linux_x86_64,Linux_aarch64}/YY.M (the SDK's own
 * install layout; "2024" and similar bundle directories hold no compilers and
 * are skipped), else the nvhpc-YY-M package (nvhpc-24-5 in apt, nvhpc-24.5 in
 * dnf).  No lifecycle data for the SDK is bundled, so its release window is
 * reported as unknown, never as current. */
#include "inventory/inventory.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define WINDOW_UNKNOWN "release window unknown (no NVIDIA HPC SDK lifecycle data bundled)"

/* "24.5", "25.1": two numeric fields, nothing else. */
static bool release_dir(const char *s)
{
    int dots = 0;
    if (!isdigit((unsigned char)*s)) return false;
    for (; *s; s++) {
        if (*s == '.') dots++;
        else if (!isdigit((unsigned char)*s)) return false;
    }
    return dots == 1 && s[-1] != '.';
}

static int collect(struct vg_inventory *inv)
{
    static const char *const arches[] = { "Linux_x86_64", "Linux_aarch64" };
    int found = 0;
    for (size_t a = 0; a < sizeof arches / sizeof arches[0]; a++) {
        char dir[96];
        snprintf(dir, sizeof dir, "/opt/nvidia/hpc_sdk/%s", arches[a]);
        char **names;
        int n = vg_list_dir(inv->root, dir, &names);
        for (int i = 0; i < n; i++) {
            if (!release_dir(names[i])) continue;
            char src[160];
            snprintf(src, sizeof src, "dir:%s/%s", dir, names[i]);
            struct vg_component *c = vg_inventory_add(inv, "nvhpc", names[i], VG_ECO_GENERIC, src);
            snprintf(c->detail, sizeof c->detail, "%s", WINDOW_UNKNOWN);
            found++;
        }
        if (n >= 0) vg_free_list(names, n);
    }
    if (found) return 0;
    size_t it = 0;
    for (const struct vg_pkg *p; (p = vg_inventory_pkg_prefix(inv, "nvhpc-", &it));) {
        /* nvhpc-24-5 / nvhpc-24.5: the release is in the name; the meta packages (nvhpc-2024) are not */
        char rel[32];
        vg_strlcpy(rel, p->name + 6, sizeof rel);
        for (char *d = strchr(rel, '-'); d; d = strchr(d, '-')) *d = '.';
        if (!release_dir(rel)) continue;
        struct vg_component *c = vg_inventory_add(inv, "nvhpc", rel, VG_ECO_GENERIC, inv->pkgdb_source);
        vg_strlcpy(c->package, p->name, sizeof c->package);
        snprintf(c->detail, sizeof c->detail, "package %s %s; %s", p->name, p->version, WINDOW_UNKNOWN);
    }
    return 0;
}

const struct vg_collector vg_col_nvhpc = { "nvhpc", collect, NULL, 0 };
