/* test_score.c — `vigil score`: evidence told apart by shape, the path
 * language, the questionnaire and rubric parsers (errors name the line or
 * field), and the final tiers of the well- and badly-configured clusters
 * (tests/fixtures/score/: the bad one must not reach Bronze; their burn-in
 * histories are what GET /v1/burnin served on a 4-node lab; amd/ that of a
 * 2-node lab of AMD nodes, counted as NVIDIA's), missing evidence
 * shown as not measured, the HTML scorecard's self-containment, and evidence
 * figures printed to the millisecond in the terminal, Markdown and HTML. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "score/score.h"
#include "helpers/precision.h"

#define FIX "tests/fixtures/score"
static const char *const kinds[] = { "audit", "security", "check", "drill", "fleet", "burnin" };

static void load(struct vg_evidence *ev, const char *which, bool quest)
{
    char p[256], err[512];
    *ev = (struct vg_evidence){ 0 };
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        snprintf(p, sizeof p, FIX "/%s/%s.json", which, kinds[i]);
        if (vg_evidence_add(ev, p, err, sizeof err)) fail_msg("%s", err);
        assert_non_null(ev->doc[vg_ev_kind_parse(kinds[i])]);   /* detected by shape as its kind */
    }
    snprintf(p, sizeof p, FIX "/%s/questionnaire.txt", which);
    if (quest && vg_evidence_questionnaire(ev, p, err, sizeof err)) fail_msg("%s", err);
}

