/* drill_print.c — the terminal summary of a drill report: each run's
 * timeline (seconds after the fault), then per stage median / p90 / max next
 * to the ClusterMAX bar and vigil's own targets.  See drill.h. */
#include "drill/drill.h"
#include "report/table.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include <stdio.h>
#include <string.h>

static void secs(const json_t *v, char *buf, size_t n)
{
    if (json_is_number(v)) snprintf(buf, n, "%.3f", json_number_value(v));   /* seconds, to the millisecond */
    else snprintf(buf, n, "never");
}

/* A stage's cell: its seconds, "never", or "unknown" when the job cannot report it. */
static void stage_secs(const json_t *st, const char *key, char *buf, size_t n)
{
    bool unknown = json_is_true(json_object_get(st, "unknown")) ||
                   (vg_json_int(st, "unknown", 0) > 0 && vg_json_int(st, "count", 0) == 0 && !vg_json_int(st, "never", 0));
    if (unknown && !json_is_number(json_object_get(st, key))) snprintf(buf, n, "unknown");
    else secs(json_object_get(st, key), buf, n);
}

/* The target cell: "≤ 120 s", or "-" when none. */
static const char *target(const json_t *rep, const char *who, const char *stage, char *buf, size_t n)
{
    const json_t *v = json_object_get(json_object_get(json_object_get(rep, "targets"), who), stage);
    if (!json_is_number(v)) return "-";
    char num[32];
    snprintf(buf, n, "%s %s s", strcmp(who, "vigil") ? "<=" : "<", vg_fmt_fixed(num, sizeof num, json_number_value(v), 3));
    return buf;
}

/* "yes"/"no" for whether the median meets vigil's target. */
static const char *met(const json_t *rep, const char *stage, const json_t *median)
{
    const json_t *v = json_object_get(json_object_get(json_object_get(rep, "targets"), "vigil"), stage);
    if (!json_is_number(v)) return "-";
    if (!json_is_number(median)) return "no";
    return json_number_value(median) < json_number_value(v) ? "yes" : "no";
}

void vg_drill_size(const json_t *rep, char *buf, size_t n)
{
    long long nodes = vg_json_int(rep, "nodes", 0), g = vg_json_int(rep, "gpus_per_node", 0);
    if (g > 0) snprintf(buf, n, "a %lld-GPU job: %lld nodes \u00d7 %lld GPUs, one rank per GPU", nodes * g, nodes, g);
    else snprintf(buf, n, "a %lld-node job", nodes);
}

