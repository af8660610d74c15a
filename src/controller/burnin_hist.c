/* burnin_hist.c — burn-in passes into the store (checked, kept within the
 * retention), and each node's history out of it, a row at a time; see
 * burnin_hist.h. */
#include "controller/burnin_hist.h"
#include "controller/ingest.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DAY_MS (24.0 * 3600 * 1000)
#define TEXT_MAX 1024   /* any other string of a document */

/* The fields a pass keeps of each test, with the room the burn-in record
 * (src/burnin/burnin.h) has for each: enough to show the figure that failed. */
static const struct { const char *key; size_t max; } kept_fields[] = {
    { "name", 63 }, { "result", 15 }, { "value", 0 }, { "unit", 15 }, { "expected", 63 }, { "detail", 255 },
};

static json_t *tests_kept(const json_t *tests)
{
    json_t *out = json_array(), *t;
    size_t i;
    json_array_foreach(tests, i, t) {
        json_t *k = json_object();
        for (size_t j = 0; j < sizeof kept_fields / sizeof *kept_fields; j++) {
            json_t *v = json_object_get(t, kept_fields[j].key);
            if (v) json_object_set(k, kept_fields[j].key, v);
        }
        json_array_append_new(out, k);
    }
    return out;
}

/* The words of `vigil burnin --json` (src/burnin/burnin.h names them; the
 * controller reads them as the wire format, without depending on the burn-in
 * code). */
static bool one_of(const char *s, const char *const *words)
{
    for (; s && *words; words++)
        if (!strcmp(s, *words)) return true;
    return false;
}
static const char *const results[] = { "pass", "fail", "unknown", "preempted", NULL };
static const char *const suites[] = { "quick", "standard", "long", NULL };

/* A test's name is a word, as the burn-in table names them ("nccl-allreduce"). */
static bool word(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (!(s[n] >= 'a' && s[n] <= 'z') && !(s[n] >= 'A' && s[n] <= 'Z') && !(s[n] >= '0' && s[n] <= '9') &&
            !strchr("._-", s[n]))
            return false;
    return n > 0 && n <= 63;
}

static int check_test(const json_t *t, size_t i, size_t k, char *err, size_t errlen)
{
    if (!json_is_object(t)) return snprintf(err, errlen, "nodes[%zu].tests[%zu]: not an object", i, k), -1;
    if (!word(vg_json_str(t, "name", "")))
        return snprintf(err, errlen, "nodes[%zu].tests[%zu].name: not a test name (letters, digits, '.', '-', '_', "
                                     "at most 63)", i, k), -1;
    if (!one_of(vg_json_str(t, "result", NULL), results))
        return snprintf(err, errlen, "nodes[%zu].tests[%zu].result: not pass, fail, unknown or preempted", i, k), -1;
    for (size_t j = 0; j < sizeof kept_fields / sizeof *kept_fields; j++) {
        const json_t *v = json_object_get(t, kept_fields[j].key);
        if (!v || json_is_null(v)) continue;
        if (!kept_fields[j].max) {
            if (!json_is_number(v))
                return snprintf(err, errlen, "nodes[%zu].tests[%zu].%s: not a number", i, k, kept_fields[j].key), -1;
        } else if (!json_is_string(v) || json_string_length(v) > kept_fields[j].max) {
            return snprintf(err, errlen, "nodes[%zu].tests[%zu].%s: not a string of at most %zu bytes", i, k,
                            kept_fields[j].key, kept_fields[j].max), -1;
        }
    }
    return 0;
}

