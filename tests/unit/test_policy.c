/* test_policy.c — the controller's policy: verdict → drain/down, ownership,
 * hot spares, the rack/NVLink-domain rule, the blast-radius breaker, the policy
 * file parser; and Slurm host-list expansion. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "controller/policy.h"
#include "util/strutil.h"
#include "util/hostlist.h"

static void test_hostlist(void **state)
{
    (void)state;
    char **v;
    int n = vg_hostlist_expand("n[1-3,7],gpu[08-10],login", &v, 100);
    assert_int_equal(n, 8);
    const char *want[] = { "n1", "n2", "n3", "n7", "gpu08", "gpu09", "gpu10", "login" };
    for (int i = 0; i < n; i++) assert_string_equal(v[i], want[i]);
    char *j = vg_hostlist_join((const char *const *)v, 3);
    assert_string_equal(j, "n1,n2,n3");
    free(j);
    for (int i = 0; i < n; i++) free(v[i]);
    free(v);
    const char *bad[] = { "n 1", "n\x89", "n[1-3", "n1-3]", "n[3-1]", "n[a-b]", "n[1-2][3]", "", "a,,b", "n[1-100000000]" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) assert_int_equal(vg_hostlist_expand(bad[i], &v, 1000), -1);
}

static const char *conf =
    "# test policy\n"
    "down_at = reset-gpu\n"
    "spares = n[9-10]\n"
    "domain rack1 = n[1-4]\n"
    "domain rack2 = n[5-8]\n"
    "domain_max_unavailable = 2\n"
    "breaker = 25% / 600s\n"
    "view_max_age = 1m\n"
    "remediate = nvidia-smi -r -i {gpu}\n";

static struct vg_node_view cluster[10];
static char names[10][8];

static void make_cluster(void)
{
    for (int i = 0; i < 10; i++) {
        snprintf(names[i], sizeof names[i], "n%d", i + 1);
        cluster[i] = (struct vg_node_view){ .name = names[i], .spare = i >= 8 };
    }
}

static struct vg_policy load(const char *text)
{
    struct vg_policy p;
    char err[256];
    vg_policy_defaults(&p);
    assert_int_equal(vg_policy_parse(&p, text, "policy.conf", err, sizeof err), 0);
    return p;
}

static void test_parse(void **state)
{
    (void)state;
    struct vg_policy p = load(conf);
    assert_int_equal(p.nspares, 2);
    assert_string_equal(p.spares[1], "n10");
    assert_string_equal(vg_policy_domain(&p, "n6"), "rack2");
    assert_null(vg_policy_domain(&p, "n9"));
    assert_int_equal(p.breaker_percent, 25);
    assert_int_equal(p.breaker_window_ms, 600000);
    assert_int_equal(p.view_max_age_ms, 60000);
    /* remediate = … is the ladder's rung "remediate" */
    assert_int_equal(p.ladder.nrung, 1);
    assert_string_equal(p.ladder.rung[0].name, "remediate");
    assert_string_equal(p.ladder.rung[0].argv[2], "-i");
    assert_string_equal(p.ladder.rung[0].argv[3], "{gpu}");
    assert_null(p.ladder.rung[0].argv[4]);
    vg_policy_free(&p);
    const char *bad[] = { "down_at = explode\n", "spares = n[1-\n", "\n\nbreaker = lots\n", "frobnicate = 1\n",
                          "domain = n1\n", "domain a = n1\ndomain b = n1\n", "no equals sign\n",
                          "drain_at = reboot\ndown_at = restart-app\n",
                          "repair Reset! = true\n", "repair reset =\n", "ladder = reset\n", "repair a = true\nladder = a b\n",
                          "ladder xid 79 =\n", "repair_timeout = 0\n", "repeat_window = 7 weeks\n", "rma_command = \n",
                          "repair_timeout reboot = 5m\n", "burnin_suite = huge\n", "burnin_gate =\n",
                          "repair_timeout Bad! = 5m\n", "rma_attach = dmesg\n", "rma_attach logs =\n",
                          "view_max_age = 11m\n", "view_max_age = soon\n" };
    const char *where[] = { "policy.conf:1:", "policy.conf:1:", "policy.conf:3:", "policy.conf:1:",
                            "policy.conf:1:", "policy.conf:2:", "policy.conf:1:", "policy.conf: drain_at",
                            "policy.conf:1: repair: 'Reset!'", "policy.conf:1: repair reset: empty",
                            "policy.conf: ladder: 'reset' is not a repair step", "policy.conf: ladder: 'b'",
                            "policy.conf:1: ladder xid 79: no steps", "policy.conf:1: repair_timeout",
                            "policy.conf:1: repeat_window", "policy.conf:1: rma_command",
                            "policy.conf: repair_timeout reboot: no 'repair reboot = COMMAND' line",
                            "policy.conf:1: burnin_suite: 'huge'", "policy.conf:1: burnin_gate: empty",
                            "policy.conf:1: repair_timeout: 'Bad!'", "policy.conf:1: unknown key 'rma_attach'",
                            "policy.conf:1: rma_attach logs: empty command",
                            "policy.conf:1: view_max_age: '11m'", "policy.conf:1: view_max_age: 'soon'" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char err[256] = "";
        vg_policy_defaults(&p);
        assert_int_equal(vg_policy_parse(&p, bad[i], "policy.conf", err, sizeof err), -1);
        assert_non_null(strstr(err, where[i]));
        vg_policy_free(&p);
    }
}

