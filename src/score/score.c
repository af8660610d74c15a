/* score.c — scores evidence against a rubric: each rule met, missed or not
 * measured (with the evidence line behind it), each criterion's share of the
 * points its measured rules could give, the weighted score over the measured
 * criteria, the coverage, the tier, and what would move the cluster up one. */
#include "score/score.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool compare(const json_t *got, enum vg_op op, const json_t *want, bool *ok)
{
    if (json_is_number(want) && json_is_number(got)) {
        double a = json_number_value(got), b = json_number_value(want);
        switch (op) {
        case VG_OP_EQ: *ok = a == b; break;
        case VG_OP_NE: *ok = a != b; break;
        case VG_OP_LE: *ok = a <= b; break;
        case VG_OP_LT: *ok = a < b; break;
        case VG_OP_GE: *ok = a >= b; break;
        case VG_OP_GT: *ok = a > b; break;
        }
        return true;
    }
    if (op != VG_OP_EQ && op != VG_OP_NE) return false;   /* not comparable: not measured */
    if (json_is_number(want) || json_is_number(got)) return false;
    bool eq = json_equal((json_t *)got, (json_t *)want);
    *ok = op == VG_OP_EQ ? eq : !eq;
    return true;
}

/* The evidence holds something at path: a non-zero number, true, a
 * non-empty string, array or object. */
static bool present(const json_t *doc, const char *path)
{
    json_t *v = vg_ev_resolve(doc, path);
    bool yes = json_is_number(v) ? json_number_value(v) != 0
               : json_is_string(v) ? json_string_length(v) > 0
               : json_is_array(v)  ? json_array_size(v) > 0
               : json_is_object(v) ? json_object_size(v) > 0
                                   : json_is_true(v);
    json_decref(v);
    return yes;
}

static void eval_rule(const struct vg_rule *u, const struct vg_evidence *ev, struct vg_rule_result *rr)
{
    rr->rule = u;
    rr->best = fmax(fmax(u->points, u->otherwise), 0);
    const json_t *doc = ev->doc[u->source];
    if (!doc) {
        struct sbuf b = SBUF_INIT;
        sbuf_printf(&b, "no %s evidence given", vg_ev_kind_name(u->source));
        rr->evidence = sbuf_take(&b);
        return;
    }
    if (u->requires && !present(doc, u->requires)) {
        struct sbuf b = SBUF_INIT;
        json_t *r = vg_ev_resolve(doc, u->requires);
        char *dump = r ? json_dumps(r, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
        sbuf_printf(&b, "%s: %s = %s: nothing there to measure", ev->file[u->source], u->requires,
                    dump ? dump : "(absent)");
        free(dump);
        json_decref(r);
        rr->evidence = sbuf_take(&b);
        return;
    }
    json_t *v = vg_ev_resolve(doc, u->path);
    /* a real to the millisecond (0.005, not 0.0050000000000000001; 6.674, not 6.674123) */
    char num[64];
    char *dump = !v ? NULL : json_is_real(v) ? vg_xstrdup(vg_fmt_fixed(num, sizeof num, json_real_value(v), 3))
                                             : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(6));
    struct sbuf b = SBUF_INIT;
    sbuf_printf(&b, "%s: %s = %s", ev->file[u->source], u->path, dump ? dump : "(absent)");
    bool ok = false;
    if (v && json_is_null(v) && u->null_missed) {
        rr->state = VG_RULE_MISSED;
        rr->awarded = u->otherwise;
    } else if (!v || json_is_null(v) || (json_is_string(v) && !strcmp(json_string_value(v), "unknown")) ||
        !compare(v, u->op, u->value, &ok))
        rr->state = VG_RULE_UNMEASURED;
    else {
        rr->state = ok ? VG_RULE_MET : VG_RULE_MISSED;
        rr->awarded = ok ? u->points : u->otherwise;
    }
    rr->evidence = sbuf_take(&b);
    free(dump);
    json_decref(v);
}

