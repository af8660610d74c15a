/* test_executor.c — the controller's executor decided and applied against
 * the in-memory orchestrator (helpers/fake_orch.c) and a real SQLite store,
 * in milliseconds: DOWN + requeue + spare promotion, drain, record-only
 * incidents that never touch the scheduler, ownership, the breaker, the
 * domain rule, a scheduler that is down (failed, retried, then isolated),
 * restart recovery of failed incidents, repair and return, the repair ladder
 * (climbing, escalation on a repeat, a cause's own ladder, the RMA ticket)
 * and its counters and histograms in /metrics, a bounded stop, and the fleet
 * as the dashboard shows it (fleetview.h: each node's domain and state;
 * `returned` for a day after a repair, or until the node's next incident),
 * the burn-in gate and the new-node gate.  The fault paths of a ladder: a BMC that refuses or never answers (`vigil
 * bmc --ipmi` against the ipmitool stand-in), a reboot that never comes
 * back, a ticket hook that fails or is missing, and the ticket's
 * attachments (rma_attach) that fail, time out or are cut at 1 MiB. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "controller/executor.h"
#include "controller/fleetview.h"
#include "helpers/fake_orch.h"
#include "util/jsonutil.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include "util/timeutil.h"

struct fx {
    char db[64];
    struct vg_store *st, *in;   /* the executor's connection, the intake's */
    struct vg_policy p;
    struct vg_orch *o;
    struct vg_executor *x;
    int64_t seq;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    snprintf(f->db, sizeof f->db, "/tmp/vigil-exec-XXXXXX");
    int fd = mkstemp(f->db);
    close(fd);
    char err[256];
    assert_int_equal(vg_store_open(f->db, &f->st, err, sizeof err), 0);
    assert_int_equal(vg_store_open(f->db, &f->in, err, sizeof err), 0);
    vg_policy_defaults(&f->p);
    fake_reset();
    for (int i = 1; i <= 8; i++) {
        char n[8];
        snprintf(n, sizeof n, "n%d", i);
        fake_add_node(n, i == 8 ? "spare" : "");
    }
    f->o = vg_orch_open_ops(&fake_orch_ops, NULL, err, sizeof err);
    assert_non_null(f->o);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    vg_executor_stop(f->x);
    vg_orch_close(f->o);
    vg_store_close(f->st);
    vg_store_close(f->in);
    vg_policy_free(&f->p);
    unlink(f->db);
    char side[80];
    snprintf(side, sizeof side, "%s-wal", f->db);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", f->db);
    unlink(side);
    free(f);
    return 0;
}

static void policy(struct fx *f, const char *text)
{
    char err[256];
    if (vg_policy_parse(&f->p, text, "test", err, sizeof err)) fail_msg("%s", err);
}

static void start(struct fx *f, bool act) { f->x = vg_executor_start(f->st, &f->p, f->o, act, NULL); }

/* An incident from node's agent, which saw jobs there, accepted at `at`:
 * stored, then handed to the executor. */
static int64_t incident_at(struct fx *f, const char *node, const char *kind, int code, enum vg_action a,
                           const char *jobs, int64_t at)
{
    struct vg_event e;
    vg_event_init(&e);
    vg_strlcpy(e.jobs, jobs, sizeof e.jobs);
    vg_strlcpy(e.node, node, sizeof e.node);
    vg_strlcpy(e.kind, kind, sizeof e.kind);
    vg_strlcpy(e.source, "kmsg", sizeof e.source);
    e.code = code;
    e.gpu = 2;
    e.action = a;
    e.time_ms = e.seen_ms = e.first_ms = e.last_ms = vg_now_ms();
    int64_t id;
    bool is_new, dup;
    /* as the intake does: a write transaction taken up front (BEGIN IMMEDIATE) */
    assert_int_equal(vg_store_begin(f->in), 0);
    assert_int_equal(vg_store_accept(f->in, node, "", ++f->seq, 0, &e, at, 60000, &id, &is_new, &dup), 0);
    assert_int_equal(vg_store_commit(f->in), 0);
    assert_true(is_new);
    if (f->x) vg_executor_submit(f->x, id, &e);
    return id;
}

static int64_t incident_jobs(struct fx *f, const char *node, const char *kind, int code, enum vg_action a,
                             const char *jobs)
{
    return incident_at(f, node, kind, code, a, jobs, vg_now_ms());
}

static int64_t incident(struct fx *f, const char *node, const char *kind, int code, enum vg_action a)
{
    return incident_jobs(f, node, kind, code, a, "");
}

/* The incident's state and its detail, "STATE: DETAIL" ("STATE" without one); malloc'd. */
static char *state_of(struct fx *f, int64_t id)
{
    json_t *inc = vg_store_incident(f->st, id);
    const char *st = vg_json_str(inc, "state", ""), *detail = vg_json_str(inc, "detail", "");
    char *s;
    if (asprintf(&s, "%s%s%s", st, *detail ? ": " : "", detail) < 0) s = NULL;
    json_decref(inc);
    return s;
}

/* The detail of the incident's step, "" when not taken; malloc'd. */
static char *step_detail(struct fx *f, int64_t id, const char *step)
{
    json_t *inc = vg_store_incident(f->st, id);
    char *s = vg_xstrdup(vg_json_str(json_object_get(json_object_get(inc, "steps"), step), "detail", ""));
    json_decref(inc);
    return s;
}

static bool has_step(struct fx *f, int64_t id, const char *step)
{
    json_t *inc = vg_store_incident(f->st, id);
    bool yes = json_is_object(json_object_get(json_object_get(inc, "steps"), step));   /* null: not taken */
    json_decref(inc);
    return yes;
}

/* Whether the executor's /metrics lines hold line (a whole line). */
static bool metric_line(struct fx *f, const char *line)
{
    struct sbuf m = SBUF_INIT;
    vg_executor_metrics(f->x, &m);
    char want[256];
    snprintf(want, sizeof want, "\n%s\n", line);
    bool yes = strstr(m.s, want) != NULL;
    if (!yes) print_message("no line '%s' in:\n%s", line, m.s);
    sbuf_free(&m);
    return yes;
}

/* The value of a metric line that starts with prefix; -1 when none. */
static double metric_value(struct fx *f, const char *prefix)
{
    struct sbuf m = SBUF_INIT;
    vg_executor_metrics(f->x, &m);
    char want[256];
    snprintf(want, sizeof want, "\n%s ", prefix);
    const char *at = strstr(m.s, want);
    double v = at ? atof(at + strlen(want)) : -1;
    sbuf_free(&m);
    return v;
}

static void assert_state_prefix(struct fx *f, int64_t id, const char *prefix)
{
    char *s = state_of(f, id);
    if (!vg_startswith(s, prefix)) fail_msg("incident %lld: state '%s', expected '%s…'", (long long)id, s, prefix);
    free(s);
}

static void test_down_requeue_promote(void **state)
{
    struct fx *f = *state;
    policy(f, "spares = n8\n");
    fake_add_job("7", "n2");
    start(f, true);
    assert_true(vg_executor_idle(f->x, 2000));
    int64_t id = incident(f, "n2", "xid", 79, VG_ACT_REBOOT);
    assert_true(vg_executor_idle(f->x, 5000));
    assert_true(fake_node("n2")->down);
    assert_true(vg_startswith(fake_node("n2")->reason, "vigil: xid 79 gpu 2"));
    assert_int_equal(fake.jobs[0].restarts, 1);
    /* DOWN before requeue (the scheduler neither restarts the job there nor waits on a node that
     * may not answer), then the spare leaves the pool */
    const char *rq = strstr(fake.log, "requeue 7;"), *dn = strstr(fake.log, "down n2;");
    assert_non_null(rq);
    assert_non_null(dn);
    assert_true(dn < rq);
    assert_int_equal(fake.npool, 0);
    assert_state_prefix(f, id, "isolated");
    assert_true(has_step(f, id, "isolated"));
    assert_true(has_step(f, id, "jobs_requeued"));
    assert_true(has_step(f, id, "spare_promoted"));
    assert_true(metric_line(f, "vigil_fault_to_requeued_seconds_count 1"));
    assert_true(metric_line(f, "vigil_fault_to_isolated_seconds_count 1"));
}

/* Slurm's DOWN requeues the node's running jobs itself: the node goes out
 * first, the jobs still listed after it (one that ended FAILED a moment
 * before) are requeued, and those the agent saw there that the scheduler
 * shows requeued are named as requeued by the DOWN (not one that ended). */
