/* nvml.c — the NVIDIA GPU vendor, through NVML: the only file in vigil that
 * knows NVML exists.  libnvidia-ml.so.1 is loaded with dlopen (path
 * overridable with $VIGIL_NVML_LIB, which the tests and the lab point at the
 * fake library); the declarations below are vigil's own minimal copy of the
 * public NVML ABI (no NVIDIA header at build time).  A missing optional
 * symbol leaves its field "unknown" (-1). */
#include "signal/gpu.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include "util/rootfs.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the public ABI, as documented in the NVML API reference ---- */
typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlEventSet_st *nvmlEventSet_t;
enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_TIMEOUT = 10,
    NVML_ERROR_FUNCTION_NOT_FOUND = 13,
    NVML_ERROR_GPU_IS_LOST = 15,
};
enum { NVML_MEMORY_ERROR_TYPE_CORRECTED = 0, NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1 };
enum { NVML_VOLATILE_ECC = 0, NVML_AGGREGATE_ECC = 1 };
enum { NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0,
       NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1 };
enum { NVML_TEMPERATURE_GPU = 0 };
enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };
/* nvmlClocksEventReasons bits */
#define NVML_CLK_SW_POWER_CAP   0x4ULL
#define NVML_CLK_HW_SLOWDOWN    0x8ULL
#define NVML_CLK_SW_THERMAL     0x20ULL
#define NVML_CLK_HW_THERMAL     0x40ULL
#define NVML_CLK_HW_POWER_BRAKE 0x80ULL
#define NVML_EVENT_SINGLE_BIT_ECC 0x1ULL
#define NVML_EVENT_DOUBLE_BIT_ECC 0x2ULL
#define NVML_EVENT_XID_CRITICAL   0x8ULL
typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;
/* nvmlGpuFabricInfo_v2_t (the V call) and the first version's struct */
#define NVML_GPU_FABRIC_UUID_LEN 16
enum { NVML_GPU_FABRIC_STATE_NOT_SUPPORTED = 0, NVML_GPU_FABRIC_STATE_NOT_STARTED = 1,
       NVML_GPU_FABRIC_STATE_IN_PROGRESS = 2, NVML_GPU_FABRIC_STATE_COMPLETED = 3 };
typedef struct {
    unsigned int version;
    unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
    nvmlReturn_t status;
    unsigned int cliqueId;
    unsigned char state;
    unsigned int healthMask;
} nvmlGpuFabricInfo_v2_t;
#define nvmlGpuFabricInfo_v2 ((unsigned int)(sizeof(nvmlGpuFabricInfo_v2_t) | (2U << 24)))
typedef struct {
    unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
    nvmlReturn_t status;
    unsigned int cliqueId;
    unsigned char state;
} nvmlGpuFabricInfo_t;
typedef struct {
    nvmlDevice_t device;
    unsigned long long eventType, eventData;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlEventData_t;

/* ---- the symbols vigil uses: name, pointer, required ---- */
static struct {
    void *lib;
    int inited;
    nvmlReturn_t (*Init)(void);
    nvmlReturn_t (*Shutdown)(void);
    nvmlReturn_t (*GetCount)(unsigned int *);
    nvmlReturn_t (*GetHandle)(unsigned int, nvmlDevice_t *);
    const char *(*ErrorString)(nvmlReturn_t);
    nvmlReturn_t (*DriverVersion)(char *, unsigned int);
    nvmlReturn_t (*GetName)(nvmlDevice_t, char *, unsigned int);
    nvmlReturn_t (*GetUUID)(nvmlDevice_t, char *, unsigned int);
    nvmlReturn_t (*GetPci)(nvmlDevice_t, nvmlPciInfo_t *);
    nvmlReturn_t (*GetEcc)(nvmlDevice_t, int, int, unsigned long long *);
    nvmlReturn_t (*GetRetired)(nvmlDevice_t, int, unsigned int *, unsigned long long *);
    nvmlReturn_t (*GetRetiredPending)(nvmlDevice_t, int *);
    nvmlReturn_t (*GetRemapped)(nvmlDevice_t, unsigned int *, unsigned int *, unsigned int *, unsigned int *);
    nvmlReturn_t (*PcieGen)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*PcieWidth)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*PcieGenMax)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*PcieWidthMax)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*NvLinkState)(nvmlDevice_t, unsigned int, int *);
    nvmlReturn_t (*Temperature)(nvmlDevice_t, int, unsigned int *);
    nvmlReturn_t (*ClockReasons)(nvmlDevice_t, unsigned long long *);
    nvmlReturn_t (*Power)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*Clock)(nvmlDevice_t, int, unsigned int *);
    nvmlReturn_t (*FabricV)(nvmlDevice_t, nvmlGpuFabricInfo_v2_t *);
    nvmlReturn_t (*Fabric)(nvmlDevice_t, nvmlGpuFabricInfo_t *);
    nvmlReturn_t (*EventSetCreate)(nvmlEventSet_t *);
    nvmlReturn_t (*RegisterEvents)(nvmlDevice_t, unsigned long long, nvmlEventSet_t);
    nvmlReturn_t (*EventSetWait)(nvmlEventSet_t, nvmlEventData_t *, unsigned int);
    nvmlReturn_t (*EventSetFree)(nvmlEventSet_t);
    nvmlEventSet_t set;
} N;