static void add_move(struct vg_score *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_move(struct vg_score *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *m;
    if (vasprintf(&m, fmt, ap) < 0) m = NULL;
    va_end(ap);
    if (!m) return;
    s->moves = vg_xrealloc(s->moves, (s->nmoves + 1) * sizeof *s->moves);
    s->moves[s->nmoves++] = m;
}

struct gain {
    size_t rule;
    double pts;
};

static int by_gain(const void *a, const void *b)
{
    const struct gain *x = a, *y = b;
    return x->pts < y->pts ? 1 : x->pts > y->pts ? -1 : (x->rule > y->rule) - (x->rule < y->rule);
}

static void moves(struct vg_score *s, double measured_w)
{
    const struct vg_rubric *r = s->rubric;
    if (s->tier == 0) return;
    const struct vg_tier *next = &r->tiers[s->tier - 1];
    if (s->coverage < next->min_coverage) {
        add_move(s, "measure more: %s needs %.1f%% of the criteria's weight measured (now %.1f%%)", next->name,
                 next->min_coverage * 100, s->coverage * 100);
        for (size_t c = 0; c < r->ncrit; c++)
            if (!s->crit[c].measured)
                add_move(s, "measure %s (weight %.0f): no rule of it had evidence", r->crit[c].name, r->crit[c].weight);
    }
    if (s->score >= next->min_score) return;
    struct gain *g = vg_xcalloc(r->nrules + 1, sizeof *g);
    size_t ng = 0;
    for (size_t i = 0; i < r->nrules; i++) {
        const struct vg_rule_result *rr = &s->rules[i];
        if (rr->state != VG_RULE_MISSED || measured_w <= 0) continue;
        size_t c = 0;
        while (c < r->ncrit && strcmp(r->crit[c].name, rr->rule->criterion)) c++;
        if (c == r->ncrit || s->crit[c].possible <= 0) continue;
        double pts = (rr->best - rr->awarded) / s->crit[c].possible * r->crit[c].weight / measured_w * 100;
        if (pts > 0) g[ng++] = (struct gain){ i, pts };
    }
    qsort(g, ng, sizeof *g, by_gain);
    double need = next->min_score - s->score, sum = 0;
    for (size_t i = 0; i < ng && (sum < need || i < 3) && i < 10; i++) {
        const struct vg_rule_result *rr = &s->rules[g[i].rule];
        add_move(s, "+%.1f: %s — %s (now %s)", g[i].pts, rr->rule->criterion, rr->rule->text, rr->evidence);
        sum += g[i].pts;
    }
    free(g);
}

void vg_score_compute(const struct vg_rubric *r, const struct vg_evidence *ev, struct vg_score *s)
{
    *s = (struct vg_score){ .rubric = r };
    s->rules = vg_xcalloc(r->nrules + 1, sizeof *s->rules);
    s->crit = vg_xcalloc(r->ncrit, sizeof *s->crit);
    for (size_t i = 0; i < r->nrules; i++) eval_rule(&r->rules[i], ev, &s->rules[i]);
    double total_w = 0, measured_w = 0, sum = 0;
    for (size_t c = 0; c < r->ncrit; c++) {
        struct vg_crit_result *cr = &s->crit[c];
        cr->c = &r->crit[c];
        for (size_t i = 0; i < r->nrules; i++) {
            const struct vg_rule_result *rr = &s->rules[i];
            if (rr->state == VG_RULE_UNMEASURED || strcmp(rr->rule->criterion, cr->c->name)) continue;
            cr->measured = true;
            cr->got += rr->awarded;
            cr->possible += rr->best;
        }
        cr->ratio = cr->possible > 0 ? fmin(fmax(cr->got / cr->possible, 0), 1) : (cr->got < 0 ? 0 : 1);
        total_w += cr->c->weight;
        if (cr->measured) measured_w += cr->c->weight, sum += cr->c->weight * cr->ratio;
    }
    s->score = measured_w > 0 ? sum / measured_w * 100 : 0;
    s->coverage = total_w > 0 ? measured_w / total_w : 0;
    s->tier = r->ntiers - 1;
    for (size_t t = 0; t < r->ntiers; t++)
        if (measured_w > 0 && s->score >= r->tiers[t].min_score && s->coverage >= r->tiers[t].min_coverage) {
            s->tier = t;
            break;
        }
    moves(s, measured_w);
}

void vg_score_free(struct vg_score *s)
{
    for (size_t i = 0; s->rules && i < s->rubric->nrules; i++) free(s->rules[i].evidence);
    for (size_t i = 0; i < s->nmoves; i++) free(s->moves[i]);
    free(s->rules), free(s->crit), free(s->moves);
    *s = (struct vg_score){ 0 };
}