static void test_down_requeues_lists_after(void **state)
{
    struct fx *f = *state;
    char err[256];
    vg_orch_close(f->o);
    f->o = vg_orch_open_ops(&fake_slurm_orch_ops, NULL, err, sizeof err);
    assert_non_null(f->o);
    policy(f, "spares = n8\nbreaker = 100% / 600s\n");
    fake_add_job("7", "n2");
    fake_add_job("8", "n2");
    fake_add_job("9", "n2");
    fake.jobs[1].running = false, fake.jobs[1].failed = true;   /* the fault killed its batch script */
    fake.jobs[2].running = false;                                /* ended well since the agent listed it */
    start(f, true);
    assert_true(vg_executor_idle(f->x, 2000));
    int64_t id = incident_jobs(f, "n2", "xid", 79, VG_ACT_REBOOT, "7,8,9");
    assert_true(vg_executor_idle(f->x, 5000));
    assert_true(fake_node("n2")->down);
    assert_int_equal(fake.jobs[0].restarts, 1);
    assert_int_equal(fake.jobs[1].restarts, 1);
    assert_null(strstr(fake.log, "requeue 7;"));   /* the DOWN did it: no second call */
    const char *dn = strstr(fake.log, "down n2;"), *rq = strstr(fake.log, "requeue 8;");
    assert_non_null(dn);
    assert_non_null(rq);
    assert_true(dn < rq);
    char *d = step_detail(f, id, "jobs_requeued");
    assert_string_equal(d, "8; 7: requeued by the DOWN");   /* 9 ended: not named */
    assert_int_equal(fake.jobs[2].restarts, 0);
    free(d);
    assert_true(has_step(f, id, "spare_promoted"));
    assert_true(metric_line(f, "vigil_fault_to_requeued_seconds_count 1"));
    /* a node whose agent named no job and that holds none: nothing said about jobs */
    int64_t quiet = incident(f, "n3", "xid", 79, VG_ACT_REBOOT);
    assert_true(vg_executor_idle(f->x, 5000));
    assert_true(fake_node("n3")->down);
    assert_false(has_step(f, quiet, "jobs_requeued"));
}

/* The scheduler goes away between the DOWN and the job read that follows it:
 * the node stays out, the incident is isolated (isolation is what must hold)
 * and the steps after the read (the spare) still run; the read alone is tried
 * again, with the time the node went out, until the scheduler answers, and
 * the job that ended on the node a moment before is requeued then. */
static void test_down_then_jobs_read_fails(void **state)
{
    struct fx *f = *state;
    char err[256];
    vg_orch_close(f->o);
    f->o = vg_orch_open_ops(&fake_slurm_orch_ops, NULL, err, sizeof err);
    assert_non_null(f->o);
    policy(f, "spares = n8\nbreaker = 100% / 600s\n");
    fake_add_job("8", "n2");
    fake.jobs[0].running = false, fake.jobs[0].failed = true;
    start(f, true);
    assert_true(vg_executor_idle(f->x, 2000));
    fake.fail_jobs_on = 2;   /* the first read and its first retry */
    int64_t t0 = vg_now_ms();
    int64_t id = incident_jobs(f, "n2", "xid", 79, VG_ACT_REBOOT, "8");
    for (int64_t end = vg_mono_ms() + 5000; !has_step(f, id, "jobs unread") && vg_mono_ms() < end;) vg_sleep_ms(5);
    assert_true(has_step(f, id, "jobs unread"));
    assert_true(fake_node("n2")->down);
    assert_int_equal(fake.jobs[0].restarts, 0);   /* not yet: the scheduler is away */
    assert_true(vg_executor_idle(f->x, 10000));   /* 1 s, then 2 s later */
    assert_state_prefix(f, id, "isolated");
    assert_true(has_step(f, id, "spare_promoted"));   /* the steps after the read ran at once */
    assert_true(has_step(f, id, "jobs_requeued"));
    assert_int_equal(fake.jobs[0].restarts, 1);
    assert_non_null(strstr(fake.log, "requeue 8;"));
    /* the read that found it looked from when the node went out, not from when it ran */
    assert_true(fake.jobs_out_ms >= t0 && fake.jobs_out_ms < vg_now_ms() - 2500);
    char *first = strstr(fake.log, "down n2;");
    assert_non_null(first);
    assert_null(strstr(first + 1, "down n2;"));   /* the node was taken out once, not again per retry */
    assert_true(metric_line(f, "vigil_action_retries_total 2"));
    /* a node with nothing on it: the read that answers late says so */
    fake.fail_jobs_on = 1;
    int64_t empty = incident(f, "n3", "xid", 79, VG_ACT_REBOOT);
    assert_true(vg_executor_idle(f->x, 10000));
    assert_true(has_step(f, empty, "jobs unread"));
    assert_true(has_step(f, empty, "jobs read"));
    assert_false(has_step(f, empty, "jobs_requeued"));
}

static void test_drain_and_record_only(void **state)
{
    struct fx *f = *state;
    fake_add_job("9", "n3");
    start(f, true);
    assert_true(vg_executor_idle(f->x, 2000));
    unsigned reads = fake.node_reads;
    int64_t rec = incident(f, "n1", "xid", 43, VG_ACT_IGNORE);
    assert_true(vg_executor_idle(f->x, 5000));
    assert_state_prefix(f, rec, "recorded");
    assert_int_equal(fake.node_reads, reads);   /* a record never asks the scheduler */
    int64_t dr = incident(f, "n3", "xid", 13, VG_ACT_RESTART_APP);
    assert_true(vg_executor_idle(f->x, 5000));
    assert_true(fake_node("n3")->drain);
    assert_false(fake_node("n3")->down);
    assert_int_equal(fake.jobs[0].restarts, 0);  /* a drain lets the job finish */
    assert_state_prefix(f, dr, "isolated");
}

static void test_ownership_and_breaker(void **state)
{
    struct fx *f = *state;
    policy(f, "breaker = 20% / 600s\n");   /* 1 of 8 nodes */
    struct vg_orch_node *n3 = fake_node("n3");
    n3->drain = true;
    strcpy(n3->reason, "bad DIMM, ticket 4711");
    start(f, true);
    int64_t mine = incident(f, "n3", "xid", 79, VG_ACT_REBOOT);
    assert_true(vg_executor_idle(f->x, 5000));
    assert_state_prefix(f, mine, "held: left alone");
    assert_string_equal(n3->reason, "bad DIMM, ticket 4711");
    assert_false(n3->down);
    int64_t a = incident(f, "n1", "xid", 79, VG_ACT_REBOOT);
    int64_t b = incident(f, "n2", "xid", 79, VG_ACT_REBOOT);
    assert_true(vg_executor_idle(f->x, 5000));
    assert_state_prefix(f, a, "isolated");
    assert_state_prefix(f, b, "held: breaker");
    assert_false(fake_node("n2")->down);
}

/* By default each batch reads the cluster: a node an administrator drained a
 * moment ago (after the controller started) is left alone. */
static void test_fresh_view_sees_a_new_drain(void **state)
{
    struct fx *f = *state;
    start(f, true);
    assert_true(vg_executor_idle(f->x, 2000));
    struct vg_orch_node *n3 = fake_node("n3");
    n3->drain = true;
    strcpy(n3->reason, "bad DIMM, ticket 4712");
    int64_t id = incident(f, "n3", "xid", 79, VG_ACT_REBOOT);
    assert_true(vg_executor_idle(f->x, 5000));
    assert_state_prefix(f, id, "held: left alone");
    assert_string_equal(n3->reason, "bad DIMM, ticket 4712");
}

/* view_max_age: an incident reads no node list; the worker keeps a view of
 * the cluster (read at start, then periodically), and later decisions see in
 * it the nodes vigil itself took out -- here the breaker counts the first
 * isolation when the second incident comes in another batch. */
static void test_incidents_use_the_kept_view(void **state)
{
    struct fx *f = *state;
    policy(f, "breaker = 20% / 600s\nview_max_age = 30s\n");   /* 1 of 8 nodes */
    fake_add_job("7", "n2");
    start(f, true);
    assert_true(vg_executor_idle(f->x, 2000));
    unsigned reads = fake.node_reads;
    const char *periodic = "vigil_orchestrator_reconcile_calls_total{orchestrator=\"fake\"}";
    double p0 = metric_value(f, periodic);
    int64_t a = incident(f, "n2", "xid", 79, VG_ACT_REBOOT);
    assert_true(vg_executor_idle(f->x, 5000));
    int64_t b = incident(f, "n1", "xid", 79, VG_ACT_REBOOT);
    assert_true(vg_executor_idle(f->x, 5000));
    assert_state_prefix(f, a, "isolated");
    assert_state_prefix(f, b, "held: breaker");
    /* the only reads were periodic ones (reconcile, every 2 s while n2 is out) */
    assert_int_equal(fake.node_reads - reads, (unsigned)(metric_value(f, periodic) - p0));
    assert_true(strstr(fake.log, "requeue 7;") != NULL);
}

/* A correlated failure in a fleet: 15% of 1,000 nodes report a fault within a
 * minute (a bad driver roll-out, a PDU).  The breaker (10% / 600 s) isolates
 * up to its cap and holds the rest, each held incident counted. */
