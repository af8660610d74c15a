/* check_gpu.c — the `gpu` check: GPU count and model, ECC, row remapping,
 * retired pages, PCIe width, GPU-to-GPU links (key `nvlink`), temperature
 * and thermal slowdown, the NVLink fabric registration (key `fabric`), read
 * from every GPU vendor present by the watchdog probe (gpuprobe.h).
 *   * || gpu count=8 model="NVIDIA H100 80GB HBM3"
 *   * || gpu ecc_dbe=0 remap_failure=no pcie=full nvlink=all-up */
#include "signal/checks.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXEV 64

static const char *const gpu_keys[] = {
    "count=int", "model=*", "ecc_dbe=int", "ecc_sbe=int", "remap_failure=no", "remap_pending=no",
    "retired_pending=no", "pcie=full|any", "nvlink=all-up|any", "temp_max=int", "thermal=ok|any", "fabric=ok|any",
    NULL,
};

/* A per-GPU test: whether GPU s passes, with what it saw in `why`. */
typedef bool (*gpu_test)(const struct vg_gpu_state *s, long limit, char *why, size_t n);

static bool t_dbe(const struct vg_gpu_state *s, long lim, char *w, size_t n)
{
    const char *where = vg_gpu_extra(s, "ue_blocks");   /* AMD: the RAS blocks they are in */
    snprintf(w, n, "%lld volatile double-bit ECC errors%s%s%s", s->ecc_ue, where ? " (" : "", where ? where : "",
             where ? ")" : "");
    return s->ecc_ue <= lim;
}
static bool t_sbe(const struct vg_gpu_state *s, long lim, char *w, size_t n)
{
    snprintf(w, n, "%lld volatile single-bit ECC errors", s->ecc_ce);
    return s->ecc_ce <= lim;
}
static bool t_remap_fail(const struct vg_gpu_state *s, long lim, char *w, size_t n)
{
    (void)lim;
    const char *pages = vg_gpu_extra(s, "bad_pages");   /* AMD: retired pages, not rows */
    if (pages) snprintf(w, n, "retired pages at the replacement threshold (%s)", pages);
    else snprintf(w, n, "row remapping failed (%lld uncorrectable rows)", s->remap_ue);
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
    return s->retire_pending != 1;
}
static bool t_pcie(const struct vg_gpu_state *s, long lim, char *w, size_t n)
{
    (void)lim;
    snprintf(w, n, "PCIe x%d, max x%d", s->pcie_width, s->pcie_width_max);
    return s->pcie_width < 0 || s->pcie_width_max < 0 || s->pcie_width >= s->pcie_width_max;
}
static bool t_links(const struct vg_gpu_state *s, long lim, char *w, size_t n)
{
    (void)lim;
    struct sbuf b = SBUF_INIT;
    for (int l = 0; l < s->links && l < VG_GPU_LINKS_MAX; l++)
        if (s->link[l] == 0) sbuf_printf(&b, "%s%d", b.len ? "," : "", l);
    snprintf(w, n, "%s %s down", s->v && s->v->link_name ? s->v->link_name : "link", b.s ? b.s : "");
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
    char why[80];
    snprintf(w, n, "clocks slowed down (%s)", vg_gpu_throttle_names(s->throttle, why, sizeof why));
    return s->throttle < 0 || !(s->throttle & VG_THROTTLE_THERMAL);
}

static bool t_fabric(const struct vg_gpu_state *s, long lim, char *w, size_t n)
{
    (void)lim;
    if (s->fabric == VG_FABRIC_FAILED) snprintf(w, n, "fabric registration failed: %s", s->fabric_error);
    else snprintf(w, n, "fabric registration not finished");
    return s->fabric < 0 || s->fabric == VG_FABRIC_OK;   /* no fabric: nothing to register */
}

#define KIND(f) offsetof(struct vg_gpu_kinds, f)
#define NOKIND ((size_t)-1)

/* The vendor's name for the kind at offset k of vg_gpu_kinds, or NULL. */
static const char *kind_of(const struct vg_gpu_state *s, size_t k)
{
    return s->v && k != NOKIND ? *(const char *const *)((const char *)&s->v->kinds + k) : NULL;
}