/* The ladder for a cause: its own line, else `ladder =`, else every rung in
 * file order; durations. */
static void test_ladder(void **state)
{
    (void)state;
    struct vg_policy p = load("repair reset = nvidia-smi -r -i {gpu}\nrepair reboot = scontrol reboot {node}\n"
                              "repair power-cycle = ipmitool chassis power cycle\n"
                              "repair_timeout = 10m\nrepeat_window = 3d\nrma_dir = /var/lib/vigil/rma\n");
    const struct vg_rung *r[VG_RUNGS_MAX];
    assert_int_equal(vg_ladder_for(&p.ladder, "xid 79", r), 3);
    assert_string_equal(r[0]->name, "reset");
    assert_string_equal(r[2]->name, "power-cycle");
    assert_int_equal(p.ladder.timeout_ms, 600000);
    assert_int_equal(p.ladder.repeat_window_ms, 3LL * 24 * 3600 * 1000);
    assert_string_equal(p.ladder.rma_dir, "/var/lib/vigil/rma");
    vg_policy_free(&p);
    /* rma_attach: one per name, a later line replaces the command */
    p = load("rma_attach bug-report = srun -w {node} nvidia-bug-report.sh --output-file /dev/stdout\n"
             "rma_attach kmsg = journalctl -k\nrma_attach kmsg = dmesg --node {node}\n");
    assert_int_equal(p.ladder.nattach, 2);
    assert_string_equal(p.ladder.attach[0].name, "bug-report");
    assert_string_equal(p.ladder.attach[0].argv[2], "{node}");
    assert_string_equal(p.ladder.attach[1].argv[0], "dmesg");
    vg_policy_free(&p);
    p = load("ladder xid 79 = reboot power-cycle\nladder = reset reboot\nrepair reset = a\nrepair reboot = b\n"
             "repair power-cycle = c\nrepair reboot = b2 {node}\nrepair_timeout = 90\n");
    assert_int_equal(vg_ladder_for(&p.ladder, "xid 79", r), 2);
    assert_string_equal(r[0]->name, "reboot");
    assert_string_equal(r[0]->argv[0], "b2");   /* a later line replaces the command */
    assert_string_equal(r[1]->name, "power-cycle");
    assert_int_equal(vg_ladder_for(&p.ladder, "xid 48", r), 2);
    assert_string_equal(r[0]->name, "reset");
    assert_int_equal(vg_ladder_for(&p.ladder, "", r), 2);
    assert_int_equal(p.ladder.timeout_ms, 90000);
    vg_policy_free(&p);
    /* a rung's own timeout, before or after its command; the burn-in gate */
    p = load("repair_timeout reboot = 20m\nrepair reboot = b {node}\nrepair reset = a\n"
             "burnin_gate = vigil burnin --node {node} --suite {suite} --json\n");
    assert_int_equal(vg_ladder_for(&p.ladder, "", r), 2);
    assert_string_equal(r[0]->name, "reboot");
    assert_int_equal(r[0]->timeout_ms, 20 * 60000);
    assert_int_equal(r[1]->timeout_ms, 0);   /* the ladder's */
    assert_string_equal(p.ladder.gate[5], "{suite}");
    assert_string_equal(p.ladder.gate_suite, "standard");
    vg_policy_free(&p);
    struct vg_event e;
    vg_event_init(&e);
    char c[64];
    vg_strlcpy(e.kind, "node-silent", sizeof e.kind);
    vg_event_cause_name(&e, c, sizeof c);
    assert_string_equal(c, "node-silent");
    vg_strlcpy(e.kind, "xid", sizeof e.kind);
    e.code = 79;
    vg_event_cause_name(&e, c, sizeof c);
    assert_string_equal(c, "xid 79");
}