static int check_node(const json_t *n, size_t i, const char *only_node, char *err, size_t errlen)
{
    const char *node = vg_json_str(n, "node", NULL), *res = vg_json_str(n, "result", NULL);
    const char *suite = vg_json_str(n, "suite", NULL);
    if (!json_is_object(n)) return snprintf(err, errlen, "nodes[%zu]: not an object", i), -1;
    if (!node || !vg_ingest_node_ok(node))
        return snprintf(err, errlen, "nodes[%zu].node: missing or not a node name", i), -1;
    if (only_node && strcmp(node, only_node))
        return snprintf(err, errlen, "nodes[%zu].node: '%s' is not the sender's node (%s)", i, node, only_node), -1;
    if (!one_of(res, results))
        return snprintf(err, errlen, "nodes[%zu].result: not pass, fail, unknown or preempted", i), -1;
    if (!one_of(suite, suites))
        return snprintf(err, errlen, "nodes[%zu].suite: not quick, standard or long", i), -1;
    const json_t *tests = json_object_get(n, "tests"), *t;
    if (!json_is_array(tests)) return snprintf(err, errlen, "nodes[%zu].tests: not a list", i), -1;
    if (json_array_size(tests) > VG_BURNIN_MAX_TESTS)
        return snprintf(err, errlen, "nodes[%zu].tests: %zu is over the limit of %d", i, json_array_size(tests),
                        VG_BURNIN_MAX_TESTS), -1;
    size_t k;
    json_array_foreach(tests, k, t) if (check_test(t, i, k, err, errlen)) return -1;
    return 0;
}

/* The pass's time: the document's, neither ahead of now nor too old; now when it has none. */
static int pass_time(const json_t *doc, int64_t now, int64_t *at, char *err, size_t errlen)
{
    const json_t *t = json_object_get(doc, "time");
    *at = now;
    if (!t || json_is_null(t)) return 0;
    if (!json_is_string(t) || !vg_parse_time(json_string_value(t), at))
        return snprintf(err, errlen, "time: not an RFC 3339 time"), -1;
    if (*at > now + VG_BURNIN_MAX_AHEAD_MS)
        return snprintf(err, errlen, "time: %s is ahead of the controller's clock by more than %lld s",
                        json_string_value(t), VG_BURNIN_MAX_AHEAD_MS / 1000), -1;
    if (*at < now - VG_BURNIN_MAX_AGE_MS)
        return snprintf(err, errlen, "time: %s is older than the %lld days a pass is kept for",
                        json_string_value(t), VG_BURNIN_MAX_AGE_MS / 86400000), -1;
    return 0;
}

int vg_burnin_record(struct vg_store *st, const json_t *doc, const char *source, const char *only_node, int64_t at_ms,
                     char *err, size_t errlen)
{
    const json_t *nodes = json_object_get(doc, "nodes"), *n;
    if (!json_is_array(nodes)) return snprintf(err, errlen, "nodes: not a vigil burnin report (nodes: […])"), -1;
    if (vg_json_text_ok(doc, "", TEXT_MAX, 8, err, errlen)) return -1;
    size_t i;
    json_array_foreach(nodes, i, n) if (check_node(n, i, only_node, err, errlen)) return -1;
    int64_t at;
    if (pass_time(doc, at_ms, &at, err, errlen)) return -1;
    /* one transaction for several nodes; one row alone needs none (and a
     * connection another thread writes through must not hold one) */
    bool tx = json_array_size(nodes) > 1;
    if (tx && vg_store_begin(st)) return snprintf(err, errlen, "%s", vg_store_error(st)), -2;
    int rc = 0;
    json_array_foreach(nodes, i, n) {
        json_t *kept = tests_kept(json_object_get(n, "tests"));
        char *tests = json_dumps(kept, JSON_COMPACT);
        json_decref(kept);
        const char *node = vg_json_str(n, "node", "");
        rc = vg_store_put_burnin(st, node, at, vg_json_str(n, "suite", ""), vg_json_str(n, "result", ""),
                                 tests ? tests : "[]", source);
        free(tests);
        if (!rc) rc = vg_store_burnin_trim(st, node, VG_BURNIN_KEEP) < 0;
        if (rc) break;
    }
    if (rc && tx) vg_store_rollback(st);
    if (rc || (tx && vg_store_commit(st))) return snprintf(err, errlen, "%s", vg_store_error(st)), -2;
    return (int)json_array_size(nodes);
}

