/* acct_html.c — the accounting page: the headline figures, causes (share of
 * incidents, most frequent first), racks (availability, time over the
 * domain rule), the repair ladder's rungs, the nodes, and the goodput of
 * trainer jobs (a bar per job, its restarts); see acct_html.h.
 * Numbers at a reader's precision (seconds to the millisecond, % to 0.1). */
#include "report/acct_html.h"
#include "report/html.h"
#include "util/jsonutil.h"
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static void cell(struct sbuf *b, const char *text) { sbuf_puts(b, "<td>"), vg_html_escape(b, text); }

static void figure(struct sbuf *b, const char *name, const json_t *v, double scale, const char *fmt,
                   const char *unknown)
{
    sbuf_puts(b, "<div class=fig><div class=n>");
    if (json_is_number(v)) sbuf_printf(b, fmt, json_number_value(v) * scale);
    else vg_html_escape(b, unknown);
    sbuf_puts(b, "</div><div class=l>");
    vg_html_escape(b, name);
    sbuf_puts(b, "</div></div>");
}

/* An accounting figure, or why it is not stated (the accounting's `unmeasured`). */
static void acct_figure(struct sbuf *b, const json_t *doc, const char *key, const char *name, double scale,
                        const char *fmt)
{
    figure(b, name, json_object_get(doc, key), scale, fmt,
           vg_json_str(json_object_get(doc, "unmeasured"), key, "unknown"));
}

static void causes(struct sbuf *b, const json_t *doc)
{
    const json_t *cl = json_object_get(doc, "causes");
    size_t n = json_array_size(cl), i;
    long long total = 0;
    json_t *c;
    json_array_foreach(cl, i, c) total += vg_json_int(c, "count", 0);
    sbuf_puts(b, "<h2>Incidents by cause</h2>");
    if (!n) {
        sbuf_puts(b, "<p>No incident in the window.</p>");
        return;
    }
    struct vg_svg_bar bars[32];
    char notes[32][48];
    size_t k = 0;
    json_array_foreach(cl, i, c) {
        if (k == 32) break;
        long long cnt = vg_json_int(c, "count", 0);
        snprintf(notes[k], sizeof notes[k], "%lld (%.1f %%)", cnt, 100.0 * (double)cnt / (double)total);
        bars[k] = (struct vg_svg_bar){ vg_json_str(c, "cause", "?"), (double)cnt / (double)total, notes[k] };
        k++;
    }
    vg_svg_bars(b, bars, k, 640);
}

static void racks(struct sbuf *b, const json_t *doc)
{
    const json_t *rl = json_object_get(doc, "racks");
    if (!json_array_size(rl)) return;
    sbuf_puts(b, "<h2>Racks and NVLink domains</h2><table><tr><th>rack<th>nodes<th>availability<th>time over the "
                 "domain rule</tr>");
    size_t i;
    json_t *r;
    json_array_foreach(rl, i, r) {
        char nodes[24], av[32], down[32];
        snprintf(nodes, sizeof nodes, "%lld", vg_json_int(r, "nodes", 0));
        if (json_is_number(json_object_get(r, "availability")))
            snprintf(av, sizeof av, "%.1f %%", 100.0 * json_number_value(json_object_get(r, "availability")));
        else snprintf(av, sizeof av, "not enough history");
        snprintf(down, sizeof down, "%.3f s", json_number_value(json_object_get(r, "sla_down_s")));
        sbuf_puts(b, "<tr>");
        cell(b, vg_json_str(r, "rack", "?")), cell(b, nodes), cell(b, av), cell(b, down);
        sbuf_puts(b, "</tr>");
    }
    sbuf_puts(b, "</table>");
}

