/* verbs.h — the RDMA stack's own answer (its verbs library by dlopen, verbs.c):
 * every device's list entry opened and each port queried, the way a job's
 * NCCL or MPI would reach them.  A wedged NIC driver makes one of these
 * calls never return: the walk is run in a watchdog child (nicprobe.h) and
 * names each step before it takes it, so the parent can say which device
 * and which call hung. */
#ifndef VG_VERBS_H
#define VG_VERBS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VG_VERBS_ABSENT 1      /* no verbs library, or a kernel without RDMA: nothing to probe (not a fault) */
#define VG_VERBS_PORTS_MAX 8   /* ports tried per device */

struct vg_verbs_port {
    char dev[32];              /* "mlx5_0" */
    int port;
    int state;                 /* the verbs port state: 4 = ACTIVE */
    int link_layer;            /* 1 InfiniBand, 2 Ethernet, 0 unspecified */
};

/* A step about to be taken: "load", "list", "open" (dev), "query" (dev,
 * port), "close" (dev). */
typedef void (*vg_verbs_step_fn)(void *arg, const char *step, const char *dev, int port);

/* Loads the library ($VIGIL_VERBS_LIB, else the system's), lists the
 * devices, opens each and queries its ports, filling out (room for max,
 * *nout of them).  0; VG_VERBS_ABSENT when the library is not installed
 * (and not named by $VIGIL_VERBS_LIB) or the kernel has no RDMA subsystem
 * (ENOSYS); -1 with the reason in err.  It may
 * never return: run it in a watchdog child. */
int vg_verbs_walk(vg_verbs_step_fn step, void *arg, struct vg_verbs_port *out, int max, int *nout, char *err,
                  size_t errlen);
/* The library call a step makes ("query": the port query), for messages. */
const char *vg_verbs_call_name(const char *step);
/* "ACTIVE", "DOWN", … */
const char *vg_verbs_state_name(int state);

#endif
