/* gpureset.c — resetting one GPU through its vendor's library (the vendor's
 * `reset`), in a watchdog child like every other vendor call: a library that
 * never answers costs the deadline and is said so, a vendor without a reset
 * call or a GPU that is not there is said so.  See gpuprobe.h. */
#include "signal/gpuprobe.h"
#include "signal/probe.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdio.h>
#include <string.h>

struct job {
    const struct vg_gpu_vendor *const *vendors;
    const char *name;
    int index;
};

static int child(void *arg, FILE *out)
{
    const struct job *j = arg;
    struct vg_gpu_set set;
    char err[256] = "";
    vg_gpu_open_all(j->vendors, &set, NULL, NULL);
    const struct vg_gpu_set_vendor *pick = NULL;
    int with_gpus = 0;
    for (int k = 0; k < set.nvendors; k++) {
        const struct vg_gpu_set_vendor *s = &set.vendor[k];
        if (j->name ? !strcmp(s->v->name, j->name) : s->opened && s->count > 0) pick = s;
        with_gpus += s->opened && s->count > 0;
    }
    if (!pick || !pick->opened) {
        if (j->name) snprintf(err, sizeof err, "%s: %.200s", j->name, pick && pick->error[0] ? pick->error : "no GPU of it here");
        else vg_strlcpy(err, "no GPU vendor opened", sizeof err);
    }
    else if (!j->name && with_gpus > 1)
        snprintf(err, sizeof err, "GPUs of more than one vendor here: say which (--vendor)");
    else if (j->index >= pick->count)
        snprintf(err, sizeof err, "%s has %d GPUs: no GPU %d", pick->v->label, pick->count, j->index);
    else if (!pick->v->reset)
        snprintf(err, sizeof err, "%s has no GPU reset call (run the vendor's tool from the repair ladder)",
                 pick->v->label);
    if (!err[0]) {
        vg_json_print(out, json_pack("{s:s,s:s}", "vendor", pick->v->name, "step", "reset"), 1);
        fflush(out);
        if (pick->v->reset(j->index, err, sizeof err) == 0) err[0] = 0;
        else if (!err[0]) vg_strlcpy(err, "the reset failed", sizeof err);
    }
    vg_gpu_close_all(&set);
    vg_json_print(out, json_pack("{s:b,s:s}", "done", 1, "error", err), 1);
    return 0;
}

int vg_gpu_reset(const struct vg_gpu_vendor *const *vendors, const char *name, int index, int timeout_ms, char *err,
                 size_t n)
{
    struct job j = { vendors ? vendors : vg_gpu_vendors, name, index };
    struct vg_probe p;
    err[0] = 0;
    if (vg_probe_start(&p, "gpu-reset", child, &j) < 0) return snprintf(err, n, "cannot start the reset's probe"), -1;
    vg_probe_wait(&p, 1, vg_mono_ms() + timeout_ms);
    const char *label = name ? name : "the GPU library";
    const struct vg_gpu_vendor *v = vg_gpu_vendor_find(j.vendors, name);
    if (v) label = v->label;
    bool done = false, reached = false;
    char *save = NULL;
    for (char *line = p.out.s ? strtok_r(p.out.s, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
        json_t *o = json_loads(line, 0, NULL);
        if (json_is_string(json_object_get(o, "step"))) {
            reached = true;
            v = vg_gpu_vendor_find(j.vendors, vg_json_str(o, "vendor", ""));
            if (v) label = v->label;
        }
        if (json_is_true(json_object_get(o, "done"))) {
            done = true;
            vg_strlcpy(err, vg_json_str(o, "error", ""), n);
        }
        json_decref(o);
    }
    if (!done && p.starved)
        snprintf(err, n, "starved of CPU for most of %lld ms: not known whether %s reset it", (long long)p.elapsed_ms,
                 label);
    else if (!done)
        snprintf(err, n, "%s did not answer within %lld ms (%s)", label, (long long)p.elapsed_ms,
                 reached ? "resetting GPU" : "opening");
    vg_probe_free(&p);
    return err[0] ? -1 : 0;
}
