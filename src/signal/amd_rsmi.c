/* amd_rsmi.c — the ROCm SMI layer, the fallback where AMD SMI is not
 * installed (Debian 12 ships only librocm-smi64-1 5.2.3): librocm_smi64 by
 * dlopen ($VIGIL_ROCM_SMI_LIB, else the Debian and ROCm sonames), never
 * linked, with vigil's own copy of the few rocm_smi.h declarations it uses
 * (present and unchanged from 5.2.3 to 6.x).  rsmi_init prints to the
 * caller's stderr and, without an AMD GPU, fails with RSMI_STATUS_INIT_ERROR
 * (8) while rsmi_num_monitor_devices then answers 0 with success: the init
 * runs quietly and its result alone decides.  Temperatures are in
 * millidegrees here (AMD SMI's are degrees). */
#include "signal/amd.h"
#include "util/strutil.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the public ABI (rocm_smi.h) ---- */
typedef int rsmi_status_t;
enum { RSMI_STATUS_SUCCESS = 0, RSMI_STATUS_INVALID_ARGS = 1, RSMI_STATUS_NOT_SUPPORTED = 2,
       RSMI_STATUS_INIT_ERROR = 8, RSMI_STATUS_NOT_YET_IMPLEMENTED = 9, RSMI_STATUS_NO_DATA = 14 };
#define RSMI_TEMP_TYPE_EDGE 0
#define RSMI_TEMP_CURRENT 0
typedef struct {
    uint64_t correctable_err, uncorrectable_err;
} rsmi_error_count_t;
typedef struct {
    uint64_t page_address, page_size;
    int status;                 /* RSMI_MEM_PAGE_STATUS_RESERVED 0, PENDING 1, UNRESERVABLE 2 */
} rsmi_retired_page_record_t;

static struct {
    void *lib;
    bool inited;
    char path[256];
    uint32_t n;
    rsmi_status_t (*Init)(uint64_t);
    rsmi_status_t (*ShutDown)(void);
    rsmi_status_t (*Count)(uint32_t *);
    rsmi_status_t (*StatusString)(rsmi_status_t, const char **);
    rsmi_status_t (*PciId)(uint32_t, uint64_t *);
    rsmi_status_t (*Name)(uint32_t, char *, size_t);
    rsmi_status_t (*UniqueId)(uint32_t, uint64_t *);
    rsmi_status_t (*EccCount)(uint32_t, uint64_t, rsmi_error_count_t *);
    rsmi_status_t (*Pages)(uint32_t, uint32_t *, rsmi_retired_page_record_t *);
    rsmi_status_t (*HiveId)(uint32_t, uint64_t *);
    rsmi_status_t (*Temp)(uint32_t, uint32_t, int, int64_t *);
    rsmi_status_t (*Reset)(uint32_t);
} R;

static const struct vg_amd_sym syms[] = {
    { "rsmi_init", (void **)&R.Init, true },
    { "rsmi_shut_down", (void **)&R.ShutDown, true },
    { "rsmi_num_monitor_devices", (void **)&R.Count, true },
    { "rsmi_status_string", (void **)&R.StatusString, false },
    { "rsmi_dev_pci_id_get", (void **)&R.PciId, false },
    { "rsmi_dev_name_get", (void **)&R.Name, false },
    { "rsmi_dev_unique_id_get", (void **)&R.UniqueId, false },
    { "rsmi_dev_ecc_count_get", (void **)&R.EccCount, false },
    { "rsmi_dev_memory_reserved_pages_get", (void **)&R.Pages, false },
    { "rsmi_dev_xgmi_hive_id_get", (void **)&R.HiveId, false },
    { "rsmi_dev_temp_metric_get", (void **)&R.Temp, false },
    { "rsmi_dev_gpu_reset", (void **)&R.Reset, false },
};

static const char *const candidates[] = {
    "librocm_smi64.so.1", "librocm_smi64.so.7", "librocm_smi64.so.6", "librocm_smi64.so.5",
    "/opt/rocm/lib/librocm_smi64.so", NULL,
};

static const char *errstr(rsmi_status_t s)
{
    const char *t = NULL;
    if (R.StatusString && R.StatusString(s, &t) != RSMI_STATUS_SUCCESS) t = NULL;
    return t ? t : "ROCm SMI error";
}

static void rsmi_close(void)
{
    if (R.inited && R.ShutDown) R.ShutDown();
    if (R.lib) dlclose(R.lib);
    memset(&R, 0, sizeof R);
}

struct init_arg {
    rsmi_status_t rc;
};
static int do_init(void *arg)
{
    ((struct init_arg *)arg)->rc = R.Init(0);
    return 0;
}