struct tally { size_t runs, pass, fail, unknown, preempted; };

static void count(struct tally *t, const char *res)
{
    t->runs++;
    if (!strcmp(res, "pass")) t->pass++;
    else if (!strcmp(res, "fail")) t->fail++;
    else if (!strcmp(res, "preempted")) t->preempted++;
    else t->unknown++;
}

/* A pass as the history shows it (the rows a node's summary needs). */
struct pass {
    int64_t at;
    char suite[16], result[16];
    char *tests;   /* its JSON text */
};

static void pass_set(struct pass *p, int64_t at, const char *suite, const char *result, const char *tests)
{
    p->at = at;
    vg_strlcpy(p->suite, suite, sizeof p->suite);
    vg_strlcpy(p->result, result, sizeof p->result);
    free(p->tests);
    p->tests = vg_xstrdup(tests ? tests : "[]");
}

/* The history being read: the summary of every node, and one page of nodes. */
struct hist {
    /* the node whose rows are being read */
    char node[64];
    struct tally t;
    struct pass last, last_any, last_fail;   /* last: not preempted (a preempted pass says nothing of the node) */
    int64_t last_pass;
    /* every node */
    struct tally all;
    size_t per_suite[3], failing, never, passed, tested;
    int64_t oldest_pass, first_at;
    /* the page */
    const char *after;
    int limit;
    json_t *nodes;
    bool more;
};

/* The failed tests of a pass: name, value, unit, expected. */
static json_t *failed_tests(const char *tests_text)
{
    json_t *tests = json_loads(tests_text, 0, NULL), *out = json_array(), *t;
    size_t i;
    json_array_foreach(tests, i, t)
        if (!strcmp(vg_json_str(t, "result", ""), "fail")) json_array_append(out, t);
    json_decref(tests);
    return out;
}

static json_t *node_json(const struct hist *x)
{
    const struct pass *shown = x->last.at ? &x->last : &x->last_any;
    json_t *tests = json_loads(shown->tests, 0, NULL);
    json_t *j = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:o, s:s, s:s, s:o}", "node", x->node, "runs",
                          (json_int_t)x->t.runs, "passes", (json_int_t)x->t.pass, "failures", (json_int_t)x->t.fail,
                          "unknown", (json_int_t)x->t.unknown, "preempted", (json_int_t)x->t.preempted, "last_run",
                          vg_json_time(shown->at), "last_result", shown->result, "last_suite", shown->suite, "tests",
                          tests ? tests : json_array());
    json_object_set_new(j, "last_pass", x->last_pass ? vg_json_time(x->last_pass) : json_null());
    json_object_set_new(j, "last_failure",
                        x->last_fail.at ? json_pack("{s:o, s:s, s:o}", "at", vg_json_time(x->last_fail.at), "suite",
                                                    x->last_fail.suite, "failed", failed_tests(x->last_fail.tests))
                                        : json_null());
    return j;
}

/* The rows of x->node are all read: into the summary, and the page when it falls there. */
static void node_done(struct hist *x)
{
    if (!x->node[0]) return;
    x->tested++;
    const struct pass *shown = x->last.at ? &x->last : &x->last_any;
    x->failing += !strcmp(shown->result, "fail");
    if (!x->last_pass) x->never++;
    else if (x->passed++, !x->oldest_pass || x->last_pass < x->oldest_pass) x->oldest_pass = x->last_pass;
    if (!x->after || strcmp(x->node, x->after) > 0) {
        if (json_array_size(x->nodes) < (size_t)x->limit) json_array_append_new(x->nodes, node_json(x));
        else x->more = true;
    }
    memset(&x->t, 0, sizeof x->t);
    x->last.at = x->last_any.at = x->last_fail.at = x->last_pass = 0;
    x->node[0] = 0;
}

