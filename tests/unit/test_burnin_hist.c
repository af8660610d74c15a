/* test_burnin_hist.c — burn-in results in the controller: `vigil burnin
 * --json` documents recorded into a real SQLite store (bad ones refused with
 * the field named, nothing half-kept), and the history over a window: per
 * node (last pass, last failure with its figures) and the cadence and
 * coverage `vigil score` reads. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "controller/burnin_hist.h"
#include "util/jsonutil.h"

#define H (3600LL * 1000)
#define T0 1764547200000LL   /* 2025-12-01T00:00:00Z */

static char db[64];

static int setup(void **state)
{
    snprintf(db, sizeof db, "/tmp/vigil-test-burnin-%d.db", (int)getpid());
    unlink(db);
    struct vg_store *st;
    char err[256];
    if (vg_store_open(db, &st, err, sizeof err)) return -1;
    *state = st;
    return 0;
}

static int teardown(void **state)
{
    vg_store_close(*state);
    char side[80];
    unlink(db);
    snprintf(side, sizeof side, "%s-wal", db);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", db);
    unlink(side);
    return 0;
}

/* A pass document as `vigil burnin --json` prints it: nodes "name:result". */
static json_t *pass(int64_t at, const char *suite, int n, ...)
{
    json_t *nodes = json_array();
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        char name[32];
        const char *spec = va_arg(ap, const char *), *colon = strchr(spec, ':');
        snprintf(name, sizeof name, "%.*s", (int)(colon - spec), spec);
        json_t *test = json_pack("{s:s, s:s, s:f, s:s, s:s, s:s, s:i}", "name", "nccl-allreduce", "result", colon + 1,
                                 "value", strcmp(colon + 1, "fail") ? 480.0 : 120.5, "unit", "GB/s", "expected",
                                 ">= 400", "detail", "busbw", "elapsed_ms", 900);
        json_array_append_new(nodes, json_pack("{s:s, s:s, s:s, s:s, s:[o]}", "node", name, "result", colon + 1,
                                               "suite", suite, "model", "H100", "tests", test));
    }
    va_end(ap);
    return json_pack("{s:s, s:o, s:s, s:o}", "suite", suite, "time", vg_json_time(at), "result", "pass", "nodes",
                     nodes);
}

/* Posted when it ran: the controller's clock at the document's own time. */
static int record(struct vg_store *st, json_t *doc, const char *only)
{
    char err[256] = "";
    int n = vg_burnin_record(st, doc, "post", only, vg_json_get_time(doc, "time"), err, sizeof err);
    json_decref(doc);
    return n;
}

