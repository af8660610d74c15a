/* fake_amdsmi.c — a fake libamd_smi (and, built a second time under the
 * other soname, a fake librocm_smi64) for tests and the lab: the amdsmi_* and
 * rsmi_* calls vigil's AMD layers make, with each GPU's state read from the
 * text file named by $FAKE_AMDSMI_STATE on every call (a test, the lab or
 * `vigil inject` changes it live).  It can fail its init, report RAS counts
 * per block, retired pages, an XGMI link down, a GPU gone, make a call never
 * return, and be reset (the handles it gave out go stale until amdsmi_init
 * runs again, as the real library's do after a driver reload).  Its rules
 * follow amdsmi.h / rocm_smi.h; format: README.md here.  Links with libc. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXGPU 64
#define NLINKS 8

enum { OK = 0, INVAL = 1, NOT_SUPPORTED = 2, INIT_ERROR = 18, NOT_FOUND = 31, NOT_INIT = 32,
       DRIVER_NOT_LOADED = 34 };
/* rocm_smi's own numbering */
enum { RS_OK = 0, RS_INVALID_ARGS = 1, RS_NOT_SUPPORTED = 2, RS_INIT_ERROR = 8, RS_NOT_FOUND = 10 };

struct gpu { int index; };
static struct gpu gpus[MAXGPU];
static int socket_tag;
static int initialised, generation, resets;

static const char *const blocks[] = { "umc", "sdma", "gfx", "mmhub", "athub", "pcie_bif", "hdp", "xgmi_wafl", "df",
                                      "smn", "sem", "mp0", "mp1", "fuse", "mca", "vcn", "jpeg", "ih", "mpio" };

#define FAKE_STATE_ENV "FAKE_AMDSMI_STATE"
#include "../fake_state/fake_state.h"

static int gpu_count(void) { int n = (int)num(-1, "gpus", 8); return n > MAXGPU ? MAXGPU : n; }

/* The GPUs the driver initialised: all but those `gpuN.absent=1` (a GPU whose
 * init failed is not there at all).  The k-th of them, or -1. */
static int present(int k)
{
    for (int i = 0, seen = 0; i < gpu_count(); i++)
        if (!num(i, "absent", 0) && seen++ == k) return i;
    return -1;
}
static int present_count(void)
{
    int n = 0;
    while (present(n) >= 0) n++;
    return n;
}

/* The generation of the GPUs: the state's `reset=N` plus the resets done here. */
static int current_generation(void) { return (int)num(-1, "reset", 0) + resets; }

static void hang_if(int gpu, const char *fn)
{
    if (listed(gpu, "hang", fn))
        for (;;) pause();   /* the call never returns, like a wedged driver */
}

/* The common prologue of a device call: not initialised, a stale handle
 * (the GPUs were reset since amdsmi_init), hang, gone, unsupported. */
static int enter(const struct gpu *g, const char *fn)
{
    if (!initialised) return NOT_INIT;
    if (!g || g < gpus || g >= gpus + MAXGPU || g->index >= gpu_count()) return INVAL;
    if (generation != current_generation()) return NOT_FOUND;
    hang_if(g->index, fn);
    if (num(g->index, "lost", 0)) return NOT_FOUND;
    if (listed(g->index, "unsupported", fn)) return NOT_SUPPORTED;
    return OK;
}
#define ENTER(g) do { int r_ = enter((const struct gpu *)(g), __func__); if (r_) return r_; } while (0)

/* ---- amdsmi ---- */

int amdsmi_init(uint64_t flags)
{
    (void)flags;
    hang_if(-1, __func__);
    char v[32];
    if (lookup(-1, "init", v, sizeof v)) {
        if (!strcmp(v, "fail")) return DRIVER_NOT_LOADED;
        if (!strcmp(v, "error")) return INIT_ERROR;
    }
    for (int i = 0; i < MAXGPU; i++) gpus[i].index = i;
    generation = current_generation();
    initialised = 1;
    return OK;
}

int amdsmi_shut_down(void) { initialised = 0; return OK; }

/* `version=26.0.2` (default): {major, minor, release, build}; `version=24.7.1`:
 * the 2024 layout {year, major, minor, release, build}. */
