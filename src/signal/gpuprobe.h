/* gpuprobe.h — reads every GPU through a backend inside a watchdog probe
 * (probe.h): a hung vendor call (NVML cannot be cancelled) costs at most the
 * deadline and yields a "probe-hung" verdict naming the GPU it was reading. */
#ifndef VG_GPUPROBE_H
#define VG_GPUPROBE_H
#include "signal/gpu.h"

struct vg_gpu_probe_result {
    int count;                  /* GPUs the backend reported, -1 when unknown */
    struct vg_gpu_state *gpus;  /* the GPUs read in time (malloc'd), n of them */
    int n;
    bool hung;                  /* the probe did not finish before the deadline */
    int hung_gpu;               /* the GPU being read when it hung, -1 = init/count */
    char hung_call[64];         /* "init", "count" or "read" */
    char error[256];            /* the backend could not start (no library, init failed) */
    char driver[80];            /* the driver version the backend reported, or "" */
    int64_t elapsed_ms;
};

struct vg_probe;
/* Starts the probe child (to wait for it with other probes: vg_probe_wait),
 * then rebuilds the result from what it wrote. */
int vg_gpu_probe_start(struct vg_probe *p, const struct vg_gpu_backend *b);
void vg_gpu_probe_collect(struct vg_probe *p, struct vg_gpu_probe_result *r);
/* Start, wait up to timeout_ms, collect: always fills r (free with vg_gpu_probe_free). */
void vg_gpu_probe(const struct vg_gpu_backend *b, int timeout_ms, struct vg_gpu_probe_result *r);
void vg_gpu_probe_free(struct vg_gpu_probe_result *r);
/* The events the result implies: every GPU's faults (vg_gpu_state_events) and
 * a probe-hung event (source "probe") when it hung. */
void vg_gpu_probe_events(const struct vg_gpu_probe_result *r, const char *node, struct vg_event *ev,
                         int *n, int max);

#endif
