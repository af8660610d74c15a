/* nicprobe.h — the NIC probe: in a watchdog child (probe.h) it reads every
 * InfiniBand/RoCE port from sysfs (state, counters, its interface's
 * statistics, the GPU beside it) and then walks the RDMA stack (verbs.h:
 * the device list, each device opened, each port queried), saying each
 * step before it takes it.  A wedged NIC driver makes a sysfs read or a
 * verbs call never return; the probe is then killed at its deadline and,
 * unless it was only starved of CPU, reported as nic-hung naming the device
 * and the call.  The ports read go to the rate judge (nicrate.h). */
#ifndef VG_NICPROBE_H
#define VG_NICPROBE_H
#include "core/event.h"
#include "signal/sysfs.h"
#include "signal/verbs.h"
#include <stdbool.h>
#include <stdint.h>

#define VG_NIC_VERBS_MAX 64

struct vg_nic_probe_result {
    struct vg_ib_port *ports;   /* read before the deadline (malloc'd) */
    size_t nports;
    bool ports_read;            /* the sysfs step finished */
    struct vg_verbs_port verbs[VG_NIC_VERBS_MAX];
    int nverbs;
    int verbs_rc;               /* 0, VG_VERBS_ABSENT, -1 (verbs_error says why) */
    char verbs_error[256];
    bool done;                  /* the child finished */
    bool hung;                  /* killed at its deadline, not starved */
    bool starved;               /* killed while waiting for a CPU: no verdict */
    char step[16];              /* where it stopped: "sysfs", "load", "list", "open", "query", "close" */
    char step_dev[32];
    int step_port;
    int64_t elapsed_ms;
};

struct vg_probe;
/* Starts the child; files are read under root (NULL: /).  0, or -1 (errno). */
int vg_nic_probe_start(struct vg_probe *p, const char *root);
/* Rebuilds the result from what the child wrote (after vg_probe_wait). */
void vg_nic_probe_collect(struct vg_probe *p, struct vg_nic_probe_result *r);
void vg_nic_probe_free(struct vg_nic_probe_result *r);
/* "mlx5_0 unresponsive: <the verbs call> (port 1) did not answer within 2500 ms" into buf. */
const char *vg_nic_probe_hung_text(const struct vg_nic_probe_result *r, char *buf, size_t n);
/* A nic-hung event (source "probe") when the probe hung; nothing else: the
 * counters are judged by nicrate.h. */
void vg_nic_probe_events(const struct vg_nic_probe_result *r, const char *node, struct vg_event *ev, int *n,
                         int max);

#endif
