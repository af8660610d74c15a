/* test_accounting.c — the reliability figures on a known history: four
 * nodes of one rack over ten hours, two overlapping repairs, one fault only
 * recorded, one outage still open at the end of the window, and a second
 * outage of a node inside its first (counted once). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "controller/accounting.h"
#include "util/jsonutil.h"
#include "util/strutil.h"

#define H (3600LL * 1000)

static json_t *inc(const char *node, const char *kind, int code, int64_t detected, int64_t isolated, int64_t returned)
{
    json_t *steps = json_object();
    json_object_set_new(steps, "detected", json_pack("{s:o}", "at", vg_json_time(detected)));
    if (isolated) json_object_set_new(steps, "isolated", json_pack("{s:o}", "at", vg_json_time(isolated)));
    if (returned) json_object_set_new(steps, "returned", json_pack("{s:o}", "at", vg_json_time(returned)));
    json_t *j = json_pack("{s:s, s:s, s:o}", "node", node, "kind", kind, "steps", steps);
    json_object_set_new(j, "code", code >= 0 ? json_integer(code) : json_null());
    return j;
}

static double num(const json_t *j, const char *k) { return json_number_value(json_object_get(j, k)); }

static void test_known_history(void **state)
{
    (void)state;
    int64_t t0 = 1764547200000LL;   /* 2025-12-01T00:00:00Z */
    json_t *incs = json_array();
    json_array_append_new(incs, inc("n1", "xid", 79, t0 + 1 * H, t0 + 1 * H, t0 + 3 * H));
    json_array_append_new(incs, inc("n2", "xid", 79, t0 + 2 * H, t0 + 2 * H, t0 + 4 * H));
    json_array_append_new(incs, inc("n1", "xid", 94, t0 + 2 * H, t0 + 2 * H, t0 + 2 * H + H / 2));  /* inside n1's first */
    json_array_append_new(incs, inc("n1", "xid", 48, t0 + 5 * H, 0, 0));                            /* recorded only */
    json_array_append_new(incs, inc("n3", "node-silent", -1, t0 + 8 * H, t0 + 8 * H, 0));           /* still out */
    json_array_append_new(incs, inc("n4", "xid", 79, t0 + 11 * H, t0 + 11 * H, 0));                 /* after the window */
    struct vg_policy p;
    vg_policy_defaults(&p);
    char err[256];
    assert_int_equal(vg_policy_parse(&p, "domain rack1 = n[1-4]\ndomain_max_unavailable = 1\n", "t", err, sizeof err), 0);
    struct vg_acct_opts o = { .since_ms = t0, .until_ms = t0 + 10 * H, .nodes = 4, .policy = &p };
    json_t *a = vg_accounting(incs, &o);
    assert_int_equal(vg_json_int(a, "incidents", 0), 5);
    assert_int_equal(vg_json_int(a, "interruptions", 0), 4);
    /* out: n1 1h–3h, n2 2h–4h, n3 8h–10h = 6 node-hours of 40 */
    assert_true(fabs(num(a, "node_hours_lost") - 6.0) < 1e-9);
    assert_true(fabs(num(a, "availability") - 0.85) < 1e-9);
    /* repairs that finished: 2 h, 2 h, 0.5 h */
    assert_true(fabs(num(a, "mttr_s") - 5400.0) < 1e-6);
    assert_true(fabs(num(a, "mtbi_s") - 4.0 * 10 * 3600 / 4) < 1e-6);
    const json_t *c0 = json_array_get(json_object_get(a, "causes"), 0);
    assert_string_equal(vg_json_str(c0, "cause", ""), "xid 79");
    assert_int_equal(vg_json_int(c0, "count", 0), 2);
    assert_int_equal(json_array_size(json_object_get(a, "causes")), 4);
    const json_t *r = json_array_get(json_object_get(a, "racks"), 0);
    assert_string_equal(vg_json_str(r, "rack", ""), "rack1");
    assert_true(fabs(num(r, "availability") - 0.85) < 1e-9);
    assert_true(fabs(num(r, "sla_down_s") - 3600.0) < 1e-6);   /* 2h–3h: two of four out, more than one */
    json_decref(a);
    /* nothing repaired, nothing isolated: figures that cannot be known are null */
    json_t *none = json_array();
    json_array_append_new(none, inc("n1", "xid", 48, t0 + H, 0, 0));
    a = vg_accounting(none, &o);
    assert_true(json_is_null(json_object_get(a, "mttr_s")));
    assert_true(json_is_null(json_object_get(a, "mtbi_s")));
    assert_true(fabs(num(a, "availability") - 1.0) < 1e-12);
    json_decref(a);
    json_decref(none);
    json_decref(incs);
    vg_policy_free(&p);
}

/* A rack whose domain its nodes reported (no policy line): its
 * availability and SLA time as for a configured one. */
static void test_learned_rack(void **state)
{
    (void)state;
    int64_t t0 = 1764547200000LL;
    json_t *incs = json_array();
    for (int i = 1; i <= 3; i++) {   /* three of the rack's nodes out 1h-2h: more than 2 for an hour */
        char n[8];
        snprintf(n, sizeof n, "n%d", i);
        json_array_append_new(incs, inc(n, "nic-hung", 1, t0 + 1 * H, t0 + 1 * H, t0 + 2 * H));
    }
    struct vg_policy p;
    vg_policy_defaults(&p);
    struct vg_domains *dom = vg_domains_new();
    for (int i = 1; i <= 18; i++) {
        char n[8];
        snprintf(n, sizeof n, "n%d", i);
        vg_domains_learn(dom, n, "nvl72-a/1");
    }
    p.learned = dom;
    struct vg_acct_opts o = { .since_ms = t0, .until_ms = t0 + 10 * H, .nodes = 18, .policy = &p };
    json_t *a = vg_accounting(incs, &o);
    const json_t *r = json_array_get(json_object_get(a, "racks"), 0);
    assert_int_equal(json_array_size(json_object_get(a, "racks")), 1);
    assert_string_equal(vg_json_str(r, "rack", ""), "nvl72-a/1");
    assert_int_equal(vg_json_int(r, "nodes", 0), 18);
    assert_true(fabs(num(r, "sla_down_s") - 3600.0) < 1e-6);
    assert_true(fabs(num(r, "availability") - (1.0 - 3.0 / 180.0)) < 1e-9);
    json_decref(a);
    json_decref(incs);
    vg_domains_free(dom);
    vg_policy_free(&p);
}

