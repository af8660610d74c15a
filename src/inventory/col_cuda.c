/* col_cuda.c — collector for CUDA: every toolkit under /usr/local/cuda*
 * (version.json's "cuda" entry, version.txt "CUDA Version X.Y.Z", the
 * banner inside bin/nvcc, cuda.h's CUDA_VERSION), and the
 * CUDA version the driver supports (cuda-driver), derived from the driver
 * version (the nvidia-driver component, else the libcuda.so.X.Y.Z file name)
 * with NVIDIA's table of minimum driver per CUDA release. */
#include "inventory/inventory.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Minimum Linux driver for each CUDA release (CUDA Toolkit release notes,
 * table "CUDA Toolkit and Corresponding Driver Versions"), newest first. */
static const struct { const char *cuda, *min_driver; } cuda_drivers[] = {
    { "13.0", "580.65.06" }, { "12.9", "575.51.03" }, { "12.8", "570.26" },    { "12.6", "560.28.03" },
    { "12.5", "555.42.02" }, { "12.4", "550.54.14" }, { "12.3", "545.23.06" }, { "12.2", "535.54.03" },
    { "12.1", "530.30.02" }, { "12.0", "525.60.13" }, { "11.8", "520.61.05" }, { "11.7", "515.43.04" },
    { "11.6", "510.39.01" }, { "11.5", "495.29.05" }, { "11.4", "470.42.01" }, { "11.3", "465.19.01" },
    { "11.2", "460.27.03" }, { "11.1", "455.23" },    { "11.0", "450.36.06" },
};

/* "12.4.1" stays; a third field that is a build number or date
 * ("11.8.20220929", version.txt's "11.0.228") is not an update number: the
 * comparable upstream is then "X.Y". */
static void cuda_upstream(const char *v, char *up, size_t n)
{
    vg_strlcpy(up, v, n);
    char *d1 = strchr(up, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
    if (d2 && strtol(d2 + 1, NULL, 10) > 9) *d2 = 0;
}

/* The toolkit's version from its own files, best first: version.json's
 * "cuda" entry, version.txt ("CUDA Version 11.8.89"), nvcc's banner (the text
 * `nvcc --version` prints, read from bin/nvcc: nothing in the root is run),
 * cuda.h's CUDA_VERSION.  The last two name the release only (13.0), not its
 * update; *why says so. */
static bool toolkit_version(struct vg_inventory *inv, const char *dir, char *ver, size_t vn, char *path, size_t pn,
                            const char **why)
{
    char *text;
    *why = "";
    snprintf(path, pn, "/usr/local/%s/version.json", dir);
    if (vg_read_file(inv->root, path, 1 << 20, &text, NULL) == 0) {
        json_t *j = json_loads(text, 0, NULL);
        const char *v = json_string_value(json_object_get(json_object_get(j, "cuda"), "version"));
        if (v) vg_strlcpy(ver, v, vn);
        json_decref(j);
        free(text);
        if (ver[0]) return true;
    }
    char line[256];
    snprintf(path, pn, "/usr/local/%s/version.txt", dir);
    if (vg_read_line(inv->root, path, line, sizeof line) == 0 && vg_startswith(line, "CUDA Version") &&
        vg_scan_version(line, ver, vn))
        return true;
    char banner[160], build[64];
    snprintf(path, pn, "/usr/local/%s/bin/nvcc", dir);
    if (vg_scan_file(inv->root, path, "Cuda compilation tools, release ", 256u << 20, banner, sizeof banner) == 1 &&
        vg_nvcc_banner(banner, strlen(banner), ver, vn, build, sizeof build)) {
        *why = "nvcc's banner names the release, not its update";
        return true;
    }
    static const char *const names[] = { "CUDA_VERSION" };
    long code;
    snprintf(path, pn, "/usr/local/%s/include/cuda.h", dir);
    if (vg_header_defines(inv->root, path, names, &code, 1) == 1 && vg_cuda_version_code(code, ver, vn)) {
        *why = "cuda.h's CUDA_VERSION names the release, not its update";
        return true;
    }
    return false;
}

static void add_toolkit(struct vg_inventory *inv, const char *dir)
{
    char path[320], ver[64] = "", src[330];
    const char *why;
    if (!toolkit_version(inv, dir, ver, sizeof ver, path, sizeof path, &why)) return;
    snprintf(src, sizeof src, "file:%s", path);
    struct vg_component *c = vg_inventory_add(inv, "cuda-toolkit", ver, VG_ECO_GENERIC, src);
    cuda_upstream(ver, c->upstream, sizeof c->upstream);
    snprintf(c->detail, sizeof c->detail, "/usr/local/%s", dir);
    vg_strlcpy(c->upstream_why, why, sizeof c->upstream_why);
}

static void add_driver_cuda(struct vg_inventory *inv)
{
    char drv[64] = "", path[256], src[300];
    const struct vg_component *d = vg_inventory_find(inv, "nvidia-driver");
    if (d) {
        vg_strlcpy(drv, d->upstream, sizeof drv);
        snprintf(src, sizeof src, "%s", d->source);
    } else if (vg_find_lib_version(inv->root, "libcuda.so.", drv, sizeof drv, path, sizeof path)) {
        snprintf(src, sizeof src, "file:%s", path);
    }
    if (!drv[0]) return;
    for (size_t i = 0; i < sizeof cuda_drivers / sizeof cuda_drivers[0]; i++) {
        if (vg_version_cmp(VG_ECO_NVIDIA, drv, cuda_drivers[i].min_driver) < 0) continue;
        struct vg_component *c = vg_inventory_add(inv, "cuda-driver", cuda_drivers[i].cuda, VG_ECO_GENERIC, src);
        snprintf(c->detail, sizeof c->detail, "supported by driver %s", drv);
        return;
    }
}

static int collect(struct vg_inventory *inv)
{
    char **names;
    int n = vg_cuda_dirs(inv->root, &names);
    for (int i = 0; i < n; i++) add_toolkit(inv, names[i]);
    if (n >= 0) vg_free_list(names, n);
    add_driver_cuda(inv);
    return 0;
}

const struct vg_collector vg_col_cuda = { "cuda", collect, NULL, 0 };