static void test_record_and_history(void **state)
{
    struct vg_store *st = *state;
    assert_int_equal(record(st, pass(T0 + 1 * H, "quick", 3, "n1:pass", "n2:pass", "n3:pass"), NULL), 3);
    assert_int_equal(record(st, pass(T0 + 2 * H, "standard", 2, "n1:pass", "n2:fail"), NULL), 2);
    assert_int_equal(record(st, pass(T0 + 3 * H, "quick", 2, "n1:preempted", "n3:unknown"), NULL), 2);
    json_t *h = vg_burnin_history(st, NULL, T0, T0 + 24 * H, 4, NULL, 0);
    json_t *sum = json_object_get(h, "burnin");
    assert_int_equal(vg_json_int(h, "window_s", 0), 86400);
    assert_int_equal(vg_json_int(sum, "nodes_tested", 0), 3);
    assert_int_equal(vg_json_int(sum, "runs", 0), 7);
    assert_int_equal(vg_json_int(sum, "passes", 0), 4);
    assert_int_equal(vg_json_int(sum, "failures", 0), 1);
    assert_int_equal(vg_json_int(sum, "unknown", 0), 1);
    assert_int_equal(vg_json_int(sum, "preempted", 0), 1);
    assert_int_equal(vg_json_int(json_object_get(sum, "suites"), "standard", 0), 2);
    assert_int_equal(vg_json_int(sum, "nodes_failing", 0), 1);        /* n2's latest failed */
    assert_int_equal(vg_json_int(sum, "nodes_never_passed", 0), 0);
    /* 6 completed passes over 3 nodes in one day */
    assert_true(fabs(json_real_value(json_object_get(sum, "runs_per_node_day")) - 2.0) < 1e-9);
    /* 3 of the cluster's 4 nodes passed */
    assert_true(fabs(json_real_value(json_object_get(sum, "coverage")) - 0.75) < 1e-9);
    /* the oldest last pass: n3's at T0+1h, 23 h before now */
    assert_int_equal(vg_json_int(sum, "oldest_pass_age_s", 0), 23 * 3600);
    json_t *nodes = json_object_get(h, "nodes");
    assert_int_equal(json_array_size(nodes), 3);
    json_t *n1 = json_array_get(nodes, 0), *n2 = json_array_get(nodes, 1), *n3 = json_array_get(nodes, 2);
    assert_string_equal(vg_json_str(n1, "node", ""), "n1");
    /* a preempted pass says nothing of the node: the last one is the standard pass */
    assert_string_equal(vg_json_str(n1, "last_result", ""), "pass");
    assert_string_equal(vg_json_str(n1, "last_suite", ""), "standard");
    assert_int_equal(vg_json_int(n1, "preempted", 0), 1);
    assert_true(json_is_null(json_object_get(n1, "last_failure")));
    /* n2: the failure with its figure */
    assert_string_equal(vg_json_str(n2, "last_result", ""), "fail");
    json_t *lf = json_object_get(n2, "last_failure");
    assert_string_equal(vg_json_str(lf, "suite", ""), "standard");
    json_t *failed = json_array_get(json_object_get(lf, "failed"), 0);
    assert_string_equal(vg_json_str(failed, "name", ""), "nccl-allreduce");
    assert_true(fabs(json_number_value(json_object_get(failed, "value")) - 120.5) < 1e-9);
    assert_string_equal(vg_json_str(failed, "expected", ""), ">= 400");
    assert_string_equal(vg_json_str(n2, "last_pass", ""), "2025-12-01T01:00:00.000Z");
    assert_string_equal(vg_json_str(n3, "last_result", ""), "unknown");
    json_decref(h);
    /* one node; a window that starts after the passes */
    h = vg_burnin_history(st, "n2", T0, T0 + 24 * H, 0, NULL, 0);
    assert_int_equal(json_array_size(json_object_get(h, "nodes")), 1);
    assert_true(json_is_null(json_object_get(json_object_get(h, "burnin"), "coverage")));
    json_decref(h);
    h = vg_burnin_history(st, NULL, T0 + 4 * H, T0 + 24 * H, 4, NULL, 0);
    sum = json_object_get(h, "burnin");
    assert_int_equal(vg_json_int(sum, "runs", -1), 0);
    assert_true(json_is_null(json_object_get(sum, "runs_per_node_day")));
    assert_true(fabs(json_real_value(json_object_get(sum, "coverage"))) < 1e-9);
    json_decref(h);
}

