/* col_pip.c — collector for NVIDIA's Python wheels, the way PyTorch and JAX
 * bring their own NCCL, cuDNN and nvcc: each nvidia_*.dist-info directory in
 * the usual site-packages of the system Python, /usr/local and conda
 * (/opt/conda), and in a CUDA tree installed from the wheels
 * (/usr/local/cuda-13.0/dist-info), is read through its METADATA ("Name:
 * nvidia-nccl-cu13", "Version: 2.28.9"); the wheels that carry a component
 * vigil tracks become that component, one per install (a tree's wheel only
 * when the tree's own files did not already give it). */
#include "inventory/inventory.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Wheel name → component: the name itself (CUDA 13's wheels:
 * "nvidia-cuda-nvcc") or followed by "-cuNN" ("nvidia-nccl-cu13"). */
static const struct { const char *wheel, *component; } wheels[] = {
    { "nvidia-nccl", "nccl" },
    { "nvidia-cudnn", "cudnn" },
    { "nvidia-cuda-nvcc", "cuda-toolkit" },
};

/* Directories holding python3.X/ (their site-packages or dist-packages under it). */
static const char *const lib_roots[] = { "/usr/lib", "/usr/lib64", "/usr/local/lib", "/opt/conda/lib", NULL };

static const char *component_of(const char *name)
{
    for (size_t i = 0; i < sizeof wheels / sizeof wheels[0]; i++) {
        size_t l = strlen(wheels[i].wheel);
        if (strncasecmp(name, wheels[i].wheel, l)) continue;
        const char *rest = name + l;
        if (!*rest || (!strncasecmp(rest, "-cu", 3) && rest[3] >= '0' && rest[3] <= '9' &&
                       strspn(rest + 3, "0123456789") == strlen(rest + 3)))
            return wheels[i].component;
    }
    return NULL;
}

/* True when the CUDA tree (detail "/usr/local/cuda-13.0") already has the
 * component from its own files: the wheel is how that tree was installed. */
static bool tree_has(struct vg_inventory *inv, const char *tree, const char *comp)
{
    for (size_t i = 0; tree && i < inv->n; i++)
        if (!strcmp(inv->items[i].name, comp) && !strcmp(inv->items[i].detail, tree)) return true;
    return false;
}

static void read_dist_info(struct vg_inventory *inv, const char *site, const char *entry, const char *tree)
{
    char path[640], name[96], ver[64];
    snprintf(path, sizeof path, "%s/%s/METADATA", site, entry);
    char *text;
    size_t len;
    if (vg_read_file(inv->root, path, 1 << 20, &text, &len) < 0) return;
    bool ok = vg_wheel_metadata(text, len, name, sizeof name, ver, sizeof ver);
    free(text);
    const char *comp = ok ? component_of(name) : NULL;
    if (!comp || tree_has(inv, tree, comp)) return;
    char src[660];
    snprintf(src, sizeof src, "file:%s", path);
    struct vg_component *c = vg_inventory_add(inv, comp, ver, VG_ECO_GENERIC, src);
    if (tree) snprintf(c->detail, sizeof c->detail, "%s", tree);
    else snprintf(c->detail, sizeof c->detail, "pip %s", name);
    if (!strcmp(comp, "cuda-toolkit")) { /* nvcc's wheel: 12.4.131 is CUDA 12.4 */
        char *d1 = strchr(c->upstream, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
        if (d2) *d2 = 0;
        vg_strlcpy(c->upstream_why, "the nvcc wheel's version names the release, not its update", sizeof c->upstream_why);
    }
}

static void scan_site(struct vg_inventory *inv, const char *site, const char *tree)
{
    char **names;
    int n = vg_list_dir(inv->root, site, &names);
    for (int i = 0; i < n; i++)
        if (!strncasecmp(names[i], "nvidia_", 7) && vg_endswith(names[i], ".dist-info"))
            read_dist_info(inv, site, names[i], tree);
    if (n >= 0) vg_free_list(names, n);
}

static int collect(struct vg_inventory *inv)
{
    char **dirs;   /* a CUDA tree installed from the wheels keeps their dist-info */
    int nd = vg_cuda_dirs(inv->root, &dirs);
    for (int d = 0; d < nd; d++) {
        char site[300], tree[300];
        snprintf(site, sizeof site, "/usr/local/%s/dist-info", dirs[d]);
        snprintf(tree, sizeof tree, "/usr/local/%s", dirs[d]);
        scan_site(inv, site, tree);
    }
    if (nd >= 0) vg_free_list(dirs, nd);
    for (int r = 0; lib_roots[r]; r++) {
        char **names;
        int n = vg_list_dir(inv->root, lib_roots[r], &names);
        for (int i = 0; i < n; i++) {
            if (!vg_startswith(names[i], "python3")) continue;
            static const char *const subs[] = { "site-packages", "dist-packages" };
            for (int s = 0; s < 2; s++) {
                char site[400];
                snprintf(site, sizeof site, "%s/%s/%s", lib_roots[r], names[i], subs[s]);
                scan_site(inv, site, NULL);
            }
        }
        if (n >= 0) vg_free_list(names, n);
    }
    return 0;
}

const struct vg_collector vg_col_pip = { "pip", collect, NULL, 0 };
