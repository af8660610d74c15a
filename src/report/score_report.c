/* score_report.c — renders a `vigil score` result: one JSON document, or a
 * terminal table / Markdown (score per criterion, every rule that added or
 * removed points with its evidence line, the tier and what would move the
 * cluster up a tier). */
#include "report/table.h"
#include "score/score.h"
#include "util/jsonutil.h"
#include "util/timeutil.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *state_name(enum vg_rule_state s)
{
    return s == VG_RULE_MET ? "met" : s == VG_RULE_MISSED ? "missed" : "not measured";
}

json_t *vg_score_json(const struct vg_score *s, const struct vg_evidence *ev)
{
    const struct vg_rubric *r = s->rubric;
    json_t *doc = json_object(), *evs = json_array(), *crits = json_array();
    json_object_set_new(doc, "generated", vg_json_time(vg_now_ms()));
    vg_json_set_str(doc, "rubric", r->title);
    vg_json_set_str(doc, "follows", r->follows);
    json_object_set(doc, "sources", r->sources ? r->sources : json_null());
    for (int k = 0; k < VG_EV_NKINDS; k++)
        if (ev->doc[k]) json_array_append_new(evs, json_pack("{s:s, s:s}", "kind", vg_ev_kind_name(k), "file", ev->file[k]));
    json_object_set_new(doc, "evidence", evs);
    bool any = s->coverage > 0;
    json_object_set_new(doc, "score", any ? json_real(round(s->score * 10) / 10) : json_null());
    json_object_set_new(doc, "coverage", json_real(round(s->coverage * 1000) / 1000));
    vg_json_set_str(doc, "tier", r->tiers[s->tier].name);
    for (size_t c = 0; c < r->ncrit; c++) {
        const struct vg_crit_result *cr = &s->crit[c];
        json_t *o = json_pack("{s:s, s:f, s:b}", "name", cr->c->name, "weight", cr->c->weight, "measured", cr->measured);
        json_object_set_new(o, "score", cr->measured ? json_real(round(cr->ratio * 1000) / 10) : json_null());
        json_object_set_new(o, "points", json_real(cr->got));
        json_object_set_new(o, "possible", json_real(cr->possible));
        json_t *rules = json_array();
        for (size_t i = 0; i < r->nrules; i++) {
            const struct vg_rule_result *rr = &s->rules[i];
            if (strcmp(rr->rule->criterion, cr->c->name)) continue;
            json_t *ro = json_pack("{s:s, s:s, s:s, s:f, s:s}", "id", rr->rule->id, "text", rr->rule->text, "status",
                                   state_name(rr->state), "points", rr->awarded, "evidence", rr->evidence);
            json_array_append_new(rules, ro);
        }
        json_object_set_new(o, "rules", rules);
        json_array_append_new(crits, o);
    }
    json_object_set_new(doc, "criteria", crits);
    json_t *mv = json_array();
    for (size_t i = 0; i < s->nmoves; i++) json_array_append_new(mv, json_string(s->moves[i]));
    json_t *next = s->tier ? json_pack("{s:s, s:f, s:f, s:o}", "tier", r->tiers[s->tier - 1].name, "min_score",
                                       r->tiers[s->tier - 1].min_score, "min_coverage", r->tiers[s->tier - 1].min_coverage,
                                       "moves", mv)
                           : (json_decref(mv), json_null());
    json_object_set_new(doc, "next_tier", next);
    return doc;
}

void vg_score_print(const struct vg_score *s, const struct vg_evidence *ev, FILE *f, bool md)
{
    const struct vg_rubric *r = s->rubric;
    fprintf(f, "%svigil score — tier %s", md ? "# " : "", r->tiers[s->tier].name);
    if (s->coverage > 0) fprintf(f, ", score %.1f / 100 over %.1f%% of the criteria's weight\n", s->score, s->coverage * 100);
    else fprintf(f, ", nothing measured\n");
    fprintf(f, "%s%s\n\nevidence:", md ? "\n" : "", r->follows);
    for (int k = 0; k < VG_EV_NKINDS; k++)
        if (ev->doc[k]) fprintf(f, " %s=%s", vg_ev_kind_name(k), ev->file[k]);
    fputs("\n\n", f);
    static const char *const hdr[] = { "criterion", "weight", "score", "points" };
    struct vg_table *t = vg_table_new(4, hdr);
    for (size_t c = 0; c < r->ncrit; c++) {
        const struct vg_crit_result *cr = &s->crit[c];
        if (cr->measured)
            vg_table_rowf(t, "%s\t%.0f\t%.1f%%\t%+.0f of %.0f", cr->c->name, cr->c->weight, cr->ratio * 100, cr->got, cr->possible);
        else vg_table_rowf(t, "%s\t%.0f\tnot measured\t-", cr->c->name, cr->c->weight);
    }
    if (md) vg_table_print_markdown(t, f);
    else vg_table_print(t, f);
    vg_table_free(t);
    fprintf(f, "\n%srules\n%s", md ? "## " : "", md ? "\n" : "");
    static const char *const rh[] = { "criterion", "rule", "status", "points", "evidence" };
    t = vg_table_new(5, rh);
    for (size_t i = 0; i < r->nrules; i++) {
        const struct vg_rule_result *rr = &s->rules[i];
        vg_table_rowf(t, "%s\t%s\t%s\t%+.0f\t%s", rr->rule->criterion, rr->rule->text, state_name(rr->state), rr->awarded,
                      rr->evidence);
    }
    if (md) vg_table_print_markdown(t, f);
    else vg_table_print(t, f);
    vg_table_free(t);
    if (s->tier) {
        fprintf(f, "\n%swhat would move you up to %s (score >= %.0f, coverage >= %.1f%%)\n%s", md ? "## " : "",
                r->tiers[s->tier - 1].name, r->tiers[s->tier - 1].min_score, r->tiers[s->tier - 1].min_coverage * 100,
                md ? "\n" : "");
        for (size_t i = 0; i < s->nmoves; i++) fprintf(f, "%s%s\n", md ? "- " : "  ", s->moves[i]);
    }
}
