/* gpu.h — the GPU backend interface: a struct of function pointers (one per
 * vendor library; NVML in nvml.c is the only one today), the state of one GPU
 * as a backend reads it, its JSON form (the probe child sends it through a
 * pipe) and the events a state implies (ECC DBE, row-remap failure, PCIe
 * degraded, NVLink down, GPU lost …).  Nothing here knows NVML exists. */
#ifndef VG_GPU_H
#define VG_GPU_H
#include "core/event.h"
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define VG_NVLINK_MAX 18

/* Every numeric field is -1 when the backend could not read it (the call is
 * missing or unsupported): "unknown", never a fake zero. */
struct vg_gpu_state {
    int index;
    char name[96];
    char uuid[96];
    char pci[16];               /* 0000:bb:dd.f */
    bool lost;                  /* the device reported "GPU is lost" */
    char error[128];            /* first call that failed (other than unsupported), or "" */
    long long ecc_sbe_volatile, ecc_dbe_volatile, ecc_sbe_aggregate, ecc_dbe_aggregate;
    long long retired_sbe, retired_dbe;
    int retired_pending;        /* 0/1 */
    long long remap_correctable, remap_uncorrectable;
    int remap_pending, remap_failure;   /* 0/1 */
    int pcie_gen, pcie_width, pcie_gen_max, pcie_width_max;
    int nvlink_links;           /* links the device has (0 when no NVLink) */
    signed char nvlink[VG_NVLINK_MAX];  /* 1 up, 0 down, -1 absent/unknown */
    int temp_c;
    long long clock_reasons;    /* clock-event (throttle) reason bits */
};

/* Clock-event reason bits, as the public NVML ABI defines them. */
#define VG_CLK_SW_POWER_CAP        0x4ULL
#define VG_CLK_HW_SLOWDOWN         0x8ULL
#define VG_CLK_SW_THERMAL          0x20ULL
#define VG_CLK_HW_THERMAL          0x40ULL
#define VG_CLK_HW_POWER_BRAKE      0x80ULL

struct vg_gpu_backend {
    const char *name;
    /* Loads the library and initialises it; 0, or -1 with a one-line reason in err. */
    int (*init)(char *err, size_t errlen);
    void (*shutdown)(void);
    /* Number of GPUs, or -1. */
    int (*count)(void);
    /* Reads GPU `index` into st (vg_gpu_state_init'ed by the backend).  Returns
     * 0, or -1 when the device could not be reached at all (st->error says why;
     * st->lost when the GPU is lost). */
    int (*read)(int index, struct vg_gpu_state *st);
    /* Waits up to timeout_ms for XID / ECC critical events on all GPUs; fills at
     * most max events (source "nvml").  Returns the number, 0 on timeout, -1 on
     * error. */
    int (*wait_events)(int timeout_ms, struct vg_event *out, int max);
    /* The driver version the library reports ("535.183.01") into buf, after
     * init; 0, or -1.  May be NULL (a backend that cannot tell). */
    int (*driver_version)(char *buf, size_t n);
};

extern const struct vg_gpu_backend vg_nvml_backend;

void vg_gpu_state_init(struct vg_gpu_state *st, int index);
json_t *vg_gpu_state_to_json(const struct vg_gpu_state *st);
/* Fills st from JSON; -1 when j is not a GPU state object. */
int vg_gpu_state_from_json(const json_t *j, struct vg_gpu_state *st);
/* "0000:bb:dd.f" from NVML's busId ("00000000:18:00.0", 8-digit domain) or
 * any form vg_pci_normalize (kmsg.h) reads; false when malformed. */
bool vg_gpu_pci_id(const char *bus_id, char out[16]);
/* Appends to ev[*n] (room for max) the faults st shows, source "nvml",
 * node `node`: gpu-lost, ecc-dbe, row-remap-failure, row-remap-pending,
 * retired-pages-pending, pcie-degraded, nvlink-down, thermal-slowdown. */
void vg_gpu_state_events(const struct vg_gpu_state *st, const char *node, struct vg_event *ev, int *n,
                         int max);

#endif