void vg_drill_print(FILE *f, const json_t *rep)
{
    const json_t *runs = json_object_get(rep, "runs");
    char size[96];
    vg_drill_size(rep, size, sizeof size);
    fprintf(f, "drill: %s on %s, %s, %zu run%s, deadline %lld s%s%s\n", vg_json_str(rep, "fault", "?"),
            vg_json_str(rep, "cluster", "?"), size, json_array_size(runs), json_array_size(runs) == 1 ? "" : "s",
            vg_json_int(rep, "deadline_s", 0), vg_json_str(rep, "controller", NULL) ? ", controller " : " (vigil off)",
            vg_json_str(rep, "controller", ""));
    const char *rh[] = { "run", "job", "victim", "detect", "by", "isolate", "requeue", "restart", "on", "resume",
                         "lost", "result" };
    struct vg_table *t = vg_table_new(12, rh);
    size_t i;
    const json_t *r;
    json_array_foreach(runs, i, r) {
        char c[VG_ST_COUNT][16], lost[16] = "-", on[300] = "-";
        for (int s = 0; s < VG_ST_COUNT; s++)
            stage_secs(json_object_get(r, vg_stage_name((enum vg_stage)s)), "after_s", c[s], 16);
        char job[64];
        const json_t *jv = json_object_get(r, "job");
        if (json_is_string(jv)) vg_strlcpy(job, json_string_value(jv), sizeof job);
        else snprintf(job, sizeof job, "%lld", vg_json_int(r, "job", 0));
        const json_t *rs = json_object_get(r, "restart");
        if (vg_json_str(rs, "nodes", NULL))
            snprintf(on, sizeof on, "%s%s%s", vg_json_str(rs, "nodes", ""),
                     json_is_true(json_object_get(rs, "spare")) ? " (spare)" : "",
                     json_is_true(json_object_get(rs, "same_node")) ? " (same bad node)" : "");
        if (json_is_integer(json_object_get(r, "work_lost_steps")))
            snprintf(lost, sizeof lost, "%lld", vg_json_int(r, "work_lost_steps", 0));
        vg_table_rowf(t, "%lld\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", vg_json_int(r, "run", 0),
                      job, vg_json_str(r, "victim", "-"), c[0],
                      vg_json_str(json_object_get(r, "detect"), "by", "-"), c[1], c[2], c[3], on, c[4], lost,
                      vg_json_str(r, "message", "recovered"));
    }
    vg_table_print(t, f);
    vg_table_free(t);
    fputc('\n', f);
    const char *sh[] = { "stage (s after fault)", "median", "p90", "max", "runs", "ClusterMAX", "vigil target",
                         "met" };
    t = vg_table_new(8, sh);
    for (int s = 0; s < VG_ST_COUNT; s++) {
        const char *name = vg_stage_name((enum vg_stage)s);
        const json_t *st = json_object_get(rep, name);
        char m[16], p[16], x[16], n[32], b1[32], b2[32];
        stage_secs(st, "median", m, sizeof m);
        stage_secs(st, "p90", p, sizeof p);
        stage_secs(st, "max", x, sizeof x);
        snprintf(n, sizeof n, "%lld/%zu", vg_json_int(st, "count", 0), json_array_size(runs));
        vg_table_rowf(t, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", name, m, p, x, n, target(rep, "clustermax", name, b1, 32),
                      target(rep, "vigil", name, b2, 32), met(rep, name, json_object_get(st, "median")));
    }
    const json_t *wl = json_object_get(rep, "work_lost_steps");
    char m[16], p[16], x[16], n[32], k[32] = "-";
    secs(json_object_get(wl, "median"), m, sizeof m);
    secs(json_object_get(wl, "p90"), p, sizeof p);
    secs(json_object_get(wl, "max"), x, sizeof x);
    snprintf(n, sizeof n, "%lld/%zu", vg_json_int(wl, "count", 0), json_array_size(runs));
    if (json_is_integer(json_object_get(rep, "ckpt_every")))
        snprintf(k, sizeof k, "<= %lld steps", vg_json_int(rep, "ckpt_every", 0));
    vg_table_rowf(t, "work lost (steps)\t%s\t%s\t%s\t%s\t-\t%s\t-", m, p, x, n, k);
    const json_t *tk = json_object_get(rep, "takeover");
    if (tk) {   /* controller-crash: from the leader's kill to another's /healthz saying leader */
        char tm[16], tp[16], tx[16], tn[32];
        stage_secs(tk, "median", tm, sizeof tm);
        stage_secs(tk, "p90", tp, sizeof tp);
        stage_secs(tk, "max", tx, sizeof tx);
        snprintf(tn, sizeof tn, "%lld/%zu", vg_json_int(tk, "count", 0), json_array_size(runs));
        vg_table_rowf(t, "takeover (s after kill)\t%s\t%s\t%s\t%s\t-\t-\t-", tm, tp, tx, tn);
    }
    vg_table_print(t, f);
    vg_table_free(t);
    json_array_foreach(runs, i, r) {
        if (vg_json_str(json_object_get(r, "resume"), "why", NULL))
            fprintf(f, "run %lld: resume unknown: %s\n", vg_json_int(r, "run", 0), vg_json_str(json_object_get(r, "resume"), "why", ""));
        if (vg_json_str(r, "left", NULL)) fprintf(f, "run %lld left: %s\n", vg_json_int(r, "run", 0), vg_json_str(r, "left", ""));
        const json_t *to = json_object_get(r, "takeover");
        if (to) {
            char after[16];
            stage_secs(to, "after_s", after, sizeof after);
            fprintf(f, "run %lld controller-crash: leader %s (pid %lld, term %lld) killed %s; %s%s%s%s\n",
                    vg_json_int(r, "run", 0), vg_json_str(to, "killed", "?"), vg_json_int(to, "killed_pid", 0),
                    vg_json_int(to, "killed_term", 0), vg_json_str(to, "killed_at", "?"),
                    vg_json_str(to, "leader", NULL) ? vg_json_str(to, "leader", "") : "no other controller took over",
                    vg_json_str(to, "leader", NULL) ? " leads after " : "", vg_json_str(to, "leader", NULL) ? after : "",
                    vg_json_str(to, "leader", NULL) ? " s" : "");
        }
        const json_t *vs = json_object_get(r, "victims"), *view = json_object_get(r, "controller_view");
        if (json_array_size(vs) > 1) {
            fprintf(f, "run %lld hit %zu nodes at once:", vg_json_int(r, "run", 0), json_array_size(vs));
            size_t k;
            const json_t *v;
            json_array_foreach(vs, k, v) fprintf(f, " %s", json_string_value(v));
            fputc('\n', f);
        }
        const json_t *dom = json_object_get(view, "domain");
        if (dom)
            fprintf(f, "run %lld domain %s: %lld of %lld nodes out\n", vg_json_int(r, "run", 0),
                    vg_json_str(dom, "name", "?"), vg_json_int(dom, "out", 0), vg_json_int(dom, "nodes", 0));
        size_t k;
        const json_t *inc;
        json_array_foreach(json_object_get(view, "incidents"), k, inc)
            fprintf(f, "run %lld %s: %s%s%s\n", vg_json_int(r, "run", 0), vg_json_str(inc, "node", "?"),
                    vg_json_str(inc, "state", ""), *vg_json_str(inc, "detail", "") ? ": " : "",
                    vg_json_str(inc, "detail", ""));
    }
}