int amdsmi_get_lib_version(uint32_t *v)
{
    char s[32] = "26.0.2";
    lookup(-1, "version", s, sizeof s);
    unsigned a = 0, b = 0, c = 0;
    sscanf(s, "%u.%u.%u", &a, &b, &c);
    memset(v, 0, 24);
    v[0] = a, v[1] = b, v[2] = c;   /* 24.7.1: year 24, major 7, minor 1 */
    return OK;
}

int amdsmi_status_code_to_string(int s, const char **out)
{
    switch (s) {
    case OK: *out = "AMDSMI_STATUS_SUCCESS: Call succeeded"; break;
    case NOT_SUPPORTED: *out = "AMDSMI_STATUS_NOT_SUPPORTED: Feature not supported"; break;
    case NOT_FOUND: *out = "AMDSMI_STATUS_NOT_FOUND: Device Not found"; break;
    case NOT_INIT: *out = "AMDSMI_STATUS_NOT_INIT: Device not initialized"; break;
    case DRIVER_NOT_LOADED: *out = "AMDSMI_STATUS_DRIVER_NOT_LOADED: Driver not loaded"; break;
    case INIT_ERROR: *out = "AMDSMI_STATUS_INIT_ERROR: An error occurred when initializing internal data structures"; break;
    default: *out = "AMDSMI_STATUS_UNKNOWN_ERROR: An unknown error occurred"; break;
    }
    return OK;
}

int amdsmi_get_socket_handles(uint32_t *count, void **handles)
{
    if (!initialised) return NOT_INIT;
    hang_if(-1, __func__);
    if (handles && *count >= 1) handles[0] = &socket_tag;
    *count = 1;
    return OK;
}

int amdsmi_get_processor_handles(void *socket, uint32_t *count, void **handles)
{
    if (!initialised) return NOT_INIT;
    if (socket != &socket_tag) return INVAL;
    hang_if(-1, __func__);
    uint32_t n = (uint32_t)present_count();
    for (uint32_t i = 0; handles && i < n && i < *count; i++) handles[i] = &gpus[present((int)i)];
    *count = n;
    return OK;
}

int amdsmi_get_processor_type(void *h, int *type) { ENTER(h); *type = 1; return OK; }

static const char *const buses[8] = { "0000:0c:00.0", "0000:1c:00.0", "0000:3d:00.0", "0000:42:00.0",
                                      "0000:55:00.0", "0000:9e:00.0", "0000:c2:00.0", "0000:e6:00.0" };

static void gpu_pci(int i, unsigned *dom, unsigned *bus, unsigned *dev, unsigned *fn)
{
    char v[64] = "";
    if (!lookup(i, "pci", v, sizeof v)) {
        if (i < 8) snprintf(v, sizeof v, "%s", buses[i]);
        else snprintf(v, sizeof v, "0000:%02x:00.0", 0x10 + i);
    }
    *dom = *bus = *dev = *fn = 0;
    sscanf(v, "%x:%x:%x.%x", dom, bus, dev, fn);
}

int amdsmi_get_gpu_device_bdf(void *h, uint64_t *bdf)
{
    ENTER(h);
    unsigned d, b, v, f;
    gpu_pci(((struct gpu *)h)->index, &d, &b, &v, &f);
    *bdf = ((uint64_t)d << 16) | ((uint64_t)b << 8) | ((uint64_t)v << 3) | f;
    return OK;
}

int amdsmi_get_gpu_device_uuid(void *h, unsigned int *len, char *uuid)
{
    ENTER(h);
    char v[96];
    int i = ((struct gpu *)h)->index;
    if (!lookup(i, "uuid", v, sizeof v)) snprintf(v, sizeof v, "37ff74a1-0000-1000-80c5-%012d", i);
    if (strlen(v) >= *len) return INVAL;
    memcpy(uuid, v, strlen(v) + 1);
    return OK;
}

/* amdsmi_asic_info_t: market_name first */
int amdsmi_get_gpu_asic_info(void *h, char *info)
{
    ENTER(h);
    char v[64];
    if (!lookup(((struct gpu *)h)->index, "name", v, sizeof v)) snprintf(v, sizeof v, "AMD Instinct MI300X");
    memset(info, 0, 64);
    snprintf(info, 64, "%s", v);
    return OK;
}

