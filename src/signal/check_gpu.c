/* check_gpu.c — the `gpu` check: GPU count and model, ECC, row remapping,
 * retired pages, PCIe width, NVLink, temperature and thermal slowdown, read
 * through the GPU backend by the watchdog probe (gpuprobe.h).
 *   * || gpu count=8 model="NVIDIA H100 80GB HBM3"
 *   * || gpu ecc_dbe=0 remap_failure=no pcie=full nvlink=all-up */
#include "signal/checks.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXEV 64

static const char *const gpu_keys[] = {
    "count=int", "model=*", "ecc_dbe=int", "ecc_sbe=int", "remap_failure=no", "remap_pending=no",
    "retired_pending=no", "pcie=full|any", "nvlink=all-up|any", "temp_max=int", "thermal=ok|any", NULL,
};

/* A per-GPU test: whether GPU s passes, with what it saw in `why`. */
typedef bool (*gpu_test)(const struct vg_gpu_state *s, long limit, char *why, size_t n);

static bool t_dbe(const struct vg_gpu_state *s, long lim, char *w, size_t n)
{
    snprintf(w, n, "%lld volatile double-bit ECC errors", s->ecc_dbe_volatile);
    return s->ecc_dbe_volatile <= lim;
}
static bool t_sbe(const struct vg_gpu_state *s, long lim, char *w, size_t n)
{
    snprintf(w, n, "%lld volatile single-bit ECC errors", s->ecc_sbe_volatile);
    return s->ecc_sbe_volatile <= lim;
}
static bool t_remap_fail(const struct vg_gpu_state *s, long lim, char *w, size_t n)
{
    (void)lim;
    snprintf(w, n, "row remapping failed (%lld uncorrectable rows)", s->remap_uncorrectable);
    return s->remap_failure != 1;
}
static bool t_remap_pend(const struct vg_gpu_state *s, long lim, char *w, size_t n)
{
    (void)lim;
    snprintf(w, n, "row remapping pending a reset");
    return s->remap_pending != 1;
}
static bool t_retired_pend(const struct vg_gpu_state *s, long lim, char *w, size_t n)
{
    (void)lim;
    snprintf(w, n, "page retirement pending a reset");
    return s->retired_pending != 1;
}
static bool t_pcie(const struct vg_gpu_state *s, long lim, char *w, size_t n)
{
    (void)lim;
    snprintf(w, n, "PCIe x%d, max x%d", s->pcie_width, s->pcie_width_max);
    return s->pcie_width < 0 || s->pcie_width_max < 0 || s->pcie_width >= s->pcie_width_max;
}
static bool t_nvlink(const struct vg_gpu_state *s, long lim, char *w, size_t n)
{
    (void)lim;
    struct sbuf b = SBUF_INIT;
    for (int l = 0; l < s->nvlink_links && l < VG_NVLINK_MAX; l++)
        if (s->nvlink[l] == 0) sbuf_printf(&b, "%s%d", b.len ? "," : "", l);
    snprintf(w, n, "NVLink %s down", b.s ? b.s : "");
    bool ok = b.len == 0;
    sbuf_free(&b);
    return ok;
}
static bool t_temp(const struct vg_gpu_state *s, long lim, char *w, size_t n)
{
    snprintf(w, n, "%d C, limit %ld C", s->temp_c, lim);
    return s->temp_c <= lim;
}
static bool t_thermal(const struct vg_gpu_state *s, long lim, char *w, size_t n)
{
    (void)lim;
    snprintf(w, n, "clocks slowed down (reasons 0x%llx)", (unsigned long long)s->clock_reasons);
    return s->clock_reasons < 0 ||
           !(s->clock_reasons & (long long)(VG_CLK_HW_THERMAL | VG_CLK_SW_THERMAL | VG_CLK_HW_SLOWDOWN));
}

static const struct {
    const char *key;
    gpu_test test;
    const char *event_kind;   /* the events of vg_gpu_state_events that go with it */
    const char *skip_value;   /* a value that disables the test */
} tests[] = {
    { "ecc_dbe", t_dbe, "ecc-dbe", NULL },
    { "ecc_sbe", t_sbe, NULL, NULL },
    { "remap_failure", t_remap_fail, "row-remap-failure", NULL },
    { "remap_pending", t_remap_pend, "row-remap-pending", NULL },
    { "retired_pending", t_retired_pend, "retired-pages-pending", NULL },
    { "pcie", t_pcie, "pcie-degraded", "any" },
    { "nvlink", t_nvlink, "nvlink-down", "any" },
    { "temp_max", t_temp, NULL, NULL },
    { "thermal", t_thermal, "thermal-slowdown", "any" },
};