static void test_verdict_classes_and_spares(void **state)
{
    (void)state;
    struct vg_policy p = load(conf);
    struct vg_isolation_log log = { 0 };
    struct vg_decision d;
    make_cluster();
    p.breaker_percent = 100;
    vg_policy_decide(&p, cluster, 10, "n2", VG_ACT_IGNORE, "xid 43", 1000, &log, &d);
    assert_int_equal(d.op, VG_OP_RECORD);
    assert_int_equal(d.nisolate, 0);
    vg_decision_free(&d);
    vg_policy_decide(&p, cluster, 10, "n2", VG_ACT_RESTART_APP, "xid 13", 1000, &log, &d);
    assert_int_equal(d.op, VG_OP_DRAIN);
    assert_int_equal(d.nisolate, 1);
    assert_int_equal(d.npromote, 1);
    assert_string_equal(d.promote[0], "n9");
    assert_string_equal(d.reason, "vigil: xid 13");
    vg_decision_free(&d);
    vg_policy_decide(&p, cluster, 10, "n3", VG_ACT_DRAIN_RMA, "xid 79 gpu 2", 1000, &log, &d);
    assert_int_equal(d.op, VG_OP_DOWN);
    assert_string_equal(d.isolate[0], "n3");
    vg_decision_free(&d);
    /* A spare that is itself unavailable is not promoted; the pool runs short. */
    cluster[8].unavailable = true;
    cluster[9].spare = false; /* already promoted */
    vg_policy_decide(&p, cluster, 10, "n6", VG_ACT_REBOOT, "xid 48", 1000, &log, &d);
    assert_int_equal(d.npromote, 0);
    assert_non_null(strstr(d.note, "spare pool short by 1"));
    vg_decision_free(&d);
    vg_isolation_log_free(&log);
    vg_policy_free(&p);
}

static void test_ownership(void **state)
{
    (void)state;
    struct vg_policy p = load(conf);
    struct vg_isolation_log log = { 0 };
    struct vg_decision d;
    make_cluster();
    cluster[1].unavailable = true; /* drained by an administrator */
    vg_policy_decide(&p, cluster, 10, "n2", VG_ACT_DRAIN_RMA, "xid 79", 1000, &log, &d);
    assert_true(d.held);
    assert_int_equal(d.nisolate, 0);
    assert_non_null(strstr(d.note, "did not write"));
    vg_decision_free(&d);
    cluster[1].ours = true; /* drained by vigil earlier: a worse verdict escalates to DOWN */
    vg_policy_decide(&p, cluster, 10, "n2", VG_ACT_DRAIN_RMA, "xid 79", 1000, &log, &d);
    assert_false(d.held);
    assert_int_equal(d.op, VG_OP_DOWN);
    assert_int_equal(d.nisolate, 1);
    assert_int_equal(d.npromote, 0);
    vg_decision_free(&d);
    vg_isolation_log_free(&log);
    vg_policy_free(&p);
}

