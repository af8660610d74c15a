/* collectors.c — the collector table: one line per component family, run in
 * this order by vg_inventory_collect (os before kernel, which maps the release
 * os read; the driver before cuda, which derives the driver's CUDA version
 * from it). */
#include "inventory/inventory.h"

extern const struct vg_collector vg_col_os, vg_col_kernel, vg_col_driver, vg_col_cuda, vg_col_nccl, vg_col_pip, vg_col_container, vg_col_dcgm,
    vg_col_fabricmanager, vg_col_slurm, vg_col_enroot, vg_col_ofed, vg_col_nicfw, vg_col_base, vg_col_nvhpc, vg_col_qemu, vg_col_rocm,
    vg_col_amdgpu;

const struct vg_collector *const vg_collectors[] = {
    &vg_col_os,
    &vg_col_kernel,
    &vg_col_driver,
    &vg_col_cuda,
    &vg_col_nccl,
    &vg_col_pip,
    &vg_col_container,
    &vg_col_dcgm,
    &vg_col_fabricmanager,
    &vg_col_slurm,
    &vg_col_enroot,
    &vg_col_ofed,
    &vg_col_nicfw,
    &vg_col_base,
    &vg_col_nvhpc,
    &vg_col_qemu,
    &vg_col_rocm,
    &vg_col_amdgpu,
};
const size_t vg_ncollectors = sizeof vg_collectors / sizeof vg_collectors[0];
