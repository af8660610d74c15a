/* score.h — `vigil score`: a ClusterMAX-style scorecard.  Evidence files
 * (audit, security audit, check, drill, fleet-merge and burn-in history JSON
 * — the controller's GET /v1/burnin —, told apart by
 * their shape) and an optional questionnaire (what software cannot measure)
 * are scored against a rubric data file (data/rubric.json: criteria with
 * weights, rules, tiers).  A rule that cannot be evaluated — its evidence is
 * missing, or the value is null or "unknown" — is "not measured": it neither
 * adds nor removes points, and the criterion's coverage shows it. */
#ifndef VG_SCORE_H
#define VG_SCORE_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum vg_ev_kind { VG_EV_AUDIT, VG_EV_SECURITY, VG_EV_CHECK, VG_EV_DRILL, VG_EV_FLEET, VG_EV_BURNIN, VG_EV_QUESTIONNAIRE,
                  VG_EV_NKINDS };
const char *vg_ev_kind_name(int kind);     /* "audit", "security", … */
int vg_ev_kind_parse(const char *name);    /* -1 when unknown */
/* The kind of a JSON document by its shape, or -1. */
int vg_ev_detect(const json_t *doc);

struct vg_evidence {
    json_t *doc[VG_EV_NKINDS];
    char *file[VG_EV_NKINDS];
};
/* Reads a JSON evidence file and files it under its kind.  Returns 0, or -1
 * with err (one line naming the file) when unreadable, not JSON, of no known
 * shape, or a second file of the same kind. */
int vg_evidence_add(struct vg_evidence *ev, const char *path, char *err, size_t errlen);
/* Reads a questionnaire file (key = value lines). */
int vg_evidence_questionnaire(struct vg_evidence *ev, const char *path, char *err, size_t errlen);
void vg_evidence_free(struct vg_evidence *ev);

/* Questionnaire text: `key = value` per line, '#' comments; a value is a
 * number, yes/no/true/false, or text (quotes optional).  Returns a new JSON
 * object, or NULL with err "NAME:LINE: what". */
json_t *vg_questionnaire_parse(const char *text, size_t len, const char *name, char *err, size_t errlen);

/* A path into an evidence document: keys separated by '.', `[key=value]`
 * keeps the array elements whose member equals value (`[key^=value]`: whose
 * member starts with value; a key after a filter reads the first match), `#`
 * is the length of an array.  E.g.
 * `security[id=slurm.private-data].status`, `findings[severity=critical]#`,
 * `detect.median`.  Returns a new reference, or NULL when absent. */
json_t *vg_ev_resolve(const json_t *doc, const char *path);

enum vg_op { VG_OP_EQ, VG_OP_NE, VG_OP_LE, VG_OP_LT, VG_OP_GE, VG_OP_GT };

struct vg_rule {
    char *id, *criterion, *path, *text;
    int source;                 /* enum vg_ev_kind */
    enum vg_op op;
    json_t *value;
    double points, otherwise;   /* when the condition holds / does not */
    bool null_missed;           /* "null_means_missed": a null value (a drill stage that never
                                   happened) misses the rule instead of leaving it unmeasured */
    char *requires;             /* "requires": a path in the same evidence that must give a
                                   non-zero number, true or something non-empty for the rule to be
                                   measured at all (`checks#`: a check report with no check proves
                                   nothing); NULL: none */
};
struct vg_criterion {
    char *name, *about;
    double weight;
};
struct vg_tier {
    char *name, *means;
    double min_score, min_coverage;   /* score 0..100, coverage 0..1 */
};
struct vg_rubric {
    char *title, *follows;
    json_t *sources;
    struct vg_criterion *crit;
    size_t ncrit;
    struct vg_rule *rules;
    size_t nrules;
    struct vg_tier *tiers;      /* best first; the last has no minimum */
    size_t ntiers;
    size_t pass_tier;           /* index of the lowest tier that exits 0 */
};
/* Parses and checks a rubric; err names the field ("NAME: rules[3].op: …"). */
int vg_rubric_parse(const char *text, size_t len, const char *name, struct vg_rubric *r, char *err, size_t errlen);
int vg_rubric_load(const char *path, struct vg_rubric *r, char *err, size_t errlen);
void vg_rubric_free(struct vg_rubric *r);

enum vg_rule_state { VG_RULE_UNMEASURED, VG_RULE_MET, VG_RULE_MISSED };
struct vg_rule_result {
    const struct vg_rule *rule;
    enum vg_rule_state state;
    double awarded, best;       /* points given; the most it could give */
    char *evidence;             /* "file: path = value", or why not measured */
};
struct vg_crit_result {
    const struct vg_criterion *c;
    bool measured;
    double got, possible, ratio;   /* ratio 0..1 of the measured rules' best */
};
struct vg_score {
    const struct vg_rubric *rubric;
    struct vg_rule_result *rules;
    struct vg_crit_result *crit;
    double score;               /* 0..100 over the measured criteria's weight */
    double coverage;            /* measured weight / total weight */
    size_t tier;                /* index into rubric->tiers */
    char **moves;               /* what would move the cluster up one tier */
    size_t nmoves;
};
void vg_score_compute(const struct vg_rubric *r, const struct vg_evidence *ev, struct vg_score *s);
void vg_score_free(struct vg_score *s);

/* Renderings (report/score_report.c, report/score_html.c). */
json_t *vg_score_json(const struct vg_score *s, const struct vg_evidence *ev);
void vg_score_print(const struct vg_score *s, const struct vg_evidence *ev, FILE *f, bool markdown);
/* A self-contained HTML page (inline CSS and SVG, no script); malloc'd. */
char *vg_score_html(const struct vg_score *s, const struct vg_evidence *ev);

#endif
