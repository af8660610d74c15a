/* sysfs_ib.c — InfiniBand / RoCE ports from /sys/class/infiniband (device
 * entries are symlinks into the PCI tree; the link gives the HCA's address).
 * See sysfs.h. */
#include "signal/sysfs.h"
#include "signal/gpu.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IB_DIR "/sys/class/infiniband"

/* A counter: its value, VG_SYSFS_MISSING, or VG_SYSFS_GARBAGE. */
static long long read_num(const char *root, const char *path)
{
    char buf[64];
    long v;
    if (vg_read_line(root, path, buf, sizeof buf) < 0) return VG_SYSFS_MISSING;
    return vg_parse_long(vg_trim(buf), &v) && v >= 0 ? v : VG_SYSFS_GARBAGE;
}

/* The port's network interface: the first GID's (RoCE), else the HCA's only one. */
static void port_netdev(const char *root, const char *dev, int port, char out[16])
{
    char path[192], **names;
    out[0] = '\0';
    snprintf(path, sizeof path, IB_DIR "/%s/ports/%d/gid_attrs/ndevs/0", dev, port);
    if (vg_read_line(root, path, out, 16) == 0 && out[0]) return;
    out[0] = '\0';
    snprintf(path, sizeof path, IB_DIR "/%s/device/net", dev);
    int n = vg_list_dir(root, path, &names);
    if (n == 1) vg_strlcpy(out, names[0], 16);
    if (n > 0) vg_free_list(names, n);
}

/* "4: ACTIVE" → 4 and "ACTIVE". */
static int read_state(const char *root, const char *path, char *name, size_t n)
{
    char buf[64];
    name[0] = 0;
    if (vg_read_line(root, path, buf, sizeof buf) < 0) return -1;
    char *colon = strchr(buf, ':');
    if (!colon) {
        vg_strlcpy(name, buf, n);
        return -1;
    }
    *colon = 0;
    vg_strlcpy(name, vg_trim(colon + 1), n);
    long v;
    return vg_parse_long(vg_trim(buf), &v) ? (int)v : -1;
}

/* The last "dddd:bb:dd.f" component before "/infiniband/" in the link target. */
static void hca_pci(const char *root, const char *dev, char pci[16])
{
    char path[128], target[512];
    pci[0] = 0;
    snprintf(path, sizeof path, IB_DIR "/%s", dev);
    if (vg_read_link(root, path, target, sizeof target) < 0) return;
    char *ib = strstr(target, "/infiniband/");
    if (!ib) return;
    *ib = 0;
    char *slash = strrchr(target, '/');
    if (!vg_gpu_pci_id(slash ? slash + 1 : target, pci)) pci[0] = 0;
}

static void read_port(const char *root, const char *dev, int port, struct vg_ib_port *p)
{
    char path[256];
    memset(p, 0, sizeof *p);
    vg_strlcpy(p->dev, dev, sizeof p->dev);
    p->port = port;
    hca_pci(root, dev, p->pci);
#define PORT_PATH(leaf) (snprintf(path, sizeof path, IB_DIR "/%s/ports/%d/%s", dev, port, leaf), path)
    p->state = read_state(root, PORT_PATH("state"), p->state_name, sizeof p->state_name);
    p->phys_state = read_state(root, PORT_PATH("phys_state"), p->phys_name, sizeof p->phys_name);
    p->rate_gbps = -1;
    if (vg_read_line(root, PORT_PATH("rate"), p->rate, sizeof p->rate) == 0) {
        char *end;
        double r = strtod(p->rate, &end);
        if (end != p->rate) p->rate_gbps = r;
    }
    if (vg_read_line(root, PORT_PATH("link_layer"), p->link_layer, sizeof p->link_layer) < 0)
        p->link_layer[0] = 0;
    p->link_downed = read_num(root, PORT_PATH("counters/link_downed"));
    p->link_error_recovery = read_num(root, PORT_PATH("counters/link_error_recovery"));
    p->symbol_error = read_num(root, PORT_PATH("counters/symbol_error"));
    p->port_rcv_errors = read_num(root, PORT_PATH("counters/port_rcv_errors"));
    p->local_link_integrity_errors = read_num(root, PORT_PATH("counters/local_link_integrity_errors"));
    p->excessive_buffer_overrun_errors = read_num(root, PORT_PATH("counters/excessive_buffer_overrun_errors"));
    p->port_xmit_discards = read_num(root, PORT_PATH("counters/port_xmit_discards"));
#undef PORT_PATH
    p->carrier_changes = p->rx_errors = p->tx_errors = VG_SYSFS_MISSING;
    port_netdev(root, dev, port, p->netdev);
    if (p->netdev[0]) {
#define NET_PATH(leaf) (snprintf(path, sizeof path, "/sys/class/net/%s/%s", p->netdev, leaf), path)
        p->carrier_changes = read_num(root, NET_PATH("carrier_changes"));
        p->rx_errors = read_num(root, NET_PATH("statistics/rx_errors"));
        p->tx_errors = read_num(root, NET_PATH("statistics/tx_errors"));
#undef NET_PATH
    }
    p->gpu = p->pci[0] ? vg_pci_nearest_gpu(root, p->pci, p->gpu_pci) : -1;
}

size_t vg_ib_ports(const char *root, struct vg_ib_port **out)
{
    *out = NULL;
    char **devs;
    int nd = vg_list_dir(root, IB_DIR, &devs);
    size_t n = 0, cap = 0;
    for (int i = 0; i < nd; i++) {
        char path[160], **ports;
        snprintf(path, sizeof path, IB_DIR "/%s/ports", devs[i]);
        int np = vg_list_dir(root, path, &ports);
        for (int j = 0; j < np; j++) {
            long port;
            if (!vg_parse_long(ports[j], &port) || port < 0 || port > 255) continue;
            if (n == cap) *out = vg_xrealloc(*out, sizeof **out * (cap = cap ? cap * 2 : 8));
            read_port(root, devs[i], (int)port, &(*out)[n++]);
        }
        if (np > 0) vg_free_list(ports, np);
    }
    if (nd > 0) vg_free_list(devs, nd);
    return n;
}

const struct vg_ib_port *vg_ib_find(const struct vg_ib_port *ports, size_t n, const char *spec)
{
    char dev[64];
    int port = 1;
    vg_strlcpy(dev, spec, sizeof dev);
    char *colon = strchr(dev, ':');
    if (colon) {
        long v;
        *colon = 0;
        if (!vg_parse_long(colon + 1, &v)) return NULL;
        port = (int)v;
    }
    for (size_t i = 0; i < n; i++)
        if (ports[i].port == port && strcmp(ports[i].dev, dev) == 0) return &ports[i];
    return NULL;
}

void vg_ib_port_events(const struct vg_ib_port *p, double min_gbps, const char *node, struct vg_event *ev,
                       int *n, int max)
{
    struct vg_event *e;
    if (p->state != 4) {
        if ((e = vg_event_append(ev, n, max, node, "sysfs", "ib-down", p->pci))) {
            e->code = p->port;
            snprintf(e->raw, sizeof e->raw, "%s port %d is %s (%s), link_downed=%lld", p->dev, p->port,
                     p->state_name[0] ? p->state_name : "unreadable", p->phys_name, p->link_downed);
        }
    } else if (min_gbps > 0 && p->rate_gbps < min_gbps && (e = vg_event_append(ev, n, max, node, "sysfs", "ib-degraded", p->pci))) {
        e->code = p->port;
        snprintf(e->raw, sizeof e->raw, "%s port %d runs at %s, expected %g Gb/sec", p->dev, p->port, p->rate,
                 min_gbps);
    }
}