/* Bad documents: refused whole, the field named, nothing kept. */
static void test_refusals(void **state)
{
    struct vg_store *st = *state;
    static const char *const bad[] = {
        "{\"nodes\": 3}",
        "{\"nodes\": [{\"node\": \"n1\", \"result\": \"pass\", \"suite\": \"quick\", \"tests\": []}, 7]}",
        "{\"nodes\": [{\"node\": \"n1;rm\", \"result\": \"pass\", \"suite\": \"quick\", \"tests\": []}]}",
        "{\"nodes\": [{\"node\": \"n1\", \"result\": \"great\", \"suite\": \"quick\", \"tests\": []}]}",
        "{\"nodes\": [{\"node\": \"n1\", \"result\": \"pass\", \"suite\": \"weekly\", \"tests\": []}]}",
        "{\"nodes\": [{\"node\": \"n1\", \"result\": \"pass\", \"suite\": \"quick\", \"tests\": {}}]}",
    };
    static const char *const field[] = { "nodes:", "nodes[1]:", "nodes[0].node", "nodes[0].result", "nodes[0].suite",
                                         "nodes[0].tests" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *doc = json_loads(bad[i], 0, NULL);
        char err[256] = "";
        assert_int_equal(vg_burnin_record(st, doc, "post", NULL, T0, err, sizeof err), -1);
        assert_non_null(strstr(err, field[i]));
        json_decref(doc);
    }
    /* a sender that may speak only for its own node */
    char err[256] = "";
    json_t *doc = pass(T0, "quick", 2, "n1:pass", "n2:pass");
    assert_int_equal(vg_burnin_record(st, doc, "gate", "n1", T0, err, sizeof err), -1);
    assert_non_null(strstr(err, "nodes[1].node: 'n2' is not the sender's node (n1)"));
    json_decref(doc);
    json_t *rows = vg_store_burnin(st, NULL, 0);
    assert_int_equal(json_array_size(rows), 0);
    json_decref(rows);
    /* no time in the document: the time it was received */
    doc = json_loads("{\"nodes\": [{\"node\": \"n1\", \"result\": \"pass\", \"suite\": \"long\", \"tests\": []}]}", 0,
                     NULL);
    assert_int_equal(vg_burnin_record(st, doc, "post", NULL, T0 + H, err, sizeof err), 1);
    json_decref(doc);
    rows = vg_store_burnin(st, "n1", 0);
    assert_int_equal(vg_json_int(json_array_get(rows, 0), "at_ms", 0), T0 + H);
    json_decref(rows);
}

/* The history in pages of nodes: each page holds its nodes, the summary is
 * every node's, and the cursor leads to the next page until the last. */
static void test_history_pages(void **state)
{
    struct vg_store *st = *state;
    assert_int_equal(record(st, pass(T0 + 1 * H, "quick", 3, "n1:pass", "n2:fail", "n3:pass"), NULL), 3);
    assert_int_equal(record(st, pass(T0 + 2 * H, "quick", 2, "n4:pass", "n5:unknown"), NULL), 2);
    json_t *h = vg_burnin_history(st, NULL, T0, T0 + 24 * H, 5, NULL, 2);
    json_t *nodes = json_object_get(h, "nodes");
    assert_int_equal(json_array_size(nodes), 2);
    assert_string_equal(vg_json_str(json_array_get(nodes, 1), "node", ""), "n2");
    assert_string_equal(vg_json_str(h, "next_after", ""), "n2");
    assert_int_equal(vg_json_int(json_object_get(h, "burnin"), "nodes_tested", 0), 5);
    assert_int_equal(vg_json_int(json_object_get(h, "burnin"), "nodes_failing", 0), 1);
    json_decref(h);
    h = vg_burnin_history(st, NULL, T0, T0 + 24 * H, 5, "n4", 2);
    nodes = json_object_get(h, "nodes");
    assert_int_equal(json_array_size(nodes), 1);
    assert_string_equal(vg_json_str(json_array_get(nodes, 0), "node", ""), "n5");
    assert_true(json_is_null(json_object_get(h, "next_after")));
    assert_int_equal(vg_json_int(json_object_get(h, "burnin"), "passes", 0), 3);
    json_decref(h);
}

