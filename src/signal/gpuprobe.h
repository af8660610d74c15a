/* gpuprobe.h — reads every GPU of every vendor present (gpu.h's table) inside
 * a watchdog probe (probe.h): a hung vendor call (NVML cannot be cancelled)
 * costs at most the deadline and yields a "probe-hung" verdict naming the
 * vendor and the GPU it was reading. */
#ifndef VG_GPUPROBE_H
#define VG_GPUPROBE_H
#include "signal/gpu.h"

struct vg_gpu_probe_vendor {
    const struct vg_gpu_vendor *v;
    bool present;               /* its driver or library may be here */
    bool opened;
    int count;                  /* its devices, -1 when unknown */
    char error[256];            /* why a present vendor did not open */
    char driver[80];            /* the driver version its library reported, or "" */
};

struct vg_gpu_probe_result {
    int count;                  /* GPUs of every vendor that opened, -1 when none did */
    struct vg_gpu_state *gpus;  /* the GPUs read in time (malloc'd), n of them */
    int n;
    struct vg_gpu_probe_vendor vendors[VG_GPU_VENDORS_MAX];   /* as far as the probe got */
    int nvendors;
    bool hung;                  /* the probe did not finish before the deadline */
    const struct vg_gpu_vendor *hung_vendor;   /* the vendor being called when it hung */
    int hung_gpu;               /* that vendor's GPU being read when it hung, -1 = open/devices */
    char hung_call[64];         /* "open", "devices" or "read" */
    char error[256];            /* no GPU can be read: no vendor present, or a present one failed */
    int64_t elapsed_ms;
};

struct vg_probe;
/* Starts the probe child over vendors (NULL: the table; to wait for it with
 * other probes: vg_probe_wait), then rebuilds the result from what it wrote. */
int vg_gpu_probe_start(struct vg_probe *p, const struct vg_gpu_vendor *const *vendors);
void vg_gpu_probe_collect(struct vg_probe *p, const struct vg_gpu_vendor *const *vendors, struct vg_gpu_probe_result *r);
/* Start, wait up to timeout_ms, collect: always fills r (free with vg_gpu_probe_free). */
void vg_gpu_probe(const struct vg_gpu_vendor *const *vendors, int timeout_ms, struct vg_gpu_probe_result *r);
void vg_gpu_probe_free(struct vg_gpu_probe_result *r);
/* What the probe learnt of one vendor, or NULL when it is not in the result. */
const struct vg_gpu_probe_vendor *vg_gpu_probe_vendor(const struct vg_gpu_probe_result *r, const char *name);
/* "GPU 3 unresponsive: NVML did not answer within 800 ms" / "NVML hung at open
 * for 300 ms" into buf, for a result that hung. */
const char *vg_gpu_probe_hung_text(const struct vg_gpu_probe_result *r, char *buf, size_t n);
/* Resets GPU `index` of the vendor named `name` (NULL: the one vendor whose
 * GPUs are here) through the vendor's `reset`, in a watchdog child: 0; -1
 * with why in err (no such vendor or GPU, a vendor without a reset call, the
 * library refused, or it did not answer within timeout_ms).  gpureset.c. */
int vg_gpu_reset(const struct vg_gpu_vendor *const *vendors, const char *name, int index, int timeout_ms, char *err,
                 size_t n);
/* The events the result implies: every GPU's faults (vg_gpu_state_events) and
 * a probe-hung event (source "probe") when it hung. */
void vg_gpu_probe_events(const struct vg_gpu_probe_result *r, const char *node, struct vg_event *ev,
                         int *n, int max);

#endif
