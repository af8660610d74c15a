/* goodput_print.c — the goodput table for the terminal: the totals, then per
 * job its steps (productive, lost), restarts, restart overhead and goodput,
 * and under it each restart (stopped after, resumed from, lost, overhead);
 * see goodput_print.h. */
#include "report/goodput_print.h"
#include "report/table.h"
#include "util/jsonutil.h"
#include <stdio.h>
#include <string.h>

static double num(const json_t *j, const char *k) { return json_number_value(json_object_get(j, k)); }

/* "12.3 %", or "n/a" when the wall time was zero */
static void pct(char *buf, size_t n, const json_t *j)
{
    const json_t *g = json_object_get(j, "goodput");
    if (json_is_number(g)) snprintf(buf, n, "%.1f %%", 100.0 * json_number_value(g));
    else snprintf(buf, n, "n/a");
}

static void step_or_none(char *buf, size_t n, const json_t *v)
{
    if (json_is_integer(v)) snprintf(buf, n, "%lld", (long long)json_integer_value(v));
    else snprintf(buf, n, "?");
}

void vg_goodput_print(FILE *f, const json_t *goodput)
{
    const json_t *t = json_object_get(goodput, "totals"), *jobs = json_object_get(goodput, "jobs");
    char g[32];
    pct(g, sizeof g, t);
    fprintf(f, "\ngoodput of %lld job(s): %s (productive step-time %.3f s of %.3f s), %lld steps: %lld productive, "
               "%lld lost; %lld restart(s), restart overhead %.3f s\n",
            vg_json_int(t, "jobs", 0), g, num(t, "productive_s"), num(t, "wall_s"), vg_json_int(t, "steps", 0),
            vg_json_int(t, "productive_steps", 0), vg_json_int(t, "lost_steps", 0), vg_json_int(t, "restarts", 0),
            num(t, "restart_overhead_s"));
    static const char *const head[] = { "job", "steps", "productive", "lost", "restarts", "overhead", "wall", "goodput" };
    struct vg_table *tab = vg_table_new(8, head);
    size_t i;
    json_t *j;
    json_array_foreach(jobs, i, j) {
        pct(g, sizeof g, j);
        const char *name = vg_json_str(j, "job", "?");
        size_t len = strlen(name);
        vg_table_rowf(tab, "%s%s\t%lld\t%lld\t%lld\t%lld\t%.3f s\t%.3f s\t%s", len > 48 ? "..." : "",
                      len > 48 ? name + len - 45 : name, vg_json_int(j, "steps", 0), vg_json_int(j, "productive_steps", 0),
                      vg_json_int(j, "lost_steps", 0), vg_json_int(j, "restarts", 0), num(j, "restart_overhead_s"),
                      num(j, "wall_s"), g);
        size_t k;
        json_t *r;
        json_array_foreach(json_object_get(j, "resumes"), k, r) {
            char last[24], from[24], over[32];
            step_or_none(last, sizeof last, json_object_get(r, "last_step"));
            step_or_none(from, sizeof from, json_object_get(r, "resumed_from"));
            if (json_is_number(json_object_get(r, "overhead_s"))) snprintf(over, sizeof over, "%.3f s", num(r, "overhead_s"));
            else snprintf(over, sizeof over, "no step since");
            vg_table_rowf(tab, "  restart %zu: after step %s, from %s\t\t\t%lld\t\t%s\t\t", k + 1, last, from,
                          vg_json_int(r, "lost_steps", 0), over);
        }
    }
    vg_table_print(tab, f);
    vg_table_free(tab);
}
