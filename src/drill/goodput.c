/* goodput.c — one trainer job's goodput from its log, line by line (each
 * line read by joblog.c's vg_joblog_parse, with the trainer's own patterns
 * anchored to the whole line); see goodput.h. */
#include "drill/goodput.h"
#include "drill/drill.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The trainer's lines, the whole of them: "STAMP step N", "STAMP resumed from step N". */
#define STEP_LINE "^[^ ]+ " VG_TRAINER_STEP_RE "$"
#define RESUME_LINE "^[^ ]+ " VG_TRAINER_RESUME_RE "$"

struct exec {
    long step;
    size_t attempt;
    int64_t dur;        /* ms since the previous line of rank 0 in its attempt */
    size_t lost_by;     /* the attempt that resumed before it; 0: productive */
};

struct attempt {
    int64_t last_at;        /* its last line of rank 0 */
    int64_t stop;           /* when the work before it stopped (attempts after the first) */
    int64_t first_step_at;
    long resumed_from;      /* -1: no resume line */
    long first_step, last_step;
    size_t nsteps, lost;
};

struct vg_goodput {
    struct vg_joblog jl;
    bool jl_ok;
    char name[1024];
    long lineno;
    struct exec *ex;
    size_t nex, excap;
    struct attempt *at;
    size_t nat, atcap;
    int64_t first_at, last_at;
    long ranks, ckpt_prev, ckpt_every, ckpt_fresh;
    bool done;
};

struct vg_goodput *vg_goodput_new(const char *name)
{
    struct vg_goodput *g = vg_xcalloc(1, sizeof *g);
    vg_strlcpy(g->name, name, sizeof g->name);
    char err[256];
    g->jl_ok = vg_joblog_init(&g->jl, "", STEP_LINE, RESUME_LINE, err, sizeof err) == 0;
    g->ranks = g->ckpt_prev = g->ckpt_every = g->ckpt_fresh = -1;
    return g;
}

void vg_goodput_free(struct vg_goodput *g)
{
    if (!g) return;
    if (g->jl_ok) vg_joblog_free(&g->jl);
    free(g->ex);
    free(g->at);
    free(g);
}

static struct attempt *new_attempt(struct vg_goodput *g, int64_t t)
{
    if (g->nat == g->atcap) g->at = vg_xrealloc(g->at, (g->atcap = g->atcap ? 2 * g->atcap : 8) * sizeof *g->at);
    struct attempt *a = &g->at[g->nat++];
    memset(a, 0, sizeof *a);
    a->last_at = t;
    a->resumed_from = a->first_step = a->last_step = -1;
    if (g->nat > 1) {   /* the last progress before it: an attempt that never stepped adds no progress */
        const struct attempt *p = a - 1;
        a->stop = p->nsteps || g->nat == 2 ? p->last_at : p->stop;
    }
    return a;
}

static struct attempt *current(struct vg_goodput *g, int64_t t)
{
    return g->nat ? &g->at[g->nat - 1] : new_attempt(g, t);
}

/* Lines a trainer job's log holds that are not the trainer's: Slurm's
 * (srun; slurmstepd, "slurmstepd-NODE" when several slurmd run on one host)
 * and vigil's own diagnostics on stderr. */
static bool foreign_ok(const char *s)
{
    if (vg_startswith(s, "srun: ") || vg_startswith(s, "slurmstepd: ") || vg_startswith(s, "vigil: ")) return true;
    if (!vg_startswith(s, "slurmstepd-")) return false;
    size_t n = strcspn(s, ": ");
    return n > 11 && s[n] == ':' && s[n + 1] == ' ';
}

static void step_line(struct vg_goodput *g, const struct vg_jobline *j)
{
    struct attempt *a = current(g, j->at);
    if (a->nsteps && j->step <= a->last_step) a = new_attempt(g, j->at);   /* went back without a start line */
    if (g->nex == g->excap) g->ex = vg_xrealloc(g->ex, (g->excap = g->excap ? 2 * g->excap : 256) * sizeof *g->ex);
    g->ex[g->nex++] = (struct exec){ j->step, (size_t)(a - g->at), j->at > a->last_at ? j->at - a->last_at : 0, 0 };
    if (!a->nsteps) a->first_step = j->step, a->first_step_at = j->at;
    a->last_step = j->step;
    a->nsteps++;
    a->last_at = j->at;
}

static void checkpoint_line(struct vg_goodput *g, const struct vg_jobline *j)
{
    struct attempt *a = current(g, j->at);
    a->last_at = j->at;
    long d = j->step - g->ckpt_prev;
    if (g->ckpt_prev >= 0 && d > 0 && (g->ckpt_every < 0 || d < g->ckpt_every)) g->ckpt_every = d;
    if (g->ckpt_prev < 0 && g->nat == 1 && a->resumed_from < 0 && a->first_step == 1) g->ckpt_fresh = j->step;
    g->ckpt_prev = j->step;
}

