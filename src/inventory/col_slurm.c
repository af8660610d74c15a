/* col_slurm.c — collector for Slurm, MUNGE and PMIx: the package database
 * (Debian slurm-wlm/slurmd, SchedMD slurm-smd, RHEL slurm; munge; libpmix2,
 * pmix), then for a source-built Slurm the installed slurm_version.h. */
#include "inventory/inventory.h"
#include "util/strutil.h"
#include <stdio.h>

static const struct vg_pkg_rule rules[] = {
    { "slurm", { "slurmd", "slurmctld", "slurm-wlm", "slurm-smd", "slurm", "slurm-client", NULL } },
    { "munge", { "munge", "libmunge2", NULL } },
    { "pmix", { "libpmix2", "libpmix2t64", "pmix", "openpmix", NULL } },
};

static const char *const slurm_headers[] = { "/usr/include/slurm/slurm_version.h", "/usr/local/include/slurm/slurm_version.h", NULL };

static int collect(struct vg_inventory *inv)
{
    if (vg_inventory_find(inv, "slurm")) return 0;
    static const char *const defs[] = { "SLURM_VERSION_MAJOR", "SLURM_VERSION_MINOR", "SLURM_VERSION_MICRO" };
    for (int i = 0; slurm_headers[i]; i++) {
        long v[3];
        if (vg_header_defines(inv->root, slurm_headers[i], defs, v, 3) < 3) continue;
        char ver[64], src[300];
        snprintf(ver, sizeof ver, "%02ld.%02ld.%ld", v[0], v[1], v[2]);
        snprintf(src, sizeof src, "file:%s", slurm_headers[i]);
        vg_inventory_add(inv, "slurm", ver, VG_ECO_GENERIC, src);
        break;
    }
    return 0;
}

const struct vg_collector vg_col_slurm = { "slurm", collect, rules, sizeof rules / sizeof rules[0] };
