/* col_ofed.c — collector for the RDMA stack: MLNX_OFED (the version string
 * inside the ofed_info script, "MLNX_OFED_LINUX-23.10-1.1.9.0", read as text —
 * nothing from the root is executed — else the mlnx-ofed-* meta packages),
 * DOCA-OFED / DOCA-Host and rdma-core from the package database. */
#include "inventory/inventory.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *const ofed_info_files[] = { "/usr/bin/ofed_info", "/etc/infiniband/ofed_info", NULL };
static const char *const mlnx_pkgs[] = { "mlnx-ofed-all", "mlnx-ofed-basic", "mlnx-ofed-hpc", "mlnx-ofed-kernel-only", NULL };

static const struct vg_pkg_rule rules[] = {
    { "doca-ofed", { "doca-ofed", "doca-host", "doca-ofed-userspace", "doca-roce", NULL } },
    { "rdma-core", { "rdma-core", "libibverbs1", "libibverbs", NULL } },
};

static bool ofed_from_file(struct vg_inventory *inv, const char *path)
{
    char *text;
    size_t len;
    if (vg_read_file(inv->root, path, 1 << 20, &text, &len) < 0) return false;
    const char *m = memchr(text, 0, len) ? NULL : strstr(text, "MLNX_OFED_LINUX-");
    char ver[64] = "";
    if (m) {
        m += strlen("MLNX_OFED_LINUX-");
        size_t n = 0;
        while (n + 1 < sizeof ver && (isalnum((unsigned char)m[n]) || m[n] == '.' || m[n] == '-')) n++;
        memcpy(ver, m, n);
        ver[n] = 0;
    }
    free(text);
    if (!ver[0] || !isdigit((unsigned char)ver[0])) return false;
    char src[300] = "file:";
    vg_strlcpy(src + 5, path, sizeof src - 5);
    vg_inventory_add(inv, "mlnx-ofed", ver, VG_ECO_GENERIC, src);
    return true;
}

static int collect(struct vg_inventory *inv)
{
    for (int i = 0; ofed_info_files[i]; i++)
        if (ofed_from_file(inv, ofed_info_files[i])) return 0;
    vg_inventory_add_pkg(inv, "mlnx-ofed", mlnx_pkgs);
    return 0;
}

const struct vg_collector vg_col_ofed = { "ofed", collect, rules, sizeof rules / sizeof rules[0] };
