/* drill_html.c — the drill report as one self-contained HTML page: inline
 * CSS, one inline SVG timeline per run (a horizontal bar per stage, seconds
 * after the fault) and the per-stage statistics table with the targets.  No
 * script, font or image is fetched: it reads the same offline.  Drawn from
 * the --json document (drill.h). */
#include "drill/drill.h"
#include "report/html.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#define W 900          /* SVG width */
#define LEFT 20
#define RIGHT 20

static const char *const colors[VG_ST_COUNT] = { "#d9534f", "#f0ad4e", "#e6c229", "#5b8def", "#3aa76d" };
static const char *const labels[VG_ST_COUNT] = { "fault → detect", "detect → isolate", "isolate → requeue",
                                                 "requeue → restart", "restart → resume" };

/* HTML-escaped text (report/html.h's escaping) to f. */
static void esc(FILE *f, const char *s)
{
    struct sbuf b = SBUF_INIT;
    vg_html_escape(&b, s);
    if (b.s) fputs(b.s, f);
    sbuf_free(&b);
}

static bool unknown(const json_t *run, int s)
{
    return json_is_true(json_object_get(json_object_get(run, vg_stage_name((enum vg_stage)s)), "unknown"));
}

static double after(const json_t *run, int s)
{
    const json_t *v = json_object_get(json_object_get(run, vg_stage_name((enum vg_stage)s)), "after_s");
    return json_is_number(v) ? json_number_value(v) : -1;
}

/* A "nice" axis step for a span of seconds. */
static double tick_step(double span)
{
    static const double steps[] = { 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600 };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (span / steps[i] <= 10) return steps[i];
    return 7200;
}

static void timeline(FILE *f, const json_t *run, double deadline)
{
    double end = 0;
    bool never = false;
    for (int s = 0; s < VG_ST_COUNT; s++) {
        double a = after(run, s);
        if (a < 0 && !unknown(run, s)) never = true;
        else if (a > end) end = a;
    }
    if (never && deadline > end) end = deadline;
    if (end <= 0) end = 1;
    double span = end * 1.05, plot = W - LEFT - RIGHT;
    const int bar_y = 44, bar_h = 26, h = 128;
    /* label rows: near above, near below, far above, far below; each remembers
     * where its last label ends so stages close in time never overlap */
    const int row_y[4] = { bar_y - 8, bar_y + bar_h + 16, bar_y - 22, bar_y + bar_h + 30 };
    double row_end[4] = { -1e9, -1e9, LEFT + 12 * 6.5, -1e9 }; /* "fault at 0 s" sits in the far-above row */
#define X(t) (LEFT + (t) / span * plot)
    fprintf(f, "<svg width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "role=\"img\" aria-label=\"timeline of run %lld\">\n",
            W, h, W, h, vg_json_int(run, "run", 0));
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%g\" height=\"%d\" fill=\"#f3f3f3\"/>\n", LEFT, bar_y, plot, bar_h);
    double prev = 0;
    for (int s = 0; s < VG_ST_COUNT; s++) {
        double a = after(run, s);
        if (a < 0 && unknown(run, s)) {   /* the job cannot report it: nothing to draw */
            fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"lbl\">%s unknown</text>\n", X(prev) + 6, bar_y + 18,
                    vg_stage_name((enum vg_stage)s));
            break;
        }
        if (a < 0) {
            fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"url(#hatch)\" "
                       "stroke=\"#999\" stroke-dasharray=\"4 3\"/>\n",
                    X(prev), bar_y, X(end) - X(prev), bar_h);
            char dl[32];
            fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"never\">%s at the %s s deadline</text>\n",
                    X(prev) + 6, bar_y + 18, s == 0 ? "never detected" : "stopped", vg_fmt_fixed(dl, sizeof dl, deadline, 3));
            break;
        }
        double w = X(a) - X(prev);
        fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>%s: %.3f s</title></rect>\n",
                X(prev), bar_y, w < 1.5 ? 1.5 : w, bar_h, colors[s], labels[s], a - prev);
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", X(a), X(a), bar_y - 4,
                bar_y + bar_h + 4);
        char text[64];
        snprintf(text, sizeof text, "%s %.2f s", vg_stage_name((enum vg_stage)s), a);
        bool right = X(a) > W * 0.8;   /* near the right edge the label ends at its mark */
        double width = (double)strlen(text) * 6.5, x0 = right ? X(a) - 2 - width : X(a) + 2;
        const int order[4] = { s % 2, 1 - s % 2, 2 + s % 2, 3 - s % 2 };
        int row = order[3];
        for (int k = 0; k < 4; k++)
            if (x0 > row_end[order[k]] + 4) {
                row = order[k];
                break;
            }
        row_end[row] = x0 + width;
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"lbl\" text-anchor=\"%s\">%s</text>\n",
                X(a) + (right ? -2 : 2), row_y[row], right ? "end" : "start", text);
        prev = a;
    }
    double step = tick_step(span);
    for (double t = 0; t <= span; t += step) {
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#bbb\"/>", X(t), X(t), h - 18, h - 14);
        char tk[32];
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"tick\">%s s</text>\n", X(t), h - 3, vg_fmt_fixed(tk, sizeof tk, t, 3));
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"lbl\">fault at 0 s</text>\n", LEFT, row_y[2]);
    fputs("</svg>\n", f);