/* The window starts at the controller's first record (nothing was watched
 * before it); rates over less than an hour, or over a fleet of unknown size,
 * are not stated but say why; the fleet is never the nodes that had incidents. */
static void test_window_and_fleet(void **state)
{
    (void)state;
    int64_t until = 1764547200000LL + 30 * 24 * H;
    json_t *incs = json_array();
    json_array_append_new(incs, inc("n3", "xid", 79, until - H, until - H, until - H + 6 * 60000));   /* 6 min out */
    /* a 5-node fleet whose controller started 2 h ago, asked for the last 30 days */
    struct vg_acct_opts o = { .since_ms = until - 30 * 24 * H, .until_ms = until, .first_ms = until - 2 * H, .nodes = 5 };
    json_t *a = vg_accounting(incs, &o);
    const json_t *w = json_object_get(a, "window");
    assert_string_equal(vg_json_str(w, "since", ""), vg_json_str(w, "history_since", "-"));
    assert_true(fabs(num(w, "s") - 7200.0) < 1e-9);
    assert_true(fabs(num(a, "availability") - (1.0 - 0.1 / 10.0)) < 1e-9);   /* 0.1 of 10 node-hours */
    assert_true(fabs(num(a, "mtbi_s") - 5 * 7200.0) < 1e-6);
    assert_int_equal(vg_json_int(a, "nodes", 0), 5);
    json_decref(a);
    /* a minute after the first record: not enough history, said, not a number */
    o.first_ms = until - 60000;
    json_decref(incs);
    incs = json_array();
    json_array_append_new(incs, inc("n3", "xid", 79, until - 30000, until - 30000, 0));
    a = vg_accounting(incs, &o);
    assert_true(json_is_null(json_object_get(a, "availability")));
    assert_true(json_is_null(json_object_get(a, "mtbi_s")));
    assert_string_equal(vg_json_str(json_object_get(a, "unmeasured"), "mtbi_s", ""),
                        "not enough history: 1 min in the window, at least 1.0 h needed");
    assert_string_equal(vg_json_str(json_object_get(a, "unmeasured"), "availability", ""),
                        "not enough history: 1 min in the window, at least 1.0 h needed");
    json_decref(a);
    /* no fleet size: unknown, not the one node that had an incident */
    o.first_ms = until - 2 * H;
    o.nodes = 0;
    a = vg_accounting(incs, &o);
    assert_true(json_is_null(json_object_get(a, "nodes")));
    assert_true(json_is_null(json_object_get(a, "availability")));
    assert_true(vg_startswith(vg_json_str(json_object_get(a, "unmeasured"), "availability", ""),
                              "the fleet size is unknown"));
    json_decref(a);
    json_decref(incs);
}

static void step(json_t *i, const char *name, const char *detail)
{
    json_object_set_new(json_object_get(i, "steps"), name, json_pack("{s:o, s:s}", "at", vg_json_time(1), "detail", detail));
}

/* The repair ladder's outcomes per rung: tried, failed, returned the node;
 * and the hand-offs for RMA. */
static void test_ladder_outcomes(void **state)
{
    (void)state;
    int64_t t0 = 1764547200000LL;
    json_t *incs = json_array(), *a = inc("n1", "xid", 79, t0 + H, t0 + H, t0 + 2 * H),
           *b = inc("n2", "xid", 48, t0 + H, t0 + H, 0);
    step(a, "repair reset", "nvidia-smi: failed: GPU is busy");
    step(a, "repair reboot", "scontrol: ok");
    step(a, "health check after reboot", "vigil: ok");
    step(b, "repair reset", "nvidia-smi: ok");
    step(b, "health check after reset", "vigil: failed: gpu 0 missing");
    step(b, "repair reboot", "scontrol: timed out");
    step(b, "rma", "/var/lib/vigil/rma/vigil-rma-2.json");
    json_array_append_new(incs, a);
    json_array_append_new(incs, b);
    struct vg_acct_opts o = { .since_ms = t0, .until_ms = t0 + 10 * H, .nodes = 2 };
    json_t *r = vg_accounting(incs, &o);
    const json_t *rl = json_object_get(r, "repairs");
    assert_int_equal(json_array_size(rl), 2);
    for (size_t i = 0; i < 2; i++) {
        const json_t *x = json_array_get(rl, i);
        bool reset = !strcmp(vg_json_str(x, "step", ""), "reset");
        assert_int_equal(vg_json_int(x, "tried", -1), 2);
        assert_int_equal(vg_json_int(x, "failed", -1), 1);
        assert_int_equal(vg_json_int(x, "returned", -1), reset ? 0 : 1);
    }
    assert_int_equal(vg_json_int(r, "rma_handoffs", -1), 1);
    json_decref(r);
    json_decref(incs);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_known_history), cmocka_unit_test(test_learned_rack), cmocka_unit_test(test_window_and_fleet), cmocka_unit_test(test_ladder_outcomes) };
    return cmocka_run_group_tests_name("accounting", tests, NULL, NULL);
}
