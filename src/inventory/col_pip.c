/* col_pip.c — collector for NVIDIA's Python wheels, the way PyTorch and JAX
 * bring their own NCCL, cuDNN and nvcc: each nvidia_*.dist-info directory in
 * the usual site-packages of the system Python, /usr/local and conda
 * (/opt/conda) is read through its METADATA ("Name: nvidia-nccl-cu12",
 * "Version: 2.28.9"); the wheels that carry a component vigil tracks become
 * that component, one per install. */
#include "inventory/inventory.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Wheel name prefix (before "-cuNN") → component. */
static const struct { const char *wheel, *component; } wheels[] = {
    { "nvidia-nccl-cu", "nccl" },
    { "nvidia-cudnn-cu", "cudnn" },
    { "nvidia-cuda-nvcc-cu", "cuda-toolkit" },
};

/* Directories holding python3.X/ (their site-packages or dist-packages under it). */
static const char *const lib_roots[] = { "/usr/lib", "/usr/lib64", "/usr/local/lib", "/opt/conda/lib", NULL };

static const char *component_of(const char *name)
{
    for (size_t i = 0; i < sizeof wheels / sizeof wheels[0]; i++) {
        size_t l = strlen(wheels[i].wheel);
        if (!strncasecmp(name, wheels[i].wheel, l) && name[l] >= '0' && name[l] <= '9') return wheels[i].component;
    }
    return NULL;
}

static void read_dist_info(struct vg_inventory *inv, const char *site, const char *entry)
{
    char path[640], name[96], ver[64];
    snprintf(path, sizeof path, "%s/%s/METADATA", site, entry);
    char *text;
    size_t len;
    if (vg_read_file(inv->root, path, 1 << 20, &text, &len) < 0) return;
    bool ok = vg_wheel_metadata(text, len, name, sizeof name, ver, sizeof ver);
    free(text);
    const char *comp = ok ? component_of(name) : NULL;
    if (!comp) return;
    char src[660];
    snprintf(src, sizeof src, "file:%s", path);
    struct vg_component *c = vg_inventory_add(inv, comp, ver, VG_ECO_GENERIC, src);
    snprintf(c->detail, sizeof c->detail, "pip %s", name);
    if (!strcmp(comp, "cuda-toolkit")) { /* nvcc's wheel: 12.4.131 is CUDA 12.4 */
        char *d1 = strchr(c->upstream, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
        if (d2) *d2 = 0;
        vg_strlcpy(c->upstream_why, "the nvcc wheel's version names the release, not its update", sizeof c->upstream_why);
    }
}

static void scan_site(struct vg_inventory *inv, const char *site)
{
    char **names;
    int n = vg_list_dir(inv->root, site, &names);
    for (int i = 0; i < n; i++)
        if (!strncasecmp(names[i], "nvidia_", 7) && vg_endswith(names[i], ".dist-info")) read_dist_info(inv, site, names[i]);
    if (n >= 0) vg_free_list(names, n);
}

static int collect(struct vg_inventory *inv)
{
    for (int r = 0; lib_roots[r]; r++) {
        char **names;
        int n = vg_list_dir(inv->root, lib_roots[r], &names);
        for (int i = 0; i < n; i++) {
            if (!vg_startswith(names[i], "python3")) continue;
            static const char *const subs[] = { "site-packages", "dist-packages" };
            for (int s = 0; s < 2; s++) {
                char site[400];
                snprintf(site, sizeof site, "%s/%s/%s", lib_roots[r], names[i], subs[s]);
                scan_site(inv, site);
            }
        }
        if (n >= 0) vg_free_list(names, n);
    }
    return 0;
}

const struct vg_collector vg_col_pip = { "pip", collect, NULL, 0 };