static void test_fleet_breaker(void **state)
{
    struct fx *f = *state;
    for (int i = 9; i <= 1000; i++) {
        char n[8];
        snprintf(n, sizeof n, "n%d", i);
        fake_add_node(n, "");
    }
    policy(f, "breaker = 10% / 600s\n");
    start(f, true);
    int64_t ids[150];
    for (int i = 0; i < 150; i++) {
        char n[8];
        snprintf(n, sizeof n, "n%d", 100 + i);
        ids[i] = incident(f, n, "xid", 79, VG_ACT_REBOOT);
    }
    assert_true(vg_executor_idle(f->x, 60000));
    int down = 0, held = 0;
    for (int i = 0; i < 150; i++) {
        char n[8];
        snprintf(n, sizeof n, "n%d", 100 + i);
        down += fake_node(n)->down;
        char *s = state_of(f, ids[i]);
        held += vg_startswith(s, "held: breaker");
        free(s);
    }
    assert_int_equal(down, 100);   /* 10% of 1,000 */
    assert_int_equal(held, 50);
    struct sbuf m = SBUF_INIT;
    vg_executor_metrics(f->x, &m);
    assert_non_null(strstr(m.s, "vigil_breaker_holds_total 50\n"));
    sbuf_free(&m);
}

static void test_domain_rule(void **state)
{
    struct fx *f = *state;
    policy(f, "domain rack1 = n[1-4]\ndomain_max_unavailable = 1\nbreaker = 100% / 600s\n");
    fake_node("n1")->drain = true;
    strcpy(fake_node("n1")->reason, "vigil: earlier");
    start(f, true);
    int64_t id = incident(f, "n2", "xid", 79, VG_ACT_REBOOT);
    assert_true(vg_executor_idle(f->x, 5000));
    for (int i = 2; i <= 4; i++) {
        char n[8];
        snprintf(n, sizeof n, "n%d", i);
        assert_true(fake_node(n)->down);
    }
    assert_false(fake_node("n5")->down);
    assert_state_prefix(f, id, "isolated: domain rule");
}

/* A rack-level fault: three trays of a 4-tray domain report in one batch.  The
 * first two each take a spare, the third takes the domain out and a spare
 * domain: the two spares left, not one promoted by an earlier decision of the
 * same batch again (every spare of the pool promoted once). */
static void test_one_batch_promotes_each_spare_once(void **state)
{
    struct fx *f = *state;
    for (int i = 5; i <= 7; i++) {
        char n[8];
        snprintf(n, sizeof n, "n%d", i);
        strcpy(fake_node(n)->features, "spare");
    }
    policy(f, "spares = n[5-8]\ndomain rack1 = n[1-4]\ndomain rack2 = n[5-8]\ndomain_max_unavailable = 2\n"
              "breaker = 100% / 600s\nview_max_age = 30s\n");
    __atomic_store_n(&fake.hold_nodes, 1, __ATOMIC_SEQ_CST);   /* the worker waits in its first read */
    start(f, true);
    int64_t ids[3];
    for (int i = 0; i < 3; i++) {
        char n[8];
        snprintf(n, sizeof n, "n%d", i + 2);
        ids[i] = incident(f, n, "nic-hung", 1, VG_ACT_REBOOT);
    }
    __atomic_store_n(&fake.hold_nodes, 0, __ATOMIC_SEQ_CST);
    assert_true(vg_executor_idle(f->x, 5000));
    char *p[3];
    for (int i = 0; i < 3; i++) p[i] = step_detail(f, ids[i], "spare_promoted");
    assert_string_equal(p[0], "n5");
    assert_string_equal(p[1], "n6");
    assert_string_equal(p[2], "n7,n8");
    for (int i = 0; i < 3; i++) free(p[i]);
    assert_int_equal(fake.npool, 0);
    assert_state_prefix(f, ids[2], "isolated: domain rule: rack1 has 3 of 4 nodes unavailable (> 2); spare domain "
                                   "rack2 promoted");
}

static void test_scheduler_down_then_back(void **state)
{
    struct fx *f = *state;
    policy(f, "breaker = 100% / 600s\n");
    start(f, true);
    assert_true(vg_executor_idle(f->x, 2000));
    fake.down = true;
    int64_t id = incident(f, "n2", "xid", 79, VG_ACT_REBOOT);
    for (int i = 0; i < 200; i++) {   /* wait for the first failure */
        char *s = state_of(f, id);
        bool failed = vg_startswith(s, "failed");
        free(s);
        if (failed) break;
        vg_sleep_ms(10);
    }
    assert_state_prefix(f, id, "failed: retrying");
    struct sbuf m = SBUF_INIT;
    vg_executor_metrics(f->x, &m);
    assert_non_null(strstr(m.s, "vigil_action_retries_pending 1\n"));
    sbuf_free(&m);
    assert_false(fake_node("n2")->down);
    fake.down = false;   /* slurmctld is back */
    assert_true(vg_executor_idle(f->x, 10000));
    assert_true(fake_node("n2")->down);
    assert_state_prefix(f, id, "isolated");
    /* an isolate refused once is retried too */
    fake.fail_isolate = 1;
    int64_t id2 = incident(f, "n5", "xid", 79, VG_ACT_REBOOT);
    assert_true(vg_executor_idle(f->x, 10000));
    assert_true(fake_node("n5")->down);
    assert_state_prefix(f, id2, "isolated");
}

static void test_restart_recovers_failed(void **state)
{
    struct fx *f = *state;
    policy(f, "breaker = 100% / 600s\n");
    int64_t id = incident(f, "n4", "xid", 79, VG_ACT_REBOOT);   /* no executor yet */
    assert_int_equal(vg_store_set_state(f->st, id, VG_INC_FAILED, "retrying in 1 s (attempt 1): connect failure"), 0);
    int64_t never = incident(f, "n6", "xid", 79, VG_ACT_REBOOT);
    start(f, true);   /* a controller restarting */
    assert_true(vg_executor_idle(f->x, 5000));
    assert_true(fake_node("n4")->down);
    assert_true(fake_node("n6")->down);
    assert_state_prefix(f, id, "isolated");
    assert_state_prefix(f, never, "isolated");
}

/* How many times `what` ("down n2;") is in the fake's log. */
static int log_count(const char *what)
{
    int n = 0;
    for (const char *p = fake.log; (p = strstr(p, what)); p += strlen(what)) n++;
    return n;
}

/* Waits (at most 10 s) until the incident's state is prefix; the repair thread runs apart. */
static void wait_state(struct fx *f, int64_t id, const char *prefix);

/* A node out for incident id as a controller left it before it died: the
 * plan committed, the node DOWN with its reason, the isolated step taken. */
static void took_out(struct fx *f, int64_t id, const char *node)
{
    char plan[256];
    snprintf(plan, sizeof plan, "{\"op\":\"down\",\"isolate\":[\"%s\"],\"promote\":[],\"reason\":\"vigil: xid 79 gpu 2\"}", node);
    assert_int_equal(vg_store_set_plan(f->in, id, plan, vg_now_ms(), "", 0, "1"), 0);
    assert_int_equal(vg_store_step(f->in, id, VG_STEP_ISOLATED, vg_now_ms(), "DOWN"), 0);
    fake_node(node)->down = true;
    strcpy(fake_node(node)->reason, "vigil: xid 79 gpu 2");
}

/* A restarted controller takes up every incident the store says is not
 * finished, once, by the rule of its state: open (decided and acted on),
 * acting (the committed plan's steps again, nothing decided), isolated (its
 * repair), repairing at rung K (that rung again, or its health check when
 * the rung had finished), a jobs read still to do; unrepaired waits for a
 * human.  The old controller resumed only open and failed ones: a repair cut
 * by a restart left the node out for good. */
