/* col_driver.c — collector for the NVIDIA GPU driver: the running kernel
 * module first (/proc/driver/nvidia/version, then /sys/module/nvidia/version —
 * a .run install leaves no package), then the package database
 * (nvidia-driver-535, nvidia-kernel-open-535, kmod-nvidia…, cuda-drivers),
 * then the user-space library name (libcuda.so.535.129.03). */
#include "inventory/inventory.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const driver_pkgs[] = {
    "nvidia-driver-", "nvidia-kernel-open-", "nvidia-kernel-common-", "nvidia-dkms-",
    "kmod-nvidia", "nvidia-driver", "nvidia-open", "cuda-drivers", NULL,
};

/* A driver version: a branch number of 3 digits, then dotted fields. */
static bool driver_like(const char *v)
{
    char up[96];
    vg_version_upstream(VG_ECO_DPKG, v, up, sizeof up);
    return isdigit((unsigned char)up[0]) && strtol(up, NULL, 10) >= 300 && strchr(up, '.');
}

static const struct vg_pkg *driver_pkg(const struct vg_inventory *inv)
{
    for (int i = 0; driver_pkgs[i]; i++) {
        size_t it = 0;
        const struct vg_pkg *p;
        while ((p = vg_inventory_pkg_prefix(inv, driver_pkgs[i], &it)))
            if (driver_like(p->version)) return p;
    }
    return NULL;
}

static int collect(struct vg_inventory *inv)
{
    char line[512], ver[64] = "", detail[128] = "";
    const char *src = NULL;
    if (vg_read_line(inv->root, "/proc/driver/nvidia/version", line, sizeof line) == 0 && strstr(line, "NVRM")) {
        char *m = strstr(line, "Module");
        if (m && vg_scan_version(m, ver, sizeof ver)) {
            src = "/proc/driver/nvidia/version";
            snprintf(detail, sizeof detail, "%s kernel module", strstr(line, "Open Kernel") ? "open" : "proprietary");
        }
    }
    if (!src && vg_read_line(inv->root, "/sys/module/nvidia/version", line, sizeof line) == 0 &&
        vg_scan_version(line, ver, sizeof ver))
        src = "/sys/module/nvidia/version";
    const struct vg_pkg *p = driver_pkg(inv);
    struct vg_component *c = NULL;
    if (src) {
        c = vg_inventory_add(inv, "nvidia-driver", ver, VG_ECO_NVIDIA, src);
        vg_strlcpy(c->detail, detail, sizeof c->detail);
        if (p) {
            vg_strlcpy(c->package, p->name, sizeof c->package);
            size_t l = strlen(c->detail);
            snprintf(c->detail + l, sizeof c->detail - l, "%spackage %s %s", l ? "; " : "", p->name, p->version);
        }
        return 0;
    }
    if (p) {
        c = vg_inventory_add(inv, "nvidia-driver", p->version, p->eco, inv->pkgdb_source);
        vg_version_upstream(p->eco, p->version, c->upstream, sizeof c->upstream);
        vg_strlcpy(c->package, p->name, sizeof c->package);
        vg_strlcpy(c->detail, "not loaded (no /proc/driver/nvidia)", sizeof c->detail);
        return 0;
    }
    char path[256];
    if (vg_find_lib_version(inv->root, "libcuda.so.", ver, sizeof ver, path, sizeof path)) {
        char s[300];
        snprintf(s, sizeof s, "file:%s", path);
        c = vg_inventory_add(inv, "nvidia-driver", ver, VG_ECO_NVIDIA, s);
        vg_strlcpy(c->detail, "not loaded (no /proc/driver/nvidia)", sizeof c->detail);
    }
    return 0;
}

const struct vg_collector vg_col_driver = { "nvidia-driver", collect, NULL, 0 };
