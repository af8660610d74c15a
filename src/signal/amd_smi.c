/* amd_smi.c — the AMD SMI layer: libamd_smi loaded with dlopen (path
 * overridable with $VIGIL_AMDSMI_LIB; otherwise the development name, then
 * the sonames AMD and the distributions ship, newest first), never linked.
 * The declarations below are vigil's own minimal copy of the public amdsmi.h
 * ABI, limited to what kept its layout from the 2024 headers (library 24.x)
 * to the current ones (26.x, 27.x): status codes, the GPU block bits,
 * amdsmi_error_count_t, amdsmi_retired_page_record_t, amdsmi_bdf_t,
 * amdsmi_xgmi_info_t and scalars.  amdsmi_version_t lost its `year` in
 * ROCm 7.0: the version is read into a zeroed buffer and told apart by its
 * first word.  A library outside the validated generations is used for
 * counting GPUs only (its struct calls are refused).  amdsmi never looks for
 * GPUs again after amdsmi_init: a call that finds its handle stale (after a
 * driver reload or a GPU reset) re-initialises the library once and retries. */
#include "signal/amd.h"
#include "util/strutil.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the public ABI (amdsmi.h) ---- */
typedef int amdsmi_status_t;
typedef void *amdsmi_handle;
enum {
    AMDSMI_STATUS_SUCCESS = 0,
    AMDSMI_STATUS_INVAL = 1,
    AMDSMI_STATUS_NOT_SUPPORTED = 2,
    AMDSMI_STATUS_NOT_YET_IMPLEMENTED = 3,
    AMDSMI_STATUS_FILE_ERROR = 14,
    AMDSMI_STATUS_NOT_FOUND = 31,
    AMDSMI_STATUS_NOT_INIT = 32,
    AMDSMI_STATUS_DRIVER_NOT_LOADED = 34,
    AMDSMI_STATUS_NO_DATA = 40,
};
#define AMDSMI_INIT_AMD_GPUS (1ULL << 1)
#define AMDSMI_PROCESSOR_TYPE_AMD_GPU 1
#define AMDSMI_TEMPERATURE_TYPE_EDGE 0
#define AMDSMI_TEMP_CURRENT 0
#define AMDSMI_MAX_NUM_XGMI_LINKS 8
typedef struct {
    uint64_t correctable_count, uncorrectable_count, deferred_count;
    uint64_t reserved[5];
} amdsmi_error_count_t;
typedef struct {
    uint64_t page_address, page_size;
    int status;                 /* AMDSMI_MEM_PAGE_STATUS_RESERVED 0, PENDING 1, UNRESERVABLE 2 */
} amdsmi_retired_page_record_t;
typedef struct {
    uint8_t xgmi_lanes;
    uint64_t xgmi_hive_id, xgmi_node_id;
    uint32_t index;
    uint32_t reserved[9];
} amdsmi_xgmi_info_t;
typedef struct {                /* amdsmi_get_gpu_xgmi_link_status (26.x and later) */
    uint32_t total_links;
    int status[AMDSMI_MAX_NUM_XGMI_LINKS];   /* DOWN 0, UP 1, DISABLE 2 */
    uint64_t reserved[7];
} amdsmi_xgmi_link_status_t;

/* The library generations whose layouts above were checked against amdsmi.h. */
#define GEN_MIN 24
#define GEN_MAX 27
#define MAX_GPUS 64