static void test_restart_resumes_every_state(void **state)
{
    struct fx *f = *state;
    policy(f, "breaker = 100% / 600s\nrepair a = true\nrepair b = true\nladder = a b\nhealthcheck = true {node}\n");
    int64_t open = incident(f, "n1", "xid", 79, VG_ACT_REBOOT);   /* accepted, never acted on */
    int64_t acting = incident(f, "n2", "xid", 79, VG_ACT_REBOOT);   /* plan committed, the DOWN not sent */
    assert_int_equal(vg_store_set_plan(f->in, acting,
                                       "{\"op\":\"down\",\"isolate\":[\"n2\"],\"promote\":[],"
                                       "\"reason\":\"vigil: xid 79 gpu 2 [controller 0badcafe]\"}",
                                       vg_now_ms(), "", 0, "1"), 0);
    int64_t isolated = incident(f, "n3", "xid", 79, VG_ACT_REBOOT);   /* out, its repair never started */
    took_out(f, isolated, "n3");
    assert_int_equal(vg_store_set_state(f->in, isolated, VG_INC_ISOLATED, ""), 0);
    assert_int_equal(vg_store_set_jobs_unread(f->in, isolated, vg_now_ms()), 0);   /* and its jobs read */
    int64_t at_b = incident(f, "n4", "xid", 79, VG_ACT_REBOOT);   /* rung a failed, rung b was running */
    took_out(f, at_b, "n4");
    assert_int_equal(vg_store_step_named(f->in, at_b, "repair a", vg_now_ms(), "true: failed"), 0);
    assert_int_equal(vg_store_set_rung(f->in, at_b, 1, false, "rung 2 of 2: b"), 0);
    int64_t checked = incident(f, "n5", "xid", 79, VG_ACT_REBOOT);   /* rung a finished ok: its check next */
    took_out(f, checked, "n5");
    assert_int_equal(vg_store_step_named(f->in, checked, "repair a", vg_now_ms(), "true: ok"), 0);
    assert_int_equal(vg_store_set_rung(f->in, checked, 0, true, "rung 1 of 2: a ok; health check"), 0);
    int64_t waits = incident(f, "n6", "xid", 79, VG_ACT_REBOOT);   /* a human's now */
    took_out(f, waits, "n6");
    assert_int_equal(vg_store_set_state(f->in, waits, VG_INC_UNREPAIRED, "health check failed, node stays isolated"), 0);
    fake.log[0] = 0;
    start(f, true);
    for (int64_t id = open; id <= checked; id++) wait_state(f, id, "closed");
    assert_true(vg_executor_idle(f->x, 5000));
    /* each action exactly once */
    assert_int_equal(log_count("down n1;"), 1);
    assert_int_equal(log_count("down n2;"), 1);
    assert_int_equal(log_count("down n3;") + log_count("down n4;") + log_count("down n5;"), 0);
    assert_int_equal(log_count("resume n"), 5);
    char *r = step_detail(f, acting, "isolated");   /* the plan's reason, not a new decision's */
    assert_non_null(strstr(r, "[controller 0badcafe]"));
    free(r);
    assert_true(has_step(f, isolated, "repair a"));
    assert_true(has_step(f, isolated, "jobs read"));   /* the late jobs read was done */
    r = step_detail(f, at_b, "repair a");   /* not run again */
    assert_string_equal(r, "true: failed");
    free(r);
    assert_true(has_step(f, at_b, "repair b"));
    assert_false(has_step(f, checked, "repair b"));
    assert_true(metric_line(f, "vigil_repair_steps_total{step=\"a\",result=\"ok\"} 3"));   /* n1, n2, n3 */
    assert_true(metric_line(f, "vigil_repair_steps_total{step=\"b\",result=\"ok\"} 1"));   /* n4 */
    assert_state_prefix(f, waits, "unrepaired: health check failed");
    assert_true(fake_node("n6")->down);
}

/* The breaker's window is the store's: 2 of 8 allowed, 2 out, a restart, 2
 * more faults → held (the old controller forgot its window and took 4 out). */
static void test_breaker_window_survives_restart(void **state)
{
    struct fx *f = *state;
    policy(f, "breaker = 25% / 600s\n");   /* 2 of 8 nodes */
    start(f, true);
    int64_t a = incident(f, "n1", "xid", 79, VG_ACT_REBOOT), b = incident(f, "n2", "xid", 79, VG_ACT_REBOOT);
    assert_true(vg_executor_idle(f->x, 5000));
    assert_state_prefix(f, a, "isolated");
    assert_state_prefix(f, b, "isolated");
    vg_executor_stop(f->x);   /* a restart */
    f->x = NULL;
    start(f, true);
    int64_t c = incident(f, "n3", "xid", 79, VG_ACT_REBOOT), d = incident(f, "n4", "xid", 79, VG_ACT_REBOOT);
    assert_true(vg_executor_idle(f->x, 5000));
    assert_state_prefix(f, c, "held: breaker");
    assert_state_prefix(f, d, "held: breaker");
    assert_false(fake_node("n3")->down);
    assert_false(fake_node("n4")->down);
}

/* The scheduler restarts and loses vigil's DOWN (its epoch changed): the node
 * is put back out, the incident stays isolated.  Then someone resumes it
 * while the scheduler stays up: returned by someone else, closed.  The old
 * controller took the first for a human's resume too. */
static void test_lost_state_put_back(void **state)
{
    struct fx *f = *state;
    policy(f, "breaker = 100% / 600s\n");
    start(f, true);
    int64_t id = incident(f, "n3", "xid", 79, VG_ACT_REBOOT);
    assert_true(vg_executor_idle(f->x, 5000));
    struct vg_orch_node *n3 = fake_node("n3");
    assert_true(n3->down);
    char reason[256];
    vg_strlcpy(reason, n3->reason, sizeof reason);
    /* slurmctld restarted from a state without the DOWN */
    strcpy(fake.epoch, "2");
    n3->down = false;
    n3->reason[0] = 0;
    for (int i = 0; i < 500 && !n3->down; i++) vg_sleep_ms(10);   /* the next reconcile, 2 s apart */
    assert_true(n3->down);
    assert_string_equal(n3->reason, reason);
    assert_state_prefix(f, id, "isolated");
    char *d = step_detail(f, id, "re-isolated");
    assert_non_null(strstr(d, "the scheduler lost it (epoch 1, now 2)"));
    free(d);
    assert_true(metric_line(f, "vigil_reisolated_total 1"));
    /* an operator's resume: the scheduler stayed up */
    n3->down = false;
    n3->reason[0] = 0;
    wait_state(f, id, "closed");
    assert_false(n3->down);
    d = step_detail(f, id, "returned");
    assert_string_equal(d, "back in service outside vigil (resumed by someone else)");
    free(d);
}

/* Another controller's stamp on a node of the cluster: an ALERT and the gauge. */
static void test_other_controller_seen(void **state)
{
    struct fx *f = *state;
    struct vg_orch_node *n5 = fake_node("n5");
    n5->down = true;
    strcpy(n5->reason, "vigil: xid 79 gpu 0 [controller 0badcafe]");
    start(f, true);
    assert_true(vg_executor_idle(f->x, 5000));
    assert_true(metric_line(f, "vigil_other_controllers 1"));
    int64_t id = incident(f, "n2", "xid", 79, VG_ACT_REBOOT);   /* this one's stamp is its own */
    assert_true(vg_executor_idle(f->x, 5000));
    char mine[40];
    snprintf(mine, sizeof mine, "[controller %.8s]", strstr(fake_node("n2")->reason, "[controller ") + 12);
    assert_null(strstr(mine, "0badcafe"));
    assert_state_prefix(f, id, "isolated");
    assert_true(metric_line(f, "vigil_other_controllers 1"));
}

static void test_records_never_delay_an_action(void **state)
{
    struct fx *f = *state;
    start(f, true);
    assert_true(vg_executor_idle(f->x, 2000));
    unsigned reads = fake.node_reads;
    /* queued together: 2,000 record-only incidents from other nodes, then an XID 79 */
    for (int i = 0; i < 2000; i++) incident(f, i % 2 ? "n5" : "n6", "xid", 1000 + i, VG_ACT_IGNORE);
    int64_t id = incident(f, "n2", "xid", 79, VG_ACT_REBOOT);
    assert_true(vg_executor_idle(f->x, 20000));
    assert_true(fake_node("n2")->down);
    assert_state_prefix(f, id, "isolated");
    assert_true(fake.node_reads - reads <= 2);   /* one cluster view per batch, never one per incident */
}

static void test_repair_and_return(void **state)
{
    struct fx *f = *state;
    policy(f, "spares = n8\nremediate = true {node}\nhealthcheck = true {node}\n");
    start(f, true);
    int64_t id = incident(f, "n2", "xid", 79, VG_ACT_REBOOT);
    for (int i = 0; i < 500; i++) {
        char *s = state_of(f, id);
        bool closed = !strcmp(s, "closed");
        free(s);
        if (closed) break;
        vg_sleep_ms(10);
    }
    assert_state_prefix(f, id, "closed");
    assert_true(has_step(f, id, "remediated"));
    assert_true(has_step(f, id, "returned"));
    assert_false(fake_node("n2")->down);
    assert_int_equal(fake.npool, 1);
    assert_string_equal(fake.pool[0], "n2");   /* n8 went to production, n2 became the spare */
    assert_true(metric_line(f, "vigil_detected_to_returned_seconds_count 1"));
    assert_true(metric_line(f, "vigil_repair_seconds_count 1"));
    assert_true(metric_line(f, "vigil_health_checks_total{result=\"passed\"} 1"));
    assert_true(metric_line(f, "vigil_repair_steps_total{step=\"remediate\",result=\"ok\"} 1"));
}

/* Waits until the incident's state starts with prefix (the repair thread). */
static void wait_state(struct fx *f, int64_t id, const char *prefix)
{
    for (int i = 0; i < 500; i++) {
        char *s = state_of(f, id);
        bool there = vg_startswith(s, prefix);
        free(s);
        if (there) break;
        vg_sleep_ms(10);
    }
    assert_state_prefix(f, id, prefix);
}

/* The ladder: a rung whose command fails, the next one; a health check that
 * fails, the next rung; the first pass returns the node. */