struct sym {
    const char *name, *fallback;
    void **slot;
    int required;
};

static const struct sym syms[] = {
    { "nvmlInit_v2", "nvmlInit", (void **)&N.Init, 1 },
    { "nvmlShutdown", NULL, (void **)&N.Shutdown, 1 },
    { "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount", (void **)&N.GetCount, 1 },
    { "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex", (void **)&N.GetHandle, 1 },
    { "nvmlErrorString", NULL, (void **)&N.ErrorString, 0 },
    { "nvmlSystemGetDriverVersion", NULL, (void **)&N.DriverVersion, 0 },
    { "nvmlDeviceGetName", NULL, (void **)&N.GetName, 0 },
    { "nvmlDeviceGetUUID", NULL, (void **)&N.GetUUID, 0 },
    { "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2", (void **)&N.GetPci, 0 },
    { "nvmlDeviceGetTotalEccErrors", NULL, (void **)&N.GetEcc, 0 },
    { "nvmlDeviceGetRetiredPages", NULL, (void **)&N.GetRetired, 0 },
    { "nvmlDeviceGetRetiredPagesPendingStatus", NULL, (void **)&N.GetRetiredPending, 0 },
    { "nvmlDeviceGetRemappedRows", NULL, (void **)&N.GetRemapped, 0 },
    { "nvmlDeviceGetCurrPcieLinkGeneration", NULL, (void **)&N.PcieGen, 0 },
    { "nvmlDeviceGetCurrPcieLinkWidth", NULL, (void **)&N.PcieWidth, 0 },
    { "nvmlDeviceGetMaxPcieLinkGeneration", NULL, (void **)&N.PcieGenMax, 0 },
    { "nvmlDeviceGetMaxPcieLinkWidth", NULL, (void **)&N.PcieWidthMax, 0 },
    { "nvmlDeviceGetNvLinkState", NULL, (void **)&N.NvLinkState, 0 },
    { "nvmlDeviceGetTemperature", NULL, (void **)&N.Temperature, 0 },
    { "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons",
      (void **)&N.ClockReasons, 0 },
    { "nvmlDeviceGetPowerUsage", NULL, (void **)&N.Power, 0 },
    { "nvmlDeviceGetClockInfo", NULL, (void **)&N.Clock, 0 },
    { "nvmlDeviceGetGpuFabricInfoV", NULL, (void **)&N.FabricV, 0 },
    { "nvmlDeviceGetGpuFabricInfo", NULL, (void **)&N.Fabric, 0 },
    { "nvmlEventSetCreate", NULL, (void **)&N.EventSetCreate, 0 },
    { "nvmlDeviceRegisterEvents", NULL, (void **)&N.RegisterEvents, 0 },
    { "nvmlEventSetWait_v2", "nvmlEventSetWait", (void **)&N.EventSetWait, 0 },
    { "nvmlEventSetFree", NULL, (void **)&N.EventSetFree, 0 },
};

