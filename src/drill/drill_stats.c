/* drill_stats.c — per-stage statistics of a drill (median, p90, max over
 * runs; a stage that never happened counts as +infinity, so a statistic that
 * lands on it is null) and the summary of a report's runs.  See drill.h. */
#include "drill/drill.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const stage_names[VG_ST_COUNT] = { "detect", "isolate", "requeue", "restart", "resume" };

const char *vg_stage_name(enum vg_stage s) { return s >= 0 && s < VG_ST_COUNT ? stage_names[s] : "?"; }

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void vg_stat_compute(const double *v, int n, struct vg_stat *st)
{
    memset(st, 0, sizeof *st);
    if (n <= 0) return;
    double *s = vg_xmalloc((size_t)n * sizeof *s);
    for (int i = 0; i < n; i++) {
        s[i] = v[i] < 0 || isnan(v[i]) ? INFINITY : v[i];
        if (isinf(s[i])) st->never++;
        else st->count++;
    }
    qsort(s, (size_t)n, sizeof *s, cmp_dbl);
    double med = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    int rank = (int)ceil(0.9 * n);
    double p90 = s[(rank < 1 ? 1 : rank) - 1], max = s[n - 1];
    if ((st->have_median = !isinf(med))) st->median = med;
    if ((st->have_p90 = !isinf(p90))) st->p90 = p90;
    if ((st->have_max = !isinf(max))) st->max = max;
    free(s);
}

static json_t *num_or_null(bool have, double v)
{
    return have ? json_real(round(v * 1000) / 1000) : json_null();
}

json_t *vg_stat_json(const struct vg_stat *st)
{
    json_t *j = json_object();
    json_object_set_new(j, "median", num_or_null(st->have_median, st->median));
    json_object_set_new(j, "p90", num_or_null(st->have_p90, st->p90));
    json_object_set_new(j, "max", num_or_null(st->have_max, st->max));
    json_object_set_new(j, "count", json_integer(st->count));
    json_object_set_new(j, "never", json_integer(st->never));
    return j;
}

/* A run's value for key: runs[i][stage].after_s, or runs[i].work_lost_steps. */
static double run_value(const json_t *run, const char *stage)
{
    const json_t *v = stage ? json_object_get(json_object_get(run, stage), "after_s")
                            : json_object_get(run, "work_lost_steps");
    return json_is_number(v) ? json_number_value(v) : -1;
}

void vg_drill_summarize(json_t *report)
{
    const json_t *runs = json_object_get(report, "runs");
    int n = (int)json_array_size(runs);
    double *v = vg_xcalloc(n > 0 ? (size_t)n : 1, sizeof *v);
    struct vg_stat st;
    for (int s = 0; s <= VG_ST_COUNT; s++) {
        const char *name = s < VG_ST_COUNT ? stage_names[s] : NULL;
        int m = 0, unknown = 0;   /* a stage the job cannot report is neither a figure nor never */
        for (int i = 0; i < n; i++) {
            const json_t *run = json_array_get(runs, (size_t)i);
            if (json_is_true(json_object_get(json_object_get(run, name ? name : "resume"), "unknown"))) unknown++;
            else v[m++] = run_value(run, name);
        }
        vg_stat_compute(v, m, &st);
        json_t *j = vg_stat_json(&st);
        json_object_set_new(j, "unknown", json_integer(unknown));
        json_object_set_new(report, name ? name : "work_lost_steps", j);
    }
    /* controller-crash: the takeover, from the leader's kill */
    int m = 0;
    for (int i = 0; i < n; i++) {
        const json_t *tk = json_object_get(json_array_get(runs, (size_t)i), "takeover");
        if (!tk) continue;
        const json_t *after = json_object_get(tk, "after_s");
        v[m++] = json_is_number(after) ? json_number_value(after) : -1;
    }
    if (m) {
        vg_stat_compute(v, m, &st);
        json_object_set_new(report, "takeover", vg_stat_json(&st));
    }
    free(v);
}

bool vg_drill_recovered(const json_t *report)
{
    const json_t *runs = json_object_get(report, "runs");
    if (!json_array_size(runs)) return false;
    for (int s = 0; s < VG_ST_COUNT; s++) {
        const json_t *st = json_object_get(report, stage_names[s]);
        if (vg_json_int(st, "never", 1) != 0) return false;
    }
    const json_t *tk = json_object_get(report, "takeover");
    return !tk || vg_json_int(tk, "never", 1) == 0;
}
