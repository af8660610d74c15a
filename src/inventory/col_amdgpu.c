/* col_amdgpu.c — collector for AMD's GPU driver and the GPUs' firmware:
 * amdgpu-driver is the loaded module's version (/sys/module/amdgpu/version:
 * AMD's DKMS build, "6.12.12"; the kernel's own driver has no such file and
 * is the kernel's, audited as linux-kernel), else the amdgpu-dkms package
 * ("1:6.14.8.30100000-2175180.22.04" → 6.14.8) on a root that is not
 * running; amd-vbios is each distinct VBIOS of the Instinct GPUs
 * (/sys/bus/pci/devices/BDF/vbios_version, "113-M3000100-102").  AMD's
 * advisories name ROCm releases, not these versions: they are inventoried
 * for fleet skew and the buyer's record. */
#include "inventory/inventory.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <stdio.h>
#include <string.h>

#define MAX_GPUS 64

static void driver(struct vg_inventory *inv)
{
    char ver[64] = "";
    const struct vg_pkg *p = vg_inventory_pkg(inv, "amdgpu-dkms");
    if (vg_read_line(inv->root, "/sys/module/amdgpu/version", ver, sizeof ver) == 0 && ver[0]) {
        struct vg_component *c = vg_inventory_add(inv, "amdgpu-driver", ver, VG_ECO_GENERIC,
                                                  "file:/sys/module/amdgpu/version");
        snprintf(c->detail, sizeof c->detail, "AMD's DKMS module loaded%s%.60s", p ? "; package amdgpu-dkms " : "",
                 p ? p->version : "");
        return;
    }
    if (vg_path_exists(inv->root, "/sys/module/amdgpu")) {   /* loaded, no version: the kernel's own driver */
        struct vg_component *c = vg_inventory_add(inv, "amdgpu-driver", inv->kernel[0] ? inv->kernel : "unknown",
                                                  VG_ECO_GENERIC, "file:/sys/module/amdgpu");
        vg_strlcpy(c->detail, "the kernel's own driver (no /sys/module/amdgpu/version): audited as linux-kernel",
                   sizeof c->detail);
        return;
    }
    if (!p) return;
    char up[96], rel[64];
    vg_version_upstream(p->eco, p->version, up, sizeof up);   /* 6.14.8.30100000: the driver, then the release tag */
    size_t dots = 0, i = 0;
    for (; up[i] && i < sizeof rel - 1; i++) {
        if (up[i] == '.' && ++dots == 3) break;
        rel[i] = up[i];
    }
    rel[i] = 0;
    struct vg_component *c = vg_inventory_add(inv, "amdgpu-driver", rel, VG_ECO_GENERIC, inv->pkgdb_source);
    vg_strlcpy(c->package, p->name, sizeof c->package);
    snprintf(c->detail, sizeof c->detail, "package amdgpu-dkms %.60s (not loaded in this root)", p->version);
}

static void vbios(struct vg_inventory *inv)
{
    struct vg_amd_gpu gpus[MAX_GPUS];
    size_t n = vg_amd_gpus(inv->root, gpus, MAX_GPUS);
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i; j++) seen |= !strcmp(gpus[j].vbios, gpus[i].vbios);
        if (seen) continue;
        size_t same = 0;
        for (size_t j = i; j < n; j++) same += !strcmp(gpus[j].vbios, gpus[i].vbios);
        char src[96];
        snprintf(src, sizeof src, "file:/sys/bus/pci/devices/%s/vbios_version", gpus[i].bdf);
        struct vg_component *c =
            vg_inventory_add(inv, "amd-vbios", gpus[i].vbios[0] ? gpus[i].vbios : "unknown", VG_ECO_GENERIC, src);
        vg_strlcpy(c->model, gpus[i].part, sizeof c->model);
        snprintf(c->detail, sizeof c->detail, "%zu of %zu AMD Instinct GPUs (first %s)%s", same, n, gpus[i].bdf,
                 gpus[i].vbios[0] ? "" : ": vbios_version unreadable");
    }
}

static int collect(struct vg_inventory *inv)
{
    driver(inv);
    vbios(inv);
    return 0;
}

const struct vg_collector vg_col_amdgpu = { "amdgpu", collect, NULL, 0 };