static const struct {
    const char *key;
    gpu_test test;
    size_t kind, kind2;       /* the vendor's kinds (vg_gpu_kinds) of the events that go with it, or NOKIND */
    const char *skip_value;   /* a value that disables the test */
} tests[] = {
    { "ecc_dbe", t_dbe, KIND(ecc_ue), NOKIND, NULL },
    { "ecc_sbe", t_sbe, NOKIND, NOKIND, NULL },
    { "remap_failure", t_remap_fail, KIND(remap_failure), NOKIND, NULL },
    { "remap_pending", t_remap_pend, KIND(remap_pending), NOKIND, NULL },
    { "retired_pending", t_retired_pend, KIND(retire_pending), NOKIND, NULL },
    { "pcie", t_pcie, KIND(pcie_degraded), NOKIND, "any" },
    { "nvlink", t_links, KIND(link_down), NOKIND, "any" },
    { "temp_max", t_temp, NOKIND, NOKIND, NULL },
    { "thermal", t_thermal, KIND(thermal), NOKIND, "any" },
    { "fabric", t_fabric, KIND(fabric_failed), KIND(fabric_pending), "any" },
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
            if (!g->gpus[i].lost && strcmp(g->gpus[i].model, v) != 0)
                sbuf_printf(&bad, "%sGPU %d is \"%s\"", bad.len ? "; " : "", g->gpus[i].index, g->gpus[i].model);
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
            const char *kind = kind_of(s, tests[t].kind), *kind2 = kind_of(s, tests[t].kind2);
            if (!kind) continue;
            struct vg_event all[64];
            int na = 0;
            vg_gpu_state_events(s, ctx->node, all, &na, 64);
            for (int k = 0; k < na && nev < MAXEV; k++)
                if (!strcmp(all[k].kind, kind) || (kind2 && !strcmp(all[k].kind, kind2))) ev[nev++] = all[k];
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
        char hung[160];
        sbuf_printf(&bad, "%s%s", bad.len ? "; " : "", vg_gpu_probe_hung_text(g, hung, sizeof hung));
    }
    /* The events behind it: each lost GPU's (its only one) and the probe's hang. */
    for (int i = 0; i < g->n; i++)
        if (g->gpus[i].lost) vg_gpu_state_events(&g->gpus[i], ctx->node, ev, &nev, MAXEV);
    struct vg_gpu_probe_result hang = *g;
    hang.n = 0;
    vg_gpu_probe_events(&hang, ctx->node, ev, &nev, MAXEV);
    struct sbuf who = SBUF_INIT;
    for (int k = 0; k < g->nvendors; k++)
        if (g->vendors[k].opened) sbuf_printf(&who, "%s%s", who.len ? " and " : "", g->vendors[k].v->label);
    struct vg_check_result *r = vg_check_add(out, NULL, bad.len == 0, "gpu responsive", "%s%s",
                                             bad.len ? bad.s : who.len ? who.s : "no GPU library",
                                             bad.len ? "" : " answered for every GPU");
    sbuf_free(&who);
    for (int k = 0; k < nev; k++) vg_check_add_event(r, &ev[k]);
    sbuf_free(&bad);
}

/* The health keys the GPUs' libraries can answer on this node, as one line. */
static void gpu_health(const struct vg_check_ctx *ctx, struct sbuf *out)
{
    const struct vg_gpu_probe_result *g = ctx->gpus;
    if (!g || g->count <= 0 || g->n == 0) return;
    const struct vg_gpu_state *s = &g->gpus[0];
    sbuf_puts(out, "* || gpu");
    if (s->ecc_ue >= 0) sbuf_puts(out, " ecc_dbe=0");
    if (s->remap_failure >= 0) sbuf_puts(out, " remap_failure=no remap_pending=no");
    if (s->retire_pending >= 0) sbuf_puts(out, " retired_pending=no");
    if (s->pcie_width_max > 0) sbuf_puts(out, " pcie=full");
    if (s->links > 0) sbuf_puts(out, " nvlink=all-up");
    if (s->throttle >= 0) sbuf_puts(out, " thermal=ok");
    if (s->fabric >= 0) sbuf_puts(out, " fabric=ok");
    sbuf_putc(out, '\n');
}

static void gpu_init(const struct vg_check_ctx *ctx, struct sbuf *out)
{
    const struct vg_gpu_probe_result *g = ctx->gpus;
    if (!g || g->count <= 0 || g->n == 0) return;
    sbuf_printf(out, "* || gpu count=%d model=\"%s\"\n", g->count, g->gpus[0].model);
    gpu_health(ctx, out);
}

const struct vg_check vg_check_gpu = {
    .name = "gpu", .keys = gpu_keys, .gpu = true, .run = gpu_run, .init = gpu_init, .defaults = gpu_health,
};
