/* gpuprobe.c — the GPU probe: the child initialises the backend and writes
 * JSON lines ({"driver":V}, {"count":N}, {"reading":i}, one state per GPU,
 * {"done":true});
 * the parent rebuilds what arrived before the deadline.  See gpuprobe.h. */
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

static int child(void *arg, FILE *out)
{
    const struct vg_gpu_backend *b = arg;
    char err[256] = "";
    put(out, json_pack("{s:s}", "step", "init"));
    if (b->init(err, sizeof err) < 0) {
        put(out, json_pack("{s:s}", "error", err));
        return 1;
    }
    char drv[80];
    if (b->driver_version && b->driver_version(drv, sizeof drv) == 0) put(out, json_pack("{s:s}", "driver", drv));
    put(out, json_pack("{s:s}", "step", "count"));
    int n = b->count();
    put(out, json_pack("{s:i}", "count", n));
    for (int i = 0; i < n; i++) {
        put(out, json_pack("{s:i}", "reading", i));
        struct vg_gpu_state st;
        b->read(i, &st);
        put(out, json_pack("{s:o}", "gpu", vg_gpu_state_to_json(&st)));
    }
    b->shutdown();
    put(out, json_pack("{s:b}", "done", 1));
    return 0;
}

int vg_gpu_probe_start(struct vg_probe *p, const struct vg_gpu_backend *b)
{
    return vg_probe_start(p, b->name, child, (void *)b);
}

void vg_gpu_probe_collect(struct vg_probe *p, struct vg_gpu_probe_result *r)
{
    memset(r, 0, sizeof *r);
    r->count = -1;
    r->hung_gpu = -1;
    r->elapsed_ms = p->elapsed_ms;
    bool done = false;
    int reading = -1;
    char step[16] = "init";
    char *save = NULL;
    for (char *line = p->out.s ? strtok_r(p->out.s, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
        json_t *j = json_loads(line, 0, NULL);
        if (!j) continue;   /* a line cut by the kill */
        json_t *v;
        if ((v = json_object_get(j, "step")) && json_is_string(v)) vg_strlcpy(step, json_string_value(v), sizeof step);
        if ((v = json_object_get(j, "error")) && json_is_string(v)) vg_strlcpy(r->error, json_string_value(v), sizeof r->error);
        if ((v = json_object_get(j, "driver")) && json_is_string(v)) vg_strlcpy(r->driver, json_string_value(v), sizeof r->driver);
        if ((v = json_object_get(j, "count")) && json_is_integer(v)) r->count = (int)json_integer_value(v);
        if ((v = json_object_get(j, "reading")) && json_is_integer(v)) {
            reading = (int)json_integer_value(v);
            vg_strlcpy(step, "read", sizeof step);
        }
        if ((v = json_object_get(j, "gpu"))) {
            struct vg_gpu_state st;
            if (vg_gpu_state_from_json(v, &st) == 0) {
                r->gpus = vg_xrealloc(r->gpus, sizeof *r->gpus * (size_t)(r->n + 1));
                r->gpus[r->n++] = st;
                reading = -1;
            }
        }
        if (json_is_true(json_object_get(j, "done"))) done = true;
        json_decref(j);
    }
    if (!done && !r->error[0]) {
        r->hung = p->timed_out && !p->starved;
        r->hung_gpu = reading;
        vg_strlcpy(r->hung_call, step, sizeof r->hung_call);
        if (p->starved)
            snprintf(r->error, sizeof r->error, "the %s probe was starved of CPU at step %s (runnable, not running, "
                     "for most of %lld ms): not a hang", p->name, step, (long long)p->elapsed_ms);
        else if (!p->timed_out) snprintf(r->error, sizeof r->error, "the %s probe died at step %s", p->name, step);
    }
}

void vg_gpu_probe(const struct vg_gpu_backend *b, int timeout_ms, struct vg_gpu_probe_result *r)
{
    struct vg_probe p;
    if (vg_gpu_probe_start(&p, b) < 0) {
        memset(r, 0, sizeof *r);
        r->count = -1;
        r->hung_gpu = -1;
        snprintf(r->error, sizeof r->error, "cannot start the %s probe", b->name);
        return;
    }
    vg_probe_wait(&p, 1, vg_mono_ms() + timeout_ms);
    vg_gpu_probe_collect(&p, r);
    vg_probe_free(&p);
}

void vg_gpu_probe_free(struct vg_gpu_probe_result *r)
{
    free(r->gpus);
    r->gpus = NULL;
    r->n = 0;
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
        if (r->hung_gpu >= 0)
            snprintf(e->raw, sizeof e->raw, "GPU %d unresponsive: NVML did not answer within %lld ms",
                     r->hung_gpu, (long long)r->elapsed_ms);
        else
            snprintf(e->raw, sizeof e->raw, "GPU probe hung at %s: no answer within %lld ms", r->hung_call,
                     (long long)r->elapsed_ms);
    }
}