#undef X
}

static void cell_secs(FILE *f, const json_t *v, bool unknown)
{
    if (json_is_number(v)) fprintf(f, "<td class=\"num\">%.3f</td>", json_number_value(v));
    else if (unknown) fputs("<td class=\"num\">unknown</td>", f);
    else fputs("<td class=\"num never\">never</td>", f);
}

static void stats_table(FILE *f, const json_t *rep)
{
    const json_t *tg = json_object_get(rep, "targets");
    size_t nruns = json_array_size(json_object_get(rep, "runs"));
    fputs("<table><thead><tr><th>stage (s after fault)</th><th>median</th><th>p90</th><th>max</th><th>runs</th>"
          "<th>ClusterMAX bar</th><th>vigil target</th><th>met</th></tr></thead><tbody>\n", f);
    for (int s = 0; s <= VG_ST_COUNT; s++) {
        const char *name = s < VG_ST_COUNT ? vg_stage_name((enum vg_stage)s) : "work_lost_steps";
        const json_t *st = json_object_get(rep, name);
        if (s < VG_ST_COUNT)
            fprintf(f, "<tr><td><span class=\"sw\" style=\"background:%s\"></span>%s</td>", colors[s], name);
        else fputs("<tr><td>work lost (steps)</td>", f);
        bool unk = vg_json_int(st, "unknown", 0) > 0 && !vg_json_int(st, "count", 0) && !vg_json_int(st, "never", 0);
        cell_secs(f, json_object_get(st, "median"), unk);
        cell_secs(f, json_object_get(st, "p90"), unk);
        cell_secs(f, json_object_get(st, "max"), unk);
        fprintf(f, "<td class=\"num\">%lld/%zu</td>", vg_json_int(st, "count", 0), nruns);
        const json_t *cm = json_object_get(json_object_get(tg, "clustermax"), name);
        const json_t *vt = json_object_get(json_object_get(tg, "vigil"), name);
        char num[32];
        if (json_is_number(cm)) fprintf(f, "<td>&le; %s s</td>", vg_fmt_fixed(num, sizeof num, json_number_value(cm), 3));
        else fputs("<td>–</td>", f);
        if (json_is_number(vt)) fprintf(f, "<td>&lt; %s s</td>", vg_fmt_fixed(num, sizeof num, json_number_value(vt), 3));
        else if (s == VG_ST_COUNT && json_is_integer(json_object_get(rep, "ckpt_every")))
            fprintf(f, "<td>&le; %lld steps</td>", vg_json_int(rep, "ckpt_every", 0));
        else fputs("<td>–</td>", f);
        const json_t *med = json_object_get(st, "median");
        if (json_is_number(vt)) {
            bool ok = json_is_number(med) && json_number_value(med) < json_number_value(vt);
            fprintf(f, "<td class=\"%s\">%s</td>", ok ? "ok" : "bad", ok ? "yes" : "no");
        }
        else fputs("<td>–</td>", f);
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table>\n", f);
}

static void run_section(FILE *f, const json_t *run, double deadline)
{
    fprintf(f, "<section class=\"run\"><h3>Run %lld — job ", vg_json_int(run, "run", 0));
    const json_t *jv = json_object_get(run, "job");
    if (json_is_string(jv)) esc(f, json_string_value(jv));
    else fprintf(f, "%lld", vg_json_int(run, "job", 0));
    fputs(", fault on ", f);
    esc(f, vg_json_str(run, "victim", "?"));
    fputs("</h3>\n<p class=\"meta\">fault injected at ", f);
    esc(f, vg_json_str(run, "t0", "?"));
    const json_t *d = json_object_get(run, "detect");
    if (vg_json_str(d, "by", NULL)) {
        fputs(" · detected by ", f);
        esc(f, vg_json_str(d, "by", ""));
        fputs(" (", f);
        esc(f, vg_json_str(d, "detail", ""));
        fputs(")", f);
    }
    const json_t *rs = json_object_get(run, "restart");
    if (vg_json_str(rs, "nodes", NULL)) {
        fputs(" · restarted on ", f);
        esc(f, vg_json_str(rs, "nodes", ""));
        if (json_is_true(json_object_get(rs, "spare"))) fputs(" (with a spare)", f);
        if (json_is_true(json_object_get(rs, "same_node"))) fputs(" <b class=\"bad\">(on the same bad node)</b>", f);
    }
    if (json_is_integer(json_object_get(run, "work_lost_steps")))
        fprintf(f, " · resumed from step %lld, %lld steps redone",
                vg_json_int(json_object_get(run, "resume"), "from_step", 0), vg_json_int(run, "work_lost_steps", 0));
    if (vg_json_str(json_object_get(run, "resume"), "why", NULL)) {
        fputs(" · resume unknown: ", f);
        esc(f, vg_json_str(json_object_get(run, "resume"), "why", ""));
    }
    if (vg_json_str(run, "left", NULL)) {
        fputs(" · left: ", f);
        esc(f, vg_json_str(run, "left", ""));
    }
    if (vg_json_str(run, "message", NULL)) {
        fputs(" · <b class=\"bad\">", f);
        esc(f, vg_json_str(run, "message", ""));
        fputs("</b>", f);
    }
    fputs("</p>\n", f);
    timeline(f, run, deadline);
    fputs("<table class=\"abs\"><tr><th>stage</th><th>at (UTC)</th><th>after fault</th></tr>\n", f);
    for (int s = 0; s < VG_ST_COUNT; s++) {
        const json_t *st = json_object_get(run, vg_stage_name((enum vg_stage)s));
        fprintf(f, "<tr><td>%s</td><td>", vg_stage_name((enum vg_stage)s));
        esc(f, vg_json_str(st, "at", "never"));
        fputs("</td>", f);
        cell_secs(f, json_object_get(st, "after_s"), json_is_true(json_object_get(st, "unknown")));
        fputs("</tr>\n", f);
    }
    fputs("</table></section>\n", f);
}

int vg_drill_html(FILE *f, const json_t *rep)
{
    double deadline = (double)vg_json_int(rep, "deadline_s", 180);
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>vigil drill: ", f);
    esc(f, vg_json_str(rep, "fault", "?"));
    fputs("</title>\n<style>\n"
          "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px auto;max-width:960px;"
          "color:#222;background:#fff}\n"
          "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}h3{font-size:15px;margin:0 0 4px}\n"
          ".meta{color:#555;margin:0 0 8px}table{border-collapse:collapse;margin:8px 0}"
          "th,td{border:1px solid #ddd;padding:4px 10px;text-align:left}th{background:#f6f6f6}\n"
          "td.num{text-align:right;font-variant-numeric:tabular-nums}.never,.bad{color:#b52b27}.ok{color:#2b7a3d}\n"
          ".run{border:1px solid #e4e4e4;border-radius:6px;padding:12px 14px;margin:14px 0}\n"
          "svg text{font:12px system-ui,sans-serif;fill:#222}svg text.tick{fill:#777;font-size:11px}"
          "svg text.never{fill:#b52b27;font-weight:600}\n"
          ".sw{display:inline-block;width:10px;height:10px;margin-right:6px;border-radius:2px}\n"
          "table.abs{font-size:12px}.legend span{margin-right:14px}\n"
          "</style></head><body>\n<h1>vigil drill — ", f);
    esc(f, vg_json_str(rep, "fault", "?"));
    fputs("</h1>\n<p class=\"meta\">", f);
    esc(f, vg_json_str(rep, "cluster", "?"));
    char size[96];
    vg_drill_size(rep, size, sizeof size);
    fprintf(f, " cluster, %s (", size);
    esc(f, vg_json_str(rep, "job", "?"));
    char dl[32];
    fprintf(f, "), %zu run(s), deadline %s s, ", json_array_size(json_object_get(rep, "runs")),
            vg_fmt_fixed(dl, sizeof dl, deadline, 3));
    if (vg_json_str(rep, "controller", NULL)) {
        fputs("vigil controller ", f);
        esc(f, vg_json_str(rep, "controller", ""));
    }
    else fputs("vigil off (plain Slurm)", f);
    fputs(" · from ", f);
    esc(f, vg_json_str(rep, "started", "?"));
    fputs(" to ", f);
    esc(f, vg_json_str(rep, "finished", "?"));
    fputs("</p>\n<h2>Per-stage statistics</h2>\n", f);
    stats_table(f, rep);
    fputs("<p class=\"meta\">A stage that never happened counts as infinitely late: a statistic that lands on it "
          "reads <span class=\"never\">never</span>. ClusterMAX: detection within 2 minutes, replacement within "
          "1 hour.</p>\n<h2>Timelines</h2>\n<p class=\"legend\">",
          f);
    for (int s = 0; s < VG_ST_COUNT; s++)
        fprintf(f, "<span><span class=\"sw\" style=\"background:%s\"></span>%s</span>", colors[s], labels[s]);
    fputs("</p>\n<svg width=\"0\" height=\"0\" style=\"position:absolute\"><defs><pattern id=\"hatch\" "
          "width=\"8\" height=\"8\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
          "<rect width=\"8\" height=\"8\" fill=\"#fafafa\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"8\" "
          "stroke=\"#ccc\" stroke-width=\"3\"/></pattern></defs></svg>\n",
          f);
    size_t i;
    const json_t *run;
    json_array_foreach(json_object_get(rep, "runs"), i, run) run_section(f, run, deadline);
    fputs("</body></html>\n", f);
    return ferror(f) ? -1 : 0;
}
