/* sysfs_pci.c — PCIe link status and AER counters of GPU and NIC devices
 * under /sys/bus/pci/devices (entries are symlinks into /sys/devices).
 * See sysfs.h. */
#include "signal/sysfs.h"
#include "signal/gpu.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCI_DIR "/sys/bus/pci/devices"

int vg_pcie_gen_of_speed(const char *speed)
{
    static const struct { double gts; int gen; } gens[] = {
        { 2.5, 1 }, { 5, 2 }, { 8, 3 }, { 16, 4 }, { 32, 5 }, { 64, 6 }, { 128, 7 },
    };
    char *end;
    double v = strtod(speed, &end);
    if (end == speed || !strstr(end, "GT/s")) return -1;
    for (size_t i = 0; i < sizeof gens / sizeof gens[0]; i++)
        if (v > gens[i].gts - 0.01 && v < gens[i].gts + 0.01) return gens[i].gen;
    return -1;
}

static int read_int(const char *root, const char *addr, const char *leaf, int base)
{
    char path[128], buf[64], *end;
    snprintf(path, sizeof path, PCI_DIR "/%s/%s", addr, leaf);
    if (vg_read_line(root, path, buf, sizeof buf) < 0) return -1;
    long v = strtol(buf, &end, base);
    return end == buf || *end ? -1 : (int)v;
}

static int read_gen(const char *root, const char *addr, const char *leaf)
{
    char path[128], buf[64];
    snprintf(path, sizeof path, PCI_DIR "/%s/%s", addr, leaf);
    return vg_read_line(root, path, buf, sizeof buf) < 0 ? -1 : vg_pcie_gen_of_speed(buf);
}

/* The TOTAL_ERR_* line of an aer_dev_* file; -1 when absent. */
static long long read_aer(const char *root, const char *addr, const char *leaf, const char *total)
{
    char path[128], *data;
    snprintf(path, sizeof path, PCI_DIR "/%s/%s", addr, leaf);
    if (vg_read_file(root, path, 1 << 14, &data, NULL) < 0) return -1;
    long long v = -1;
    char *save = NULL;
    for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[32];
        long long x;
        if (sscanf(line, "%31s %lld", name, &x) == 2 && strcmp(name, total) == 0) v = x;
    }
    free(data);
    return v;
}

size_t vg_pci_devices(const char *root, struct vg_pci_dev **out)
{
    *out = NULL;
    char **names;
    int nn = vg_list_dir(root, PCI_DIR, &names);
    size_t n = 0, cap = 0;
    for (int i = 0; i < nn; i++) {
        char addr[16];
        if (!vg_gpu_pci_id(names[i], addr)) continue;
        int vendor = read_int(root, names[i], "vendor", 16), cls = read_int(root, names[i], "class", 16);
        if (vendor < 0 || cls < 0) continue;
        const char *kind = (vendor == 0x10de && (cls >> 16) == 0x03) ? "gpu" : (cls >> 16) == 0x02 ? "nic" : NULL;
        if (!kind) continue;
        if (n == cap) *out = vg_xrealloc(*out, sizeof **out * (cap = cap ? cap * 2 : 8));
        struct vg_pci_dev *d = &(*out)[n++];
        memset(d, 0, sizeof *d);
        vg_strlcpy(d->addr, addr, sizeof d->addr);
        vg_strlcpy(d->kind, kind, sizeof d->kind);
        d->vendor = (unsigned)vendor;
        d->cls = (unsigned)cls;
        d->device = (unsigned)read_int(root, names[i], "device", 16);
        d->gen = read_gen(root, names[i], "current_link_speed");
        d->gen_max = read_gen(root, names[i], "max_link_speed");
        d->width = read_int(root, names[i], "current_link_width", 10);
        d->width_max = read_int(root, names[i], "max_link_width", 10);
        d->aer_cor = read_aer(root, names[i], "aer_dev_correctable", "TOTAL_ERR_COR");
        d->aer_nonfatal = read_aer(root, names[i], "aer_dev_nonfatal", "TOTAL_ERR_NONFATAL");
        d->aer_fatal = read_aer(root, names[i], "aer_dev_fatal", "TOTAL_ERR_FATAL");
    }
    if (nn > 0) vg_free_list(names, nn);
    return n;
}

/* How many leading path components a and b share. */
static int common_depth(const char *a, const char *b)
{
    int depth = 0;
    for (size_t i = 0;; i++) {
        bool ea = !a[i] || a[i] == '/', eb = !b[i] || b[i] == '/';
        if (ea && eb) {
            depth++;
            if (!a[i] || !b[i]) return depth;
        } else if (a[i] != b[i])
            return depth;
    }
}

int vg_pci_nearest_gpu(const char *root, const char *pci, char gpu_pci[16])
{
    char path[96], mine[512], theirs[512];
    gpu_pci[0] = '\0';
    snprintf(path, sizeof path, PCI_DIR "/%s", pci);
    if (vg_read_link(root, path, mine, sizeof mine)) return -1;
    struct vg_pci_dev *d;
    size_t n = vg_pci_devices(root, &d);
    int best = -1, best_depth = 0, index = 0;
    /* the NVIDIA GPUs in PCI address order: the index nvidia-smi gives them */
    for (size_t i = 0; i < n; i++) {
        if (strcmp(d[i].kind, "gpu")) continue;
        snprintf(path, sizeof path, PCI_DIR "/%s", d[i].addr);
        /* "../../../devices/pci0000:16/…": the shared "../" and "devices" do not count, the root complex does */
        int depth = vg_read_link(root, path, theirs, sizeof theirs) ? 0 : common_depth(mine, theirs);
        const char *rc = strstr(theirs, "devices/pci");
        int floor = 0;
        for (const char *p = theirs; rc && p <= rc + 8; p++) floor += *p == '/';
        if (rc && depth >= floor + 1 && depth > best_depth) {
            best = index, best_depth = depth;
            vg_strlcpy(gpu_pci, d[i].addr, 16);
        }
        index++;
    }
    free(d);
    return best;
}

void vg_pci_dev_events(const struct vg_pci_dev *d, const char *node, struct vg_event *ev, int *n, int max)
{
    struct vg_event *e;
    /* Width only: an idle device lowers its link speed to save power. */
    if (d->width > 0 && d->width_max > 0 && d->width < d->width_max &&
        (e = vg_event_append(ev, n, max, node, "sysfs", !strcmp(d->kind, "gpu") ? "pcie-degraded" : "nic-pcie-degraded",
                             d->addr))) {
        snprintf(e->raw, sizeof e->raw, "%s %s: PCIe link gen%d x%d, max gen%d x%d", d->kind, d->addr, d->gen,
                 d->width, d->gen_max, d->width_max);
    }
    if ((d->aer_fatal > 0 || d->aer_nonfatal > 0) &&
        (e = vg_event_append(ev, n, max, node, "sysfs", d->aer_fatal > 0 ? "aer-fatal" : "aer-nonfatal", d->addr))) {
        snprintf(e->raw, sizeof e->raw, "%s %s: PCIe AER fatal=%lld nonfatal=%lld correctable=%lld", d->kind,
                 d->addr, d->aer_fatal, d->aer_nonfatal, d->aer_cor);
    }
}