static void test_ladder_climbs(void **state)
{
    struct fx *f = *state;
    policy(f, "repair reset = false {node}\nrepair reboot = true {node}\nrepair power-cycle = true {node}\n"
              "healthcheck = true {node}\nbreaker = 100% / 600s\n");
    start(f, true);
    int64_t id = incident(f, "n2", "xid", 79, VG_ACT_REBOOT);
    wait_state(f, id, "closed");
    assert_true(has_step(f, id, "repair reset"));
    assert_true(has_step(f, id, "repair reboot"));
    assert_true(has_step(f, id, "health check after reboot"));
    assert_false(has_step(f, id, "repair power-cycle"));   /* the reboot held */
    assert_false(has_step(f, id, "health check after reset"));   /* its command failed: no check */
    assert_true(has_step(f, id, "remediated"));
    assert_true(has_step(f, id, "returned"));
    assert_false(fake_node("n2")->down);
    /* per rung and result: the reset failed, the reboot held, the power cycle never ran */
    assert_true(metric_line(f, "vigil_repair_steps_total{step=\"reset\",result=\"failed\"} 1"));
    assert_true(metric_line(f, "vigil_repair_steps_total{step=\"reset\",result=\"ok\"} 0"));
    assert_true(metric_line(f, "vigil_repair_steps_total{step=\"reboot\",result=\"ok\"} 1"));
    assert_true(metric_line(f, "vigil_repair_steps_total{step=\"power-cycle\",result=\"ok\"} 0"));
    assert_true(metric_line(f, "vigil_rma_handoffs_total 0"));
}

/* Every rung tried, the health check never passes: the RMA ticket, with the
 * evidence, and the node stays out. */
static void test_ladder_exhausted_rma(void **state)
{
    struct fx *f = *state;
    char dir[] = "/tmp/vigil-rma-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char text[512];
    snprintf(text, sizeof text, "repair reset = true {node}\nrepair reboot = true {node}\nhealthcheck = false {node}\n"
                                "rma_dir = %s\nbreaker = 100%% / 600s\n", dir);
    policy(f, text);
    start(f, true);
    int64_t id = incident(f, "n3", "xid", 48, VG_ACT_REBOOT);
    wait_state(f, id, "rma: handed off for RMA");
    assert_true(fake_node("n3")->down);
    assert_true(has_step(f, id, "rma"));
    char path[128];
    snprintf(path, sizeof path, "%s/vigil-rma-%lld.json", dir, (long long)id);
    json_error_t e;
    json_t *t = json_load_file(path, 0, &e);
    if (!t) fail_msg("%s: %s", path, e.text);
    assert_string_equal(vg_json_str(t, "node", ""), "n3");
    assert_string_equal(vg_json_str(t, "cause", ""), "xid 48");
    assert_int_equal(json_array_size(json_object_get(t, "attempts")), 4);   /* 2 rungs, 2 checks */
    json_t *ev = json_object_get(t, "evidence");
    assert_int_equal(vg_json_int(ev, "id", 0), id);
    assert_true(json_is_object(json_object_get(json_object_get(ev, "steps"), "isolated")));
    json_decref(t);
    assert_true(metric_line(f, "vigil_rma_handoffs_total 1"));
    assert_true(metric_line(f, "vigil_rma_handoff_failures_total 0"));
    assert_true(metric_line(f, "vigil_health_checks_total{result=\"failed\"} 2"));
    assert_true(metric_line(f, "vigil_detected_to_returned_seconds_count 0"));
    unlink(path);
    rmdir(dir);
}

/* The same fault on the same GPU back within the window: one rung higher;
 * a cause's own ladder wins over the default. */
static void test_ladder_repeat_and_cause(void **state)
{
    struct fx *f = *state;
    policy(f, "repair reset = true {node}\nrepair reboot = true {node}\nrepair bmc = true {node}\n"
              "ladder = reset reboot bmc\nladder xid 94 = bmc\nhealthcheck = true {node}\nbreaker = 100% / 600s\n");
    int64_t before = incident(f, "n4", "xid", 79, VG_ACT_REBOOT);   /* last week's, repaired */
    assert_int_equal(vg_store_set_state(f->st, before, VG_INC_CLOSED, NULL), 0);
    start(f, true);
    int64_t id = incident(f, "n4", "xid", 79, VG_ACT_REBOOT);
    wait_state(f, id, "closed");
    assert_true(has_step(f, id, "escalated"));
    assert_false(has_step(f, id, "repair reset"));
    assert_true(has_step(f, id, "repair reboot"));
    int64_t other = incident(f, "n5", "xid", 94, VG_ACT_REBOOT);
    wait_state(f, other, "closed");
    assert_false(has_step(f, other, "escalated"));
    assert_false(has_step(f, other, "repair reset"));
    assert_true(has_step(f, other, "repair bmc"));
}

/* The burn-in gate: after the health check, the suite on the node; its
 * result is kept as burn-in evidence; a pass returns the node. */
#define GATE(res) "burnin_gate = echo {\"time\":\"2026-12-01T10:00:00Z\",\"nodes\":[{\"node\":\"{node}\"," \
                  "\"result\":\"" res "\",\"suite\":\"{suite}\",\"tests\":[{\"name\":\"gemm\",\"result\":\"" res \
                  "\",\"value\":512}]}]}\n"

static void test_burnin_gate_pass(void **state)
{
    struct fx *f = *state;
    policy(f, "repair reset = true {node}\nhealthcheck = true {node}\nbreaker = 100% / 600s\n" GATE("pass"));
    start(f, true);
    int64_t id = incident(f, "n2", "xid", 79, VG_ACT_REBOOT);
    wait_state(f, id, "closed");
    assert_true(has_step(f, id, "health check after reset"));
    assert_true(has_step(f, id, "burn-in standard after reset"));
    assert_true(has_step(f, id, "returned"));
    json_t *rows = vg_store_burnin(f->st, "n2", 0);
    assert_int_equal(json_array_size(rows), 1);
    json_t *r = json_array_get(rows, 0);
    assert_string_equal(vg_json_str(r, "suite", ""), "standard");
    assert_string_equal(vg_json_str(r, "result", ""), "pass");
    assert_string_equal(vg_json_str(r, "source", ""), "gate");
    json_decref(rows);
    assert_true(metric_line(f, "vigil_burnin_gates_total{result=\"passed\"} 1"));
}

/* A failed burn-in (and one that printed nothing) keeps the node out and
 * climbs: the repair did not hold.  burnin_suite picks the suite. */
static void test_burnin_gate_fail(void **state)
{
    struct fx *f = *state;
    policy(f, "repair reset = true {node}\nrepair reboot = true {node}\nhealthcheck = true {node}\n"
              "burnin_suite = long\nbreaker = 100% / 600s\n" GATE("fail"));
    start(f, true);
    int64_t id = incident(f, "n2", "xid", 79, VG_ACT_REBOOT);
    wait_state(f, id, "unrepaired: burn-in failed, node stays isolated: fail");
    assert_true(has_step(f, id, "burn-in long after reset"));
    assert_true(has_step(f, id, "burn-in long after reboot"));
    assert_false(has_step(f, id, "returned"));
    assert_true(fake_node("n2")->down);
    json_t *rows = vg_store_burnin(f->st, "n2", 0);
    assert_int_equal(json_array_size(rows), 2);
    json_decref(rows);
    assert_true(metric_line(f, "vigil_burnin_gates_total{result=\"failed\"} 2"));
    vg_executor_stop(f->x);
    f->x = NULL;
    /* a gate that prints no result is not a pass */
    vg_policy_free(&f->p);
    policy(f, "repair reset = true {node}\nhealthcheck = true {node}\nburnin_gate = true {node}\nbreaker = 100% / 600s\n");
    start(f, true);
    int64_t other = incident(f, "n3", "xid", 79, VG_ACT_REBOOT);
    wait_state(f, other, "unrepaired: burn-in failed, node stays isolated: no burn-in result for n3");
    assert_true(fake_node("n3")->down);
}

/* Each rung may have its own timeout: a rung over it fails, the next runs. */
static void test_rung_timeout(void **state)
{
    struct fx *f = *state;
    policy(f, "repair slow = sleep 5\nrepair quick = true {node}\nrepair_timeout slow = 1\nhealthcheck = true {node}\n"
              "breaker = 100% / 600s\n");
    start(f, true);
    int64_t id = incident(f, "n2", "xid", 79, VG_ACT_REBOOT);
    wait_state(f, id, "closed");
    json_t *inc = vg_store_incident(f->st, id);
    json_t *slow = json_object_get(json_object_get(inc, "steps"), "repair slow");
    bool timed_out = strstr(vg_json_str(slow, "detail", ""), "timed out") != NULL;
    json_decref(inc);
    assert_true(timed_out);
    assert_true(has_step(f, id, "repair quick"));
}

