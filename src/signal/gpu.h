/* gpu.h — the GPU vendor seam: one table of vendors (gpuset.c), each a struct
 * of function pointers in its own backend file (nvml.c for NVIDIA); the state
 * of one GPU in vendor-neutral fields with the vendor's extras in a small
 * key/value tail; its JSON form (the probe child sends it through a pipe);
 * and the events a state implies (uncorrectable ECC, row-remap failure, PCIe
 * degraded, a GPU-to-GPU link down, GPU lost …), named by the vendor's kinds.
 * Nothing here knows a vendor library exists.  Adding a vendor: docs/gpu.md. */
#ifndef VG_GPU_H
#define VG_GPU_H
#include "core/event.h"
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define VG_GPU_LINKS_MAX 18     /* GPU-to-GPU links per GPU (NVLink, XGMI) */
#define VG_GPU_EXTRA_MAX 8
#define VG_GPU_VENDORS_MAX 8

struct vg_gpu_vendor;

/* Throttle reasons, vigil's own bits (each backend maps its vendor's). */
#define VG_THROTTLE_POWER_CAP   0x1LL   /* software power cap */
#define VG_THROTTLE_HW_SLOWDOWN 0x2LL   /* hardware slowdown (thermal or power) */
#define VG_THROTTLE_SW_THERMAL  0x4LL   /* software thermal slowdown */
#define VG_THROTTLE_HW_THERMAL  0x8LL   /* hardware thermal slowdown */
#define VG_THROTTLE_POWER_BRAKE 0x10LL  /* external power brake */
/* The reasons that mean the GPU's cooling or power delivery is failing. */
#define VG_THROTTLE_THERMAL (VG_THROTTLE_HW_SLOWDOWN | VG_THROTTLE_SW_THERMAL | VG_THROTTLE_HW_THERMAL)

/* Every numeric field is -1 when the backend could not read it (the call is
 * missing or unsupported): "unknown", never a fake zero. */
struct vg_gpu_state {
    int index;                  /* the vendor's own device index (as its tools number it) */
    const struct vg_gpu_vendor *v;   /* its vendor, NULL when unknown */
    char vendor[16];            /* the vendor's name ("nvidia") */
    char source[8];             /* the event source of its backend ("nvml", "amdsmi", "sysfs") */
    char model[96];
    char uuid[96];
    char pci[16];               /* 0000:bb:dd.f */
    bool lost;                  /* the device reported itself lost (fell off the bus) */
    char error[128];            /* first call that failed (other than unsupported), or "" */
    /* memory errors: corrected / uncorrected since the driver loaded, and over the GPU's life */
    long long ecc_ce, ecc_ue, ecc_ce_total, ecc_ue_total;
    /* retired memory: pages retired for corrected / uncorrected errors, a retirement waiting
     * for a reset (0/1); HBM rows remapped, a remap waiting for a reset, a remap that failed */
    long long retired_ce, retired_ue;
    int retire_pending;
    long long remap_ce, remap_ue;
    int remap_pending, remap_failure;
    /* links: PCIe now and at most; GPU-to-GPU links (1 up, 0 down, -1 absent/unknown) */
    int pcie_gen, pcie_width, pcie_gen_max, pcie_width_max;
    int links;                  /* links the device has (0 when none) */
    signed char link[VG_GPU_LINKS_MAX];
    int temp_c;
    long long power_mw;
    int clock_sm_mhz, clock_mem_mhz;
    long long throttle;         /* VG_THROTTLE_* bits */
    /* GPU-to-GPU fabric registration (the NVLink fabric of a GB200/GB300 rack):
     * VG_FABRIC_*, -1 when the GPU has no such fabric or it cannot be read;
     * the domain it registered in ("CLUSTER-UUID/CLIQUE" for NVIDIA: the GPUs
     * of one NVLink domain share it), and why a registration failed */
    int fabric;
    char fabric_domain[64];
    char fabric_error[64];
    /* the vendor's own facts, by name ("clock_reasons" = "0x40") */
    struct { char key[24], val[48]; } extra[VG_GPU_EXTRA_MAX];
    int nextra;
};

#define VG_FABRIC_PENDING 1     /* not started or in progress */
#define VG_FABRIC_OK 2          /* registered */
#define VG_FABRIC_FAILED 3      /* finished with an error */

/* The event kinds a vendor's faults are reported as (NULL: the vendor cannot
 * report that fault); each has a row in the fault catalog. */
struct vg_gpu_kinds {
    const char *lost, *ecc_ue, *retire_pending, *remap_pending, *remap_failure, *pcie_degraded, *link_down,
        *thermal, *fabric_pending, *fabric_failed;
};

/* vg_gpu_vendor.open's answer when the library says this vendor has no device
 * here: not a fault (a node of another vendor, a library without a GPU). */
#define VG_GPU_ABSENT 1