static int row(void *ctx, const char *node, int64_t at, const char *suite, const char *result, const char *tests)
{
    struct hist *x = ctx;
    if (strcmp(node, x->node)) {
        node_done(x);
        vg_strlcpy(x->node, node, sizeof x->node);
    }
    count(&x->t, result);
    count(&x->all, result);
    for (size_t k = 0; k < 3; k++)
        if (!strcmp(suite, suites[k])) x->per_suite[k]++;
    if (!x->first_at || at < x->first_at) x->first_at = at;
    pass_set(&x->last_any, at, suite, result, tests);
    if (strcmp(result, "preempted")) pass_set(&x->last, at, suite, result, tests);
    if (!strcmp(result, "pass")) x->last_pass = at;
    if (!strcmp(result, "fail")) pass_set(&x->last_fail, at, suite, result, tests);
    return 0;
}

json_t *vg_burnin_history(struct vg_store *st, const char *node, int64_t since_ms, int64_t now_ms,
                          size_t cluster_nodes, const char *after, int limit)
{
    struct hist x = { .after = after, .limit = limit > 0 && limit <= VG_BURNIN_PAGE_MAX ? limit : VG_BURNIN_PAGE_MAX,
                      .nodes = json_array() };
    int rc = vg_store_burnin_each(st, node, since_ms, row, &x);
    node_done(&x);
    free(x.last.tests);
    free(x.last_any.tests);
    free(x.last_fail.tests);
    if (rc) {
        json_decref(x.nodes);
        return NULL;
    }
    /* the cadence over the time passes were recorded in (a controller that
     * started yesterday is not charged for the week before), at least a day */
    int64_t first = x.first_at > since_ms ? x.first_at : since_ms;
    double days = (double)(now_ms - first) / DAY_MS;
    if (days < 1) days = 1;
    json_t *sum = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:{s:I, s:I, s:I}, s:I, s:I}", "nodes_tested",
                            (json_int_t)x.tested, "runs", (json_int_t)x.all.runs, "passes", (json_int_t)x.all.pass,
                            "failures", (json_int_t)x.all.fail, "unknown", (json_int_t)x.all.unknown, "preempted",
                            (json_int_t)x.all.preempted, "suites", "quick", (json_int_t)x.per_suite[0], "standard",
                            (json_int_t)x.per_suite[1], "long", (json_int_t)x.per_suite[2], "nodes_failing",
                            (json_int_t)x.failing, "nodes_never_passed", (json_int_t)x.never);
    /* completed passes (not preempted) per node per day of the window */
    json_object_set_new(sum, "runs_per_node_day",
                        x.tested ? json_real((double)(x.all.runs - x.all.preempted) / (double)x.tested / days)
                                 : json_null());
    json_object_set_new(sum, "oldest_pass_age_s",
                        x.oldest_pass && !x.never ? json_integer((now_ms - x.oldest_pass) / 1000) : json_null());
    json_object_set_new(sum, "nodes_in_cluster", cluster_nodes ? json_integer((json_int_t)cluster_nodes) : json_null());
    json_object_set_new(sum, "coverage",
                        cluster_nodes ? json_real((double)(x.passed < cluster_nodes ? x.passed : cluster_nodes) /
                                                  (double)cluster_nodes)
                                      : json_null());
    size_t shown = json_array_size(x.nodes);
    json_t *next = x.more && shown ? json_object_get(json_array_get(x.nodes, shown - 1), "node") : NULL;
    json_t *doc = json_pack("{s:I, s:o, s:o, s:o}", "window_s", (json_int_t)((now_ms - since_ms) / 1000), "since",
                            vg_json_time(since_ms), "burnin", sum, "nodes", x.nodes);
    json_object_set_new(doc, "next_after", next ? json_copy(next) : json_null());
    return doc;
}