static struct {
    void *lib;
    bool inited, structs_ok;
    char path[256];
    char version[32];
    int n;
    amdsmi_handle gpu[MAX_GPUS];
    char pci[MAX_GPUS][16];
    amdsmi_status_t (*Init)(uint64_t);
    amdsmi_status_t (*ShutDown)(void);
    amdsmi_status_t (*LibVersion)(void *);
    amdsmi_status_t (*StatusString)(amdsmi_status_t, const char **);
    amdsmi_status_t (*Sockets)(uint32_t *, amdsmi_handle *);
    amdsmi_status_t (*Processors)(amdsmi_handle, uint32_t *, amdsmi_handle *);
    amdsmi_status_t (*ProcessorType)(amdsmi_handle, int *);
    amdsmi_status_t (*Bdf)(amdsmi_handle, uint64_t *);
    amdsmi_status_t (*Uuid)(amdsmi_handle, unsigned int *, char *);
    amdsmi_status_t (*AsicInfo)(amdsmi_handle, void *);
    amdsmi_status_t (*EccCount)(amdsmi_handle, uint64_t, amdsmi_error_count_t *);
    amdsmi_status_t (*BadPages)(amdsmi_handle, uint32_t *, amdsmi_retired_page_record_t *);
    amdsmi_status_t (*BadPageThreshold)(amdsmi_handle, uint32_t *);
    amdsmi_status_t (*XgmiInfo)(amdsmi_handle, amdsmi_xgmi_info_t *);
    amdsmi_status_t (*XgmiLinks)(amdsmi_handle, amdsmi_xgmi_link_status_t *);
    amdsmi_status_t (*Temp)(amdsmi_handle, int, int, int64_t *);
    amdsmi_status_t (*Reset)(amdsmi_handle);
} A;

static const struct vg_amd_sym syms[] = {
    { "amdsmi_init", (void **)&A.Init, true },
    { "amdsmi_shut_down", (void **)&A.ShutDown, true },
    { "amdsmi_get_lib_version", (void **)&A.LibVersion, true },
    { "amdsmi_get_socket_handles", (void **)&A.Sockets, true },
    { "amdsmi_get_processor_handles", (void **)&A.Processors, true },
    { "amdsmi_status_code_to_string", (void **)&A.StatusString, false },
    { "amdsmi_get_processor_type", (void **)&A.ProcessorType, false },
    { "amdsmi_get_gpu_device_bdf", (void **)&A.Bdf, false },
    { "amdsmi_get_gpu_device_uuid", (void **)&A.Uuid, false },
    { "amdsmi_get_gpu_asic_info", (void **)&A.AsicInfo, false },
    { "amdsmi_get_gpu_ecc_count", (void **)&A.EccCount, false },
    { "amdsmi_get_gpu_bad_page_info", (void **)&A.BadPages, false },
    { "amdsmi_get_gpu_bad_page_threshold", (void **)&A.BadPageThreshold, false },
    { "amdsmi_get_xgmi_info", (void **)&A.XgmiInfo, false },
    { "amdsmi_get_gpu_xgmi_link_status", (void **)&A.XgmiLinks, false },
    { "amdsmi_get_temp_metric", (void **)&A.Temp, false },
    { "amdsmi_reset_gpu", (void **)&A.Reset, false },
};

/* Where the library may be: $VIGIL_AMDSMI_LIB alone when set. */
static const char *const candidates[] = {
    "libamd_smi.so", "libamd_smi.so.27", "libamd_smi.so.26", "libamd_smi.so.25", "libamd_smi.so.24",
    "libamd_smi.so.0", "/opt/rocm/lib/libamd_smi.so", NULL,
};

static const char *errstr(amdsmi_status_t s)
{
    const char *t = NULL;
    if (A.StatusString && A.StatusString(s, &t) != AMDSMI_STATUS_SUCCESS) t = NULL;
    return t ? t : "AMD SMI error";
}

static void smi_close(void)
{
    if (A.inited && A.ShutDown) A.ShutDown();
    if (A.lib) dlclose(A.lib);
    memset(&A, 0, sizeof A);
}

/* The version ("24.7.1" or "26.0.2") and its generation (the soname's
 * number): the first word either way, the year in the 2024 layout ({year,
 * major, minor, release}: 24.x is ROCm 6.2-6.4's), the major since
 * ({major, minor, release}: 26.0 is ROCm 7.0's). */
static int lib_version(void)
{
    uint32_t v[16] = { 0 };   /* larger than either layout */
    if (A.LibVersion(v) != AMDSMI_STATUS_SUCCESS) return 0;
    snprintf(A.version, sizeof A.version, "%u.%u.%u", v[0], v[1], v[2]);
    return (int)v[0];
}

