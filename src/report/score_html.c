/* score_html.c — the self-contained HTML scorecard of `vigil score`: the tier
 * badge, a bar per criterion (hatched when not measured), the drill timeline
 * when drill evidence is present, the rules with their evidence, and what
 * would move the cluster up a tier.  Inline CSS and SVG only (report/html.h). */
#include "report/html.h"
#include "score/score.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *tier_colour(size_t tier, size_t ntiers)
{
    static const char *const c[] = { "#5b6b7f", "#c9a227", "#8a9199", "#a0612b", "#7b5ea7", "#b3261e" };
    if (tier + 1 == ntiers) return "#b3261e";
    return tier < 6 ? c[tier] : "#5b6b7f";
}

/* Seconds of NAME.median in the drill report (or -1 when null/absent). */
static double stage(const json_t *drill, const char *name, const char *stat)
{
    const json_t *v = json_object_get(json_object_get(drill, name), stat);
    return json_is_number(v) ? json_number_value(v) : -1;
}

static void timeline(struct sbuf *b, const json_t *drill, const char *file)
{
    static const char *const names[] = { "detect", "isolate", "requeue", "restart", "resume" };
    struct vg_svg_mark m[5];
    for (int i = 0; i < 5; i++) {
        m[i] = (struct vg_svg_mark){ .label = names[i], .t = stage(drill, names[i], "median") };
        m[i].lo = m[i].t, m[i].hi = stage(drill, names[i], "max");
    }
    sbuf_puts(b, "<h2>Drill timeline</h2><p class=\"muted\">Median seconds from the injected fault to each stage; the bar reaches the worst run. From ");
    vg_html_escape(b, file);
    sbuf_puts(b, ".</p>\n");
    vg_svg_timeline(b, m, 5, 1100, 120, "detection bar 120 s");
}

char *vg_score_html(const struct vg_score *s, const struct vg_evidence *ev)
{
    const struct vg_rubric *r = s->rubric;
    struct sbuf b = SBUF_INIT;
    vg_html_begin(&b, "vigil scorecard", ".head{display:flex;gap:24px;align-items:center}.head>div:first-child{flex:1}.head svg{flex-shrink:0}\n"
                              ".head>div:last-child{min-width:170px}.big{font-size:34px;font-weight:bold}\n");
    sbuf_puts(&b, "<div class=\"head\"><div><h1>GPU cluster scorecard</h1><div class=\"muted\">");
    vg_html_escape(&b, r->follows);
    sbuf_puts(&b, "</div></div>");
    vg_svg_badge(&b, r->tiers[s->tier].name, tier_colour(s->tier, r->ntiers));
    if (s->coverage > 0) sbuf_printf(&b, "<div><span class=\"big\">%.1f</span> / 100<br><span class=\"muted\">%.1f%% of the weight measured</span></div>", s->score, s->coverage * 100);
    else sbuf_puts(&b, "<div class=\"big\">not measured</div>");
    sbuf_puts(&b, "</div>\n<p class=\"muted\">");
    vg_html_escape(&b, r->tiers[s->tier].means);
    sbuf_puts(&b, "</p>\n<h2>Criteria</h2>\n");
    struct vg_svg_bar *bars = calloc(r->ncrit, sizeof *bars);
    char (*notes)[48] = calloc(r->ncrit, sizeof *notes);
    for (size_t c = 0; c < r->ncrit && bars && notes; c++) {
        const struct vg_crit_result *cr = &s->crit[c];
        snprintf(notes[c], sizeof notes[c], cr->measured ? "%.1f%% (weight %.0f)" : "not measured (weight %.0f)",
                 cr->measured ? cr->ratio * 100 : cr->c->weight, cr->c->weight);
        bars[c] = (struct vg_svg_bar){ cr->c->name, cr->measured ? cr->ratio : -1, notes[c] };
    }
    if (bars && notes) vg_svg_bars(&b, bars, r->ncrit, 1100);
    free(bars), free(notes);
    if (ev->doc[VG_EV_DRILL]) timeline(&b, ev->doc[VG_EV_DRILL], ev->file[VG_EV_DRILL]);
    if (s->tier) {
        sbuf_puts(&b, "<h2>What would move you up to ");
        vg_html_escape(&b, r->tiers[s->tier - 1].name);
        sbuf_puts(&b, "</h2>\n<ul>\n");
        for (size_t i = 0; i < s->nmoves; i++) {
            sbuf_puts(&b, "<li>");
            vg_html_escape(&b, s->moves[i]);
            sbuf_puts(&b, "</li>\n");
        }
        sbuf_puts(&b, "</ul>\n");
    }
    sbuf_puts(&b, "<h2>Rules</h2>\n<table><tr><th>criterion</th><th>rule</th><th>status</th><th>points</th><th>evidence</th></tr>\n");
    for (size_t i = 0; i < r->nrules; i++) {
        const struct vg_rule_result *rr = &s->rules[i];
        const char *cls = rr->state == VG_RULE_MET ? "met" : rr->state == VG_RULE_MISSED ? "missed" : "nm";
        sbuf_puts(&b, "<tr><td>");
        vg_html_escape(&b, rr->rule->criterion);
        sbuf_puts(&b, "</td><td>");
        vg_html_escape(&b, rr->rule->text);
        sbuf_printf(&b, "</td><td class=\"%s\">%s</td><td>%+.0f</td><td><code>", cls,
                    rr->state == VG_RULE_MET ? "met" : rr->state == VG_RULE_MISSED ? "missed" : "not measured", rr->awarded);
        vg_html_escape(&b, rr->evidence);
        sbuf_puts(&b, "</code></td></tr>\n");
    }
    sbuf_puts(&b, "</table>\n<h2>Sources</h2>\n<ul>\n");
    size_t i;
    json_t *src;
    json_array_foreach(r->sources, i, src) {
        sbuf_puts(&b, "<li>");
        vg_html_escape(&b, json_is_string(src) ? json_string_value(src) : "");
        sbuf_puts(&b, "</li>\n");
    }
    sbuf_puts(&b, "</ul>\n");
    vg_html_end(&b);
    return sbuf_take(&b);
}