static int block_index(uint64_t bit)
{
    for (int i = 0; i < (int)(sizeof blocks / sizeof blocks[0]); i++)
        if (bit == (1ULL << i)) return i;
    return -1;
}

/* `gpuN.ue.umc=1`, `gpuN.ce.xgmi_wafl=4` */
int amdsmi_get_gpu_ecc_count(void *h, uint64_t block, uint64_t *ec)
{
    ENTER(h);
    int b = block_index(block);
    if (b < 0) return INVAL;
    char k[32];
    int i = ((struct gpu *)h)->index;
    memset(ec, 0, 8 * sizeof *ec);
    snprintf(k, sizeof k, "ce.%s", blocks[b]);
    ec[0] = num(i, k, 0);
    snprintf(k, sizeof k, "ue.%s", blocks[b]);
    ec[1] = num(i, k, 0);
    return OK;
}

struct page { uint64_t addr, size; int status; };

/* `bad_reserved`, `bad_pending`, `bad_failed`: counts of retired pages by state */
static int pages(int i, uint32_t *n, struct page *out)
{
    unsigned long long c[3] = { num(i, "bad_reserved", 0), num(i, "bad_pending", 0), num(i, "bad_failed", 0) };
    uint32_t total = (uint32_t)(c[0] + c[1] + c[2]), k = 0;
    if (out)
        for (int s = 0; s < 3; s++)
            for (unsigned long long j = 0; j < c[s] && k < *n; j++, k++)
                out[k] = (struct page){ 0x1000 * (k + 1), 0x1000, s };
    *n = out ? k : total;
    return OK;
}

int amdsmi_get_gpu_bad_page_info(void *h, uint32_t *n, struct page *out)
{
    ENTER(h);
    return pages(((struct gpu *)h)->index, n, out);
}

int amdsmi_get_gpu_bad_page_threshold(void *h, uint32_t *t)
{
    ENTER(h);
    *t = (uint32_t)num(((struct gpu *)h)->index, "bad_page_threshold", 0);
    return *t ? OK : NOT_SUPPORTED;
}

struct xgmi_info { uint8_t lanes; uint64_t hive, node; uint32_t index; uint32_t reserved[9]; };

int amdsmi_get_xgmi_info(void *h, struct xgmi_info *x)
{
    ENTER(h);
    int i = ((struct gpu *)h)->index;
    memset(x, 0, sizeof *x);
    x->lanes = 16;
    x->hive = num(i, "xgmi_hive", 0x5e1f0000c0ffeeULL);
    x->node = (uint64_t)i;
    x->index = (uint32_t)i;
    return OK;
}

/* `xgmi_links=N` (default 8), `xgmi_down=L[,L…]` */
int amdsmi_get_gpu_xgmi_link_status(void *h, uint32_t *st)
{
    ENTER(h);
    int i = ((struct gpu *)h)->index;
    uint32_t n = (uint32_t)num(i, "xgmi_links", NLINKS);
    if (n > NLINKS) n = NLINKS;
    st[0] = n;
    for (uint32_t l = 0; l < NLINKS; l++) {
        char name[8];
        snprintf(name, sizeof name, "%u", l);
        st[1 + l] = l >= n ? 2 : listed(i, "xgmi_down", name) ? 0 : 1;
    }
    return OK;
}

int amdsmi_get_temp_metric(void *h, int type, int metric, int64_t *t)
{
    ENTER(h);
    (void)type, (void)metric;
    *t = (int64_t)num(((struct gpu *)h)->index, "temp", 40);
    return OK;
}

/* Resets the GPU: noted in $FAKE_AMDSMI_STATE.resets; every handle is stale
 * until amdsmi_init runs again. */
int amdsmi_reset_gpu(void *h)
{
    ENTER(h);
    char path[600];
    snprintf(path, sizeof path, "%s.resets", getenv("FAKE_AMDSMI_STATE"));
    FILE *f = fopen(path, "ae");
    if (f) {
        fprintf(f, "gpu=%d\n", ((struct gpu *)h)->index);
        fclose(f);
    }
    resets++;
    return OK;
}

/* ---- rocm_smi, on the same state ---- */