struct init_arg {
    amdsmi_status_t rc;
};
static int do_init(void *arg)
{
    ((struct init_arg *)arg)->rc = A.Init(AMDSMI_INIT_AMD_GPUS);
    return 0;
}

/* The GPUs' handles and PCI addresses, every socket's. */
static int discover(char *err, size_t n)
{
    uint32_t ns = 0;
    A.n = 0;
    amdsmi_status_t r = A.Sockets(&ns, NULL);
    if (r != AMDSMI_STATUS_SUCCESS) return snprintf(err, n, "amdsmi_get_socket_handles: %s", errstr(r)), -1;
    amdsmi_handle sock[MAX_GPUS];
    if (ns > MAX_GPUS) ns = MAX_GPUS;
    if (ns && (r = A.Sockets(&ns, sock)) != AMDSMI_STATUS_SUCCESS)
        return snprintf(err, n, "amdsmi_get_socket_handles: %s", errstr(r)), -1;
    for (uint32_t s = 0; s < ns && A.n < MAX_GPUS; s++) {
        uint32_t np = 0;
        amdsmi_handle proc[MAX_GPUS];
        if ((r = A.Processors(sock[s], &np, NULL)) != AMDSMI_STATUS_SUCCESS)
            return snprintf(err, n, "amdsmi_get_processor_handles: %s", errstr(r)), -1;
        if (np > MAX_GPUS) np = MAX_GPUS;
        if (np && (r = A.Processors(sock[s], &np, proc)) != AMDSMI_STATUS_SUCCESS)
            return snprintf(err, n, "amdsmi_get_processor_handles: %s", errstr(r)), -1;
        for (uint32_t p = 0; p < np && A.n < MAX_GPUS; p++) {
            int type = AMDSMI_PROCESSOR_TYPE_AMD_GPU;
            if (A.ProcessorType && A.ProcessorType(proc[p], &type) == AMDSMI_STATUS_SUCCESS &&
                type != AMDSMI_PROCESSOR_TYPE_AMD_GPU)
                continue;
            uint64_t bdf = 0;
            A.pci[A.n][0] = 0;
            if (A.Bdf && A.Bdf(proc[p], &bdf) == AMDSMI_STATUS_SUCCESS)   /* fn:3 dev:5 bus:8 domain:48 */
                snprintf(A.pci[A.n], sizeof A.pci[0], "%04x:%02x:%02x.%x", (unsigned)((bdf >> 16) & 0xffff),
                         (unsigned)((bdf >> 8) & 0xff), (unsigned)((bdf >> 3) & 0x1f), (unsigned)(bdf & 7));
            A.gpu[A.n++] = proc[p];
        }
    }
    return 0;
}

static int smi_open(const char *root, char *err, size_t n)
{
    (void)root;
    if (A.inited) return 0;
    int rc = vg_amd_load("VIGIL_AMDSMI_LIB", candidates, syms, sizeof syms / sizeof syms[0], &A.lib, A.path,
                         sizeof A.path, err, n);
    if (rc) {
        memset(&A, 0, sizeof A);
        return rc;
    }
    struct init_arg ia;
    vg_amd_quietly(do_init, &ia);
    if (ia.rc != AMDSMI_STATUS_SUCCESS) {
        /* no driver (or, after a failed rsmi_init inside, no GPU): not a fault
         * unless the driver is loaded */
        bool absent = ia.rc == AMDSMI_STATUS_DRIVER_NOT_LOADED || !vg_amd_driver_loaded(NULL);
        snprintf(err, n, "amdsmi_init: %s (status %d)", errstr(ia.rc), ia.rc);
        smi_close();
        return absent ? VG_GPU_ABSENT : -1;
    }
    A.inited = true;
    int gen = lib_version();
    A.structs_ok = gen >= GEN_MIN && gen <= GEN_MAX;
    if (discover(err, n)) {
        smi_close();
        return -1;
    }
    return A.n > 0 ? 0 : VG_GPU_ABSENT;
}