/* Rack-scale spares: a whole NVLink domain isolated is replaced by a spare
 * domain's worth of nodes from one domain; a single node by a spare of its
 * own domain first. */
static void test_spare_domains(void **state)
{
    (void)state;
    struct vg_policy p = load("domain rack1 = n[1-3]\ndomain rackS = n[4-6]\ndomain rack3 = n[7-8]\n"
                              "domain_max_unavailable = 1\nspares = n8,n4,n5,n6\nbreaker = 100% / 600s\n");
    struct vg_isolation_log log = { 0 };
    struct vg_decision d;
    make_cluster();
    for (int i = 0; i < 10; i++) cluster[i].spare = i >= 3 && i <= 5;   /* n4-n6: a spare domain */
    cluster[7].spare = true;                                              /* n8: a loose spare in rack3 */
    cluster[0].unavailable = cluster[0].ours = true;                      /* n1 out already */
    vg_policy_decide(&p, cluster, 10, "n2", VG_ACT_REBOOT, "xid 79", 1000, &log, &d);
    assert_int_equal(d.nisolate, 2);                                      /* n2 and n3: rack1 taken out */
    assert_int_equal(d.npromote, 2);
    assert_string_equal(d.promote[0], "n4");                              /* rackS, not the loose n8 first */
    assert_string_equal(d.promote[1], "n5");
    assert_non_null(strstr(d.note, "spare domain rackS promoted"));
    vg_decision_free(&d);
    /* no domain holds enough: spares from any, in the pool's order */
    cluster[4].unavailable = cluster[5].unavailable = true;
    vg_policy_decide(&p, cluster, 10, "n2", VG_ACT_REBOOT, "xid 79", 1000, &log, &d);
    assert_int_equal(d.npromote, 2);
    assert_string_equal(d.promote[0], "n8");
    assert_string_equal(d.promote[1], "n4");
    assert_non_null(strstr(d.note, "no spare domain holds 2"));
    vg_decision_free(&d);
    vg_isolation_log_free(&log);
    /* a single node: a spare of its own domain first */
    make_cluster();
    for (int i = 0; i < 10; i++) cluster[i].spare = i == 7 || i == 5;     /* n8 (rack3), n6 (rackS) */
    vg_policy_decide(&p, cluster, 10, "n7", VG_ACT_REBOOT, "xid 79", 1000, &log, &d);
    assert_int_equal(d.nisolate, 1);
    assert_int_equal(d.npromote, 1);
    assert_string_equal(d.promote[0], "n8");
    vg_decision_free(&d);
    vg_policy_decide(&p, cluster, 10, "n2", VG_ACT_REBOOT, "xid 79", 1000, &log, &d);   /* rack1 has none */
    assert_string_equal(d.promote[0], "n8");                              /* none in rack1: the pool's order */
    vg_decision_free(&d);
    vg_isolation_log_free(&log);
    vg_policy_free(&p);
}

