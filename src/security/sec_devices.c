/* sec_devices.c — device isolation a node shows: the IOMMU (DMA remapping,
 * needed before a GPU or NIC can be handed to a tenant's VM or container:
 * /sys/kernel/iommu_groups) and a BlueField DPU's RShim interface on the host
 * (/dev/rshimN/{boot,console,rshim}: whoever can open them can reflash or take
 * the console of the DPU that polices the network). */
#include "security/security.h"
#include "util/rootfs.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

static void iommu(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    char **names;
    int n = vg_list_dir(c->root, "/sys/kernel/iommu_groups", &names);
    char ev[300];
    if (n < 0) {
        snprintf(ev, sizeof ev, "/sys/kernel/iommu_groups: %s", strerror(errno));
        vg_sec_emit(c, k, VG_SEC_UNKNOWN, ev, "could not check: %s", strerror(errno));
        return;
    }
    int groups = 0;
    for (int i = 0; i < n; i++) groups += names[i][0] != '.';
    vg_free_list(names, n);
    n = groups;
    snprintf(ev, sizeof ev, "/sys/kernel/iommu_groups: %d group%s", n, n == 1 ? "" : "s");
    if (n) vg_sec_emit(c, k, VG_SEC_PASS, ev, "the IOMMU is on (%d group%s): devices can be passed through isolated", n,
                            n == 1 ? "" : "s");
    else vg_sec_emit(c, k, VG_SEC_WARN, ev, "the IOMMU is off: a device handed to a tenant can DMA into the host's memory");
}

static void rshim(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    char **names;
    int n = vg_list_dir(c->root, "/dev", &names);
    if (n < 0) {
        char ev[300];
        snprintf(ev, sizeof ev, "/dev: %s", strerror(errno));
        vg_sec_emit(c, k, VG_SEC_UNKNOWN, ev, "could not check: %s", strerror(errno));
        return;
    }
    struct sbuf e = SBUF_INIT, bad = SBUF_INIT;
    int found = 0, open_to_all = 0;
    for (int i = 0; i < n; i++) {
        if (!vg_startswith(names[i], "rshim")) continue;
        found++;
        static const char *const nodes[] = { "boot", "console", "rshim", "misc" };
        for (size_t j = 0; j < sizeof nodes / sizeof nodes[0]; j++) {
            char p[300], mode[16];
            struct stat st;
            snprintf(p, sizeof p, "/dev/%s/%s", names[i], nodes[j]);
            if (vg_sec_stat(c, p, &st)) continue;
            vg_sec_mode_str(&st, mode, sizeof mode);
            if (e.len < 400) sbuf_printf(&e, "%s%s %s", e.len ? ", " : "", p, mode);
            if (st.st_mode & 06) open_to_all++, sbuf_printf(&bad, "%s%s", bad.len ? ", " : "", p);
        }
    }
    vg_free_list(names, n);
    if (!found) vg_sec_emit(c, k, VG_SEC_PASS, "/dev: no rshim* device", "no BlueField RShim interface on this host");
    else if (!e.len) vg_sec_emit(c, k, VG_SEC_UNKNOWN, "/dev/rshim*: no readable node", "could not check: the RShim nodes cannot be read");
    else if (open_to_all) vg_sec_emit(c, k, VG_SEC_FAIL, e.s, "RShim nodes open to every user: %s", bad.s);
    else vg_sec_emit(c, k, VG_SEC_PASS, e.s, "%d RShim interface%s, root only", found, found == 1 ? "" : "s");
    sbuf_free(&e), sbuf_free(&bad);
}

static const struct vg_sec_check checks[] = {
    { "device.iommu", "the IOMMU isolates devices' DMA (PCIe passthrough)", VG_SEV_MEDIUM,
      "enable VT-d/AMD-Vi in firmware and boot with intel_iommu=on (or amd_iommu=on) iommu=pt", iommu },
    { "device.rshim", "a BlueField DPU's RShim interface is not open to tenants", VG_SEV_CRITICAL,
      "chmod 0600 /dev/rshim*/*; stop the rshim service on hosts tenants use, or manage the DPU out of band", rshim },
};

const struct vg_sec_family vg_sec_devices = { "devices", checks, sizeof checks / sizeof checks[0] };