static int smi_devices(void) { return A.inited ? A.n : -1; }

/* After a driver reload or a GPU reset amdsmi keeps answering for the GPUs it
 * found at init: shut it down, initialise it again and find them anew. */
static bool reinit(void)
{
    char pci[MAX_GPUS][16];
    int n = A.n;
    memcpy(pci, A.pci, sizeof pci);
    A.ShutDown();
    A.inited = false;
    struct init_arg ia;
    vg_amd_quietly(do_init, &ia);
    if (ia.rc != AMDSMI_STATUS_SUCCESS) return false;
    A.inited = true;
    char err[128];
    if (discover(err, sizeof err)) return false;
    /* the same GPUs in the same places, by PCI address, as the caller counted them */
    amdsmi_handle gpu[MAX_GPUS];
    for (int i = 0; i < n; i++) {
        gpu[i] = NULL;
        for (int k = 0; k < A.n; k++)
            if (!strcmp(A.pci[k], pci[i])) gpu[i] = A.gpu[k];
    }
    memcpy(A.gpu, gpu, sizeof(gpu[0]) * (size_t)n);
    memcpy(A.pci, pci, sizeof pci);
    A.n = n;
    return true;
}

/* A status that means the handle no longer names a GPU the library knows. */
static bool stale(amdsmi_status_t r)
{
    return r == AMDSMI_STATUS_NOT_INIT || r == AMDSMI_STATUS_NOT_FOUND || r == AMDSMI_STATUS_DRIVER_NOT_LOADED;
}

static bool failed(struct vg_gpu_state *st, const char *call, amdsmi_status_t r)
{
    if (r == AMDSMI_STATUS_SUCCESS) return false;
    if (r != AMDSMI_STATUS_NOT_SUPPORTED && r != AMDSMI_STATUS_NOT_YET_IMPLEMENTED && r != AMDSMI_STATUS_NO_DATA &&
        !st->error[0])
        snprintf(st->error, sizeof st->error, "%s: %s", call, errstr(r));
    return true;
}

static void read_ras(amdsmi_handle h, struct vg_gpu_state *st)
{
    struct vg_amd_ras ras;
    vg_amd_ras_init(&ras);
    for (size_t b = 0; A.EccCount && b < VG_AMD_BLOCKS; b++) {
        amdsmi_error_count_t ec;
        memset(&ec, 0, sizeof ec);
        amdsmi_status_t r = A.EccCount(h, vg_amd_blocks[b].bit, &ec);
        if (r == AMDSMI_STATUS_SUCCESS) {
            ras.ue[b] = (long long)ec.uncorrectable_count;
            ras.ce[b] = (long long)ec.correctable_count;
        } else if (r != AMDSMI_STATUS_NOT_SUPPORTED && r != AMDSMI_STATUS_INVAL)
            failed(st, "amdsmi_get_gpu_ecc_count", r);
    }
    uint32_t np = 0;
    if (A.BadPages && !failed(st, "amdsmi_get_gpu_bad_page_info", A.BadPages(h, &np, NULL))) {
        ras.bad_reserved = ras.bad_pending = ras.bad_failed = 0;
        if (np > 0) {
            amdsmi_retired_page_record_t *rec = vg_xcalloc(np, sizeof *rec);
            uint32_t got = np;
            if (!failed(st, "amdsmi_get_gpu_bad_page_info", A.BadPages(h, &got, rec)))
                for (uint32_t i = 0; i < got && i < np; i++)
                    ++*(rec[i].status == 1 ? &ras.bad_pending : rec[i].status == 2 ? &ras.bad_failed : &ras.bad_reserved);
            free(rec);
        }
    }
    uint32_t thr;
    if (A.BadPageThreshold && A.BadPageThreshold(h, &thr) == AMDSMI_STATUS_SUCCESS && thr > 0) ras.bad_threshold = thr;
    vg_amd_ras_to_state(&ras, st);
}

