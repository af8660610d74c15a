/* checkrun.c — runs a config's checks in parallel watchdog probes under one
 * deadline; see checkrun.h. */
#include "signal/checkrun.h"
#include "signal/probe.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdlib.h>
#include <string.h>

struct line_job {
    const struct vg_check_ctx *ctx;
    const struct vg_check_line *line;
    const struct vg_check *check;
};

/* The child: runs one line's check, writes each result as a JSON line. */
static int line_child(void *arg, FILE *out)
{
    struct line_job *j = arg;
    struct vg_check_results rs = { 0 };
    j->check->run(j->ctx, j->line, &rs);
    for (size_t i = 0; i < rs.n; i++) {
        vg_json_print(out, vg_check_result_to_json(&rs.r[i]), 1);
        fflush(out);
    }
    vg_check_results_free(&rs);
    return 0;
}

static void hung_result(const struct vg_check_opts *o, const struct vg_check_line *l, const struct vg_probe *p,
                        struct vg_check_results *out)
{
    char name[96];
    snprintf(name, sizeof name, "%s probe", l->check);
    const char *how = p->starved     ? "%s check starved of CPU: no answer within %lld ms, runnable but not running "
                                       "for most of it (not counted as a hang)"
                      : p->timed_out ? "%s check hung: no answer within %lld ms"
                                     : "%s check died";
    struct vg_check_result *r = vg_check_add(out, l, false, name, how, l->check, (long long)p->elapsed_ms);
    r->starved = p->starved;
    struct vg_event e;
    vg_event_init(&e);
    vg_strlcpy(e.node, o->node ? o->node : "", sizeof e.node);
    e.time_ms = e.seen_ms = vg_now_ms();
    vg_strlcpy(e.source, "probe", sizeof e.source);
    vg_strlcpy(e.kind, "probe-hung", sizeof e.kind);
    snprintf(e.raw, sizeof e.raw, "%s", r->detail);
    if (p->timed_out && !p->starved) vg_check_add_event(r, &e);
}

int vg_check_run(const struct vg_checkconf *c, const struct vg_check_opts *o, struct vg_check_results *out)
{
    struct vg_check_ctx ctx = { .root = o->root, .node = o->node, .gpus = NULL, .vendors = o->vendors,
                                .daemons = o->daemons };
    struct vg_probe *probes = vg_xcalloc(c->n + 1, sizeof *probes);
    struct line_job *jobs = vg_xcalloc(c->n + 1, sizeof *jobs);
    bool *started = vg_xcalloc(c->n + 1, sizeof *started);
    int applied = 0;
    bool want_gpu = false;
    for (size_t i = 0; i < c->n; i++) {
        const struct vg_check_line *l = &c->lines[i];
        const struct vg_check *ck = vg_check_find(l->check);
        if (!ck || vg_hostmask_match(l->hostmask, o->node ? o->node : "") != 1) continue;
        applied++;
        jobs[i] = (struct line_job){ &ctx, l, ck };
        if (ck->gpu) {
            want_gpu = true;
            continue;
        }
        started[i] = vg_probe_start(&probes[i], l->check, line_child, &jobs[i]) == 0;
    }
    /* The GPU probe is the last slot; its vendors read the kernel's files under --root. */
    vg_gpu_set_root(o->root);
    bool gpu_started = want_gpu && vg_gpu_probe_start(&probes[c->n], o->vendors) == 0;
    started[c->n] = gpu_started;
    /* Wait for all of them together (poll skips the unused slots' fd -1). */
    for (size_t i = 0; i <= c->n; i++)
        if (!started[i]) probes[i].fd = -1;
    vg_probe_wait(probes, c->n + 1, o->deadline_mono_ms);

    struct vg_gpu_probe_result gr;
    memset(&gr, 0, sizeof gr);
    if (want_gpu) {
        if (gpu_started)
            vg_gpu_probe_collect(&probes[c->n], o->vendors, &gr);
        else {
            gr.count = -1;
            gr.hung_gpu = -1;
            vg_strlcpy(gr.error, "cannot start the GPU probe", sizeof gr.error);
        }
        ctx.gpus = &gr;
        vg_check_gpu_responsive(&ctx, out);
        vg_gpu_fabric_domain(gr.gpus, gr.n, out->fabric_domain, NULL);
    }
    for (size_t i = 0; i < c->n; i++) {
        if (!jobs[i].check) continue;
        const struct vg_check_line *l = &c->lines[i];
        if (jobs[i].check->gpu) {
            jobs[i].check->run(&ctx, l, out);
            continue;
        }
        if (!started[i]) {
            vg_check_add(out, l, false, l->check, "cannot start the check's probe");
            continue;
        }
        size_t before = out->n;
        char *save = NULL;
        for (char *s = probes[i].out.s ? strtok_r(probes[i].out.s, "\n", &save) : NULL; s;
             s = strtok_r(NULL, "\n", &save)) {
            json_t *j = json_loads(s, 0, NULL);
            struct vg_check_result r;
            if (j && vg_check_result_from_json(j, &r) == 0) {
                struct vg_check_result *d = vg_check_add(out, l, r.ok, r.name, "%s", r.detail);
                d->ev = r.ev;
                d->nev = r.nev;
            }
            json_decref(j);
        }
        if (!probes[i].done || out->n == before) hung_result(o, l, &probes[i], out);
    }
    /* A failure with no signal behind it (a missing mount, a wrong driver,
     * fewer GPUs) still becomes an event, source "check". */
    for (size_t i = 0; i < out->n; i++) {
        struct vg_check_result *r = &out->r[i];
        if (r->ok || r->nev) continue;
        struct vg_event e;
        vg_event_init(&e);
        vg_strlcpy(e.node, o->node ? o->node : "", sizeof e.node);
        e.time_ms = e.seen_ms = vg_now_ms();
        vg_strlcpy(e.source, "check", sizeof e.source);
        bool count = strcmp(r->name, "gpu count") == 0;
        vg_strlcpy(e.kind, count ? "gpu-count-mismatch" : "check-failed", sizeof e.kind);
        snprintf(e.raw, sizeof e.raw, "%.90s: %.400s", r->name, r->detail);
        vg_check_add_event(r, &e);
    }
    for (size_t i = 0; i <= c->n; i++)
        if (started[i]) vg_probe_free(&probes[i]);
    vg_gpu_probe_free(&gr);
    free(probes);
    free(jobs);
    free(started);
    return applied;
}

/* Each check's init (or defaults) hook, with the GPUs read through the probe. */
static void describe(const struct vg_check_opts *o, bool defaults, struct sbuf *out)
{
    struct vg_gpu_probe_result gr;
    int64_t left = o->deadline_mono_ms - vg_mono_ms();
    vg_gpu_set_root(o->root);
    vg_gpu_probe(o->vendors, left > 0 ? (int)left : 1, &gr);
    struct vg_check_ctx ctx = { .root = o->root, .node = o->node, .gpus = &gr, .vendors = o->vendors,
                                .daemons = o->daemons };
    for (size_t i = 0; vg_checks[i]; i++) {
        void (*hook)(const struct vg_check_ctx *, struct sbuf *) = defaults ? vg_checks[i]->defaults : vg_checks[i]->init;
        if (hook) hook(&ctx, out);
    }
    vg_gpu_probe_free(&gr);
}

void vg_check_init_text(const struct vg_check_opts *o, struct sbuf *out) { describe(o, false, out); }

void vg_check_default_text(const struct vg_check_opts *o, struct sbuf *out) { describe(o, true, out); }