/* rocm_smi numbers the GPUs the driver initialised: index d is present(d). */
static int r_enter(uint32_t d, const char *fn)
{
    if (!initialised) return RS_INIT_ERROR;
    int i = present((int)d);
    if (i < 0) return RS_INVALID_ARGS;
    hang_if(i, fn);
    if (num(i, "lost", 0)) return RS_NOT_FOUND;
    if (listed(i, "unsupported", fn)) return RS_NOT_SUPPORTED;
    return RS_OK;
}
#define R_ENTER(d) do { int r_ = r_enter(d, __func__); if (r_) return r_; d = (uint32_t)present((int)d); } while (0)

int rsmi_init(uint64_t flags)
{
    (void)flags;
    hang_if(-1, __func__);
    char v[32];
    if (lookup(-1, "init", v, sizeof v) && (!strcmp(v, "fail") || !strcmp(v, "error"))) {
        fputs("Exception caught: rsmi_init.\n", stderr);   /* as the real library prints */
        return RS_INIT_ERROR;
    }
    initialised = 1;
    return RS_OK;
}
int rsmi_shut_down(void) { initialised = 0; return RS_OK; }
int rsmi_num_monitor_devices(uint32_t *n) { *n = initialised ? (uint32_t)present_count() : 0; return RS_OK; }
int rsmi_status_string(int s, const char **out)
{
    *out = s == RS_OK ? "RSMI_STATUS_SUCCESS: The function has been executed successfully."
           : s == RS_INIT_ERROR ? "An error occurred during initialization, during monitor discovery or when when "
                                 "initializing internal data structures"
                               : "RSMI_STATUS_UNKNOWN_ERROR";
    return RS_OK;
}
int rsmi_dev_pci_id_get(uint32_t d, uint64_t *id)
{
    R_ENTER(d);
    unsigned dom, b, v, f;
    gpu_pci((int)d, &dom, &b, &v, &f);
    *id = ((uint64_t)dom << 32) | ((uint64_t)b << 8) | ((uint64_t)v << 3) | f;
    return RS_OK;
}
int rsmi_dev_name_get(uint32_t d, char *name, size_t len)
{
    R_ENTER(d);
    char v[64];
    if (!lookup((int)d, "name", v, sizeof v)) snprintf(v, sizeof v, "AMD Instinct MI300X");
    snprintf(name, len, "%s", v);
    return RS_OK;
}
int rsmi_dev_unique_id_get(uint32_t d, uint64_t *id) { R_ENTER(d); *id = 0x5e1f000000000000ULL + d; return RS_OK; }
int rsmi_dev_ecc_count_get(uint32_t d, uint64_t block, uint64_t *ec)
{
    R_ENTER(d);
    int b = block_index(block);
    if (b < 0) return RS_INVALID_ARGS;
    char k[32];
    snprintf(k, sizeof k, "ce.%s", blocks[b]);
    ec[0] = num((int)d, k, 0);
    snprintf(k, sizeof k, "ue.%s", blocks[b]);
    ec[1] = num((int)d, k, 0);
    return RS_OK;
}
int rsmi_dev_memory_reserved_pages_get(uint32_t d, uint32_t *n, struct page *out)
{
    R_ENTER(d);
    return pages((int)d, n, out);
}
int rsmi_dev_xgmi_hive_id_get(uint32_t d, uint64_t *id) { R_ENTER(d); *id = num((int)d, "xgmi_hive", 0x5e1f0000c0ffeeULL); return RS_OK; }
int rsmi_dev_temp_metric_get(uint32_t d, uint32_t sensor, int metric, int64_t *t)
{
    R_ENTER(d);
    (void)sensor, (void)metric;
    *t = (int64_t)num((int)d, "temp", 40) * 1000;   /* millidegrees */
    return RS_OK;
}
int rsmi_dev_gpu_reset(uint32_t d)
{
    R_ENTER(d);
    char path[600];
    snprintf(path, sizeof path, "%s.resets", getenv("FAKE_AMDSMI_STATE"));
    FILE *f = fopen(path, "ae");
    if (f) {
        fprintf(f, "gpu=%u\n", d);
        fclose(f);
    }
    return RS_OK;
}