static void test_domain_rule(void **state)
{
    (void)state;
    struct vg_policy p = load(conf);
    struct vg_isolation_log log = { 0 };
    struct vg_decision d;
    make_cluster();
    p.breaker_percent = 100;
    cluster[0].unavailable = cluster[0].ours = true;
    cluster[1].unavailable = cluster[1].ours = true;
    /* The third of rack1's four nodes: the whole rack goes. */
    vg_policy_decide(&p, cluster, 10, "n3", VG_ACT_DRAIN_RMA, "xid 79", 1000, &log, &d);
    assert_int_equal(d.nisolate, 2);
    assert_string_equal(d.isolate[0], "n3");
    assert_string_equal(d.isolate[1], "n4");
    assert_non_null(strstr(d.reason, "domain rack1: 3 of 4"));
    assert_int_equal(d.npromote, 2);
    vg_decision_free(&d);
    /* Two of rack2 down is tolerated. */
    cluster[4].unavailable = cluster[4].ours = true;
    vg_policy_decide(&p, cluster, 10, "n6", VG_ACT_DRAIN_RMA, "xid 79", 1000, &log, &d);
    assert_int_equal(d.nisolate, 1);
    vg_decision_free(&d);
    vg_isolation_log_free(&log);
    vg_policy_free(&p);
}

/* Domains the orchestrator reports (a Kubernetes node label) count when the
 * policy names none for the node. */
static void test_domain_from_orchestrator(void **state)
{
    (void)state;
    struct vg_policy p = load("breaker = 100% / 600s\n");
    struct vg_isolation_log log = { 0 };
    struct vg_decision d;
    make_cluster();
    for (int i = 0; i < 4; i++) cluster[i].domain = "clique-a";
    cluster[0].unavailable = cluster[0].ours = true;
    cluster[1].unavailable = cluster[1].ours = true;
    vg_policy_decide(&p, cluster, 10, "n3", VG_ACT_DRAIN_RMA, "xid 79", 1000, &log, &d);
    assert_int_equal(d.nisolate, 2);
    assert_string_equal(d.isolate[1], "n4");
    assert_non_null(strstr(d.reason, "domain clique-a: 3 of 4"));
    vg_decision_free(&d);
    /* without the label, no domain: only the node goes */
    for (int i = 0; i < 4; i++) cluster[i].domain = NULL;
    vg_policy_decide(&p, cluster, 10, "n3", VG_ACT_DRAIN_RMA, "xid 79", 1000, &log, &d);
    assert_int_equal(d.nisolate, 1);
    vg_decision_free(&d);
    vg_isolation_log_free(&log);
    vg_policy_free(&p);
}

/* Domains the nodes' agents report (their GPUs' fabric, domains.h) count
 * when neither the policy nor the orchestrator names one; an orchestrator's
 * label and a policy line stay overrides; a spare domain reported the same
 * way is promoted whole. */
static void test_domain_learned(void **state)
{
    (void)state;
    struct vg_policy p = load("breaker = 100% / 600s\nspares = n[5-8]\n");
    struct vg_domains *dom = vg_domains_new();
    p.learned = dom;
    for (int i = 1; i <= 4; i++) {
        char n[8];
        snprintf(n, sizeof n, "n%d", i);
        assert_int_equal(vg_domains_learn(dom, n, "3d5e9c1a-7b20-4f1e-9a4c-55d1e2f0a7b3/1"), 1);
    }
    for (int i = 5; i <= 8; i++) {
        char n[8];
        snprintf(n, sizeof n, "n%d", i);
        vg_domains_learn(dom, n, "3d5e9c1a-7b20-4f1e-9a4c-55d1e2f0a7b3/2");
    }
    assert_int_equal(vg_domains_learn(dom, "n1", "3d5e9c1a-7b20-4f1e-9a4c-55d1e2f0a7b3/1"), 0);   /* no change */
    struct vg_isolation_log log = { 0 };
    struct vg_decision d;
    make_cluster();
    for (int i = 4; i < 8; i++) cluster[i].spare = true;
    cluster[0].unavailable = cluster[0].ours = true;
    cluster[1].unavailable = cluster[1].ours = true;
    vg_policy_decide(&p, cluster, 10, "n3", VG_ACT_DRAIN_RMA, "nic-hung", 1000, &log, &d);
    assert_int_equal(d.nisolate, 2);
    assert_string_equal(d.isolate[1], "n4");
    assert_non_null(strstr(d.reason, "domain 3d5e9c1a-7b20-4f1e-9a4c-55d1e2f0a7b3/1: 3 of 4"));
    assert_int_equal(d.npromote, 2);
    assert_non_null(strstr(d.note, "spare domain 3d5e9c1a-7b20-4f1e-9a4c-55d1e2f0a7b3/2 promoted"));
    vg_decision_free(&d);
    /* the orchestrator's label wins over the reported domain */
    for (int i = 0; i < 10; i++) cluster[i].domain = i == 2 ? "label-x" : NULL;
    vg_policy_decide(&p, cluster, 10, "n3", VG_ACT_DRAIN_RMA, "nic-hung", 1000, &log, &d);
    assert_int_equal(d.nisolate, 1);
    vg_decision_free(&d);
    assert_string_equal(vg_policy_node_domain(&p, "n2"), "3d5e9c1a-7b20-4f1e-9a4c-55d1e2f0a7b3/1");
    assert_null(vg_policy_node_domain(&p, "n9"));
    vg_isolation_log_free(&log);
    vg_policy_free(&p);
    /* a policy line wins too */
    p = load("domain racka = n[1-2]\n");
    p.learned = dom;
    assert_string_equal(vg_policy_node_domain(&p, "n2"), "racka");
    vg_policy_free(&p);
    vg_domains_free(dom);
    assert_true(vg_domain_name_ok("3d5e9c1a-7b20-4f1e-9a4c-55d1e2f0a7b3/32766"));
    assert_false(vg_domain_name_ok(""));
    assert_false(vg_domain_name_ok("a b"));
    assert_false(vg_domain_name_ok("<script>"));
    char big[80];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    assert_false(vg_domain_name_ok(big));
}