static int smi_read(int index, struct vg_gpu_state *st)
{
    if (!A.inited || index < 0 || index >= A.n) {
        vg_strlcpy(st->error, "AMD SMI not initialised", sizeof st->error);
        return -1;
    }
    vg_strlcpy(st->pci, A.pci[index], sizeof st->pci);
    uint64_t bdf;
    amdsmi_status_t r = A.Bdf ? A.Bdf(A.gpu[index], &bdf) : AMDSMI_STATUS_SUCCESS;
    if (stale(r) && (!reinit() || !A.gpu[index])) {
        st->lost = true;   /* the GPU is not there after the library looked again */
        snprintf(st->error, sizeof st->error, "amdsmi: GPU %s not found after re-initialising", st->pci);
        return -1;
    }
    amdsmi_handle h = A.gpu[index];
    char buf[96];
    unsigned int len = sizeof buf;
    if (A.Uuid && !failed(st, "amdsmi_get_gpu_device_uuid", A.Uuid(h, &len, buf))) {
        buf[sizeof buf - 1] = 0;
        vg_strlcpy(st->uuid, buf, sizeof st->uuid);
    }
    vg_gpu_extra_set(st, "amdsmi", "%s", A.version);
    if (!A.structs_ok) {   /* a library generation whose layouts were not checked */
        snprintf(st->error, sizeof st->error, "libamd_smi %s: structures not validated for this version", A.version);
        return 0;
    }
    /* amdsmi_asic_info_t starts with market_name[AMDSMI_MAX_STRING_LENGTH] (64, later 256) */
    char *asic = vg_xcalloc(1, 8192);
    if (A.AsicInfo && !failed(st, "amdsmi_get_gpu_asic_info", A.AsicInfo(h, asic))) {
        asic[63] = 0;
        vg_strlcpy(st->model, asic, sizeof st->model);
    }
    free(asic);
    read_ras(h, st);
    amdsmi_xgmi_info_t xi;
    memset(&xi, 0, sizeof xi);
    if (A.XgmiInfo && A.XgmiInfo(h, &xi) == AMDSMI_STATUS_SUCCESS && xi.xgmi_hive_id)
        vg_gpu_extra_set(st, "xgmi_hive", "0x%llx", (unsigned long long)xi.xgmi_hive_id);
    amdsmi_xgmi_link_status_t ls;
    memset(&ls, 0, sizeof ls);
    if (A.XgmiLinks && A.XgmiLinks(h, &ls) == AMDSMI_STATUS_SUCCESS) {
        st->links = ls.total_links < AMDSMI_MAX_NUM_XGMI_LINKS ? (int)ls.total_links : AMDSMI_MAX_NUM_XGMI_LINKS;
        for (int l = 0; l < st->links; l++) st->link[l] = (signed char)(ls.status[l] == 1 ? 1 : ls.status[l] == 0 ? 0 : -1);
    }
    int64_t t;
    if (A.Temp && A.Temp(h, AMDSMI_TEMPERATURE_TYPE_EDGE, AMDSMI_TEMP_CURRENT, &t) == AMDSMI_STATUS_SUCCESS)
        st->temp_c = (int)t;
    return 0;
}

static int smi_reset(int index, char *err, size_t n)
{
    if (!A.inited || index < 0 || index >= A.n) return snprintf(err, n, "no AMD SMI GPU %d", index), -1;
    if (!A.Reset) return snprintf(err, n, "%s has no amdsmi_reset_gpu", A.path), -1;
    amdsmi_status_t r = A.Reset(A.gpu[index]);
    if (r != AMDSMI_STATUS_SUCCESS) return snprintf(err, n, "amdsmi_reset_gpu: %s", errstr(r)), -1;
    /* the reset invalidated what the library knew of the hive's GPUs */
    return reinit() ? 0 : (snprintf(err, n, "amdsmi: re-initialising after the reset failed"), -1);
}

const struct vg_amd_layer vg_amd_smi = {
    .name = "amdsmi",
    .label = "AMD SMI",
    .open = smi_open,
    .devices = smi_devices,
    .read = smi_read,
    .reset = smi_reset,
    .close = smi_close,
};
