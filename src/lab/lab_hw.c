/* lab_hw.c — a lab node's simulated NIC and NVLink fabric: its sysfs tree
 * (nodes/N/sys, the layout of an HGX node's: a PCIe switch with GPU 0 at
 * 0000:18:00.0 and the InfiniBand HCA mlx5_0 at 0000:1a:00.0 beside it, the
 * port ACTIVE at 400 Gb/s with its counters at zero), the fake verbs
 * library's state (nodes/N/verbs-state: mlx5_0, one ACTIVE port) and, in an
 * NVL72-shaped lab, its GPUs' fabric registration in the fake NVML's state:
 * completed, in the rack's cluster and clique, so the rack's NVLink domain
 * comes from the fabric as on a GB200/GB300 rack.  The agent reads the tree
 * with --root nodes/N; `vigil inject` changes these files. */
#include "lab/lab.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SWITCH "devices/pci0000:16/0000:16:01.0/0000:17:00.0"

/* The files of the tree: path under nodes/N/sys, contents (NULL: a directory). */
static const struct {
    const char *path, *text;
} files[] = {
    { SWITCH "/0000:18:00.0/vendor", "0x10de\n" },
    { SWITCH "/0000:18:00.0/device", "0x2330\n" },
    { SWITCH "/0000:18:00.0/class", "0x030200\n" },
    { SWITCH "/0000:1a:00.0/vendor", "0x15b3\n" },
    { SWITCH "/0000:1a:00.0/device", "0x1021\n" },
    { SWITCH "/0000:1a:00.0/class", "0x020700\n" },
    { SWITCH "/0000:1a:00.0/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n" },
    { SWITCH "/0000:1a:00.0/infiniband/mlx5_0/ports/1/phys_state", "5: LinkUp\n" },
    { SWITCH "/0000:1a:00.0/infiniband/mlx5_0/ports/1/rate", "400 Gb/sec (4X NDR)\n" },
    { SWITCH "/0000:1a:00.0/infiniband/mlx5_0/ports/1/link_layer", "InfiniBand\n" },
#define COUNTER(c) { SWITCH "/0000:1a:00.0/infiniband/mlx5_0/ports/1/counters/" c, "0\n" }
    COUNTER("link_downed"), COUNTER("link_error_recovery"), COUNTER("symbol_error"), COUNTER("port_rcv_errors"),
    COUNTER("local_link_integrity_errors"), COUNTER("excessive_buffer_overrun_errors"),
    COUNTER("port_xmit_discards"),
#undef COUNTER
};

static const struct {
    const char *link, *target;
} links[] = {
    { "class/infiniband/mlx5_0", "../../" SWITCH "/0000:1a:00.0/infiniband/mlx5_0" },
    { "bus/pci/devices/0000:18:00.0", "../../../" SWITCH "/0000:18:00.0" },
    { "bus/pci/devices/0000:1a:00.0", "../../../" SWITCH "/0000:1a:00.0" },
};

/* The NVLink fabric's cluster of an NVL72-shaped lab; each rack is a clique of it. */
#define LAB_FABRIC_CLUSTER "4c414231-0000-4000-8000-000000000072"

/* mkdir -p of path's directory. */
static int parents(char *path)
{
    for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
        *p = '\0';
        int rc = mkdir(path, 0755);
        *p = '/';
        if (rc && errno != EEXIST) return -1;
    }
    return 0;
}

static int put(const char *path, const char *text, int flags)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);
    if (fd < 0) return -1;
    size_t len = strlen(text);
    int rc = write(fd, text, len) == (ssize_t)len ? 0 : -1;
    return close(fd) || rc ? -1 : 0;
}

int vg_lab_node_hw(const char *dir, const char *node, int rack, char *err, size_t errlen)
{
    struct sbuf p = SBUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < sizeof files / sizeof files[0] && !rc; i++) {
        sbuf_reset(&p);
        sbuf_printf(&p, "%s/nodes/%s/sys/%s", dir, node, files[i].path);
        rc = parents(p.s) || put(p.s, files[i].text, O_TRUNC);
    }
    for (size_t i = 0; i < sizeof links / sizeof links[0] && !rc; i++) {
        sbuf_reset(&p);
        sbuf_printf(&p, "%s/nodes/%s/sys/%s", dir, node, links[i].link);
        rc = parents(p.s) || symlink(links[i].target, p.s);
    }
    if (!rc) {
        sbuf_reset(&p);
        sbuf_printf(&p, "%s/nodes/%s/verbs-state", dir, node);
        rc = put(p.s, "devices=mlx5_0\n", O_TRUNC);
    }
    if (!rc && rack > 0) {   /* appended to the fake NVML's state that make_tree wrote */
        char fabric[160];
        snprintf(fabric, sizeof fabric, "gpu*.fabric=completed\ngpu*.fabric_cluster=" LAB_FABRIC_CLUSTER
                                        "\ngpu*.fabric_clique=%d\n", rack);
        sbuf_reset(&p);
        sbuf_printf(&p, "%s/nodes/%s/nvml-state", dir, node);
        rc = put(p.s, fabric, O_APPEND);
    }
    if (rc) snprintf(err, errlen, "%s: %s", p.s ? p.s : dir, strerror(errno));
    sbuf_free(&p);
    return rc ? -1 : 0;
}

void vg_lab_rack_domain(int rack, char *buf, size_t n) { snprintf(buf, n, LAB_FABRIC_CLUSTER "/%d", rack); }