/* A gate script: the node's pass, "pass" unless the node is named in FAIL_NODES. */
static void gate_script(struct fx *f, char *path, size_t n)
{
    snprintf(path, n, "%s.gate", f->db);
    FILE *g = fopen(path, "w");
    assert_non_null(g);
    fputs("#!/bin/sh\nres=pass\ncase \" $FAIL_NODES \" in *\" $1 \"*) res=fail ;; esac\n"
          "printf '{\"nodes\":[{\"node\":\"%s\",\"result\":\"%s\",\"suite\":\"%s\",\"tests\":[]}]}\\n' \"$1\" $res \"$2\"\n",
          g);
    fclose(g);
    chmod(path, 0755);
}

static bool seen_is(struct fx *f, const char *node, const char *state)
{
    json_t *all = vg_store_seen(f->st);
    bool yes = !strcmp(vg_json_str(json_object_get(all, node), "state", ""), state);
    json_decref(all);
    return yes;
}

static void wait_seen(struct fx *f, const char *node, const char *state)
{
    for (int i = 0; i < 500 && !seen_is(f, node, state); i++) vg_sleep_ms(10);
    if (!seen_is(f, node, state)) fail_msg("%s never became %s", node, state);
}

/* The new-node gate: the first look takes the nodes in service as known; a
 * node that comes into service later is drained, runs the suite once and is
 * resumed when it passes, stays drained when not; a gate the controller
 * stopped in runs again at the next start. */
static void test_new_node_gate(void **state)
{
    struct fx *f = *state;
    char gate[300], text[600];
    gate_script(f, gate, sizeof gate);
    setenv("FAIL_NODES", "n7", 1);
    snprintf(text, sizeof text, "burnin_gate = %s {node} {suite}\nnew_node_suite = long\nnew_node_every = 1\n", gate);
    policy(f, text);
    fake_node("n6")->down = fake_node("n7")->down = true;   /* out of service at the first look */
    start(f, true);
    wait_seen(f, "n8", "known");   /* the first look writes the nodes one by one, n8 last */
    assert_true(seen_is(f, "n1", "known"));
    assert_false(seen_is(f, "n6", "known"));
    fake_node("n6")->down = fake_node("n7")->down = false;   /* racked and resumed */
    wait_seen(f, "n6", "passed");
    wait_seen(f, "n7", "failed");
    assert_false(fake_node("n6")->drain);                    /* in service */
    assert_true(fake_node("n7")->drain);                     /* stays out, with vigil's reason */
    assert_string_equal(fake_node("n7")->reason, "vigil: new node: burn-in long before service");
    assert_false(fake_node("n1")->drain);                    /* a known node is never gated */
    json_t *rows = vg_store_burnin(f->st, "n6", 0);
    assert_int_equal(json_array_size(rows), 1);
    assert_string_equal(vg_json_str(json_array_get(rows, 0), "suite", ""), "long");
    assert_string_equal(vg_json_str(json_array_get(rows, 0), "source", ""), "new-node");
    json_decref(rows);
    assert_true(metric_line(f, "vigil_new_nodes_total{result=\"passed\"} 1"));
    assert_true(metric_line(f, "vigil_new_nodes_total{result=\"failed\"} 1"));
    vg_executor_stop(f->x);
    f->x = NULL;
    /* stopped while n5's gate ran: the next start runs it again */
    assert_int_equal(vg_store_set_seen(f->st, "n5", "gating", vg_now_ms(), "test"), 0);
    fake_node("n5")->drain = true;
    vg_strlcpy(fake_node("n5")->reason, "vigil: new node: burn-in long before service", sizeof fake_node("n5")->reason);
    start(f, true);
    wait_seen(f, "n5", "passed");
    assert_false(fake_node("n5")->drain);
    assert_true(seen_is(f, "n7", "failed"));                 /* not gated again */
    unsetenv("FAIL_NODES");
    unlink(gate);
}

/* ---- item 5: the fault paths, each a recorded step failure ------------------ */

/* A power-cycle rung that is `vigil bmc … --ipmi` against the ipmitool
 * stand-in (tests/standins/), whose chassis state is in a file. */
struct bmc_fx {
    char dir[64], user[96], state[96], policy[2048];
};