struct vg_gpu_vendor {
    const char *name;           /* "nvidia": the state's vendor tag */
    const char *source;         /* the event source of its events ("nvml") */
    const char *label;          /* the backend's name in messages ("NVML") */
    const char *link_name;      /* its GPU-to-GPU links in messages ("NVLink") */
    const char *kmod;           /* the kernel module whose /sys/module/KMOD/version is the driver's */
    const char *hint;           /* what to do when its library cannot be opened */
    struct vg_gpu_kinds kinds;
    /* Whether the vendor may be here at all, without loading its library (its
     * kernel module is loaded, or its library's path is given). */
    bool (*probe)(void);
    /* Loads the library and initialises it: 0, VG_GPU_ABSENT, or -1 with a
     * one-line reason in err.  Called in a watchdog child (it may hang). */
    int (*open)(char *err, size_t errlen);
    /* Number of devices, or -1. */
    int (*devices)(void);
    /* Reads device `index` into st (vg_gpu_state_init'ed by the backend).
     * Returns 0, or -1 when the device could not be reached at all (st->error
     * says why; st->lost when the GPU is lost). */
    int (*read)(int index, struct vg_gpu_state *st);
    /* Waits up to timeout_ms for the vendor's critical events on all its
     * devices; fills at most max events.  Returns the number, 0 on timeout,
     * -1 on error; (0, out, 0) sets the wait up.  NULL: the vendor has none. */
    int (*events)(int timeout_ms, struct vg_event *out, int max);
    /* Resets device `index` through the vendor's library (AMD SMI's GPU
     * reset), after open: 0, or -1 with why in err.  Called in a
     * watchdog child (it may hang).  NULL: the vendor has no reset call (NVML
     * has none public; a site's ladder runs nvidia-smi -r). */
    int (*reset)(int index, char *err, size_t errlen);
    /* The driver version the library reports ("535.183.01"), after open; 0,
     * or -1.  NULL: the library cannot tell. */
    int (*driver_version)(char *buf, size_t n);
    void (*close)(void);
};

/* The vendors table (gpuset.c), NULL-terminated; and one of vendors (NULL:
 * the table) by name, NULL when it is not there. */
extern const struct vg_gpu_vendor *const vg_gpu_vendors[];
extern const struct vg_gpu_vendor vg_gpu_nvidia, vg_gpu_amd;
const struct vg_gpu_vendor *vg_gpu_vendor_find(const struct vg_gpu_vendor *const *vendors, const char *name);

/* The root every vendor reads the kernel's files under (--root: a fixture
 * tree or a mounted node disk; NULL or "/" the live host, the default).  Set
 * before the GPU probe starts; a vendor whose facts come from a library reads
 * only its files there (a library talks to the live host's driver). */
void vg_gpu_set_root(const char *root);
const char *vg_gpu_root(void);

/* Every vendor of a table opened together: the devices of each, in table order. */
struct vg_gpu_set {
    struct vg_gpu_set_vendor {
        const struct vg_gpu_vendor *v;
        bool present;           /* probe said it may be here */
        bool opened;
        int count;              /* its devices, -1 when unknown */
        char error[256];        /* why it did not open (present vendors only) */
        char driver[80];        /* the driver version its library reported, or "" */
    } vendor[VG_GPU_VENDORS_MAX];
    int nvendors;
    int count;                  /* devices of every opened vendor */
};

/* A step of vg_gpu_open_all ("open", "devices"), for a watchdog to say where a hang was. */
typedef void (*vg_gpu_step_fn)(void *arg, const struct vg_gpu_vendor *v, const char *step);
/* Opens every vendor of vendors (NULL: vg_gpu_vendors) that is present and
 * counts its devices.  Returns the number of devices, or -1 when no vendor
 * opened (set says why for each). */
int vg_gpu_open_all(const struct vg_gpu_vendor *const *vendors, struct vg_gpu_set *set, vg_gpu_step_fn step,
                    void *arg);
/* The i-th device of the set (0 <= i < set->count): its vendor and that vendor's index. */
const struct vg_gpu_vendor *vg_gpu_set_device(const struct vg_gpu_set *set, int i, int *index);
/* Reads the i-th device of the set, tagged with its vendor and event source
 * (the one the backend set, else its vendor's). */
int vg_gpu_set_read(const struct vg_gpu_set *set, int i, struct vg_gpu_state *st);
void vg_gpu_close_all(struct vg_gpu_set *set);

void vg_gpu_state_init(struct vg_gpu_state *st, int index);
/* Sets (or replaces) a vendor extra; false when the tail is full. */
bool vg_gpu_extra_set(struct vg_gpu_state *st, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The value of a vendor extra, or NULL. */
const char *vg_gpu_extra(const struct vg_gpu_state *st, const char *key);
json_t *vg_gpu_state_to_json(const struct vg_gpu_state *st);
/* Fills st from JSON, its vendor looked up in vendors (NULL: the table); -1
 * when j is not a GPU state object. */
int vg_gpu_state_from_json(const json_t *j, const struct vg_gpu_vendor *const *vendors, struct vg_gpu_state *st);
/* "0000:bb:dd.f" from NVML's busId ("00000000:18:00.0", 8-digit domain) or
 * any form vg_pci_normalize (kmsg.h) reads; false when malformed. */
bool vg_gpu_pci_id(const char *bus_id, char out[16]);
/* The fabric domain of a set of GPU states: the one domain every GPU
 * registered in into out (64 bytes); "" when none registered, or when they
 * disagree (then *conflict, when not NULL, is set). */
void vg_gpu_fabric_domain(const struct vg_gpu_state *st, int n, char out[64], bool *conflict);
/* The throttle bits as words ("hw-thermal,power-brake") into buf. */
const char *vg_gpu_throttle_names(long long bits, char *buf, size_t n);
/* Appends to ev[*n] (room for max) the faults st shows, with the source and
 * kinds of its vendor (st->v), node `node`: lost, uncorrectable ECC (and the
 * blocks the vendor says they are in: extra "ue_blocks"), retired memory
 * exhausted (row remapping failed, AMD's bad-page threshold), row remap
 * pending, retired pages pending, PCIe degraded, a link down, thermal
 * slowdown, a fabric registration unfinished or failed. */
void vg_gpu_state_events(const struct vg_gpu_state *st, const char *node, struct vg_event *ev, int *n,
                         int max);

#endif