static void rubric(struct vg_rubric *r)
{
    char err[512];
    if (vg_rubric_load("data/rubric.json", r, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(r->ncrit, 10);
    assert_string_equal(r->tiers[r->pass_tier].name, "Bronze");
}

static size_t tier_index(const struct vg_rubric *r, const char *name)
{
    for (size_t i = 0; i < r->ntiers; i++)
        if (!strcmp(r->tiers[i].name, name)) return i;
    fail_msg("no tier %s", name);
    return 0;
}

static const struct vg_rule_result *rule(const struct vg_score *s, const char *id)
{
    for (size_t i = 0; i < s->rubric->nrules; i++)
        if (!strcmp(s->rules[i].rule->id, id)) return &s->rules[i];
    fail_msg("no rule %s", id);
    return NULL;
}

static void test_good_cluster(void **state)
{
    (void)state;
    struct vg_rubric r;
    struct vg_evidence ev;
    struct vg_score s;
    rubric(&r);
    load(&ev, "good", true);
    vg_score_compute(&r, &ev, &s);
    assert_string_equal(r.tiers[s.tier].name, "Platinum");
    assert_true(s.coverage == 1.0);
    assert_int_equal(s.nmoves, 0);
    /* the management-network check could not run: not measured, no points either way */
    assert_int_equal(rule(&s, "sec-mgmt")->state, VG_RULE_UNMEASURED);
    assert_true(rule(&s, "sec-mgmt")->awarded == 0);
    assert_int_equal(rule(&s, "rel-detect")->state, VG_RULE_MET);
    assert_non_null(strstr(rule(&s, "rel-detect")->evidence, "drill.json: detect.median = 0.4"));
    /* the controller's burn-in history: every node passed, three passes a node a day */
    assert_int_equal(rule(&s, "rel-burnin-coverage")->state, VG_RULE_MET);
    assert_int_equal(rule(&s, "rel-burnin-cadence")->state, VG_RULE_MET);
    assert_int_equal(rule(&s, "rel-burnin-failing")->state, VG_RULE_MET);
    vg_score_free(&s);
    vg_evidence_free(&ev);
    vg_rubric_free(&r);
}

static void test_bad_cluster(void **state)
{
    (void)state;
    struct vg_rubric r;
    struct vg_evidence ev;
    struct vg_score s;
    rubric(&r);
    load(&ev, "bad", true);
    vg_score_compute(&r, &ev, &s);
    assert_true(s.tier > tier_index(&r, "Bronze"));
    assert_string_equal(r.tiers[s.tier].name, "Underperforming");
    assert_true(s.score < 25);
    const struct vg_rule_result *u = rule(&s, "rel-replace");   /* restart never happened: null misses */
    assert_int_equal(u->state, VG_RULE_MISSED);
    assert_true(u->awarded == -4);
    assert_int_equal(rule(&s, "net-ib-events")->state, VG_RULE_MISSED);
    /* a quarter of the nodes passed a burn-in; n2's latest failed */
    assert_int_equal(rule(&s, "rel-burnin-coverage")->state, VG_RULE_MISSED);
    assert_int_equal(rule(&s, "rel-burnin-failing")->state, VG_RULE_MISSED);
    assert_int_equal(rule(&s, "rel-burnin-cadence")->state, VG_RULE_MET);
    assert_int_equal(rule(&s, "sec-cve-critical")->state, VG_RULE_MISSED);
    assert_true(s.nmoves >= 3);
    assert_non_null(strstr(s.moves[0], "Reliability"));   /* the largest weighted gain first */
    vg_score_free(&s);
    vg_evidence_free(&ev);
    vg_rubric_free(&r);
}

static void test_not_measured(void **state)
{
    (void)state;
    struct vg_rubric r;
    struct vg_evidence ev = { 0 };
    struct vg_score s;
    char err[256];
    rubric(&r);
    assert_int_equal(vg_evidence_add(&ev, FIX "/good/security.json", err, sizeof err), 0);
    vg_score_compute(&r, &ev, &s);
    /* perfect security alone cannot climb past what its coverage allows */
    assert_true(s.score == 100);
    assert_true(s.coverage < 0.75);
    assert_true(s.tier >= tier_index(&r, "Silver"));
    size_t c = 0;
    while (strcmp(r.crit[c].name, "Pricing")) c++;
    assert_false(s.crit[c].measured);
    assert_int_equal(rule(&s, "rel-detect")->state, VG_RULE_UNMEASURED);
    assert_string_equal(rule(&s, "rel-detect")->evidence, "no drill evidence given");
    bool asks = false;
    for (size_t i = 0; i < s.nmoves; i++) asks |= strstr(s.moves[i], "measure Pricing") != NULL;
    assert_true(asks);
    json_t *j = vg_score_json(&s, &ev);
    assert_true(json_is_null(json_object_get(json_array_get(json_object_get(j, "criteria"), c), "score")));
    json_decref(j);
    vg_score_free(&s);
    /* nothing at all: the last tier, never a silent score */
    vg_evidence_free(&ev);
    vg_score_compute(&r, &ev, &s);
    assert_int_equal(s.tier, r.ntiers - 1);
    assert_true(s.coverage == 0);
    vg_score_free(&s);
    vg_rubric_free(&r);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Evidence that measured nothing is "not measured", never "met": a check
 * report with no check, a node without InfiniBand, an audit that found no
 * component, a fleet merge of no node, a burn-in history with no run. */
/* An AMD node's burn-in is the same evidence as an NVIDIA node's: the history
 * GET /v1/burnin served for a lab of two MI300X nodes (tests/fixtures/score/
 * amd/: AMD's quick suite, RVS peqt and TransferBench a2a; n2's latest pass
 * failed with XGMI at half its bandwidth) is read by the same three rules,
 * each with the same evidence line as the NVIDIA lab's history with the same
 * figure (the bad cluster: one node failing). */
static void test_amd_burnin(void **state)
{
    (void)state;
    struct vg_rubric r;
    struct vg_evidence amd = { 0 }, nv = { 0 };
    struct vg_score sa, sn;
    char err[512];
    rubric(&r);
    if (vg_evidence_add(&amd, FIX "/amd/burnin.json", err, sizeof err)) fail_msg("%s", err);
    if (vg_evidence_add(&nv, FIX "/bad/burnin.json", err, sizeof err)) fail_msg("%s", err);
    assert_non_null(amd.doc[vg_ev_kind_parse("burnin")]);
    vg_score_compute(&r, &amd, &sa);
    vg_score_compute(&r, &nv, &sn);
    assert_int_equal(rule(&sa, "rel-burnin-coverage")->state, VG_RULE_MET);   /* both nodes passed a pass */
    assert_int_equal(rule(&sa, "rel-burnin-cadence")->state, VG_RULE_MET);    /* two passes a node a day */
    const struct vg_rule_result *fa = rule(&sa, "rel-burnin-failing"), *fn = rule(&sn, "rel-burnin-failing");
    assert_int_equal(fa->state, VG_RULE_MISSED);
    assert_true(fa->awarded == fn->awarded);
    /* the same line but for the file's folder */
    assert_non_null(strstr(fa->evidence, "amd/burnin.json"));
    const char *a = strstr(fa->evidence, "burnin.json"), *n = strstr(fn->evidence, "burnin.json");
    assert_non_null(a);
    assert_non_null(n);
    assert_string_equal(a, n);
    vg_score_free(&sa);
    vg_score_free(&sn);
    vg_evidence_free(&amd);
    vg_evidence_free(&nv);
    vg_rubric_free(&r);
}

static void test_empty_evidence(void **state)
{
    (void)state;
    char dir[] = "/tmp/vigil-score-XXXXXX", p[5][96], err[512];
    assert_non_null(mkdtemp(dir));
    const char *docs[5][2] = {
        { "check.json", "{\"node\":\"n1\",\"ok\":true,\"failed\":0,\"checks\":[],\"events\":[]}" },
        { "audit.json", "{\"components\":[],\"findings\":[],\"summary\":{\"critical\":0,\"high\":0,\"outdated\":0}}" },
        { "fleet.json", "{\"nodes\":[],\"components\":[],\"findings\":[],"
                        "\"summary\":{\"nodes\":0,\"skewed_components\":0,\"critical\":0}}" },
        { "burnin.json", "{\"nodes\":[],\"burnin\":{\"runs\":0,\"nodes_failing\":0,\"coverage\":0}}" },
        { "check2.json", "{\"node\":\"n1\",\"ok\":true,\"failed\":0,\"events\":[],"
                         "\"checks\":[{\"name\":\"gpu\",\"ok\":true,\"detail\":\"8 GPUs\",\"line\":1,\"events\":[]}]}" },
    };
    struct vg_evidence ev = { 0 };
    for (int i = 0; i < 5; i++) {
        snprintf(p[i], sizeof p[i], "%s/%s", dir, docs[i][0]);
        write_file(p[i], docs[i][1]);
        if (i < 4 && vg_evidence_add(&ev, p[i], err, sizeof err)) fail_msg("%s", err);
    }
    struct vg_rubric r;
    struct vg_score s;
    rubric(&r);
    vg_score_compute(&r, &ev, &s);
    static const char *const unmeasured[] = { "mon-check", "net-ib-events", "sec-cve-critical", "sec-cve-high",
                                              "life-outdated", "life-fleet-skew", "life-fleet-critical",
                                              "rel-burnin-failing" };
    for (size_t i = 0; i < sizeof unmeasured / sizeof *unmeasured; i++) {
        const struct vg_rule_result *u = rule(&s, unmeasured[i]);
        if (u->state != VG_RULE_UNMEASURED) fail_msg("%s: measured (%s)", unmeasured[i], u->evidence);
        assert_true(u->awarded == 0);
    }
    assert_non_null(strstr(rule(&s, "mon-check")->evidence, "check.json: checks# = 0: nothing there to measure"));
    assert_non_null(strstr(rule(&s, "net-ib-events")->evidence, "checks[name^=ib]# = 0"));
    vg_score_free(&s);
    vg_evidence_free(&ev);
    /* a check report with a GPU check and no InfiniBand one: the node passes vigil check, its links unmeasured */
    ev = (struct vg_evidence){ 0 };
    if (vg_evidence_add(&ev, p[4], err, sizeof err)) fail_msg("%s", err);
    vg_score_compute(&r, &ev, &s);
    assert_int_equal(rule(&s, "mon-check")->state, VG_RULE_MET);
    assert_int_equal(rule(&s, "net-ib-events")->state, VG_RULE_UNMEASURED);
    vg_score_free(&s);
    vg_evidence_free(&ev);
    vg_rubric_free(&r);
    for (int i = 0; i < 5; i++) unlink(p[i]);
    rmdir(dir);
}

static void test_resolve(void **state)
{
    (void)state;
    json_error_t je;
    json_t *d = json_loads("{\"a\":[{\"id\":\"x.y\",\"s\":\"fail\",\"ok\":false},{\"id\":\"z\",\"s\":\"pass\",\"ok\":true}],"
                           "\"st\":{\"detect\":{\"median\":1.5}}}", 0, &je);
    assert_non_null(d);
    json_t *v = vg_ev_resolve(d, "a[id=x.y].s");
    assert_string_equal(json_string_value(v), "fail");
    json_decref(v);
    v = vg_ev_resolve(d, "a[ok=true]#");
    assert_int_equal(json_integer_value(v), 1);
    json_decref(v);
    v = vg_ev_resolve(d, "a[id^=x.]#");   /* a prefix filter */
    assert_int_equal(json_integer_value(v), 1);
    json_decref(v);
    v = vg_ev_resolve(d, "a[id^=]#");      /* every element with that member a string */
    assert_int_equal(json_integer_value(v), 2);
    json_decref(v);
    v = vg_ev_resolve(d, "st.detect.median");
    assert_true(json_real_value(v) == 1.5);
    json_decref(v);
    assert_null(vg_ev_resolve(d, "a[id=nope].s"));
    assert_null(vg_ev_resolve(d, "st.missing.median"));
    assert_null(vg_ev_resolve(d, "a[broken"));
    json_decref(d);
    d = json_loads("[]", 0, &je);
    assert_int_equal(vg_ev_detect(d), -1);
    json_decref(d);
}

static void test_questionnaire(void **state)
{
    (void)state;
    char err[256];
    const char *t = "# c\nsla = 99.5\nok = yes\nname = \"Acme GPU\"\nn = 30\n";
    json_t *q = vg_questionnaire_parse(t, strlen(t), "q.txt", err, sizeof err);
    assert_non_null(q);
    assert_true(json_real_value(json_object_get(q, "sla")) == 99.5);
    assert_true(json_is_true(json_object_get(q, "ok")));
    assert_string_equal(json_string_value(json_object_get(q, "name")), "Acme GPU");
    assert_int_equal(json_integer_value(json_object_get(q, "n")), 30);
    json_decref(q);
    static const struct {
        const char *text, *err;
    } bad[] = {
        { "a = 1\nnovalue\n", "q.txt:2: expected" },
        { "Bad-Key = 1\n", "q.txt:1: key 'Bad-Key'" },
        { "a = 1\n\na = 2\n", "q.txt:3: a given twice" },
        { "a =\n", "q.txt:1: a: empty value" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_null(vg_questionnaire_parse(bad[i].text, strlen(bad[i].text), "q.txt", err, sizeof err));
        if (strncmp(err, bad[i].err, strlen(bad[i].err))) fail_msg("got '%s', expected '%s…'", err, bad[i].err);
    }
}

static void test_rubric_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text, *err;
    } bad[] = {
        { "{", "r.json:1: not JSON" },
        { "{\"title\":\"t\"}", "r.json: title and follows" },
        { "{\"title\":\"t\",\"follows\":\"f\",\"criteria\":[{\"name\":\"A\",\"weight\":0}],\"rules\":[],\"tiers\":[]}",
          "r.json: tiers: need at least two" },
        { "{\"title\":\"t\",\"follows\":\"f\",\"criteria\":[{\"name\":\"A\",\"weight\":0}],\"rules\":[],"
          "\"tiers\":[{\"name\":\"G\",\"min_score\":50},{\"name\":\"U\",\"min_score\":0}]}",
          "r.json: criteria[0].weight" },
        { "{\"title\":\"t\",\"follows\":\"f\",\"criteria\":[{\"name\":\"A\",\"weight\":1}],"
          "\"rules\":[{\"id\":\"x\",\"criterion\":\"A\",\"source\":\"drill\",\"path\":\"p\",\"op\":\"about\",\"value\":1,\"points\":1,\"text\":\"t\"}],"
          "\"tiers\":[{\"name\":\"G\",\"min_score\":50},{\"name\":\"U\",\"min_score\":0}]}",
          "r.json: rules[0].op: 'about'" },
        { "{\"title\":\"t\",\"follows\":\"f\",\"criteria\":[{\"name\":\"A\",\"weight\":1}],"
          "\"rules\":[{\"id\":\"x\",\"criterion\":\"B\",\"source\":\"drill\",\"path\":\"p\",\"op\":\"le\",\"value\":1,\"points\":1,\"text\":\"t\"}],"
          "\"tiers\":[{\"name\":\"G\",\"min_score\":50},{\"name\":\"U\",\"min_score\":0}]}",
          "r.json: rules[0].criterion: 'B'" },
        { "{\"title\":\"t\",\"follows\":\"f\",\"criteria\":[{\"name\":\"A\",\"weight\":1}],\"rules\":[],"
          "\"tiers\":[{\"name\":\"G\",\"min_score\":50},{\"name\":\"U\",\"min_score\":10}]}",
          "r.json: tiers[1]: the last tier" },
        { "{\"title\":\"t\",\"follows\":\"f\",\"criteria\":[{\"name\":\"A\",\"weight\":1}],"
          "\"rules\":[{\"id\":\"x\",\"criterion\":\"A\",\"source\":\"check\",\"path\":\"ok\",\"requires\":3,\"op\":\"eq\",\"value\":true,\"points\":1,\"text\":\"t\"}],"
          "\"tiers\":[{\"name\":\"G\",\"min_score\":50},{\"name\":\"U\",\"min_score\":0}]}",
          "r.json: rules[0].requires: not a path" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct vg_rubric r;
        char err[512];
        assert_int_equal(vg_rubric_parse(bad[i].text, strlen(bad[i].text), "r.json", &r, err, sizeof err), -1);
        if (strncmp(err, bad[i].err, strlen(bad[i].err))) fail_msg("got '%s', expected '%s…'", err, bad[i].err);
    }
}

static void test_evidence_errors(void **state)
{
    (void)state;
    struct vg_evidence ev = { 0 };
    char err[512];
    assert_int_equal(vg_evidence_add(&ev, FIX "/good/questionnaire.txt", err, sizeof err), -1);
    assert_non_null(strstr(err, "questionnaire.txt:"));
    assert_int_equal(vg_evidence_add(&ev, "data/rubric.json", err, sizeof err), -1);
    assert_non_null(strstr(err, "not a vigil audit"));
    assert_int_equal(vg_evidence_add(&ev, FIX "/good/drill.json", err, sizeof err), 0);
    assert_int_equal(vg_evidence_add(&ev, FIX "/bad/drill.json", err, sizeof err), -1);
    assert_non_null(strstr(err, "a second drill report"));
    vg_evidence_free(&ev);
}

static void test_html(void **state)
{
    (void)state;
    struct vg_rubric r;
    struct vg_evidence ev;
    struct vg_score s;
    rubric(&r);
    load(&ev, "bad", false);
    vg_score_compute(&r, &ev, &s);
    char *h = vg_score_html(&s, &ev);
    assert_true(vg_ev_kind_parse("questionnaire") == VG_EV_QUESTIONNAIRE);
    assert_non_null(strstr(h, "<svg"));
    assert_non_null(strstr(h, "Drill timeline"));
    assert_non_null(strstr(h, "never happened"));
    assert_non_null(strstr(h, "not measured"));          /* Pricing: no questionnaire */
    assert_non_null(strstr(h, "other tenants&#39; jobs"));  /* escaped */
    assert_null(strstr(h, "<script"));
    assert_null(strstr(h, "src=\"http"));
    assert_null(strstr(h, "href=\"http"));
    free(h);
    vg_score_free(&s);
    vg_evidence_free(&ev);
    vg_rubric_free(&r);
}

static void test_precision(void **state)
{
    (void)state;
    struct vg_rubric r;
    struct vg_evidence ev;
    struct vg_score s;
    rubric(&r);
    load(&ev, "good", true);
    /* seconds as a clock difference gives them: 0.005 is 0.0050000000000000001 to 17 digits */
    json_t *detect = json_object_get(ev.doc[vg_ev_kind_parse("drill")], "detect");
    json_object_set_new(detect, "median", json_real(0.0050000000000000001));
    json_object_set_new(detect, "max", json_real(6.674123));
    vg_score_compute(&r, &ev, &s);
    assert_non_null(strstr(rule(&s, "rel-detect")->evidence, "detect.median = 0.005"));
    char where[160];
    for (int md = 0; md <= 1; md++) {
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        vg_score_print(&s, &ev, f, md);
        fclose(f);
        if (long_decimal(out, where, sizeof where)) fail_msg("%s: %s", md ? "Markdown" : "terminal", where);
        assert_non_null(strstr(out, "detect.max = 6.674"));
        free(out);
    }
    char *h = vg_score_html(&s, &ev);
    if (long_decimal(h, where, sizeof where)) fail_msg("HTML: %s", where);
    assert_non_null(strstr(h, "detect.median = 0.005"));
    free(h);
    vg_score_free(&s);
    vg_evidence_free(&ev);
    vg_rubric_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_cluster),  cmocka_unit_test(test_bad_cluster),    cmocka_unit_test(test_not_measured),
        cmocka_unit_test(test_resolve),       cmocka_unit_test(test_questionnaire),  cmocka_unit_test(test_rubric_errors),
        cmocka_unit_test(test_evidence_errors), cmocka_unit_test(test_html), cmocka_unit_test(test_precision),
        cmocka_unit_test(test_empty_evidence), cmocka_unit_test(test_amd_burnin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
