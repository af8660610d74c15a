/* burnin_hist.c — burn-in passes into the store, and each node's history
 * out of it; see burnin_hist.h. */
#include "controller/burnin_hist.h"
#include "controller/ingest.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DAY_MS (24.0 * 3600 * 1000)

/* What a pass keeps of each test: enough to show the figure that failed. */
static json_t *tests_kept(const json_t *tests)
{
    json_t *out = json_array(), *t;
    size_t i;
    json_array_foreach(tests, i, t) {
        json_t *k = json_object();
        static const char *const keys[] = { "name", "result", "value", "unit", "expected", "detail" };
        for (size_t j = 0; j < sizeof keys / sizeof *keys; j++) {
            json_t *v = json_object_get(t, keys[j]);
            if (v) json_object_set(k, keys[j], v);
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
    if (!json_is_array(json_object_get(n, "tests"))) return snprintf(err, errlen, "nodes[%zu].tests: not a list", i), -1;
    return 0;
}

int vg_burnin_record(struct vg_store *st, const json_t *doc, const char *source, const char *only_node, int64_t at_ms,
                     char *err, size_t errlen)
{
    const json_t *nodes = json_object_get(doc, "nodes"), *n;
    if (!json_is_array(nodes)) return snprintf(err, errlen, "nodes: not a vigil burnin report (nodes: […])"), -1;
    size_t i;
    json_array_foreach(nodes, i, n) if (check_node(n, i, only_node, err, errlen)) return -1;
    int64_t at = vg_json_get_time(doc, "time");
    if (at <= 0) at = at_ms;
    /* one transaction for several nodes; one row alone needs none (and a
     * connection another thread writes through must not hold one) */
    bool tx = json_array_size(nodes) > 1;
    if (tx && vg_store_begin(st)) return snprintf(err, errlen, "%s", vg_store_error(st)), -2;
    int rc = 0;
    json_array_foreach(nodes, i, n) {
        json_t *kept = tests_kept(json_object_get(n, "tests"));
        char *tests = json_dumps(kept, JSON_COMPACT);
        json_decref(kept);
        rc = vg_store_put_burnin(st, vg_json_str(n, "node", ""), at, vg_json_str(n, "suite", ""),
                                 vg_json_str(n, "result", ""), tests ? tests : "[]", source);
        free(tests);
        if (rc) break;
    }
    if (rc && tx) vg_store_rollback(st);
    if (rc || (tx && vg_store_commit(st))) return snprintf(err, errlen, "%s", vg_store_error(st)), -2;
    return (int)json_array_size(nodes);
}

/* The failed tests of a pass: name, value, unit, expected. */
static json_t *failed_tests(const json_t *tests)
{
    json_t *out = json_array(), *t;
    size_t i;
    json_array_foreach(tests, i, t)
        if (!strcmp(vg_json_str(t, "result", ""), "fail")) json_array_append(out, t);
    return out;
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

/* One node's summary from its rows (oldest first), rows [from, to). */
static json_t *node_summary(const json_t *rows, size_t from, size_t to, int64_t *last_pass)
{
    struct tally t = { 0 };
    const json_t *last = NULL, *last_fail = NULL;
    *last_pass = 0;
    for (size_t i = from; i < to; i++) {
        const json_t *r = json_array_get(rows, i);
        const char *res = vg_json_str(r, "result", "");
        count(&t, res);
        if (strcmp(res, "preempted")) last = r;   /* a preempted pass says nothing of the node */
        if (!strcmp(res, "pass")) *last_pass = vg_json_int(r, "at_ms", 0);
        if (!strcmp(res, "fail")) last_fail = r;
    }
    const json_t *shown = last ? last : json_array_get(rows, to - 1);
    json_t *j = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:o, s:s, s:s, s:o}", "node", vg_json_str(shown, "node", ""),
                          "runs", (json_int_t)t.runs, "passes", (json_int_t)t.pass, "failures", (json_int_t)t.fail,
                          "unknown", (json_int_t)t.unknown, "preempted", (json_int_t)t.preempted, "last_run",
                          vg_json_time(vg_json_int(shown, "at_ms", 0)), "last_result", vg_json_str(shown, "result", ""),
                          "last_suite", vg_json_str(shown, "suite", ""), "tests",
                          json_incref(json_object_get(shown, "tests")));
    json_object_set_new(j, "last_pass", *last_pass ? vg_json_time(*last_pass) : json_null());
    json_object_set_new(j, "last_failure",
                        last_fail ? json_pack("{s:o, s:s, s:o}", "at", vg_json_time(vg_json_int(last_fail, "at_ms", 0)),
                                              "suite", vg_json_str(last_fail, "suite", ""), "failed",
                                              failed_tests(json_object_get(last_fail, "tests")))
                                  : json_null());
    return j;
}

json_t *vg_burnin_history(struct vg_store *st, const char *node, int64_t since_ms, int64_t now_ms, size_t cluster_nodes)
{
    json_t *rows = vg_store_burnin(st, node, since_ms), *nodes = json_array();
    struct tally all = { 0 };
    size_t per_suite[3] = { 0 }, failing = 0, never = 0, passed = 0;
    int64_t oldest_pass = 0;
    for (size_t i = 0, n = json_array_size(rows); i < n;) {
        size_t k = i;
        const char *name = vg_json_str(json_array_get(rows, i), "node", "");
        for (; k < n && !strcmp(vg_json_str(json_array_get(rows, k), "node", ""), name); k++) {
            const json_t *r = json_array_get(rows, k);
            count(&all, vg_json_str(r, "result", ""));
            for (size_t k = 0; k < 3; k++)
                if (!strcmp(vg_json_str(r, "suite", ""), suites[k])) per_suite[k]++;
        }
        int64_t last_pass;
        json_t *ns = node_summary(rows, i, k, &last_pass);
        failing += !strcmp(vg_json_str(ns, "last_result", ""), "fail");
        if (!last_pass) never++;
        else if (passed++, !oldest_pass || last_pass < oldest_pass) oldest_pass = last_pass;
        json_array_append_new(nodes, ns);
        i = k;
    }
    size_t tested = json_array_size(nodes);
    /* the cadence over the time passes were recorded in (a controller that
     * started yesterday is not charged for the week before), at least a day */
    int64_t first = since_ms;
    for (size_t i = 0; i < json_array_size(rows); i++) {
        int64_t at = vg_json_int(json_array_get(rows, i), "at_ms", 0);
        if (!i || at < first) first = at;
    }
    if (first < since_ms) first = since_ms;
    double days = (double)(now_ms - first) / DAY_MS;
    if (days < 1) days = 1;
    json_decref(rows);
    json_t *sum = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:{s:I, s:I, s:I}, s:I, s:I}", "nodes_tested",
                            (json_int_t)tested, "runs", (json_int_t)all.runs, "passes", (json_int_t)all.pass, "failures",
                            (json_int_t)all.fail, "unknown", (json_int_t)all.unknown, "preempted",
                            (json_int_t)all.preempted, "suites", "quick", (json_int_t)per_suite[0], "standard",
                            (json_int_t)per_suite[1], "long", (json_int_t)per_suite[2], "nodes_failing", (json_int_t)failing,
                            "nodes_never_passed", (json_int_t)never);
    /* completed passes (not preempted) per node per day of the window */
    json_object_set_new(sum, "runs_per_node_day",
                        tested && days > 0 ? json_real((double)(all.runs - all.preempted) / (double)tested / days)
                                           : json_null());
    json_object_set_new(sum, "oldest_pass_age_s",
                        oldest_pass && !never ? json_integer((now_ms - oldest_pass) / 1000) : json_null());
    json_object_set_new(sum, "nodes_in_cluster", cluster_nodes ? json_integer((json_int_t)cluster_nodes) : json_null());
    json_object_set_new(sum, "coverage",
                        cluster_nodes ? json_real((double)(passed < cluster_nodes ? passed : cluster_nodes) /
                                                  (double)cluster_nodes)
                                      : json_null());
    return json_pack("{s:I, s:o, s:o, s:o}", "window_s", (json_int_t)((now_ms - since_ms) / 1000), "since",
                     vg_json_time(since_ms), "burnin", sum, "nodes", nodes);
}