static const char *errstr(nvmlReturn_t r)
{
    const char *s = N.ErrorString ? N.ErrorString(r) : NULL;
    return s ? s : "unknown NVML error";
}

static void nvml_close(void)
{
    if (N.set && N.EventSetFree) N.EventSetFree(N.set);
    if (N.inited && N.Shutdown) N.Shutdown();
    if (N.lib) dlclose(N.lib);
    memset(&N, 0, sizeof N);
}

/* The driver is loaded, or the library's path is given (the tests and the lab). */
static bool nvml_probe(void)
{
    const char *path = getenv("VIGIL_NVML_LIB");
    return (path && *path) || vg_path_exists(NULL, "/sys/module/nvidia") || vg_path_exists(NULL, "/proc/driver/nvidia");
}

static int nvml_open(char *err, size_t errlen)
{
    if (N.inited) return 0;
    const char *path = getenv("VIGIL_NVML_LIB");
    if (!path || !*path) path = "libnvidia-ml.so.1";
    N.lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!N.lib) {
        snprintf(err, errlen, "cannot load %s: %s", path, dlerror());
        return -1;
    }
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        void *p = dlsym(N.lib, syms[i].name);
        if (!p && syms[i].fallback) p = dlsym(N.lib, syms[i].fallback);
        if (!p && syms[i].required) {
            snprintf(err, errlen, "%s: missing symbol %s", path, syms[i].name);
            nvml_close();
            return -1;
        }
        *syms[i].slot = p;
    }
    nvmlReturn_t r = N.Init();
    if (r != NVML_SUCCESS) {
        snprintf(err, errlen, "nvmlInit: %s", errstr(r));
        nvml_close();
        return -1;
    }
    N.inited = 1;
    return 0;
}

static int nvml_devices(void)
{
    unsigned int n = 0;
    if (!N.inited || N.GetCount(&n) != NVML_SUCCESS) return -1;
    return (int)n;
}

/* Records a failed call; returns true when the GPU is lost (stop reading it). */
static bool failed(struct vg_gpu_state *st, const char *call, nvmlReturn_t r)
{
    if (r == NVML_ERROR_GPU_IS_LOST) st->lost = true;
    if (r != NVML_ERROR_NOT_SUPPORTED && r != NVML_ERROR_FUNCTION_NOT_FOUND && !st->error[0])
        snprintf(st->error, sizeof st->error, "%s: %s", call, errstr(r));
    return st->lost;
}

/* Calls an optional getter; on failure records it and, for a lost GPU,
 * returns -1 from the caller. */
#define CALL(fn, name, ...)                                                      \
    do {                                                                         \
        if (N.fn) {                                                              \
            nvmlReturn_t r_ = N.fn(__VA_ARGS__);                                 \
            if (r_ != NVML_SUCCESS && failed(st, name, r_)) return -1;           \
            ok_ = r_ == NVML_SUCCESS;                                            \
        } else                                                                   \
            ok_ = false;                                                         \
    } while (0)

/* NVML's clock-event reasons as vigil's throttle bits. */
static long long throttle_bits(unsigned long long r)
{
    static const struct { unsigned long long nvml; long long vg; } map[] = {
        { NVML_CLK_SW_POWER_CAP, VG_THROTTLE_POWER_CAP },  { NVML_CLK_HW_SLOWDOWN, VG_THROTTLE_HW_SLOWDOWN },
        { NVML_CLK_SW_THERMAL, VG_THROTTLE_SW_THERMAL },   { NVML_CLK_HW_THERMAL, VG_THROTTLE_HW_THERMAL },
        { NVML_CLK_HW_POWER_BRAKE, VG_THROTTLE_POWER_BRAKE },
    };
    long long bits = 0;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (r & map[i].nvml) bits |= map[i].vg;
    return bits;
}