static void gpu_run(const struct vg_check_ctx *ctx, const struct vg_check_line *l, struct vg_check_results *out)
{
    const struct vg_gpu_probe_result *g = ctx->gpus;
    const char *v;
    if ((v = vg_check_get(l, "count"))) {
        long want = atol(v);
        if (g->count < 0)
            vg_check_add(out, l, false, "gpu count", "expected %ld GPUs, the count could not be read", want);
        else
            vg_check_add(out, l, g->count == want, "gpu count", "%d GPUs, expected %ld", g->count, want);
    }
    if ((v = vg_check_get(l, "model"))) {
        struct sbuf bad = SBUF_INIT;
        for (int i = 0; i < g->n; i++)
            if (!g->gpus[i].lost && strcmp(g->gpus[i].name, v) != 0)
                sbuf_printf(&bad, "%sGPU %d is \"%s\"", bad.len ? "; " : "", g->gpus[i].index, g->gpus[i].name);
        vg_check_add(out, l, bad.len == 0, "gpu model", "%s", bad.len ? bad.s : v);
        sbuf_free(&bad);
    }
    for (size_t t = 0; t < sizeof tests / sizeof tests[0]; t++) {
        if (!(v = vg_check_get(l, tests[t].key))) continue;
        if (tests[t].skip_value && !strcmp(v, tests[t].skip_value)) continue;
        long limit = atol(v);
        struct sbuf bad = SBUF_INIT;
        struct vg_event ev[MAXEV];
        int nev = 0, checked = 0;
        for (int i = 0; i < g->n; i++) {
            const struct vg_gpu_state *s = &g->gpus[i];
            if (s->lost) continue;   /* reported by "gpu responsive" */
            char why[160];
            checked++;
            if (tests[t].test(s, limit, why, sizeof why)) continue;
            sbuf_printf(&bad, "%sGPU %d (%s): %s", bad.len ? "; " : "", s->index, s->pci, why);
            if (!tests[t].event_kind) continue;
            struct vg_event all[64];
            int na = 0;
            vg_gpu_state_events(s, ctx->node, all, &na, 64);
            for (int k = 0; k < na && nev < MAXEV; k++)
                if (!strcmp(all[k].kind, tests[t].event_kind)) ev[nev++] = all[k];
        }
        char name[64];
        snprintf(name, sizeof name, "gpu %s", tests[t].key);
        struct vg_check_result *r =
            vg_check_add(out, l, bad.len == 0, name, "%s", bad.len ? bad.s : checked ? "ok" : "no GPU read");
        for (int k = 0; k < nev; k++) vg_check_add_event(r, &ev[k]);
        sbuf_free(&bad);
    }
}

void vg_check_gpu_responsive(const struct vg_check_ctx *ctx, struct vg_check_results *out)
{
    const struct vg_gpu_probe_result *g = ctx->gpus;
    struct vg_event ev[MAXEV];
    int nev = 0;
    struct sbuf bad = SBUF_INIT;
    if (g->error[0]) sbuf_printf(&bad, "%s", g->error);
    for (int i = 0; i < g->n; i++)
        if (g->gpus[i].lost)
            sbuf_printf(&bad, "%sGPU %d%s%s%s is lost", bad.len ? "; " : "", g->gpus[i].index,
                        g->gpus[i].pci[0] ? " (" : "", g->gpus[i].pci, g->gpus[i].pci[0] ? ")" : "");
    if (g->hung) {
        if (g->hung_gpu >= 0)
            sbuf_printf(&bad, "%sGPU %d unresponsive: NVML did not answer within %lld ms", bad.len ? "; " : "",
                        g->hung_gpu, (long long)g->elapsed_ms);
        else
            sbuf_printf(&bad, "%sNVML hung at %s for %lld ms", bad.len ? "; " : "", g->hung_call,
                        (long long)g->elapsed_ms);
    }
    struct vg_event all[MAXEV];
    int na = 0;
    vg_gpu_probe_events(g, ctx->node, all, &na, MAXEV);
    for (int k = 0; k < na; k++)
        if (!strcmp(all[k].kind, "gpu-lost") || !strcmp(all[k].kind, "probe-hung")) ev[nev++] = all[k];
    struct vg_check_result *r = vg_check_add(out, NULL, bad.len == 0, "gpu responsive", "%s",
                                             bad.len ? bad.s : "NVML answered for every GPU");
    for (int k = 0; k < nev; k++) vg_check_add_event(r, &ev[k]);
    sbuf_free(&bad);
}

/* The health keys NVML can answer on this node, as one line. */
static void gpu_health(const struct vg_check_ctx *ctx, struct sbuf *out)
{
    const struct vg_gpu_probe_result *g = ctx->gpus;
    if (!g || g->count <= 0 || g->n == 0) return;
    const struct vg_gpu_state *s = &g->gpus[0];
    sbuf_puts(out, "* || gpu");
    if (s->ecc_dbe_volatile >= 0) sbuf_puts(out, " ecc_dbe=0");
    if (s->remap_failure >= 0) sbuf_puts(out, " remap_failure=no remap_pending=no");
    if (s->retired_pending >= 0) sbuf_puts(out, " retired_pending=no");
    if (s->pcie_width_max > 0) sbuf_puts(out, " pcie=full");
    if (s->nvlink_links > 0) sbuf_puts(out, " nvlink=all-up");
    if (s->clock_reasons >= 0) sbuf_puts(out, " thermal=ok");
    sbuf_putc(out, '\n');
}

static void gpu_init(const struct vg_check_ctx *ctx, struct sbuf *out)
{
    const struct vg_gpu_probe_result *g = ctx->gpus;
    if (!g || g->count <= 0 || g->n == 0) return;
    sbuf_printf(out, "* || gpu count=%d model=\"%s\"\n", g->count, g->gpus[0].name);
    gpu_health(ctx, out);
}

const struct vg_check vg_check_gpu = {
    .name = "gpu", .keys = gpu_keys, .gpu = true, .run = gpu_run, .init = gpu_init, .defaults = gpu_health,
};
