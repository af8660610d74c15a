/* col_fabricmanager.c — collector for NVIDIA Fabric Manager (NVSwitch
 * systems), from the package database: nvidia-fabricmanager-535 (Ubuntu),
 * nvidia-fabric-manager (RHEL). */
#include "inventory/inventory.h"

static const struct vg_pkg_rule rules[] = {
    { "fabricmanager", { "nvidia-fabricmanager-*", "nvidia-fabricmanager", "nvidia-fabric-manager", NULL } },
};

const struct vg_collector vg_col_fabricmanager = { "fabricmanager", NULL, rules, sizeof rules / sizeof rules[0] };
