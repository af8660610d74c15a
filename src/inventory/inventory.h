/* inventory.h — what is installed on a node (or a root directory): a list of
 * components, each with its version and where the version came from.
 * Collectors (one file per component family, src/inventory/col_*.c) fill it;
 * they are listed in the table in collectors.c. */
#ifndef VG_INVENTORY_H
#define VG_INVENTORY_H
#include "advisory/version.h"
#include <stddef.h>

/* Canonical component ids (shared with the advisory database):
 * os, linux-kernel, nvidia-driver, cuda-toolkit, cuda-driver, nccl, cudnn,
 * nvidia-container-toolkit, libnvidia-container, gpu-operator, runc, containerd,
 * docker, kubelet, dcgm, dcgm-exporter, fabricmanager, slurm, munge, pmix,
 * enroot, pyxis, apptainer, mlnx-ofed, doca-ofed, rdma-core, connectx-firmware,
 * bluefield-firmware, openssh, sudo, glibc, polkit. */
struct vg_component {
    char name[48];         /* canonical id, above */
    char version[128];     /* the version as found */
    char upstream[96];     /* upstream part (distro epoch/revision stripped) */
    enum vg_ecosystem eco; /* how `version` compares */
    char package[96];      /* distribution package name, when from a package db */
    char source[256];      /* where it came from: "/proc/driver/nvidia/version",
                              "dpkg:/var/lib/dpkg/status", "file:/usr/local/cuda-12.2/version.json" */
    char detail[128];      /* e.g. "/usr/local/cuda-12.2", "mlx5_0 board MT_0000000838" */
};

struct vg_pkg {
    char *name, *version, *arch;
    enum vg_ecosystem eco; /* dpkg or rpm */
};

struct vg_inventory {
    const char *root;      /* "/" or the --root directory */
    char hostname[64];
    char os_id[32], os_version_id[32], os_pretty[96];
    char kernel[128];
    struct vg_component *items;
    size_t n, cap;
    struct vg_pkg *pkgs;   /* the package database(s), sorted by name */
    size_t npkgs;
    char pkgdb_source[256];/* "dpkg:/var/lib/dpkg/status" / "rpm:/var/lib/rpm" / "" */
};

struct vg_collector {
    const char *name;      /* "nvidia-driver" … */
    /* Adds components to inv.  Returns 0, or -1 for an input error it has
     * reported with vg_input_error (the audit then exits 2). */
    int (*collect)(struct vg_inventory *inv);
};

void vg_inventory_init(struct vg_inventory *inv, const char *root);
void vg_inventory_free(struct vg_inventory *inv);
/* Runs the package-database readers and every collector in table order. */
int vg_inventory_collect(struct vg_inventory *inv);
struct vg_component *vg_inventory_add(struct vg_inventory *inv, const char *name, const char *version,
                                      enum vg_ecosystem eco, const char *source);
const struct vg_pkg *vg_inventory_pkg(const struct vg_inventory *inv, const char *name);

#endif