static void bmc_setup(struct bmc_fx *b, const char *state, const char *rungs_after, const char *extra)
{
    snprintf(b->dir, sizeof b->dir, "/tmp/vigil-bmc-XXXXXX");
    assert_non_null(mkdtemp(b->dir));
    snprintf(b->user, sizeof b->user, "%s/bmc.user", b->dir);
    snprintf(b->state, sizeof b->state, "%s/ipmi-state", b->dir);
    FILE *f = fopen(b->user, "w");
    fputs("admin:pw\n", f);
    fclose(f);
    chmod(b->user, 0600);
    f = fopen(b->state, "w");
    fputs(state, f);
    fclose(f);
    char cwd[512], path[2048];
    assert_non_null(getcwd(cwd, sizeof cwd));
    snprintf(path, sizeof path, "%s/tests/standins:%s", cwd, getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    setenv("PATH", path, 1);
    setenv("VIGIL_IPMI_STATE", b->state, 1);
    const char *vigil = getenv("VIGIL") ? getenv("VIGIL") : "build/vigil";
    snprintf(b->policy, sizeof b->policy,
             "repair power-cycle = %s%s%s bmc power-cycle {node} --ipmi {node}-bmc --user-file %s --timeout 2\n"
             "%shealthcheck = true {node}\nbreaker = 100%% / 600s\n%s",
             *vigil == '/' ? "" : cwd, *vigil == '/' ? "" : "/", vigil, b->user, rungs_after, extra);
}

static void bmc_teardown(struct bmc_fx *b)
{
    unlink(b->user);
    unlink(b->state);
    rmdir(b->dir);
    unsetenv("VIGIL_IPMI_STATE");
}

static void assert_detail_has(struct fx *f, int64_t id, const char *step, const char *want)
{
    char *d = step_detail(f, id, step);
    if (!strstr(d, want)) fail_msg("step '%s': '%s' lacks '%s'", step, d, want);
    free(d);
}

/* The BMC refuses the power cycle: the rung is recorded as failed with the
 * BMC's own message, and the next rung runs. */
static void test_bmc_refuses_next_rung(void **state)
{
    struct fx *f = *state;
    struct bmc_fx b;
    bmc_setup(&b, "power=off\n", "repair reseat = true {node}\n", "");
    policy(f, b.policy);
    start(f, true);
    int64_t id = incident(f, "n2", "xid", 79, VG_ACT_REBOOT);
    wait_state(f, id, "closed");
    assert_detail_has(f, id, "repair power-cycle",
                      "failed: power-cycle n2: refused: Set Chassis Power Control to Cycle failed: Command not "
                      "supported in present state");
    assert_false(has_step(f, id, "health check after power-cycle"));
    assert_true(has_step(f, id, "repair reseat"));
    assert_true(has_step(f, id, "returned"));
    assert_true(metric_line(f, "vigil_repair_steps_total{step=\"power-cycle\",result=\"failed\"} 1"));
    bmc_teardown(&b);
}

/* The power cycle done (the stand-in prints "Chassis Power Control: Cycle"). */
static void test_bmc_power_cycle_rung(void **state)
{
    struct fx *f = *state;
    struct bmc_fx b;
    bmc_setup(&b, "power=on\n", "", "");
    policy(f, b.policy);
    start(f, true);
    int64_t id = incident(f, "n2", "xid", 79, VG_ACT_REBOOT);
    wait_state(f, id, "closed");
    assert_detail_has(f, id, "repair power-cycle", "ok: power-cycle n2: done: Chassis Power Control: Cycle");
    assert_true(has_step(f, id, "health check after power-cycle"));
    bmc_teardown(&b);
}

/* A BMC that never answers: the bmc command's own deadline, recorded; every
 * rung failed, so the RMA ticket, whose attempts say so. */
static void test_bmc_never_answers(void **state)
{
    struct fx *f = *state;
    struct bmc_fx b;
    char dir[] = "/tmp/vigil-rma-XXXXXX", extra[128];
    assert_non_null(mkdtemp(dir));
    snprintf(extra, sizeof extra, "rma_dir = %s\n", dir);
    bmc_setup(&b, "hang=1\n", "", extra);
    policy(f, b.policy);
    start(f, true);
    int64_t id = incident(f, "n3", "xid", 79, VG_ACT_REBOOT);
    wait_state(f, id, "rma: handed off for RMA");
    assert_detail_has(f, id, "repair power-cycle", "ipmitool did not finish within 2 s (the BMC does not answer)");
    assert_true(fake_node("n3")->down);
    char path[128];
    snprintf(path, sizeof path, "%s/vigil-rma-%lld.json", dir, (long long)id);
    json_t *t = json_load_file(path, 0, NULL);
    assert_non_null(t);
    const char *res = vg_json_str(json_array_get(json_object_get(t, "attempts"), 0), "result", "");
    assert_non_null(strstr(res, "the BMC does not answer"));
    json_decref(t);
    unlink(path);
    rmdir(dir);
    bmc_teardown(&b);
}

/* A reboot that never comes back: the rung's own timeout ends it, "timed
 * out" is recorded, the next rung runs. */
static void test_reboot_never_back(void **state)
{
    struct fx *f = *state;
    policy(f, "repair reboot = sleep 30\nrepair_timeout reboot = 1\nrepair power-cycle = true {node}\n"
              "healthcheck = true {node}\nbreaker = 100% / 600s\n");
    start(f, true);
    int64_t t0 = vg_mono_ms();
    int64_t id = incident(f, "n2", "xid", 79, VG_ACT_REBOOT);
    wait_state(f, id, "closed");
    assert_true(vg_mono_ms() - t0 < 10000);   /* not the 30 s the command would take */
    assert_detail_has(f, id, "repair reboot", "sleep: timed out");
    assert_false(has_step(f, id, "health check after reboot"));
    assert_true(has_step(f, id, "repair power-cycle"));
}

/* The ticket hook fails (and one that is not there at all): recorded in the
 * state, an ALERT, the failure counted, the incident and the ticket kept. */
static void test_rma_hook_fails(void **state)
{
    struct fx *f = *state;
    char dir[] = "/tmp/vigil-rma-XXXXXX", text[512];
    assert_non_null(mkdtemp(dir));
    snprintf(text, sizeof text, "repair reset = true {node}\nhealthcheck = false {node}\nrma_dir = %s\n"
                                "rma_command = false {ticket}\nbreaker = 100%% / 600s\n", dir);
    policy(f, text);
    start(f, true);
    int64_t id = incident(f, "n3", "xid", 48, VG_ACT_REBOOT);
    wait_state(f, id, "unrepaired: health check failed, node stays isolated");
    char *s = state_of(f, id);
    if (!strstr(s, "RMA hand-off failed: rma_command false: failed")) fail_msg("state: %s", s);
    free(s);
    assert_true(fake_node("n3")->down);
    assert_true(metric_line(f, "vigil_rma_handoff_failures_total 1"));
    char path[128];
    snprintf(path, sizeof path, "%s/vigil-rma-%lld.json", dir, (long long)id);
    assert_int_equal(access(path, R_OK), 0);   /* the ticket is there for a person to send */
    vg_executor_stop(f->x);
    f->x = NULL;
    /* a hook that cannot even be started (the ticketing host's client missing) */
    vg_policy_free(&f->p);
    snprintf(text, sizeof text, "repair reset = true {node}\nhealthcheck = false {node}\nrma_dir = %s\n"
                                "rma_command = /nonexistent/open-ticket {ticket}\nbreaker = 100%% / 600s\n", dir);
    policy(f, text);
    start(f, true);
    int64_t other = incident(f, "n4", "xid", 48, VG_ACT_REBOOT);
    wait_state(f, other, "unrepaired: health check failed, node stays isolated");
    s = state_of(f, other);
    if (!strstr(s, "RMA hand-off failed: rma_command /nonexistent/open-ticket: failed")) fail_msg("state: %s", s);
    free(s);
    assert_true(metric_line(f, "vigil_rma_handoff_failures_total 1"));   /* this executor's own count */
    json_t *inc = vg_store_incident(f->st, other);
    assert_non_null(inc);   /* never a lost incident */
    json_decref(inc);
    unlink(path);
    snprintf(path, sizeof path, "%s/vigil-rma-%lld.json", dir, (long long)other);
    unlink(path);
    rmdir(dir);
}

/* rma_attach: each command's output and result in the ticket; one that
 * fails, one that times out and one too long are recorded so, and the
 * hand-off goes on. */
static void test_rma_attachments(void **state)
{
    struct fx *f = *state;
    char dir[] = "/tmp/vigil-rma-XXXXXX", text[1024];
    assert_non_null(mkdtemp(dir));
    snprintf(text, sizeof text,
             "repair reset = true {node}\nhealthcheck = false {node}\nrma_dir = %s\nrepair_timeout = 1\n"
             "rma_attach kernel-log = echo NVRM: Xid (PCI:0000:1b:00): 79, node {node}\n"
             "rma_attach bug-report = false\nrma_attach slow = sleep 30\nrma_attach big = seq 1 300000\n"
             "breaker = 100%% / 600s\n", dir);
    policy(f, text);
    start(f, true);
    int64_t id = incident(f, "n3", "xid", 79, VG_ACT_REBOOT);
    wait_state(f, id, "rma: handed off for RMA");
    char path[128];
    snprintf(path, sizeof path, "%s/vigil-rma-%lld.json", dir, (long long)id);
    json_t *t = json_load_file(path, 0, NULL);
    assert_non_null(t);
    json_t *a = json_object_get(t, "attachments");
    assert_int_equal(json_array_size(a), 4);
    json_t *k = json_array_get(a, 0), *bug = json_array_get(a, 1), *slow = json_array_get(a, 2), *big = json_array_get(a, 3);
    assert_string_equal(vg_json_str(k, "name", ""), "kernel-log");
    assert_string_equal(vg_json_str(k, "result", ""), "ok");
    assert_string_equal(vg_json_str(k, "stdout", ""), "NVRM: Xid (PCI:0000:1b:00): 79, node n3\n");
    assert_string_equal(vg_json_str(bug, "result", ""), "failed");
    assert_int_equal(vg_json_int(bug, "exit_status", 0), 1);
    assert_string_equal(vg_json_str(slow, "result", ""), "timed out");
    assert_string_equal(vg_json_str(big, "result", ""), "ok");
    assert_true(json_is_true(json_object_get(big, "truncated")));
    assert_int_equal(strlen(vg_json_str(big, "stdout", "")), 1u << 20);
    json_decref(t);
    unlink(path);
    rmdir(dir);
}

static void test_dry_run_changes_nothing(void **state)
{
    struct fx *f = *state;
    start(f, false);
    int64_t id = incident(f, "n2", "xid", 79, VG_ACT_REBOOT);
    assert_true(vg_executor_idle(f->x, 5000));
    assert_false(fake_node("n2")->down);
    assert_state_prefix(f, id, "dry-run: would down and requeue");
    assert_null(strstr(fake.log, "down"));
}

static void test_stop_is_bounded(void **state)
{
    struct fx *f = *state;
    start(f, true);
    fake.down = true;
    for (int i = 0; i < 50; i++) incident(f, "n3", "xid", 100 + i, VG_ACT_REBOOT);
    int64_t t = vg_mono_ms();
    vg_executor_stop(f->x);
    f->x = NULL;
    assert_true(vg_mono_ms() - t < 5000);
}

/* The state of a node from its open incident's state. */
static void test_fleetview_incident_states(void **state)
{
    (void)state;
    assert_string_equal(vg_fleetview_incident_state("isolated", false), "isolated");
    assert_string_equal(vg_fleetview_incident_state("isolated", true), "repairing");
    assert_string_equal(vg_fleetview_incident_state("repairing", false), "repairing");
    assert_string_equal(vg_fleetview_incident_state("acting", false), "isolated");
    assert_string_equal(vg_fleetview_incident_state("rma", false), "rma");
    assert_string_equal(vg_fleetview_incident_state("unrepaired", false), "isolated");
    assert_string_equal(vg_fleetview_incident_state("failed", false), "failed");
    assert_string_equal(vg_fleetview_incident_state("held", false), "held");
    assert_string_equal(vg_fleetview_incident_state("recorded", false), "suspect");
    assert_string_equal(vg_fleetview_incident_state("dry-run", false), "suspect");
    assert_string_equal(vg_fleetview_incident_state("open", false), "suspect");
}

static const char *node_state(json_t *nodes, const char *name, const char **domain)
{
    size_t i;
    json_t *n;
    json_array_foreach(nodes, i, n) {
        if (strcmp(vg_json_str(n, "node", ""), name)) continue;
        if (domain) *domain = vg_json_str(n, "domain", NULL);
        return vg_json_str(n, "state", "");
    }
    return "(absent)";
}

/* The fleet as the dashboard shows it: every node the scheduler, the policy
 * and the store know, in its domain, with one state each. */
static void test_fleetview_nodes(void **state)
{
    struct fx *f = *state;
    policy(f, "spares = n8\ndomain r1 = n[1-4]\nbreaker = 100% / 600s\nrepair quick = true\nrepair slow = sleep 3\n"
              "ladder = quick\nladder xid 48 = slow\nhealthcheck = false\n");
    fake_node("n5")->drain = true;
    strcpy(fake_node("n5")->reason, "bad DIMM, ticket 4711");
    start(f, true);
    assert_true(vg_executor_idle(f->x, 2000));
    int64_t a = incident(f, "n2", "xid", 79, VG_ACT_REBOOT);
    wait_state(f, a, "unrepaired: health check failed");
    incident(f, "n3", "xid", 48, VG_ACT_REBOOT);   /* its repair step runs 3 s */
    int64_t rec = incident(f, "n6", "xid", 43, VG_ACT_IGNORE);
    int64_t held = incident(f, "n5", "xid", 79, VG_ACT_REBOOT);
    assert_true(vg_executor_idle(f->x, 5000));
    assert_state_prefix(f, rec, "recorded");
    assert_state_prefix(f, held, "held: left alone");
    char err[256];
    struct vg_orch *vo = vg_orch_open_ops(&fake_orch_ops, NULL, err, sizeof err);
    assert_non_null(vo);
    struct vg_fleetview *v = vg_fleetview_new(&(struct vg_fleetview_opts){
        .reader = f->st, .exec = f->x, .policy = &f->p, .orch = vo });
    unsigned reads = fake.node_reads;
    json_t *nodes = vg_fleetview_nodes(v);
    const char *dom = NULL;
    assert_int_equal(json_array_size(nodes), 8);
    assert_string_equal(node_state(nodes, "n1", &dom), "healthy");
    assert_string_equal(dom, "r1");
    assert_string_equal(node_state(nodes, "n2", NULL), "isolated");
    assert_string_equal(node_state(nodes, "n3", NULL), "repairing");
    assert_string_equal(node_state(nodes, "n5", &dom), "held");
    assert_null(dom);   /* in no domain */
    assert_string_equal(node_state(nodes, "n6", NULL), "suspect");
    assert_string_equal(node_state(nodes, "n7", NULL), "healthy");
    assert_string_equal(node_state(nodes, "n8", NULL), "healthy");   /* promoted: in production */
    /* the domain's nodes first, then the rest */
    assert_string_equal(vg_json_str(json_array_get(nodes, 0), "node", ""), "n1");
    assert_string_equal(vg_json_str(json_array_get(nodes, 4), "node", ""), "n5");
    json_decref(nodes);
    json_t *sum = vg_fleetview_summary(v);
    json_t *st = json_object_get(sum, "states");
    assert_int_equal(vg_json_int(st, "isolated", -1), 1);
    assert_int_equal(vg_json_int(st, "repairing", -1), 1);
    assert_int_equal(vg_json_int(st, "held", -1), 1);
    assert_int_equal(vg_json_int(st, "suspect", -1), 1);
    assert_int_equal(vg_json_int(st, "healthy", -1), 4);
    assert_int_equal(vg_json_int(sum, "open_incidents", -1), 4);
    json_t *br = json_object_get(sum, "breaker");
    assert_int_equal(vg_json_int(br, "isolations_in_window", -1), 2);
    assert_int_equal(vg_json_int(br, "allowed", -1), 8);
    assert_string_equal(vg_json_str(br, "state", ""), "armed");
    assert_int_equal(json_array_size(json_object_get(json_object_get(sum, "spares"), "nodes")), 0);
    /* a store seconds old: the window starts at its first record, too short to state a rate */
    const json_t *acct = json_object_get(sum, "accounting");
    assert_true(json_is_null(json_object_get(acct, "availability")));
    assert_true(vg_startswith(vg_json_str(json_object_get(acct, "unmeasured"), "availability", ""),
                              "not enough history: 0 min in the window"));
    assert_string_equal(vg_json_str(json_object_get(acct, "window"), "since", ""),
                        vg_json_str(json_object_get(acct, "window"), "history_since", "-"));
    json_decref(sum);
    assert_int_equal(fake.node_reads - reads, 1);   /* the second look used the first's node list */
    struct sbuf m = SBUF_INIT;
    vg_fleetview_metrics(v, &m);
    assert_non_null(strstr(m.s, "\nvigil_nodes{state=\"repairing\"} 1\n"));
    assert_non_null(strstr(m.s, "\nvigil_nodes{state=\"healthy\"} 4\n"));
    sbuf_free(&m);
    vg_fleetview_free(v);
    vg_orch_close(vo);
}

/* A closed incident of node, written straight into the store as the repair
 * thread writes one: its `returned` step at back (0: none). */
static int64_t closed_incident(struct fx *f, const char *node, int64_t back)
{
    /* detected an hour before it returned (a step is never recorded before the incident's latest) */
    int64_t id = incident_at(f, node, "xid", 79, VG_ACT_REBOOT, "", back ? back - 3600 * 1000 : vg_now_ms());
    if (back) assert_int_equal(vg_store_step(f->in, id, VG_STEP_RETURNED, back, "to production"), 0);
    assert_int_equal(vg_store_set_state(f->in, id, VG_INC_CLOSED, NULL), 0);
    return id;
}

/* A node repaired and back shows `returned` (when, from which incident) for
 * 24 h after, or until its next incident; the summary and the gauges count it. */
static void test_fleetview_returned(void **state)
{
    struct fx *f = *state;
    policy(f, "spares = n8\nremediate = true {node}\nhealthcheck = true {node}\n");
    int64_t now = vg_now_ms(), h = 3600LL * 1000;
    int64_t n3 = closed_incident(f, "n3", now - 23 * h);   /* within the day */
    closed_incident(f, "n4", now - 25 * h);                /* a day ago: healthy again */
    closed_incident(f, "n5", now - 2 * h);
    closed_incident(f, "n5", 0);                           /* its next incident, closed without a return */
    closed_incident(f, "n6", now - h);
    int64_t n6 = incident(f, "n6", "xid", 48, VG_ACT_IGNORE);   /* its next, open */
    start(f, true);
    int64_t id = incident(f, "n2", "xid", 79, VG_ACT_REBOOT);
    wait_state(f, id, "closed");   /* repaired, health check passed, returned */
    wait_state(f, n6, "recorded");
    struct vg_fleetview *v = vg_fleetview_new(&(struct vg_fleetview_opts){ .reader = f->st, .exec = f->x, .policy = &f->p });
    json_t *nodes = vg_fleetview_nodes(v);
    assert_string_equal(node_state(nodes, "n2", NULL), "returned");
    assert_string_equal(node_state(nodes, "n3", NULL), "returned");
    assert_string_equal(node_state(nodes, "n4", NULL), "healthy");
    assert_string_equal(node_state(nodes, "n5", NULL), "healthy");
    assert_string_equal(node_state(nodes, "n6", NULL), "suspect");
    size_t i;
    json_t *n;
    json_array_foreach(nodes, i, n) {
        const json_t *r = json_object_get(n, "returned");
        const char *name = vg_json_str(n, "node", "");
        if (strcmp(name, "n2") && strcmp(name, "n3")) {
            assert_true(json_is_null(r));
            continue;
        }
        assert_int_equal(vg_json_int(r, "incident", -1), !strcmp(name, "n2") ? id : n3);
        json_t *inc = vg_store_incident(f->st, vg_json_int(r, "incident", 0));
        /* the time and detail of the incident's `returned` step */
        const json_t *step = json_object_get(json_object_get(inc, "steps"), "returned");
        assert_string_equal(vg_json_str(r, "at", "?"), vg_json_str(step, "at", "!"));
        assert_string_equal(vg_json_str(r, "detail", "?"), vg_json_str(step, "detail", "!"));
        assert_true(json_is_null(json_object_get(n, "incident")));   /* no open incident */
        json_decref(inc);
    }
    json_decref(nodes);
    json_t *sum = vg_fleetview_summary(v);
    assert_int_equal(vg_json_int(json_object_get(sum, "states"), "returned", -1), 2);
    json_decref(sum);
    struct sbuf m = SBUF_INIT;
    vg_fleetview_metrics(v, &m);
    assert_non_null(strstr(m.s, "\nvigil_nodes{state=\"returned\"} 2\n"));
    sbuf_free(&m);
    vg_fleetview_free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_down_requeue_promote, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_batch_promotes_each_spare_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_down_requeues_lists_after, setup, teardown),
        cmocka_unit_test_setup_teardown(test_down_then_jobs_read_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drain_and_record_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ownership_and_breaker, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fresh_view_sees_a_new_drain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_incidents_use_the_kept_view, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fleet_breaker, setup, teardown),
        cmocka_unit_test_setup_teardown(test_domain_rule, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scheduler_down_then_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restart_recovers_failed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restart_resumes_every_state, setup, teardown),
        cmocka_unit_test_setup_teardown(test_breaker_window_survives_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lost_state_put_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_controller_seen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_records_never_delay_an_action, setup, teardown),
        cmocka_unit_test_setup_teardown(test_repair_and_return, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ladder_climbs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ladder_exhausted_rma, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ladder_repeat_and_cause, setup, teardown),
        cmocka_unit_test_setup_teardown(test_burnin_gate_pass, setup, teardown),
        cmocka_unit_test_setup_teardown(test_burnin_gate_fail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rung_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_node_gate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bmc_refuses_next_rung, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bmc_power_cycle_rung, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bmc_never_answers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reboot_never_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rma_hook_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rma_attachments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dry_run_changes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_is_bounded, setup, teardown),
        cmocka_unit_test(test_fleetview_incident_states),
        cmocka_unit_test_setup_teardown(test_fleetview_nodes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fleetview_returned, setup, teardown),
    };
    return cmocka_run_group_tests_name("executor", tests, NULL, NULL);
}
