/* fake_nvml.c — a fake libnvidia-ml.so.1 for tests and the lab: the NVML
 * symbols vigil uses, with each GPU's state read from the text file named by
 * $FAKE_NVML_STATE on every call (so a test, the lab or `vigil inject` can
 * change it live).  It can report a lost GPU, make a call never return and
 * deliver XID events appended to an events file.  Format: README.md here.
 * Links with libc (and -lpthread) only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAXGPU 64
#define NLINKS 18

struct nvmlDevice_st { int index; };
struct nvmlEventSet_st { long offset; };
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlEventSet_st *nvmlEventSet_t;
typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;
typedef struct {
    nvmlDevice_t device;
    unsigned long long eventType, eventData;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlEventData_t;

enum { OK = 0, E_UNINIT = 1, E_INVAL = 2, E_NOTSUP = 3, E_NOTFOUND = 6, E_SIZE = 7, E_NODRIVER = 9,
       E_TIMEOUT = 10, E_LOST = 15, E_UNKNOWN = 999 };

static struct nvmlDevice_st devs[MAXGPU];
static int initialised;

#define FAKE_STATE_ENV "FAKE_NVML_STATE"
#include "../fake_state/fake_state.h"

static int gpu_count(void) { int n = (int)num(-1, "gpus", 8); return n > MAXGPU ? MAXGPU : n; }

/* The common prologue of a device call: hang, lost, unsupported. */
static int enter(nvmlDevice_t d, const char *fn)
{
    if (!initialised) return E_UNINIT;
    if (!d || d->index < 0 || d->index >= gpu_count()) return E_INVAL;
    if (listed(d->index, "hang", fn))
        for (;;) pause();   /* the call never returns, like a wedged driver */
    if (num(d->index, "lost", 0)) return E_LOST;
    if (listed(d->index, "unsupported", fn)) return E_NOTSUP;
    return OK;
}
#define ENTER(d) do { int r_ = enter(d, __func__); if (r_) return r_; } while (0)

int nvmlInit_v2(void)
{
    if (listed(-1, "hang", __func__)) for (;;) pause();
    char v[32];
    if (lookup(-1, "init", v, sizeof v) && strcmp(v, "fail") == 0) return E_NODRIVER;
    for (int i = 0; i < MAXGPU; i++) devs[i].index = i;
    initialised = 1;
    return OK;
}
int nvmlInit(void) { return nvmlInit_v2(); }
int nvmlShutdown(void) { initialised = 0; return OK; }

const char *nvmlErrorString(int r)
{
    switch (r) {
    case OK: return "Success";
    case E_UNINIT: return "Uninitialized";
    case E_INVAL: return "Invalid Argument";
    case E_NOTSUP: return "Not Supported";
    case E_NOTFOUND: return "Not Found";
    case E_SIZE: return "Insufficient Size";
    case E_NODRIVER: return "Driver Not Loaded";
    case E_TIMEOUT: return "Timeout";
    case E_LOST: return "GPU is lost";
    default: return "Unknown Error";
    }
}

/* The driver version: `driver=` (default 535.183.01, the version of the
 * h100 fixture's kernel module). */
int nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    if (!initialised) return E_UNINIT;
    if (listed(-1, "hang", __func__)) for (;;) pause();
    char v[96];
    if (!lookup(-1, "driver", v, sizeof v)) snprintf(v, sizeof v, "535.183.01");
    if (!version || strlen(v) >= length) return E_SIZE;
    snprintf(version, length, "%s", v);
    return OK;
}

int nvmlDeviceGetCount_v2(unsigned int *n)
{
    if (!initialised) return E_UNINIT;
    if (listed(-1, "hang", __func__)) for (;;) pause();
    *n = (unsigned)gpu_count();
    return OK;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
    if (!initialised) return E_UNINIT;
    if ((int)i >= gpu_count()) return E_INVAL;
    if (listed((int)i, "hang", __func__)) for (;;) pause();
    *d = &devs[i];
    return OK;
}

int nvmlDeviceGetName(nvmlDevice_t d, char *buf, unsigned int n)
{
    ENTER(d);
    char v[96];
    if (!lookup(d->index, "name", v, sizeof v)) snprintf(v, sizeof v, "NVIDIA H100 80GB HBM3");
    if (strlen(v) >= n) return E_SIZE;
    memcpy(buf, v, strlen(v) + 1);
    return OK;
}

int nvmlDeviceGetUUID(nvmlDevice_t d, char *buf, unsigned int n)
{
    ENTER(d);
    char v[96];
    if (!lookup(d->index, "uuid", v, sizeof v))
        snprintf(v, sizeof v, "GPU-fa4e0000-0000-4000-8000-%012d", d->index);
    if (strlen(v) >= n) return E_SIZE;
    memcpy(buf, v, strlen(v) + 1);
    return OK;
}

int nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p)
{
    static const unsigned buses[8] = { 0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb };
    ENTER(d);
    char v[64];
    unsigned dom = 0, bus = d->index < 8 ? buses[d->index] : (unsigned)(0x10 + d->index), dev = 0, fn = 0;
    if (lookup(d->index, "pci", v, sizeof v) && sscanf(v, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4) {
        dom = 0;
        if (sscanf(v, "%x:%x.%x", &bus, &dev, &fn) != 3) return E_UNKNOWN;
    }
    memset(p, 0, sizeof *p);
    p->domain = dom;
    p->bus = bus;
    p->device = dev;
    p->pciDeviceId = 0x233010de;
    snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "%04X:%02X:%02X.%X", dom & 0xffff, bus & 0xff, dev & 0x1f, fn & 7);
    snprintf(p->busId, sizeof p->busId, "%08X:%02X:%02X.%X", dom, bus & 0xff, dev & 0x1f, fn & 7);
    return OK;
}
int nvmlDeviceGetPciInfo_v2(nvmlDevice_t d, nvmlPciInfo_t *p) { return nvmlDeviceGetPciInfo_v3(d, p); }

int nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter, unsigned long long *c)
{
    ENTER(d);
    static const char *const keys[2][2] = { { "ecc_sbe_volatile", "ecc_sbe_aggregate" },
                                            { "ecc_dbe_volatile", "ecc_dbe_aggregate" } };
    if (type < 0 || type > 1 || counter < 0 || counter > 1) return E_INVAL;
    *c = num(d->index, keys[type][counter], 0);
    return OK;
}

int nvmlDeviceGetRetiredPages(nvmlDevice_t d, int cause, unsigned int *count, unsigned long long *addrs)
{
    ENTER(d);
    if (cause < 0 || cause > 1) return E_INVAL;
    unsigned n = (unsigned)num(d->index, cause ? "retired_dbe" : "retired_sbe", 0);
    if (*count < n) {
        *count = n;
        return n ? E_SIZE : OK;
    }
    for (unsigned i = 0; i < n && addrs; i++) addrs[i] = 0x1000ULL * (i + 1);
    *count = n;
    return OK;
}
int nvmlDeviceGetRetiredPages_v2(nvmlDevice_t d, int cause, unsigned int *count, unsigned long long *addrs,
                                 unsigned long long *ts)
{
    int r = nvmlDeviceGetRetiredPages(d, cause, count, addrs);
    for (unsigned i = 0; r == OK && ts && i < *count; i++) ts[i] = 0;
    return r;
}

int nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, int *pending)
{
    ENTER(d);
    *pending = num(d->index, "retired_pending", 0) != 0;
    return OK;
}

int nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int *corr, unsigned int *unc, unsigned int *pend,
                              unsigned int *fail)
{
    ENTER(d);
    *corr = (unsigned)num(d->index, "remap_correctable", 0);
    *unc = (unsigned)num(d->index, "remap_uncorrectable", 0);
    *pend = num(d->index, "remap_pending", 0) != 0;
    *fail = num(d->index, "remap_failure", 0) != 0;
    return OK;
}

#define UINT_GETTER(fn, key, def)                          \
    int fn(nvmlDevice_t d, unsigned int *v)                \
    {                                                      \
        ENTER(d);                                          \
        *v = (unsigned)num(d->index, key, def);            \
        return OK;                                         \
    }
UINT_GETTER(nvmlDeviceGetCurrPcieLinkGeneration, "pcie_gen", 5)
UINT_GETTER(nvmlDeviceGetCurrPcieLinkWidth, "pcie_width", 16)
UINT_GETTER(nvmlDeviceGetMaxPcieLinkGeneration, "pcie_gen_max", 5)
UINT_GETTER(nvmlDeviceGetMaxPcieLinkWidth, "pcie_width_max", 16)

int nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link, int *active)
{
    ENTER(d);
    if (link >= num(d->index, "nvlinks", NLINKS)) return E_INVAL;
    char name[16];
    snprintf(name, sizeof name, "%u", link);
    *active = !listed(d->index, "nvlink_down", name);
    return OK;
}

int nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *t)
{
    ENTER(d);
    if (sensor != 0) return E_INVAL;
    *t = (unsigned)num(d->index, "temp", 35);
    return OK;
}

int nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw)
{
    ENTER(d);
    *mw = (unsigned)num(d->index, "power_mw", 75000);
    return OK;
}

/* nvmlClockType_t: 0 graphics, 1 SM, 2 memory, 3 video. */
int nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int *mhz)
{
    ENTER(d);
    if (type == 0 || type == 1) *mhz = (unsigned)num(d->index, "clock_sm", 1980);
    else if (type == 2) *mhz = (unsigned)num(d->index, "clock_mem", 2619);
    else return E_INVAL;
    return OK;
}

int nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *r)
{
    ENTER(d);
    *r = num(d->index, "clock_reasons", 0);
    return OK;
}
int nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long *r)
{
    return nvmlDeviceGetCurrentClocksEventReasons(d, r);
}

/* ---- fabric: nvmlDeviceGetGpuFabricInfoV (nvmlGpuFabricInfo_v2_t) and the
 * first version's call, from the keys fabric (not_supported, not_started,
 * in_progress, completed), fabric_status, fabric_cluster (a UUID) and
 * fabric_clique. */