static void repairs(struct sbuf *b, const json_t *doc)
{
    const json_t *rl = json_object_get(doc, "repairs");
    if (!json_array_size(rl)) return;
    sbuf_puts(b, "<h2>The repair ladder</h2><table><tr><th>step<th>tried<th>failed<th>returned the node</tr>");
    size_t i;
    json_t *r;
    json_array_foreach(rl, i, r) {
        char t[3][24];
        snprintf(t[0], sizeof t[0], "%lld", vg_json_int(r, "tried", 0));
        snprintf(t[1], sizeof t[1], "%lld", vg_json_int(r, "failed", 0));
        snprintf(t[2], sizeof t[2], "%lld", vg_json_int(r, "returned", 0));
        sbuf_puts(b, "<tr>");
        cell(b, vg_json_str(r, "step", "?")), cell(b, t[0]), cell(b, t[1]), cell(b, t[2]);
        sbuf_puts(b, "</tr>");
    }
    sbuf_printf(b, "</table><p>Handed off for RMA: %lld</p>", vg_json_int(doc, "rma_handoffs", 0));
}

static void nodes(struct sbuf *b, const json_t *doc)
{
    const json_t *pl = json_object_get(doc, "per_node");
    if (!json_array_size(pl)) return;
    sbuf_puts(b, "<h2>Nodes</h2><table><tr><th>node<th>incidents<th>node-hours lost</tr>");
    size_t i;
    json_t *r;
    json_array_foreach(pl, i, r) {
        char inc[24], lost[32];
        snprintf(inc, sizeof inc, "%lld", vg_json_int(r, "incidents", 0));
        snprintf(lost, sizeof lost, "%.3f", json_number_value(json_object_get(r, "hours_lost")));
        sbuf_puts(b, "<tr>");
        cell(b, vg_json_str(r, "node", "?")), cell(b, inc), cell(b, lost);
        sbuf_puts(b, "</tr>");
    }
    sbuf_puts(b, "</table>");
}

static void goodput(struct sbuf *b, const json_t *gp)
{
    const json_t *t = json_object_get(gp, "totals"), *jobs = json_object_get(gp, "jobs");
    sbuf_printf(b, "<h2>Goodput of trainer jobs</h2><div class=figs>");
    figure(b, "goodput (productive step-time / wall time)", json_object_get(t, "goodput"), 100.0, "%.1f %%", "n/a");
    figure(b, "restart overhead (s)", json_object_get(t, "restart_overhead_s"), 1.0, "%.3f", "0");
    figure(b, "steps lost", json_object_get(t, "lost_steps"), 1.0, "%.0f", "0");
    figure(b, "restarts", json_object_get(t, "restarts"), 1.0, "%.0f", "0");
    sbuf_puts(b, "</div>");
    struct vg_svg_bar bars[32];
    char notes[32][64], labels[32][16];
    size_t k = 0, i;
    json_t *j;
    json_array_foreach(jobs, i, j) {
        if (k == 32) break;
        const json_t *g = json_object_get(j, "goodput");
        snprintf(notes[k], sizeof notes[k], "%.1f %% · %lld lost · %lld restart(s)",
                 100.0 * json_number_value(g), vg_json_int(j, "lost_steps", 0), vg_json_int(j, "restarts", 0));
        snprintf(labels[k], sizeof labels[k], "job %zu", k + 1);   /* the table names it */
        bars[k] = (struct vg_svg_bar){ labels[k], json_is_number(g) ? json_number_value(g) : -1, notes[k] };
        k++;
    }
    if (k) vg_svg_bars(b, bars, k, 640);
    sbuf_puts(b, "<table><tr><th>job<th>steps<th>productive<th>lost<th>restarts<th>restart overhead<th>wall"
                 "<th>goodput</tr>");
    json_array_foreach(jobs, i, j) {
        char c[7][48], name[1100];
        snprintf(name, sizeof name, "%zu. %s", i + 1, vg_json_str(j, "job", "?"));
        snprintf(c[0], sizeof c[0], "%lld", vg_json_int(j, "steps", 0));
        snprintf(c[1], sizeof c[1], "%lld", vg_json_int(j, "productive_steps", 0));
        snprintf(c[2], sizeof c[2], "%lld", vg_json_int(j, "lost_steps", 0));
        snprintf(c[3], sizeof c[3], "%lld", vg_json_int(j, "restarts", 0));
        snprintf(c[4], sizeof c[4], "%.3f s", json_number_value(json_object_get(j, "restart_overhead_s")));
        snprintf(c[5], sizeof c[5], "%.3f s", json_number_value(json_object_get(j, "wall_s")));
        snprintf(c[6], sizeof c[6], "%.1f %%", 100.0 * json_number_value(json_object_get(j, "goodput")));
        sbuf_puts(b, "<tr>");
        cell(b, name);
        for (int x = 0; x < 7; x++) cell(b, c[x]);
        sbuf_puts(b, "</tr>");
        size_t r;
        json_t *rs;
        json_array_foreach(json_object_get(j, "resumes"), r, rs) {
            char what[160], lost[24], over[32];
            const json_t *last = json_object_get(rs, "last_step"), *from = json_object_get(rs, "resumed_from");
            snprintf(what, sizeof what, "restart %zu: stopped after step %lld, resumed from step %lld", r + 1,
                     (long long)json_integer_value(last), (long long)json_integer_value(from));
            snprintf(lost, sizeof lost, "%lld", vg_json_int(rs, "lost_steps", 0));
            if (json_is_number(json_object_get(rs, "overhead_s")))
                snprintf(over, sizeof over, "%.3f s", json_number_value(json_object_get(rs, "overhead_s")));
            else snprintf(over, sizeof over, "no step since");
            sbuf_puts(b, "<tr class=sub>");
            cell(b, what), cell(b, ""), cell(b, ""), cell(b, lost), cell(b, ""), cell(b, over), cell(b, ""), cell(b, "");
            sbuf_puts(b, "</tr>");
        }
    }
    sbuf_puts(b, "</table><p>A step is lost when a later restart resumed from a checkpoint before it; the restart "
                 "overhead runs from the stopped attempt's last line to the first new step.</p>");
}

