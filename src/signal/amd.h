/* amd.h — inside the AMD GPU vendor (amd.c): its three layers, each one file
 * — AMD SMI (amd_smi.c, libamd_smi by dlopen), ROCm SMI (amd_rsmi.c,
 * librocm_smi64 by dlopen, the fallback) and the kernel's sysfs (amd_sysfs.c,
 * no library: RAS counts per block, retired pages, PCIe link, XGMI hive) —
 * and the parsers of the amdgpu driver's RAS sysfs text (amd_ras.c), which
 * the fuzz target drives.  Only the AMD files include it (and the amdgpu
 * recognizer, for the blocks). */
#ifndef VG_AMD_H
#define VG_AMD_H
#include "signal/gpu.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the amdgpu driver's RAS blocks (amdsmi_gpu_block_t / rsmi_gpu_block_t
 * bits, the same in both libraries; the names are the sysfs files'
 * "<name>_err_count") ---- */
#define VG_AMD_BLOCKS 19
struct vg_amd_block {
    const char *name;           /* "umc", "xgmi_wafl", … */
    uint64_t bit;               /* 0x1, 0x80, … */
};
extern const struct vg_amd_block vg_amd_blocks[VG_AMD_BLOCKS];
/* The block named name (n bytes), or NULL when it is not one the driver has. */
const struct vg_amd_block *vg_amd_block_named(const char *name, size_t n);

/* ---- RAS counts and retired pages of one GPU, as every layer reads them ---- */
struct vg_amd_ras {
    long long ue[VG_AMD_BLOCKS], ce[VG_AMD_BLOCKS];   /* per block; -1 unknown */
    long long bad_reserved, bad_pending, bad_failed;  /* retired pages by state; -1 unknown */
    long long bad_threshold;    /* the driver's threshold (pages), -1 none or unknown */
};
void vg_amd_ras_init(struct vg_amd_ras *r);
/* Puts r into st: ecc_ue/ecc_ce as sums, retired pages, the threshold
 * reached (remap_failure), and the extras "ue_blocks" and "bad_pages". */
void vg_amd_ras_to_state(const struct vg_amd_ras *r, struct vg_gpu_state *st);

/* A "<block>_err_count" file ("ue: 1\nce: 0\n"): 0 with *ue, *ce set; 1 when
 * the driver says "Query currently inaccessible" (counts unknown); -1 when
 * malformed (a line that is neither, a number out of range). */
int vg_amd_parse_err_count(const char *text, size_t len, long long *ue, long long *ce);
/* "gpu_vram_bad_pages" ("0x00000001 : 0x00001000 : R" per page): counts of
 * reserved (R), pending (P) and unreservable (F) pages.  Returns the number of
 * malformed lines (skipped). */
int vg_amd_parse_bad_pages(const char *text, size_t len, long long *reserved, long long *pending,
                           long long *failed);

/* ---- a layer ---- */
struct vg_amd_layer {
    const char *name;           /* "amdsmi", "rsmi", "sysfs": the event source of what it reads */
    const char *label;          /* "AMD SMI", … in messages */
    /* 0, VG_GPU_ABSENT (the library or the driver is not here: not a fault),
     * -1 with a reason.  root: the sysfs root ("/" live). */
    int (*open)(const char *root, char *err, size_t n);
    int (*devices)(void);
    /* Fills the fields it can of st (vg_gpu_state_init'ed by the caller). */
    int (*read)(int index, struct vg_gpu_state *st);
    /* Resets the GPU: 0, or -1 with why (NULL: the layer cannot). */
    int (*reset)(int index, char *err, size_t n);
    void (*close)(void);
};
extern const struct vg_amd_layer vg_amd_smi, vg_amd_rsmi, vg_amd_sysfs;

/* The sysfs layer, also an enrichment of the libraries': the GPU at pci
 * (its fields still unknown in st are filled), or -1 when sysfs has none. */
int vg_amd_sysfs_enrich(const char *pci, struct vg_gpu_state *st);

/* A library's symbol: where its address goes, and whether the layer needs it. */
struct vg_amd_sym {
    const char *name;
    void **slot;
    bool required;
};
/* Loads a layer's library: the path in $env alone when it is set (one that
 * does not load is -1 with why), else the first of candidates that loads
 * (none: VG_GPU_ABSENT, the library is not installed); then resolves syms
 * (a required one missing: -1).  0 with *lib and path set. */
int vg_amd_load(const char *env, const char *const *candidates, const struct vg_amd_sym *syms, size_t nsyms,
                void **lib, char *path, size_t pathlen, char *err, size_t n);

/* Whether the amdgpu kernel module is loaded under root. */
bool vg_amd_driver_loaded(const char *root);

/* Runs fn(arg) with the process's stderr sent to /dev/null: the vendor
 * libraries print their own diagnostics there (rsmi_init: "Exception caught:
 * rsmi_init."), which must not reach a user of vigil. */
int vg_amd_quietly(int (*fn)(void *), void *arg);

#endif
