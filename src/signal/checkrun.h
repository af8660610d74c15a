/* checkrun.h — runs the lines of a `vigil check` config that apply to a node,
 * all at once under one deadline: the GPU probe and one watchdog probe per
 * other line run in parallel children; whatever has not answered by the
 * deadline is killed and reported as a failed "probe hung" check. */
#ifndef VG_CHECKRUN_H
#define VG_CHECKRUN_H
#include "signal/checks.h"
#include "signal/gpu.h"
#include <stdint.h>

struct vg_check_opts {
    const char *root;                   /* --root or NULL */
    const char *node;                   /* node name: host masks and events */
    const struct vg_gpu_vendor *const *vendors;   /* the GPU vendors (NULL: the table) */
    int64_t deadline_mono_ms;           /* vg_mono_ms() by which every probe is done */
    const char *const *daemons;         /* the scheduler's node daemons (--init lists those running) */
};

/* Appends the results of every applicable line (and "gpu responsive" when a
 * gpu line applies) to out; returns the number of lines that applied. */
int vg_check_run(const struct vg_checkconf *c, const struct vg_check_opts *o, struct vg_check_results *out);
/* --init: expectation lines for this node from every check's init function
 * (GPUs read through the probe, so a hung vendor library cannot stall it). */
void vg_check_init_text(const struct vg_check_opts *o, struct sbuf *out);
/* No config at all: the built-in checks for what this node has (GPU health
 * when a vendor's library finds GPUs, InfiniBand ports ACTIVE, the NVIDIA
 * kernel module and its library on one driver version, the /etc/fstab entries
 * mounted, PCIe links at full width and free of fatal AER errors). */
void vg_check_default_text(const struct vg_check_opts *o, struct sbuf *out);

#endif