static int rsmi_open(const char *root, char *err, size_t n)
{
    (void)root;
    if (R.inited) return 0;
    int rc = vg_amd_load("VIGIL_ROCM_SMI_LIB", candidates, syms, sizeof syms / sizeof syms[0], &R.lib, R.path,
                         sizeof R.path, err, n);
    if (rc) {
        memset(&R, 0, sizeof R);
        return rc;
    }
    struct init_arg ia;
    vg_amd_quietly(do_init, &ia);
    if (ia.rc != RSMI_STATUS_SUCCESS) {
        /* status 8 with no amdgpu driver: no AMD GPU here, not a fault */
        bool absent = !vg_amd_driver_loaded(NULL);
        snprintf(err, n, "rsmi_init: %s (status %d)", errstr(ia.rc), ia.rc);
        rsmi_close();
        return absent ? VG_GPU_ABSENT : -1;
    }
    R.inited = true;
    rsmi_status_t r = R.Count(&R.n);
    if (r != RSMI_STATUS_SUCCESS) {
        snprintf(err, n, "rsmi_num_monitor_devices: %s", errstr(r));
        rsmi_close();
        return -1;
    }
    return R.n > 0 ? 0 : VG_GPU_ABSENT;
}

static int rsmi_devices(void) { return R.inited ? (int)R.n : -1; }

static bool failed(struct vg_gpu_state *st, const char *call, rsmi_status_t r)
{
    if (r == RSMI_STATUS_SUCCESS) return false;
    if (r != RSMI_STATUS_NOT_SUPPORTED && r != RSMI_STATUS_NOT_YET_IMPLEMENTED && r != RSMI_STATUS_NO_DATA &&
        !st->error[0])
        snprintf(st->error, sizeof st->error, "%s: %s", call, errstr(r));
    return true;
}

static int rsmi_read(int index, struct vg_gpu_state *st)
{
    if (!R.inited || index < 0 || (uint32_t)index >= R.n) {
        vg_strlcpy(st->error, "ROCm SMI not initialised", sizeof st->error);
        return -1;
    }
    uint32_t d = (uint32_t)index;
    uint64_t v;
    /* BDFID: domain << 32 | bus << 8 | device << 3 | function */
    if (R.PciId && !failed(st, "rsmi_dev_pci_id_get", R.PciId(d, &v)))
        snprintf(st->pci, sizeof st->pci, "%04x:%02x:%02x.%x", (unsigned)((v >> 32) & 0xffff), (unsigned)((v >> 8) & 0xff),
                 (unsigned)((v >> 3) & 0x1f), (unsigned)(v & 7));
    char name[96] = "";
    if (R.Name && !failed(st, "rsmi_dev_name_get", R.Name(d, name, sizeof name))) {
        name[sizeof name - 1] = 0;
        vg_strlcpy(st->model, name, sizeof st->model);
    }
    if (R.UniqueId && !failed(st, "rsmi_dev_unique_id_get", R.UniqueId(d, &v)))
        snprintf(st->uuid, sizeof st->uuid, "0x%016llx", (unsigned long long)v);
    struct vg_amd_ras ras;
    vg_amd_ras_init(&ras);
    for (size_t b = 0; R.EccCount && b < VG_AMD_BLOCKS; b++) {
        rsmi_error_count_t ec = { 0, 0 };
        rsmi_status_t r = R.EccCount(d, vg_amd_blocks[b].bit, &ec);
        if (r == RSMI_STATUS_SUCCESS) {
            ras.ue[b] = (long long)ec.uncorrectable_err;
            ras.ce[b] = (long long)ec.correctable_err;
        } else if (r != RSMI_STATUS_INVALID_ARGS)
            failed(st, "rsmi_dev_ecc_count_get", r);
    }
    uint32_t np = 0;
    if (R.Pages && !failed(st, "rsmi_dev_memory_reserved_pages_get", R.Pages(d, &np, NULL))) {
        ras.bad_reserved = ras.bad_pending = ras.bad_failed = 0;
        if (np > 0) {
            rsmi_retired_page_record_t *rec = vg_xcalloc(np, sizeof *rec);
            uint32_t got = np;
            if (!failed(st, "rsmi_dev_memory_reserved_pages_get", R.Pages(d, &got, rec)))
                for (uint32_t i = 0; i < got && i < np; i++)
                    ++*(rec[i].status == 1 ? &ras.bad_pending : rec[i].status == 2 ? &ras.bad_failed : &ras.bad_reserved);
            free(rec);
        }
    }
    vg_amd_ras_to_state(&ras, st);
    if (R.HiveId && R.HiveId(d, &v) == RSMI_STATUS_SUCCESS && v) vg_gpu_extra_set(st, "xgmi_hive", "0x%llx", (unsigned long long)v);
    int64_t t;
    if (R.Temp && R.Temp(d, RSMI_TEMP_TYPE_EDGE, RSMI_TEMP_CURRENT, &t) == RSMI_STATUS_SUCCESS) st->temp_c = (int)(t / 1000);
    return 0;
}

static int rsmi_reset(int index, char *err, size_t n)
{
    if (!R.inited || index < 0 || (uint32_t)index >= R.n) return snprintf(err, n, "no ROCm SMI GPU %d", index), -1;
    if (!R.Reset) return snprintf(err, n, "%s has no rsmi_dev_gpu_reset", R.path), -1;
    rsmi_status_t r = R.Reset((uint32_t)index);
    return r == RSMI_STATUS_SUCCESS ? 0 : (snprintf(err, n, "rsmi_dev_gpu_reset: %s", errstr(r)), -1);
}

const struct vg_amd_layer vg_amd_rsmi = {
    .name = "rsmi",
    .label = "ROCm SMI",
    .open = rsmi_open,
    .devices = rsmi_devices,
    .read = rsmi_read,
    .reset = rsmi_reset,
    .close = rsmi_close,
};
