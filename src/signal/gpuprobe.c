/* gpuprobe.c — the GPU probe: the child opens every vendor present
 * (vg_gpu_open_all) and writes JSON lines ({"vendor":V,"step":S} before each
 * call that may hang, one {"vendor":V,…} summary per vendor, {"reading":i,
 * "vendor":V}, one state per GPU, {"done":true}); the parent rebuilds what
 * arrived before the deadline.  See gpuprobe.h. */
#include "signal/gpuprobe.h"
#include "signal/probe.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdlib.h>
#include <string.h>

static void put(FILE *out, json_t *j)
{
    vg_json_print(out, j, 1);
    fflush(out);
}

static void step(void *arg, const struct vg_gpu_vendor *v, const char *what)
{
    put(arg, json_pack("{s:s,s:s}", "vendor", v->name, "step", what));
}

static int child(void *arg, FILE *out)
{
    const struct vg_gpu_vendor *const *vendors = arg;
    struct vg_gpu_set set;
    vg_gpu_open_all(vendors, &set, step, out);
    for (int k = 0; k < set.nvendors; k++) {
        const struct vg_gpu_set_vendor *s = &set.vendor[k];
        put(out, json_pack("{s:s,s:b,s:b,s:i,s:s,s:s}", "vendor", s->v->name, "present", s->present, "opened",
                           s->opened, "count", s->count, "error", s->error, "driver", s->driver));
    }
    for (int i = 0; i < set.count; i++) {
        int index;
        const struct vg_gpu_vendor *v = vg_gpu_set_device(&set, i, &index);
        put(out, json_pack("{s:i,s:s}", "reading", index, "vendor", v->name));
        struct vg_gpu_state st;
        vg_gpu_set_read(&set, i, &st);
        put(out, json_pack("{s:o}", "gpu", vg_gpu_state_to_json(&st)));
    }
    vg_gpu_close_all(&set);
    put(out, json_pack("{s:b}", "done", 1));
    return 0;
}

int vg_gpu_probe_start(struct vg_probe *p, const struct vg_gpu_vendor *const *vendors)
{
    return vg_probe_start(p, "gpu", child, (void *)(vendors ? vendors : vg_gpu_vendors));
}

/* The result's entry for vendor v (added in the order the child named them). */
static struct vg_gpu_probe_vendor *slot(struct vg_gpu_probe_result *r, const struct vg_gpu_vendor *v)
{
    for (int k = 0; k < r->nvendors; k++)
        if (r->vendors[k].v == v) return &r->vendors[k];
    if (r->nvendors == VG_GPU_VENDORS_MAX) return NULL;
    struct vg_gpu_probe_vendor *s = &r->vendors[r->nvendors++];
    memset(s, 0, sizeof *s);
    s->v = v;
    s->count = -1;
    return s;
}

/* Why no GPU can be read, from the vendors' summaries: the errors of those
 * present that did not open, or that none is present at all. */
static void summarise(struct vg_gpu_probe_result *r, const struct vg_gpu_vendor *const *vendors)
{
    struct sbuf why = SBUF_INIT;
    bool present = false;
    r->count = -1;
    for (int k = 0; k < r->nvendors; k++) {
        const struct vg_gpu_probe_vendor *s = &r->vendors[k];
        present |= s->present;
        if (s->opened) r->count = (r->count < 0 ? 0 : r->count) + (s->count > 0 ? s->count : 0);
        else if (s->present) sbuf_printf(&why, "%s%s: %s", why.len ? "; " : "", s->v->name, s->error);
    }
    if (!present) {
        sbuf_puts(&why, "no GPU driver loaded (looked for");
        for (size_t i = 0; vendors[i]; i++) sbuf_printf(&why, " %s", vendors[i]->name);
        sbuf_puts(&why, ")");
    }
    if (why.len) vg_strlcpy(r->error, why.s, sizeof r->error);
    sbuf_free(&why);
}

