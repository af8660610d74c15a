/* rubric.c — loads and checks the scoring rubric (data/rubric.json): the
 * criteria and their weights, the rules (evidence source, path, comparison,
 * points) and the tiers.  Any fault stops with one line naming the field. */
#include "score/score.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *err, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return -1;
}

static const char *str(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_string(v) && *json_string_value(v) ? json_string_value(v) : NULL;
}

static bool num(const json_t *o, const char *k, double *out)
{
    const json_t *v = json_object_get(o, k);
    if (!json_is_number(v)) return false;
    *out = json_number_value(v);
    return true;
}

static const char *const ops[] = { "eq", "ne", "le", "lt", "ge", "gt" };

static int parse_rule(const json_t *o, size_t i, const char *name, struct vg_rubric *r, char *err, size_t n)
{
    struct vg_rule *u = &r->rules[i];
    const char *f[] = { "id", "criterion", "source", "path", "op", "text" };
    for (size_t k = 0; k < 6; k++)
        if (!str(o, f[k])) return bad(err, n, "%s: rules[%zu].%s: missing or not a string", name, i, f[k]);
    u->source = vg_ev_kind_parse(str(o, "source"));
    if (u->source < 0) return bad(err, n, "%s: rules[%zu].source: '%s' is not audit, security, check, drill, fleet or questionnaire", name, i, str(o, "source"));
    bool found = false;
    for (size_t c = 0; c < r->ncrit; c++) found |= !strcmp(r->crit[c].name, str(o, "criterion"));
    if (!found) return bad(err, n, "%s: rules[%zu].criterion: '%s' is not a criterion", name, i, str(o, "criterion"));
    int op = -1;
    for (int k = 0; k < 6; k++)
        if (!strcmp(str(o, "op"), ops[k])) op = k;
    if (op < 0) return bad(err, n, "%s: rules[%zu].op: '%s' is not eq, ne, le, lt, ge or gt", name, i, str(o, "op"));
    const json_t *v = json_object_get(o, "value");
    if (!v || json_is_array(v) || json_is_object(v) || json_is_null(v))
        return bad(err, n, "%s: rules[%zu].value: missing or not a number, string or boolean", name, i);
    if (op >= VG_OP_LE && !json_is_number(v)) return bad(err, n, "%s: rules[%zu].value: %s needs a number", name, i, ops[op]);
    if (!num(o, "points", &u->points)) return bad(err, n, "%s: rules[%zu].points: missing or not a number", name, i);
    u->otherwise = 0;
    if (json_object_get(o, "otherwise") && !num(o, "otherwise", &u->otherwise))
        return bad(err, n, "%s: rules[%zu].otherwise: not a number", name, i);
    for (size_t k = 0; k < i; k++)
        if (!strcmp(r->rules[k].id, str(o, "id"))) return bad(err, n, "%s: rules[%zu].id: '%s' repeats rules[%zu]", name, i, str(o, "id"), k);
    const json_t *nm = json_object_get(o, "null_means_missed");
    if (nm && !json_is_boolean(nm)) return bad(err, n, "%s: rules[%zu].null_means_missed: not a boolean", name, i);
    u->null_missed = json_is_true(nm);
    const json_t *rq = json_object_get(o, "requires");
    if (rq && (!json_is_string(rq) || !*json_string_value(rq)))
        return bad(err, n, "%s: rules[%zu].requires: not a path", name, i);
    u->requires = rq ? vg_xstrdup(json_string_value(rq)) : NULL;
    u->id = vg_xstrdup(str(o, "id"));
    u->criterion = vg_xstrdup(str(o, "criterion"));
    u->path = vg_xstrdup(str(o, "path"));
    u->text = vg_xstrdup(str(o, "text"));
    u->op = (enum vg_op)op;
    u->value = json_incref((json_t *)v);
    return 0;
}

