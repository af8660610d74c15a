/* sysfs.h — readers of the node's sysfs (all through util/rootfs, so --root
 * works): InfiniBand/RoCE ports (sysfs_ib.c) and the PCIe link status and AER
 * counters of GPU and NIC devices (sysfs_pci.c), and the events they imply. */
#ifndef VG_SYSFS_H
#define VG_SYSFS_H
#include "core/event.h"
#include <stddef.h>

/* /sys/class/infiniband/<dev>/ports/<port>/…; a counter is VG_SYSFS_MISSING
 * when its file is absent, VG_SYSFS_GARBAGE when it holds no number (other
 * numbers are -1 when unreadable). */
#define VG_SYSFS_MISSING (-1)
#define VG_SYSFS_GARBAGE (-2)
struct vg_ib_port {
    char dev[32];              /* mlx5_0 */
    int port;
    char pci[16];              /* the HCA's PCI address (from the device link), or "" */
    int state;                 /* 4 = ACTIVE */
    char state_name[16];       /* "ACTIVE", "DOWN", "INIT", "ARMED" … */
    int phys_state;            /* 5 = LinkUp */
    char phys_name[24];        /* "LinkUp", "Disabled", "Polling" … */
    double rate_gbps;          /* 400 */
    char rate[48];             /* "400 Gb/sec (4X NDR)" */
    char link_layer[16];       /* "InfiniBand" / "Ethernet" */
    long long link_downed, link_error_recovery, symbol_error, port_rcv_errors,
        local_link_integrity_errors, excessive_buffer_overrun_errors, port_xmit_discards;
    /* RoCE: the port's network interface (gid_attrs/ndevs/0, else the HCA's
     * only one) and its statistics */
    char netdev[16];
    long long carrier_changes, rx_errors, tx_errors;
    /* the GPU nearest the HCA on the PCIe tree (the rank that uses it): its
     * index among the node's NVIDIA GPUs in PCI order, -1 none */
    int gpu;
    char gpu_pci[16];
};

/* Every port of every device, sorted by device then port.  Returns the count
 * (*out malloc'd; may be 0 with *out NULL when there is no InfiniBand). */
size_t vg_ib_ports(const char *root, struct vg_ib_port **out);
/* Finds "dev:port" (port defaults to 1) in ports; NULL when absent. */
const struct vg_ib_port *vg_ib_find(const struct vg_ib_port *ports, size_t n, const char *spec);
/* ib-down when the port is not ACTIVE; ib-degraded when min_gbps > 0 and the
 * rate is below it.  Source "sysfs". */
void vg_ib_port_events(const struct vg_ib_port *p, double min_gbps, const char *node, struct vg_event *ev,
                       int *n, int max);

/* A GPU (vendor 0x10de, display class) or NIC (network class 0x02) under
 * /sys/bus/pci/devices. */
struct vg_pci_dev {
    char addr[16];             /* 0000:18:00.0 */
    char kind[8];              /* "gpu" / "nic" */
    unsigned vendor, device, cls;
    int gen, width, gen_max, width_max;     /* -1 unknown */
    long long aer_cor, aer_nonfatal, aer_fatal;  /* TOTAL_ERR_*; -1 when no AER */
};

size_t vg_pci_devices(const char *root, struct vg_pci_dev **out);
/* "32.0 GT/s PCIe" → 5; -1 when unknown. */
int vg_pcie_gen_of_speed(const char *speed);
/* The GPU nearest the device at pci on the PCIe tree (the longest common
 * path of their /sys/devices entries, at least the same root complex): its
 * index among the NVIDIA GPUs in PCI address order, and its address into
 * gpu_pci; -1 when none shares a root complex with it. */
int vg_pci_nearest_gpu(const char *root, const char *pci, char gpu_pci[16]);
/* pcie-degraded when the link is narrower than its maximum (speed is not
 * compared: idle devices slow their links down); aer-fatal / aer-nonfatal
 * when it has uncorrectable errors.  Source "sysfs". */
void vg_pci_dev_events(const struct vg_pci_dev *d, const char *node, struct vg_event *ev, int *n, int max);

#endif
