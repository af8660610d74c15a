/* col_dcgm.c — collector for NVIDIA DCGM (datacenter-gpu-manager, 3.x and
 * the -4 packages) and dcgm-exporter, from the package database. */
#include "inventory/inventory.h"

static const struct vg_pkg_rule rules[] = {
    { "dcgm", { "datacenter-gpu-manager-4-core", "datacenter-gpu-manager-4-*", "datacenter-gpu-manager", NULL } },
    { "dcgm-exporter", { "dcgm-exporter", "datacenter-gpu-manager-exporter", NULL } },
};

const struct vg_collector vg_col_dcgm = { "dcgm", NULL, rules, sizeof rules / sizeof rules[0] };
