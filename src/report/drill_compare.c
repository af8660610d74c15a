/* drill_compare.c — several drill reports side by side (vigil against plain
 * Slurm, one fault against another): the per-stage medians as a table in the
 * terminal, and one self-contained HTML page with a bar chart per stage (one
 * bar per report, as long as its time, scaled to the slowest) and the table.  A stage that never
 * happened shows "never". */
#include "drill/drill.h"
#include "report/html.h"
#include "util/jsonutil.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

void vg_drill_label(const json_t *rep, char *buf, size_t n)
{
    const char *orch = vg_json_str(rep, "orchestrator", "slurm");
    if (vg_json_str(rep, "controller", NULL)) snprintf(buf, n, "vigil, %s", vg_json_str(rep, "fault", "?"));
    else snprintf(buf, n, "plain %s (vigil off), %s", !strcmp(orch, "slurm") ? "Slurm" : orch, vg_json_str(rep, "fault", "?"));
}

#define UNKNOWN -2.0   /* the jobs could not report the stage (no shared log): not never */

static double median(const json_t *rep, int s)
{
    const json_t *st = json_object_get(rep, vg_stage_name((enum vg_stage)s)), *v = json_object_get(st, "median");
    if (!json_is_number(v) && vg_json_int(st, "unknown", 0) > 0 && !vg_json_int(st, "count", 0) &&
        !vg_json_int(st, "never", 0))
        return UNKNOWN;
    return json_is_number(v) ? json_number_value(v) : -1;
}

static void cell(double v, char *buf, size_t n)
{
    if (v == UNKNOWN) snprintf(buf, n, "unknown");
    else if (v < 0) snprintf(buf, n, "never");
    else snprintf(buf, n, "%.3f s", v);
}

void vg_drill_compare_print(FILE *f, json_t *const *reps, size_t n)
{
    fprintf(f, "%-44s", "seconds after the fault (median)");
    for (int s = 0; s < VG_ST_COUNT; s++) fprintf(f, " %-10s", vg_stage_name((enum vg_stage)s));
    fputc('\n', f);
    for (size_t i = 0; i < n; i++) {
        char label[160], c[32];
        vg_drill_label(reps[i], label, sizeof label);
        fprintf(f, "%-44.44s", label);
        for (int s = 0; s < VG_ST_COUNT; s++) {
            cell(median(reps[i], s), c, sizeof c);
            fprintf(f, " %-10s", c);
        }
        fputc('\n', f);
    }
}

/* One stage: a bar per report, as long as its median (the slowest fills the
 * width), green for the fastest, red for the others; "never" hatched. */
static void bars(struct sbuf *b, json_t *const *reps, size_t n, int s, double max, double min)
{
    const int row = 28, lw = 330, nw = 90, bw = 900 - lw - nw;
    sbuf_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"900\" height=\"%zu\" role=\"img\">\n"
                   "<defs><pattern id=\"never%d\" width=\"8\" height=\"8\" patternUnits=\"userSpaceOnUse\" "
                   "patternTransform=\"rotate(45)\"><rect width=\"8\" height=\"8\" fill=\"#fbe9e7\"/>"
                   "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"8\" stroke=\"#e57373\" stroke-width=\"3\"/></pattern></defs>\n",
                n * row + 8, s);
    for (size_t i = 0; i < n; i++) {
        char label[160], note[32];
        int y = (int)i * row + 4;
        double m = median(reps[i], s);
        vg_drill_label(reps[i], label, sizeof label);
        cell(m, note, sizeof note);
        sbuf_printf(b, "<text x=\"0\" y=\"%d\" font-size=\"13\">", y + 17);
        vg_html_escape(b, label);
        int w = m < 0 ? bw : max > 0 ? (int)lround(fmax(m / max, 0.004) * bw) : 1;
        const char *fill = m < 0 ? "" : m <= min ? "#2e7d32" : "#c62828";
        if (m < 0) sbuf_printf(b, "</text><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"20\" rx=\"3\" fill=\"url(#never%d)\"/>",
                               lw, y + 2, w, s);
        else sbuf_printf(b, "</text><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"20\" rx=\"3\" fill=\"%s\"/>", lw, y + 2, w, fill);
        sbuf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"12\" fill=\"#374151\">%s</text>\n", lw + bw + 8, y + 17,
                    note);
    }
    sbuf_puts(b, "</svg>\n");
}

int vg_drill_compare_html(FILE *f, json_t *const *reps, size_t n)
{
    struct sbuf b = SBUF_INIT;
    vg_html_begin(&b, "vigil drill — side by side", "table{border-collapse:collapse;margin:12px 0}"
                  "td,th{padding:4px 10px;border-bottom:1px solid #e4e4e4;text-align:left}"
                  "td.num{text-align:right;font-variant-numeric:tabular-nums}.never{color:#b52b27}");
    sbuf_puts(&b, "<h1>vigil drill — side by side</h1>\n<p class=\"muted\">Seconds from the fault to each stage, "
                  "median over each report's runs: a shorter bar is a faster recovery, green the fastest; a hatched bar never happened.</p>\n<ul>\n");
    for (size_t i = 0; i < n; i++) {
        char label[160], size[96];
        vg_drill_label(reps[i], label, sizeof label);
        vg_drill_size(reps[i], size, sizeof size);
        sbuf_puts(&b, "<li><b>");
        vg_html_escape(&b, label);
        sbuf_puts(&b, "</b>: ");
        vg_html_escape(&b, size);
        sbuf_printf(&b, ", %zu run(s) on the ", json_array_size(json_object_get(reps[i], "runs")));
        vg_html_escape(&b, vg_json_str(reps[i], "cluster", "?"));
        sbuf_puts(&b, " cluster, from ");
        vg_html_escape(&b, vg_json_str(reps[i], "started", "?"));
        sbuf_puts(&b, "</li>\n");
    }
    sbuf_puts(&b, "</ul>\n");
    for (int s = 0; s < VG_ST_COUNT; s++) {
        double max = 0, min = -1;
        for (size_t i = 0; i < n; i++) {
            double m = median(reps[i], s);
            max = fmax(max, m);
            if (m >= 0 && (min < 0 || m < min)) min = m;
        }
        sbuf_printf(&b, "<h2>%s</h2>\n", vg_stage_name((enum vg_stage)s));
        bars(&b, reps, n, s, max, min);
    }
    sbuf_puts(&b, "<h2>table</h2>\n<table><tr><th>stack</th>");
    for (int s = 0; s < VG_ST_COUNT; s++) sbuf_printf(&b, "<th>%s</th>", vg_stage_name((enum vg_stage)s));
    sbuf_puts(&b, "</tr>\n");
    for (size_t i = 0; i < n; i++) {
        char label[160], c[32];
        vg_drill_label(reps[i], label, sizeof label);
        sbuf_puts(&b, "<tr><td>");
        vg_html_escape(&b, label);
        sbuf_puts(&b, "</td>");
        for (int s = 0; s < VG_ST_COUNT; s++) {
            double m = median(reps[i], s);
            cell(m, c, sizeof c);
            sbuf_printf(&b, "<td class=\"num%s\">%s</td>", m < 0 && m != UNKNOWN ? " never" : "", c);
        }
        sbuf_puts(&b, "</tr>\n");
    }
    sbuf_puts(&b, "</table>\n");
    vg_html_end(&b);
    int rc = fputs(b.s, f) < 0 ? -1 : 0;
    sbuf_free(&b);
    return rc;
}