/* Each node keeps its newest VG_BURNIN_KEEP passes, whatever it sends. */
static void test_retention(void **state)
{
    struct vg_store *st = *state;
    for (int i = 0; i < VG_BURNIN_KEEP + 20; i++) assert_int_equal(record(st, pass(T0 + i * 60000, "quick", 1, "n1:pass"), NULL), 1);
    assert_int_equal(record(st, pass(T0 + 3 * H, "quick", 1, "n2:fail"), NULL), 1);
    json_t *rows = vg_store_burnin(st, "n1", 0);
    assert_int_equal(json_array_size(rows), VG_BURNIN_KEEP);
    assert_int_equal(vg_json_int(json_array_get(rows, 0), "at_ms", 0), T0 + 20 * 60000);   /* the 20 oldest went */
    json_decref(rows);
    rows = vg_store_burnin(st, "n2", 0);
    assert_int_equal(json_array_size(rows), 1);
    json_decref(rows);
}

/* What a node writes is checked before anything is kept: its times, its
 * strings (what would reach a terminal or a page), its sizes. */
static void test_refused_content(void **state)
{
    struct vg_store *st = *state;
    struct { const char *doc, *err; } bad[] = {
        { "{\"time\": \"2099-01-01T00:00:00Z\", \"nodes\": [{\"node\": \"n1\", \"result\": \"pass\", \"suite\": \"quick\", \"tests\": []}]}",
          "time: 2099-01-01T00:00:00Z is ahead of the controller's clock by more than 300 s" },
        { "{\"time\": \"2025-09-01T00:00:00Z\", \"nodes\": [{\"node\": \"n1\", \"result\": \"pass\", \"suite\": \"quick\", \"tests\": []}]}",
          "time: 2025-09-01T00:00:00Z is older than the 30 days a pass is kept for" },
        { "{\"nodes\": [{\"node\": \"n1\", \"result\": \"pass\", \"suite\": \"quick\", \"tests\": [{\"name\": \"\\u001b]0;owned\\u0007\", \"result\": \"pass\"}]}]}",
          "nodes[0].tests[0].name: not printable text" },
        { "{\"nodes\": [{\"node\": \"n1\", \"result\": \"pass\", \"suite\": \"quick\", \"tests\": [{\"name\": \"gemm\", \"result\": \"pass\", \"detail\": \"ok \\u202e\"}]}]}",
          "nodes[0].tests[0].detail: not printable text" },
        { "{\"nodes\": [{\"node\": \"n1\", \"result\": \"pass\", \"suite\": \"quick\", \"tests\": [{\"name\": \"all passed\", \"result\": \"pass\"}]}]}",
          "nodes[0].tests[0].name: not a test name" },
        { "{\"nodes\": [{\"node\": \"n1\", \"result\": \"pass\", \"suite\": \"quick\", \"tests\": [{\"name\": \"gemm\", \"result\": \"pass\", \"value\": \"fast\"}]}]}",
          "nodes[0].tests[0].value: not a number" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *doc = json_loads(bad[i].doc, 0, NULL);
        assert_non_null(doc);
        char err[256] = "";
        assert_int_equal(vg_burnin_record(st, doc, "post", NULL, T0, err, sizeof err), -1);
        if (!strstr(err, bad[i].err)) fail_msg("document %zu: '%s' does not say '%s'", i, err, bad[i].err);
        json_decref(doc);
    }
    /* 65 tests for one node: over the limit */
    json_t *tests = json_array();
    for (int i = 0; i < VG_BURNIN_MAX_TESTS + 1; i++) json_array_append_new(tests, json_pack("{s:s, s:s}", "name", "gemm", "result", "pass"));
    json_t *doc = json_pack("{s:[{s:s, s:s, s:s, s:o}]}", "nodes", "node", "n1", "result", "pass", "suite", "quick", "tests", tests);
    char err[256] = "";
    assert_int_equal(vg_burnin_record(st, doc, "post", NULL, T0, err, sizeof err), -1);
    assert_non_null(strstr(err, "nodes[0].tests: 65 is over the limit of 64"));
    json_decref(doc);
    json_t *rows = vg_store_burnin(st, NULL, 0);
    assert_int_equal(json_array_size(rows), 0);
    json_decref(rows);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_record_and_history, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_history_pages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retention, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_content, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