static void test_breaker(void **state)
{
    (void)state;
    struct vg_policy p = load(conf); /* 25% of 10 nodes = 2 per 600 s */
    struct vg_isolation_log log = { 0 };
    struct vg_decision d;
    make_cluster();
    int isolated = 0, held = 0;
    for (int i = 0; i < 8; i++) {
        vg_policy_decide(&p, cluster, 10, names[i], VG_ACT_DRAIN_RMA, "xid 79", 1000 + i, &log, &d);
        if (d.held) held++;
        else {
            isolated += (int)d.nisolate;
            for (size_t k = 0; k < d.nisolate; k++)
                for (int c = 0; c < 10; c++)
                    if (!strcmp(cluster[c].name, d.isolate[k])) cluster[c].unavailable = cluster[c].ours = true;
        }
        vg_decision_free(&d);
    }
    assert_int_equal(isolated, 2);
    assert_int_equal(held, 6);
    /* A node that came back no longer counts: one more may go within the window. */
    cluster[0].unavailable = cluster[0].ours = false;
    vg_policy_decide(&p, cluster, 10, "n7", VG_ACT_DRAIN_RMA, "xid 79", 2000, &log, &d);
    assert_false(d.held);
    cluster[6].unavailable = cluster[6].ours = true;
    vg_decision_free(&d);
    vg_policy_decide(&p, cluster, 10, "n6", VG_ACT_DRAIN_RMA, "xid 79", 2001, &log, &d);
    assert_true(d.held);
    vg_decision_free(&d);
    /* After the window the breaker lets the next one through. */
    vg_policy_decide(&p, cluster, 10, "n8", VG_ACT_DRAIN_RMA, "xid 79", 1000 + 601000, &log, &d);
    assert_false(d.held);
    vg_decision_free(&d);
    vg_isolation_log_free(&log);
    vg_policy_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hostlist),          cmocka_unit_test(test_parse), cmocka_unit_test(test_ladder),
        cmocka_unit_test(test_verdict_classes_and_spares), cmocka_unit_test(test_ownership),
        cmocka_unit_test(test_domain_rule), cmocka_unit_test(test_spare_domains),       cmocka_unit_test(test_domain_from_orchestrator), cmocka_unit_test(test_domain_learned), cmocka_unit_test(test_breaker),
    };
    return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