int vg_goodput_line(struct vg_goodput *g, const char *line, char *err, size_t errlen)
{
    g->lineno++;
    if (!g->jl_ok) return snprintf(err, errlen, "%s: the trainer's patterns do not compile", g->name), -1;
    if (!line[0] || foreign_ok(line)) return 0;
    struct vg_jobline j;
    vg_joblog_parse(&g->jl, line, 0, &j);
    if (!j.stamped || j.kind == VG_JL_OTHER)
        return snprintf(err, errlen, "%s:%ld: not a line of vigil trainer (nor of srun/slurmstepd): '%.60s'", g->name,
                        g->lineno, line), -1;
    if (!g->first_at) g->first_at = j.at;
    if (j.at > g->last_at) g->last_at = j.at;
    struct attempt *a;
    switch (j.kind) {
    case VG_JL_START:
        if (j.ntasks > g->ranks) g->ranks = j.ntasks;
        if (j.rank == 0) new_attempt(g, j.at);
        break;
    case VG_JL_RESUME:
        a = current(g, j.at);
        if (a->nsteps || a->resumed_from >= 0) a = new_attempt(g, j.at);
        a->resumed_from = j.step;
        a->last_at = j.at;
        break;
    case VG_JL_STEP: step_line(g, &j); break;
    case VG_JL_CHECKPOINT: checkpoint_line(g, &j); break;
    case VG_JL_DONE:
        g->done = true;
        current(g, j.at)->last_at = j.at;
        break;
    default: break;   /* vigil launch's lines: the stamp counts, nothing else */
    }
    return 0;
}

static json_t *seconds(int64_t ms) { return json_real((double)ms / 1000.0); }

json_t *vg_goodput_finish(struct vg_goodput *g, char *err, size_t errlen)
{
    if (!g->first_at) return snprintf(err, errlen, "%s: no line of vigil trainer in it", g->name), NULL;
    /* a step is lost to the first later attempt that resumed before it */
    for (size_t k = 1; k < g->nat; k++) {
        struct attempt *a = &g->at[k];
        long from = a->resumed_from >= 0 ? a->resumed_from : a->nsteps ? a->first_step - 1 : LONG_MAX;
        for (size_t i = 0; i < g->nex; i++) {
            struct exec *e = &g->ex[i];
            if (e->attempt < k && !e->lost_by && e->step > from) e->lost_by = k, a->lost++;
        }
    }
    size_t productive = 0;
    long last = -1;
    int64_t prod_ms = 0, lost_ms = 0, overhead_ms = 0;
    for (size_t i = 0; i < g->nex; i++) {
        const struct exec *e = &g->ex[i];
        if (e->lost_by) lost_ms += e->dur;
        else {
            productive++, prod_ms += e->dur;
            if (e->step > last) last = e->step;
        }
    }
    json_t *resumes = json_array();
    for (size_t k = 1; k < g->nat; k++) {
        const struct attempt *a = &g->at[k], *p = a - 1;
        int64_t over = a->nsteps && a->first_step_at > a->stop ? a->first_step_at - a->stop : 0;
        overhead_ms += over;
        json_t *r = json_pack("{s:o, s:o, s:o, s:I}", "stopped_at", vg_json_time(a->stop), "last_step",
                              p->nsteps ? json_integer(p->last_step) : json_null(), "resumed_from",
                              a->resumed_from >= 0 ? json_integer(a->resumed_from) : json_null(), "lost_steps",
                              (json_int_t)a->lost);
        json_object_set_new(r, "first_step_at", a->nsteps ? vg_json_time(a->first_step_at) : json_null());
        json_object_set_new(r, "overhead_s", a->nsteps ? seconds(over) : json_null());
        json_array_append_new(resumes, r);
    }
    int64_t wall = g->last_at - g->first_at;
    long every = g->ckpt_every >= 0 ? g->ckpt_every : g->ckpt_fresh;
    json_t *j = json_pack("{s:s, s:o, s:o, s:o}", "job", g->name, "started", vg_json_time(g->first_at), "ended",
                          vg_json_time(g->last_at), "wall_s", seconds(wall));
    json_object_set_new(j, "ranks", g->ranks > 0 ? json_integer(g->ranks) : json_null());
    json_object_set_new(j, "steps", json_integer((json_int_t)g->nex));
    json_object_set_new(j, "productive_steps", json_integer((json_int_t)productive));
    json_object_set_new(j, "lost_steps", json_integer((json_int_t)(g->nex - productive)));
    json_object_set_new(j, "last_step", last >= 0 ? json_integer(last) : json_null());
    json_object_set_new(j, "restarts", json_integer((json_int_t)(g->nat ? g->nat - 1 : 0)));
    json_object_set_new(j, "restart_overhead_s", seconds(overhead_ms));
    json_object_set_new(j, "productive_s", seconds(prod_ms));
    json_object_set_new(j, "lost_s", seconds(lost_ms));
    json_object_set_new(j, "goodput", wall > 0 ? json_real((double)prod_ms / (double)wall) : json_null());
    json_object_set_new(j, "ckpt_every", every > 0 ? json_integer(every) : json_null());
    json_object_set_new(j, "done", json_boolean(g->done));
    json_object_set_new(j, "resumes", resumes);
    return j;
}

json_t *vg_goodput_summary(json_t *jobs)
{
    static const char *const counts[] = { "steps", "productive_steps", "lost_steps", "restarts" };
    static const char *const secs[] = { "restart_overhead_s", "productive_s", "lost_s", "wall_s" };
    json_t *t = json_pack("{s:I}", "jobs", (json_int_t)json_array_size(jobs));
    for (size_t c = 0; c < 4; c++) {
        json_int_t n = 0;
        double s = 0;
        size_t i;
        json_t *x;
        json_array_foreach(jobs, i, x) {
            n += vg_json_int(x, counts[c], 0);
            s += json_number_value(json_object_get(x, secs[c]));
        }
        json_object_set_new(t, counts[c], json_integer(n));
        json_object_set_new(t, secs[c], json_real(s));
    }
    double wall = json_number_value(json_object_get(t, "wall_s"));
    json_object_set_new(t, "goodput", wall > 0 ? json_real(json_number_value(json_object_get(t, "productive_s")) / wall)
                                               : json_null());
    return json_pack("{s:o, s:o}", "jobs", jobs, "totals", t);
}