typedef struct {
    unsigned int version;
    unsigned char clusterUuid[16];
    int status;
    unsigned int cliqueId;
    unsigned char state;
    unsigned int healthMask;
} nvmlGpuFabricInfo_v2_t;
typedef struct {
    unsigned char clusterUuid[16];
    int status;
    unsigned int cliqueId;
    unsigned char state;
} nvmlGpuFabricInfo_t;
#define E_VERSION 25   /* NVML_ERROR_ARGUMENT_VERSION_MISMATCH */

static int fabric(nvmlDevice_t d, unsigned char uuid[16], int *status, unsigned int *clique, unsigned char *state)
{
    ENTER(d);
    static const char *const states[] = { "not_supported", "not_started", "in_progress", "completed" };
    char v[96] = "not_supported";
    lookup(d->index, "fabric", v, sizeof v);
    *state = 0;
    for (unsigned char i = 0; i < 4; i++)
        if (!strcmp(v, states[i])) *state = i;
    *status = (int)num(d->index, "fabric_status", 0);
    *clique = (unsigned)num(d->index, "fabric_clique", 0);
    memset(uuid, 0, 16);
    if (lookup(d->index, "fabric_cluster", v, sizeof v))
        for (int i = 0, k = 0; v[k] && i < 16; k++) {
            unsigned b;
            if (v[k] == '-' || sscanf(v + k, "%2x", &b) != 1) continue;
            uuid[i++] = (unsigned char)b;
            k++;
        }
    return OK;
}

int nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t d, nvmlGpuFabricInfo_v2_t *f)
{
    if (f->version != ((unsigned)sizeof *f | (2U << 24))) return E_VERSION;
    return fabric(d, f->clusterUuid, &f->status, &f->cliqueId, &f->state);
}
int nvmlDeviceGetGpuFabricInfo(nvmlDevice_t d, nvmlGpuFabricInfo_t *f)
{
    return fabric(d, f->clusterUuid, &f->status, &f->cliqueId, &f->state);
}

/* ---- events: lines "event=79 gpu=2" (type=xid|dbe|sbe, default xid)
 * appended to the events file after the set was created, each delivered once. */
static void events_path(char *buf, size_t n)
{
    if (!lookup(-1, "events", buf, n)) {
        const char *s = getenv("FAKE_NVML_STATE");
        snprintf(buf, n, "%s.events", s ? s : "fake-nvml");
    }
}

int nvmlEventSetCreate(nvmlEventSet_t *set)
{
    if (!initialised) return E_UNINIT;
    struct nvmlEventSet_st *s = calloc(1, sizeof *s);
    if (!s) return E_UNKNOWN;
    char path[512];
    struct stat sb;
    events_path(path, sizeof path);
    s->offset = stat(path, &sb) == 0 ? (long)sb.st_size : 0;
    *set = s;
    return OK;
}

int nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types, nvmlEventSet_t set)
{
    ENTER(d);
    (void)types;
    return set ? OK : E_INVAL;
}

/* Reads the next complete line after the set's offset into ed; 1 when one was. */
static int next_event(nvmlEventSet_t set, nvmlEventData_t *ed)
{
    char path[512], line[256];
    events_path(path, sizeof path);
    FILE *f = fopen(path, "re");
    if (!f) return 0;
    int got = 0;
    if (fseek(f, set->offset, SEEK_SET) == 0) {
        while (!got && fgets(line, sizeof line, f)) {
            size_t len = strlen(line);
            if (line[len - 1] != '\n') break;   /* a line still being written */
            set->offset += (long)len;
            int code = -1, gpu = 0;
            char type[16] = "xid";
            for (char *t = strtok(line, " \t\n"); t; t = strtok(NULL, " \t\n")) {
                if (!strncmp(t, "event=", 6)) code = atoi(t + 6);
                else if (!strncmp(t, "gpu=", 4)) gpu = atoi(t + 4);
                else if (!strncmp(t, "type=", 5)) snprintf(type, sizeof type, "%s", t + 5);
            }
            if (code < 0 || gpu < 0 || gpu >= gpu_count()) continue;
            memset(ed, 0, sizeof *ed);
            ed->device = &devs[gpu];
            ed->eventType = !strcmp(type, "dbe") ? 0x2 : !strcmp(type, "sbe") ? 0x1 : 0x8;
            ed->eventData = (unsigned long long)code;
            got = 1;
        }
    }
    fclose(f);
    return got;
}

int nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *ed, unsigned int timeout_ms)
{
    if (!initialised) return E_UNINIT;
    if (!set || !ed) return E_INVAL;
    if (listed(-1, "hang", __func__)) for (;;) pause();
    struct timespec step = { 0, 10 * 1000 * 1000 };
    for (unsigned waited = 0;; waited += 10) {
        if (next_event(set, ed)) return OK;
        if (waited >= timeout_ms) return E_TIMEOUT;
        nanosleep(&step, NULL);
    }
}
int nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t *ed, unsigned int t) { return nvmlEventSetWait_v2(set, ed, t); }

int nvmlEventSetFree(nvmlEventSet_t set)
{
    free(set);
    return OK;
}