/* The GPU's NVLink fabric registration (GB200/GB300 trays register with the
 * rack's fabric at boot): its state, and the domain as "CLUSTER-UUID/CLIQUE".
 * A GPU without such a fabric (NOT_SUPPORTED, or a driver without the call)
 * stays -1.  Returns -1 when the GPU is lost. */
static int read_fabric(nvmlDevice_t d, struct vg_gpu_state *st)
{
    nvmlGpuFabricInfo_v2_t f;
    memset(&f, 0, sizeof f);
    f.version = nvmlGpuFabricInfo_v2;
    nvmlReturn_t r = NVML_ERROR_FUNCTION_NOT_FOUND;
    if (N.FabricV) r = N.FabricV(d, &f);
    if (r == NVML_ERROR_FUNCTION_NOT_FOUND && N.Fabric) {
        nvmlGpuFabricInfo_t v1;
        memset(&v1, 0, sizeof v1);
        if ((r = N.Fabric(d, &v1)) == NVML_SUCCESS) {
            memcpy(f.clusterUuid, v1.clusterUuid, sizeof f.clusterUuid);
            f.status = v1.status, f.cliqueId = v1.cliqueId, f.state = v1.state;
        }
    }
    if (r != NVML_SUCCESS) return failed(st, "nvmlDeviceGetGpuFabricInfoV", r) ? -1 : 0;
    if (f.state == NVML_GPU_FABRIC_STATE_NOT_SUPPORTED) return 0;
    if (f.state != NVML_GPU_FABRIC_STATE_COMPLETED) {
        st->fabric = VG_FABRIC_PENDING;
        return 0;
    }
    if (f.status != NVML_SUCCESS) {
        st->fabric = VG_FABRIC_FAILED;
        snprintf(st->fabric_error, sizeof st->fabric_error, "%s (%d)", errstr(f.status), f.status);
        return 0;
    }
    const unsigned char *u = f.clusterUuid;
    st->fabric = VG_FABRIC_OK;
    snprintf(st->fabric_domain, sizeof st->fabric_domain,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x/%u", u[0], u[1], u[2], u[3], u[4],
             u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15], f.cliqueId);
    return 0;
}