static void collect(struct vg_probe *p, const struct vg_gpu_vendor *const *vendors, struct vg_gpu_probe_result *r)
{
    memset(r, 0, sizeof *r);
    r->count = -1;
    r->hung_gpu = -1;
    r->elapsed_ms = p->elapsed_ms;
    bool done = false;
    int reading = -1;
    const struct vg_gpu_vendor *at = NULL;
    char what[16] = "open";
    char *save = NULL;
    for (char *line = p->out.s ? strtok_r(p->out.s, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
        json_t *j = json_loads(line, 0, NULL);
        if (!j) continue;   /* a line cut by the kill */
        const struct vg_gpu_vendor *v = vg_gpu_vendor_find(vendors, vg_json_str(j, "vendor", NULL));
        struct vg_gpu_probe_vendor *s = v ? slot(r, v) : NULL;
        json_t *x;
        if (s && (x = json_object_get(j, "step")) && json_is_string(x)) {
            at = v;
            vg_strlcpy(what, json_string_value(x), sizeof what);
            s->present = true;   /* a step is only taken for a vendor present */
        }
        if (s && json_is_boolean(json_object_get(j, "present"))) {
            s->present = json_is_true(json_object_get(j, "present"));
            s->opened = json_is_true(json_object_get(j, "opened"));
            s->count = (int)vg_json_int(j, "count", -1);
            vg_strlcpy(s->error, vg_json_str(j, "error", ""), sizeof s->error);
            vg_strlcpy(s->driver, vg_json_str(j, "driver", ""), sizeof s->driver);
        }
        if (s && (x = json_object_get(j, "reading")) && json_is_integer(x)) {
            at = v;
            reading = (int)json_integer_value(x);
            vg_strlcpy(what, "read", sizeof what);
        }
        if ((x = json_object_get(j, "gpu"))) {
            struct vg_gpu_state st;
            if (vg_gpu_state_from_json(x, vendors, &st) == 0) {
                r->gpus = vg_xrealloc(r->gpus, sizeof *r->gpus * (size_t)(r->n + 1));
                r->gpus[r->n++] = st;
                reading = -1;
            }
        }
        if (json_is_true(json_object_get(j, "done"))) done = true;
        json_decref(j);
    }
    summarise(r, vendors);
    if (done) return;
    /* It stopped early: what the summaries say of a vendor whose call hung is not its answer. */
    r->error[0] = '\0';
    r->hung = p->timed_out && !p->starved;
    r->hung_vendor = at;
    r->hung_gpu = reading;
    vg_strlcpy(r->hung_call, what, sizeof r->hung_call);
    if (p->starved)
        snprintf(r->error, sizeof r->error, "the %s probe was starved of CPU at step %s (runnable, not running, "
                 "for most of %lld ms): not a hang", p->name, what, (long long)p->elapsed_ms);
    else if (!p->timed_out)
        snprintf(r->error, sizeof r->error, "the %s probe died at step %s", p->name, what);
}

void vg_gpu_probe_collect(struct vg_probe *p, const struct vg_gpu_vendor *const *vendors, struct vg_gpu_probe_result *r)
{
    collect(p, vendors ? vendors : vg_gpu_vendors, r);
}

void vg_gpu_probe(const struct vg_gpu_vendor *const *vendors, int timeout_ms, struct vg_gpu_probe_result *r)
{
    struct vg_probe p;
    if (vg_gpu_probe_start(&p, vendors) < 0) {
        memset(r, 0, sizeof *r);
        r->count = -1;
        r->hung_gpu = -1;
        snprintf(r->error, sizeof r->error, "cannot start the GPU probe");
        return;
    }
    vg_probe_wait(&p, 1, vg_mono_ms() + timeout_ms);
    collect(&p, vendors ? vendors : vg_gpu_vendors, r);
    vg_probe_free(&p);
}

void vg_gpu_probe_free(struct vg_gpu_probe_result *r)
{
    free(r->gpus);
    r->gpus = NULL;
    r->n = 0;
}

const struct vg_gpu_probe_vendor *vg_gpu_probe_vendor(const struct vg_gpu_probe_result *r, const char *name)
{
    for (int k = 0; k < r->nvendors; k++)
        if (strcmp(r->vendors[k].v->name, name) == 0) return &r->vendors[k];
    return NULL;
}

const char *vg_gpu_probe_hung_text(const struct vg_gpu_probe_result *r, char *buf, size_t n)
{
    const char *who = r->hung_vendor ? r->hung_vendor->label : "the GPU library";
    if (r->hung_gpu >= 0)
        snprintf(buf, n, "GPU %d unresponsive: %s did not answer within %lld ms", r->hung_gpu, who,
                 (long long)r->elapsed_ms);
    else
        snprintf(buf, n, "%s hung at %s for %lld ms", who, r->hung_call, (long long)r->elapsed_ms);
    return buf;
}

void vg_gpu_probe_events(const struct vg_gpu_probe_result *r, const char *node, struct vg_event *ev, int *n,
                         int max)
{
    for (int i = 0; i < r->n; i++) vg_gpu_state_events(&r->gpus[i], node, ev, n, max);
    if (r->hung && *n < max) {
        struct vg_event *e = &ev[(*n)++];
        vg_event_init(e);
        vg_strlcpy(e->node, node ? node : "", sizeof e->node);
        e->time_ms = e->seen_ms = vg_now_ms();
        vg_strlcpy(e->source, "probe", sizeof e->source);
        vg_strlcpy(e->kind, "probe-hung", sizeof e->kind);
        e->gpu = r->hung_gpu;
        vg_gpu_probe_hung_text(r, e->raw, sizeof e->raw);
    }
}
