/* col_nccl.c — collector for NCCL and cuDNN: the package database (libnccl2,
 * libcudnn9-cuda-12, libcudnn8…), then the library file name
 * (libnccl.so.2.18.5, libcudnn.so.8.9.7), then the headers' version defines
 * (nccl.h NCCL_MAJOR/MINOR/PATCH, cudnn_version.h CUDNN_MAJOR/MINOR/PATCHLEVEL). */
#include "inventory/inventory.h"
#include "util/strutil.h"
#include <stdio.h>

struct lib_family {
    const char *name;
    const char *const *pkgs;
    const char *lib_stem;
    const char *const *headers;
    const char *const defines[3];
};

static const char *const nccl_pkgs[] = { "libnccl2", "libnccl", NULL };
static const char *const nccl_hdrs[] = { "/usr/include/nccl.h", "/usr/local/include/nccl.h", NULL };
static const char *const cudnn_pkgs[] = { "libcudnn9-cuda-*", "libcudnn9", "libcudnn8", "cudnn9-cuda-*", NULL };
static const char *const cudnn_hdrs[] = { "/usr/include/cudnn_version.h", "/usr/include/x86_64-linux-gnu/cudnn_version_v9.h",
                                          "/usr/include/x86_64-linux-gnu/cudnn_version_v8.h", "/usr/local/cuda/include/cudnn_version.h", NULL };

static const struct lib_family families[] = {
    { "nccl", nccl_pkgs, "libnccl.so.", nccl_hdrs, { "NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH" } },
    { "cudnn", cudnn_pkgs, "libcudnn.so.", cudnn_hdrs, { "CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL" } },
};

static void collect_family(struct vg_inventory *inv, const struct lib_family *f)
{
    if (vg_inventory_add_pkg(inv, f->name, f->pkgs)) return;
    char ver[64], path[256], src[300];
    if (vg_find_lib_version(inv->root, f->lib_stem, ver, sizeof ver, path, sizeof path)) {
        snprintf(src, sizeof src, "file:%s", path);
        vg_inventory_add(inv, f->name, ver, VG_ECO_GENERIC, src);
        return;
    }
    for (int i = 0; f->headers[i]; i++) {
        long v[3];
        if (vg_header_defines(inv->root, f->headers[i], f->defines, v, 3) < 2 || v[0] < 0 || v[1] < 0) continue;
        snprintf(ver, sizeof ver, "%ld.%ld.%ld", v[0], v[1], v[2] < 0 ? 0 : v[2]);
        snprintf(src, sizeof src, "file:%s", f->headers[i]);
        vg_inventory_add(inv, f->name, ver, VG_ECO_GENERIC, src);
        return;
    }
}

static int collect(struct vg_inventory *inv)
{
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) collect_family(inv, &families[i]);
    return 0;
}

const struct vg_collector vg_col_nccl = { "nccl", collect, NULL, 0 };