static int nvml_read(int index, struct vg_gpu_state *st)
{
    vg_gpu_state_init(st, index);
    if (!N.inited) {
        vg_strlcpy(st->error, "NVML not initialised", sizeof st->error);
        return -1;
    }
    nvmlDevice_t d;
    nvmlReturn_t r = N.GetHandle((unsigned)index, &d);
    if (r != NVML_SUCCESS) {
        failed(st, "nvmlDeviceGetHandleByIndex", r);
        return -1;
    }
    bool ok_;
    char buf[96];
    CALL(GetName, "nvmlDeviceGetName", d, buf, sizeof buf);
    if (ok_) vg_strlcpy(st->model, buf, sizeof st->model);
    CALL(GetUUID, "nvmlDeviceGetUUID", d, buf, sizeof buf);
    if (ok_) vg_strlcpy(st->uuid, buf, sizeof st->uuid);
    nvmlPciInfo_t pci;
    memset(&pci, 0, sizeof pci);
    CALL(GetPci, "nvmlDeviceGetPciInfo", d, &pci);
    if (ok_) {
        pci.busId[sizeof pci.busId - 1] = 0;
        if (!vg_gpu_pci_id(pci.busId, st->pci))
            snprintf(st->pci, sizeof st->pci, "%04x:%02x:%02x.0", pci.domain & 0xffff, pci.bus & 0xff,
                     pci.device & 0x1f);
    }
    unsigned long long v;
    static const struct { int type, counter; size_t off; } ecc[] = {
        { NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, offsetof(struct vg_gpu_state, ecc_ce) },
        { NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, offsetof(struct vg_gpu_state, ecc_ue) },
        { NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC, offsetof(struct vg_gpu_state, ecc_ce_total) },
        { NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC, offsetof(struct vg_gpu_state, ecc_ue_total) },
    };
    for (size_t i = 0; i < sizeof ecc / sizeof ecc[0]; i++) {
        CALL(GetEcc, "nvmlDeviceGetTotalEccErrors", d, ecc[i].type, ecc[i].counter, &v);
        if (ok_) *(long long *)((char *)st + ecc[i].off) = (long long)v;
    }
    unsigned int cnt = 0;
    if (N.GetRetired) {
        for (int cause = 0; cause < 2; cause++) {
            cnt = 0;
            r = N.GetRetired(d, cause, &cnt, NULL);
            if (r == NVML_SUCCESS || r == NVML_ERROR_INSUFFICIENT_SIZE) {
                if (cause == NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR) st->retired_ue = cnt;
                else st->retired_ce = cnt;
            } else if (failed(st, "nvmlDeviceGetRetiredPages", r))
                return -1;
        }
    }
    int en;
    CALL(GetRetiredPending, "nvmlDeviceGetRetiredPagesPendingStatus", d, &en);
    if (ok_) st->retire_pending = en != 0;
    unsigned int corr, unc, pend, fail;
    CALL(GetRemapped, "nvmlDeviceGetRemappedRows", d, &corr, &unc, &pend, &fail);
    if (ok_) {
        st->remap_ce = corr;
        st->remap_ue = unc;
        st->remap_pending = pend != 0;
        st->remap_failure = fail != 0;
    }
    unsigned int u;
    CALL(PcieGen, "nvmlDeviceGetCurrPcieLinkGeneration", d, &u);
    if (ok_) st->pcie_gen = (int)u;
    CALL(PcieWidth, "nvmlDeviceGetCurrPcieLinkWidth", d, &u);
    if (ok_) st->pcie_width = (int)u;
    CALL(PcieGenMax, "nvmlDeviceGetMaxPcieLinkGeneration", d, &u);
    if (ok_) st->pcie_gen_max = (int)u;
    CALL(PcieWidthMax, "nvmlDeviceGetMaxPcieLinkWidth", d, &u);
    if (ok_) st->pcie_width_max = (int)u;
    if (N.NvLinkState) {
        st->links = 0;
        for (unsigned l = 0; l < VG_GPU_LINKS_MAX; l++) {
            r = N.NvLinkState(d, l, &en);
            if (r == NVML_SUCCESS) {
                st->link[l] = en != 0;
                st->links = (int)l + 1;
            } else if (r == NVML_ERROR_GPU_IS_LOST) {
                failed(st, "nvmlDeviceGetNvLinkState", r);
                return -1;
            } else
                break;  /* no such link: the device has l links */
        }
    }
    CALL(Temperature, "nvmlDeviceGetTemperature", d, NVML_TEMPERATURE_GPU, &u);
    if (ok_) st->temp_c = (int)u;
    CALL(Power, "nvmlDeviceGetPowerUsage", d, &u);
    if (ok_) st->power_mw = u;
    CALL(Clock, "nvmlDeviceGetClockInfo", d, NVML_CLOCK_SM, &u);
    if (ok_) st->clock_sm_mhz = (int)u;
    CALL(Clock, "nvmlDeviceGetClockInfo", d, NVML_CLOCK_MEM, &u);
    if (ok_) st->clock_mem_mhz = (int)u;
    CALL(ClockReasons, "nvmlDeviceGetCurrentClocksEventReasons", d, &v);
    if (ok_) {
        st->throttle = throttle_bits(v);
        vg_gpu_extra_set(st, "clock_reasons", "0x%llx", v);   /* NVML's own bits, for the record */
    }
    return read_fabric(d, st);
}

/* Creates the event set on first use and registers every GPU with it. */
static int event_set(void)
{
    if (N.set) return 0;
    if (!N.inited || !N.EventSetCreate || !N.RegisterEvents || !N.EventSetWait) return -1;
    if (N.EventSetCreate(&N.set) != NVML_SUCCESS) {
        N.set = NULL;
        return -1;
    }
    int n = nvml_devices();
    for (int i = 0; i < n; i++) {
        nvmlDevice_t d;
        if (N.GetHandle((unsigned)i, &d) != NVML_SUCCESS) continue;
        /* Devices that cannot report ECC events still report XIDs. */
        if (N.RegisterEvents(d, NVML_EVENT_XID_CRITICAL | NVML_EVENT_DOUBLE_BIT_ECC, N.set) != NVML_SUCCESS)
            N.RegisterEvents(d, NVML_EVENT_XID_CRITICAL, N.set);
    }
    return 0;
}

