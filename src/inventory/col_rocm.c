/* col_rocm.c — collector for AMD ROCm: every install under /opt/rocm*
 * (the release in .info/version, "6.1.2-119": release 6.1.2, build 119);
 * /opt/rocm, a link to the versioned directory, is not counted twice; an
 * install without a readable .info/version is listed with version
 * "unknown".  No
 * AMD security bulletin is bundled, so the version is inventoried and its
 * advisory status is unknown. */
#include "inventory/inventory.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <stdio.h>
#include <string.h>

static int collect(struct vg_inventory *inv)
{
    char **names;
    int n = vg_list_dir(inv->root, "/opt", &names);
    for (int i = 0; i < n; i++) {
        if (!vg_startswith(names[i], "rocm")) continue;
        char dir[300], path[320], target[256], line[128], ver[64];
        snprintf(dir, sizeof dir, "/opt/%s", names[i]);
        if (vg_read_link(inv->root, dir, target, sizeof target) == 0) continue;   /* rocm -> rocm-6.1.2 */
        snprintf(path, sizeof path, "%s/.info/version", dir);
        char src[330];
        snprintf(src, sizeof src, "file:%s", path);
        if (vg_read_line(inv->root, path, line, sizeof line) < 0 || !vg_scan_version(line, ver, sizeof ver)) {
            /* an install whose release cannot be read is listed, never taken as current */
            struct vg_component *c = vg_inventory_add(inv, "rocm", "unknown", VG_ECO_GENERIC, src);
            snprintf(c->detail, sizeof c->detail, "%.40s: .info/version unreadable; version and advisory status unknown", dir);
            continue;
        }
        struct vg_component *c = vg_inventory_add(inv, "rocm", ver, VG_ECO_GENERIC, src);
        snprintf(c->detail, sizeof c->detail, "%.40s (%.20s); advisory status unknown (no AMD bulletin bundled)", dir, line);
    }
    if (n >= 0) vg_free_list(names, n);
    return 0;
}

const struct vg_collector vg_col_rocm = { "rocm", collect, NULL, 0 };