static int parse(const json_t *doc, const char *name, struct vg_rubric *r, char *err, size_t n)
{
    if (!json_is_object(doc)) return bad(err, n, "%s: not a JSON object", name);
    if (!str(doc, "title") || !str(doc, "follows")) return bad(err, n, "%s: title and follows must be strings", name);
    r->title = vg_xstrdup(str(doc, "title"));
    r->follows = vg_xstrdup(str(doc, "follows"));
    r->sources = json_incref(json_object_get(doc, "sources"));
    const json_t *crit = json_object_get(doc, "criteria"), *rules = json_object_get(doc, "rules"),
                 *tiers = json_object_get(doc, "tiers");
    if (!json_is_array(crit) || !json_array_size(crit)) return bad(err, n, "%s: criteria: missing or empty", name);
    if (!json_is_array(rules)) return bad(err, n, "%s: rules: missing or not an array", name);
    if (!json_is_array(tiers) || json_array_size(tiers) < 2) return bad(err, n, "%s: tiers: need at least two", name);
    r->crit = vg_xcalloc(json_array_size(crit), sizeof *r->crit);
    size_t i;
    json_t *o;
    json_array_foreach(crit, i, o) {
        struct vg_criterion *c = &r->crit[i];
        if (!str(o, "name")) return bad(err, n, "%s: criteria[%zu].name: missing", name, i);
        if (!num(o, "weight", &c->weight) || c->weight <= 0 || c->weight > 1000)
            return bad(err, n, "%s: criteria[%zu].weight: a number above 0 (at most 1000)", name, i);
        for (size_t k = 0; k < i; k++)
            if (!strcmp(r->crit[k].name, str(o, "name"))) return bad(err, n, "%s: criteria[%zu].name: '%s' repeats", name, i, str(o, "name"));
        c->name = vg_xstrdup(str(o, "name"));
        c->about = vg_xstrdup(str(o, "about") ? str(o, "about") : "");
        r->ncrit++;
    }
    r->rules = vg_xcalloc(json_array_size(rules) + 1, sizeof *r->rules);
    json_array_foreach(rules, i, o) {
        int rc = parse_rule(o, i, name, r, err, n);
        r->nrules += r->rules[i].id != NULL;
        if (rc) return rc;
    }
    r->tiers = vg_xcalloc(json_array_size(tiers), sizeof *r->tiers);
    const char *pass = str(doc, "pass_tier");
    bool pass_found = !pass;
    json_array_foreach(tiers, i, o) {
        struct vg_tier *t = &r->tiers[i];
        if (!str(o, "name")) return bad(err, n, "%s: tiers[%zu].name: missing", name, i);
        if (!num(o, "min_score", &t->min_score) || t->min_score < 0 || t->min_score > 100)
            return bad(err, n, "%s: tiers[%zu].min_score: a number 0..100", name, i);
        t->min_coverage = 0;
        if (json_object_get(o, "min_coverage") && (!num(o, "min_coverage", &t->min_coverage) || t->min_coverage < 0 || t->min_coverage > 1))
            return bad(err, n, "%s: tiers[%zu].min_coverage: a number 0..1", name, i);
        if (i && t->min_score > r->tiers[i - 1].min_score)
            return bad(err, n, "%s: tiers[%zu].min_score: tiers go best first", name, i);
        t->name = vg_xstrdup(str(o, "name"));
        t->means = vg_xstrdup(str(o, "means") ? str(o, "means") : "");
        if (pass && !strcmp(pass, t->name)) r->pass_tier = i, pass_found = true;
        r->ntiers++;
    }
    if (r->tiers[r->ntiers - 1].min_score != 0 || r->tiers[r->ntiers - 1].min_coverage != 0)
        return bad(err, n, "%s: tiers[%zu]: the last tier must have min_score 0 and no min_coverage", name, r->ntiers - 1);
    if (!pass_found) return bad(err, n, "%s: pass_tier: '%s' is not a tier", name, pass);
    if (!pass) r->pass_tier = r->ntiers - 1;
    return 0;
}

int vg_rubric_parse(const char *text, size_t len, const char *name, struct vg_rubric *r, char *err, size_t errlen)
{
    *r = (struct vg_rubric){ 0 };
    json_error_t je;
    json_t *doc = json_loadb(text, len, 0, &je);
    if (!doc) return bad(err, errlen, "%s:%d: not JSON: %s", name, je.line, je.text);
    int rc = parse(doc, name, r, err, errlen);
    json_decref(doc);
    if (rc) vg_rubric_free(r);
    return rc;
}

int vg_rubric_load(const char *path, struct vg_rubric *r, char *err, size_t errlen)
{
    char *text;
    size_t len;
    if (vg_read_file(NULL, path, 8u << 20, &text, &len)) return bad(err, errlen, "%s: %s", path, strerror(errno));
    int rc = vg_rubric_parse(text, len, path, r, err, errlen);
    free(text);
    return rc;
}

void vg_rubric_free(struct vg_rubric *r)
{
    for (size_t i = 0; i < r->ncrit; i++) free(r->crit[i].name), free(r->crit[i].about);
    for (size_t i = 0; i < r->nrules; i++) {
        struct vg_rule *u = &r->rules[i];
        free(u->id), free(u->criterion), free(u->path), free(u->text), free(u->requires);
        json_decref(u->value);
    }
    for (size_t i = 0; i < r->ntiers; i++) free(r->tiers[i].name), free(r->tiers[i].means);
    free(r->crit), free(r->rules), free(r->tiers), free(r->title), free(r->follows);
    json_decref(r->sources);
    *r = (struct vg_rubric){ 0 };
}
