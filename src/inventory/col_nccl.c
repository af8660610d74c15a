/* col_nccl.c — collector for NCCL and cuDNN.  The system-wide install: the
 * package database (libnccl2, libcudnn9-cuda-12, libcudnn8…), then the
 * library file name (libnccl.so.2.18.5, libcudnn.so.8.9.7), then the headers'
 * version defines (nccl.h NCCL_MAJOR/MINOR/PATCH, cudnn_version.h
 * CUDNN_MAJOR/MINOR/PATCHLEVEL).  Then each CUDA toolkit tree
 * (/usr/local/cuda-13.0) holding its own copy in include/ or lib64/, one
 * component per tree.  Python wheels are col_pip.c's. */
#include "inventory/inventory.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <stdio.h>

struct lib_family {
    const char *name;
    const char *const *pkgs;
    const char *lib_stem;
    const char *const *headers;
    const char *header;        /* its name inside a CUDA tree's include/ */
    const char *const defines[3];
};

static const char *const nccl_pkgs[] = { "libnccl2", "libnccl", NULL };
static const char *const nccl_hdrs[] = { "/usr/include/nccl.h", "/usr/local/include/nccl.h", NULL };
static const char *const cudnn_pkgs[] = { "libcudnn9-cuda-*", "libcudnn9", "libcudnn8", "cudnn9-cuda-*", NULL };
static const char *const cudnn_hdrs[] = { "/usr/include/cudnn_version.h", "/usr/include/x86_64-linux-gnu/cudnn_version_v9.h",
                                          "/usr/include/x86_64-linux-gnu/cudnn_version_v8.h", NULL };

static const struct lib_family families[] = {
    { "nccl", nccl_pkgs, "libnccl.so.", nccl_hdrs, "nccl.h", { "NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH" } },
    { "cudnn", cudnn_pkgs, "libcudnn.so.", cudnn_hdrs, "cudnn_version.h", { "CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL" } },
};

/* The version the header at path defines (MAJOR and MINOR at least). */
static bool header_version(struct vg_inventory *inv, const struct lib_family *f, const char *path, char *ver, size_t n)
{
    long v[3];
    if (vg_header_defines(inv->root, path, f->defines, v, 3) < 2 || v[0] < 0 || v[1] < 0) return false;
    snprintf(ver, n, "%ld.%ld.%ld", v[0], v[1], v[2] < 0 ? 0 : v[2]);
    return true;
}

static struct vg_component *add_file(struct vg_inventory *inv, const char *name, const char *ver, const char *path)
{
    char src[340];
    snprintf(src, sizeof src, "file:%s", path);
    return vg_inventory_add(inv, name, ver, VG_ECO_GENERIC, src);
}

static void system_install(struct vg_inventory *inv, const struct lib_family *f)
{
    if (vg_inventory_add_pkg(inv, f->name, f->pkgs)) return;
    char ver[64], path[256];
    if (vg_find_lib_version(inv->root, f->lib_stem, ver, sizeof ver, path, sizeof path)) {
        add_file(inv, f->name, ver, path);
        return;
    }
    for (int i = 0; f->headers[i]; i++)
        if (header_version(inv, f, f->headers[i], ver, sizeof ver)) {
            add_file(inv, f->name, ver, f->headers[i]);
            return;
        }
}

/* The copy inside one CUDA tree: its header, else its library. */
static void tree_install(struct vg_inventory *inv, const struct lib_family *f, const char *dir)
{
    char ver[64], path[320], lib[300];
    snprintf(path, sizeof path, "/usr/local/%s/include/%s", dir, f->header);
    bool found = header_version(inv, f, path, ver, sizeof ver);
    static const char *const libdirs[] = { "lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib" };
    for (size_t i = 0; !found && i < sizeof libdirs / sizeof libdirs[0]; i++) {
        snprintf(lib, sizeof lib, "/usr/local/%s/%s", dir, libdirs[i]);
        found = vg_find_lib_in(inv->root, lib, f->lib_stem, ver, sizeof ver, path, sizeof path);
    }
    if (!found) return;
    struct vg_component *c = add_file(inv, f->name, ver, path);
    snprintf(c->detail, sizeof c->detail, "/usr/local/%s", dir);
}

static int collect(struct vg_inventory *inv)
{
    char **dirs;
    int n = vg_cuda_dirs(inv->root, &dirs);
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
        system_install(inv, &families[i]);
        for (int d = 0; d < n; d++) tree_install(inv, &families[i], dirs[d]);
    }
    if (n >= 0) vg_free_list(dirs, n);
    return 0;
}

const struct vg_collector vg_col_nccl = { "nccl", collect, NULL, 0 };
