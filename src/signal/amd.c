/* amd.c — the AMD Instinct GPU vendor: three layers (amd.h), the first
 * library that answers — AMD SMI, else ROCm SMI — counting and reading the
 * GPUs, and the driver's own sysfs filling in what the library left unknown
 * (or alone, where no library is installed; alone too under --root, where a
 * fixture tree or a mounted disk is not the live host).  No library and no
 * AMD GPU in sysfs is "no AMD GPU here", not a fault; a library that fails
 * while the amdgpu driver is loaded is.  Every call runs where the GPU probe
 * runs it: in a watchdog child (gpuprobe.c), so a hung library costs the
 * deadline and is reported as probe-hung naming the GPU.  Each probe is a
 * fresh process, so the library is initialised anew after a driver reload;
 * within one, a stale handle re-initialises it (amd_smi.c). */
#include "signal/amd.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct {
    const struct vg_amd_layer *lib;   /* the library layer that answered, or NULL */
    bool sysfs;                       /* the sysfs layer has GPUs */
    char note[48];                    /* why a library was not used although it is here */
} V;

static const struct vg_amd_layer *const libraries[] = { &vg_amd_smi, &vg_amd_rsmi, NULL };

int vg_amd_quietly(int (*fn)(void *), void *arg)
{
    fflush(stderr);
    int saved = dup(2), null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (saved >= 0 && null >= 0) dup2(null, 2);
    int rc = fn(arg);
    fflush(stderr);
    if (saved >= 0) {
        dup2(saved, 2);
        close(saved);
    }
    if (null >= 0) close(null);
    return rc;
}

int vg_amd_load(const char *env, const char *const *candidates, const struct vg_amd_sym *syms, size_t nsyms,
                void **lib, char *path, size_t pathlen, char *err, size_t n)
{
    const char *given = getenv(env);
    bool named = given && *given;
    *lib = NULL;
    for (size_t i = 0; named ? i == 0 : candidates[i] != NULL; i++) {
        const char *p = named ? given : candidates[i];
        if ((*lib = dlopen(p, RTLD_NOW | RTLD_LOCAL))) {
            vg_strlcpy(path, p, pathlen);
            break;
        }
        if (named) return snprintf(err, n, "cannot load %s: %s", p, dlerror()), -1;
    }
    if (!*lib) return VG_GPU_ABSENT;   /* not installed: the next layer */
    for (size_t i = 0; i < nsyms; i++) {
        *syms[i].slot = dlsym(*lib, syms[i].name);
        if (!*syms[i].slot && syms[i].required) {
            snprintf(err, n, "%s: missing symbol %s", path, syms[i].name);
            dlclose(*lib);
            *lib = NULL;
            return -1;
        }
    }
    return 0;
}

static bool live(const char *root) { return !root || !root[0] || !strcmp(root, "/"); }

/* The driver is loaded (under --root), or a library's path is given (the tests and the lab). */
static bool amd_probe(void)
{
    const char *a = getenv("VIGIL_AMDSMI_LIB"), *r = getenv("VIGIL_ROCM_SMI_LIB");
    return (a && *a) || (r && *r) || vg_amd_driver_loaded(vg_gpu_root());
}

static void amd_close(void)
{
    if (V.lib) V.lib->close();
    vg_amd_sysfs.close();
    memset(&V, 0, sizeof V);
}

static int amd_open(char *err, size_t n)
{
    const char *root = vg_gpu_root();
    memset(&V, 0, sizeof V);
    char why[256] = "";
    for (size_t i = 0; live(root) && libraries[i] && !V.lib; i++) {
        char e[256] = "";
        int rc = libraries[i]->open(root, e, sizeof e);
        if (rc == 0) V.lib = libraries[i];
        else if (rc < 0 && !why[0]) vg_strlcpy(why, e, sizeof why);
    }
    char e[256];
    V.sysfs = vg_amd_sysfs.open(root, e, sizeof e) == 0;
    if (V.lib || V.sysfs) {
        if (!V.lib && why[0]) vg_strlcpy(V.note, why, sizeof V.note);
        return 0;
    }
    if (why[0]) return snprintf(err, n, "%s", why), -1;
    return VG_GPU_ABSENT;   /* no library answered and the driver shows no AMD GPU */
}

static const struct vg_amd_layer *primary(void) { return V.lib ? V.lib : &vg_amd_sysfs; }

static int amd_devices(void) { return V.lib || V.sysfs ? primary()->devices() : -1; }

static int amd_read(int index, struct vg_gpu_state *st)
{
    vg_gpu_state_init(st, index);
    const struct vg_amd_layer *l = primary();
    vg_strlcpy(st->source, l->name, sizeof st->source);
    int rc = l->read(index, st);
    if (rc == 0 && V.lib && V.sysfs) vg_amd_sysfs_enrich(st->pci, st);
    vg_gpu_extra_set(st, "layer", "%s%s%s", l->name, V.note[0] ? ": " : "", V.note);
    return rc;
}

static int amd_reset(int index, char *err, size_t n)
{
    if (!V.lib || !V.lib->reset)
        return snprintf(err, n, "no AMD SMI or ROCm SMI library to reset GPU %d with (sysfs cannot)", index), -1;
    return V.lib->reset(index, err, n);
}

/* The amdgpu module's version (the DKMS driver's; the in-tree driver has none). */
static int amd_driver_version(char *buf, size_t n)
{
    return vg_read_line(vg_gpu_root(), "/sys/module/amdgpu/version", buf, n) == 0 && buf[0] ? 0 : -1;
}

const struct vg_gpu_vendor vg_gpu_amd = {
    .name = "amd",
    .source = "amdsmi",
    .label = "AMD SMI",
    .link_name = "XGMI",
    .kmod = "amdgpu",
    .hint = "install AMD SMI (libamd_smi, ROCm 6.2 or later) or ROCm SMI (Debian: librocm-smi64-1), or point "
            "VIGIL_AMDSMI_LIB at it",
    .kinds = { .lost = "gpu-lost", .ecc_ue = "amd-ras-ue", .remap_failure = "amd-bad-pages",
               .pcie_degraded = "pcie-degraded", .link_down = "amd-xgmi-down", .thermal = "thermal-slowdown" },
    .probe = amd_probe,
    .open = amd_open,
    .devices = amd_devices,
    .read = amd_read,
    .events = NULL,   /* amdsmi's event notification changed its layout across majors: the kernel log and the counters tell */
    .reset = amd_reset,
    .driver_version = amd_driver_version,
    .close = amd_close,
};