static void incidents(struct sbuf *b, const json_t *doc)
{
    const json_t *w = json_object_get(doc, "window");
    sbuf_puts(b, "<h1>Reliability accounting</h1><p>");
    vg_html_escape(b, vg_json_str(w, "since", "?"));
    sbuf_puts(b, " to ");
    vg_html_escape(b, vg_json_str(w, "until", "?"));
    if (json_is_integer(json_object_get(doc, "nodes"))) sbuf_printf(b, ": %lld nodes", vg_json_int(doc, "nodes", 0));
    else sbuf_puts(b, ": fleet size unknown");
    sbuf_printf(b, ", %lld incidents, %lld interruptions", vg_json_int(doc, "incidents", 0),
                vg_json_int(doc, "interruptions", 0));
    if (vg_json_str(w, "history_since", NULL) && !strcmp(vg_json_str(w, "history_since", ""), vg_json_str(w, "since", "")))
        sbuf_puts(b, " (the window starts at the controller's first record)");
    sbuf_puts(b, ".</p><div class=figs>");
    acct_figure(b, doc, "availability", "availability", 100.0, "%.1f %%");
    acct_figure(b, doc, "mttr_s", "MTTR (fault to returned)", 1.0, "%.3f s");
    acct_figure(b, doc, "mtbi_s", "MTBI (node-hours)", 1.0 / 3600.0, "%.1f");
    acct_figure(b, doc, "node_hours_lost", "node-hours lost", 1.0, "%.3f");
    sbuf_puts(b, "</div>");
    causes(b, doc);
    racks(b, doc);
    repairs(b, doc);
    nodes(b, doc);
}

int vg_accounting_html(FILE *f, const json_t *doc)
{
    struct sbuf b = SBUF_INIT;
    bool acct = json_object_get(doc, "window") != NULL;
    const json_t *gp = json_object_get(doc, "goodput");
    vg_html_begin(&b, acct ? "vigil — reliability accounting" : "vigil — goodput of trainer jobs",
                  ".figs{display:flex;gap:1.5em;flex-wrap:wrap}.fig{border:1px solid #ccc;border-radius:6px;"
                  "padding:.6em 1em}.fig .n{font-size:1.6em;font-weight:600}.fig .l{color:#555}"
                  "tr.sub td{color:#555;font-size:.9em}");
    if (acct) incidents(&b, doc);
    if (!acct && gp) sbuf_puts(&b, "<h1>Trainer jobs</h1>");
    if (gp) goodput(&b, gp);
    vg_html_end(&b);
    int rc = fputs(b.s, f) < 0 ? -1 : 0;
    sbuf_free(&b);
    return rc;
}