static int device_index(nvmlDevice_t dev, char pci[16])
{
    int n = nvml_devices();
    pci[0] = 0;
    for (int i = 0; i < n; i++) {
        nvmlDevice_t d;
        if (N.GetHandle((unsigned)i, &d) == NVML_SUCCESS && d == dev) {
            nvmlPciInfo_t p;
            if (N.GetPci && N.GetPci(d, &p) == NVML_SUCCESS) {
                p.busId[sizeof p.busId - 1] = 0;
                if (!vg_gpu_pci_id(p.busId, pci)) pci[0] = 0;
            }
            return i;
        }
    }
    return -1;
}

static int nvml_events(int timeout_ms, struct vg_event *out, int max)
{
    if (event_set() < 0) return -1;
    int got = 0;
    int64_t end = vg_mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
    while (got < max) {
        int64_t left = end - vg_mono_ms();
        nvmlEventData_t ed;
        memset(&ed, 0, sizeof ed);
        /* After the first event, only drain what is already queued. */
        nvmlReturn_t r = N.EventSetWait(N.set, &ed, got ? 0 : (unsigned)(left > 0 ? left : 0));
        if (r == NVML_ERROR_TIMEOUT) break;
        if (r != NVML_SUCCESS) return got ? got : -1;
        struct vg_event *e = &out[got++];
        vg_event_init(e);
        e->time_ms = e->seen_ms = vg_now_ms();
        vg_strlcpy(e->source, "nvml", sizeof e->source);
        e->gpu = device_index(ed.device, e->pci);
        if (ed.eventType & NVML_EVENT_XID_CRITICAL) {
            vg_strlcpy(e->kind, "xid", sizeof e->kind);
            e->code = (int)(ed.eventData & 0x7fffffff);
            snprintf(e->raw, sizeof e->raw, "NVML: Xid %d on GPU %d", e->code, e->gpu);
        } else if (ed.eventType & NVML_EVENT_DOUBLE_BIT_ECC) {
            vg_strlcpy(e->kind, "ecc-dbe", sizeof e->kind);
            snprintf(e->raw, sizeof e->raw, "NVML: double-bit ECC error on GPU %d", e->gpu);
        } else {
            vg_strlcpy(e->kind, "nvml-event", sizeof e->kind);
            snprintf(e->raw, sizeof e->raw, "NVML: event 0x%llx on GPU %d", ed.eventType, e->gpu);
        }
    }
    return got;
}

/* nvmlSystemGetDriverVersion: the version of the driver the library belongs
 * to (NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE is 80). */
static int nvml_driver_version(char *buf, size_t n)
{
    char v[80] = "";
    if (!N.inited || !N.DriverVersion || N.DriverVersion(v, sizeof v) != NVML_SUCCESS || !v[0]) return -1;
    vg_strlcpy(buf, v, n);
    return 0;
}

const struct vg_gpu_vendor vg_gpu_nvidia = {
    .name = "nvidia",
    .source = "nvml",
    .label = "NVML",
    .link_name = "NVLink",
    .kmod = "nvidia",
    .hint = "install the NVIDIA driver (libnvidia-ml.so.1), or point VIGIL_NVML_LIB at it",
    .kinds = { .lost = "gpu-lost", .ecc_ue = "ecc-dbe", .retire_pending = "retired-pages-pending",
               .remap_pending = "row-remap-pending", .remap_failure = "row-remap-failure",
               .pcie_degraded = "pcie-degraded", .link_down = "nvlink-down", .thermal = "thermal-slowdown",
               .fabric_pending = "fabric-pending", .fabric_failed = "fabric-degraded" },
    .probe = nvml_probe,
    .open = nvml_open,
    .devices = nvml_devices,
    .read = nvml_read,
    .events = nvml_events,
    .driver_version = nvml_driver_version,
    .close = nvml_close,
};
