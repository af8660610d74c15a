/* col_enroot.c — collector for the HPC container runtimes: enroot, pyxis
 * (the Slurm SPANK plugin) and Apptainer/Singularity, from the package
 * database. */
#include "inventory/inventory.h"

static const struct vg_pkg_rule rules[] = {
    { "enroot", { "enroot", "enroot+caps", NULL } },
    { "pyxis", { "nvslurm-plugin-pyxis", "pyxis", NULL } },
    { "apptainer", { "apptainer", "apptainer-suid", "singularity-ce", NULL } },
};

const struct vg_collector vg_col_enroot = { "enroot", NULL, rules, sizeof rules / sizeof rules[0] };
