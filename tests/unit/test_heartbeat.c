/* test_heartbeat.c — the heartbeat monitor (src/controller/heartbeat.c) on
 * the orchestrator double, its clock and ticks driven by the test: only the
 * scheduler's nodes are tracked (a forged beat for a ghost node, 100,000
 * beats under new names), the table follows the scheduler's list, a probe
 * that cannot tell backs off, and held nodes are decided again — two nodes
 * crash together on six, one comes back, the other is confirmed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "controller/heartbeat.h"
#include "controller/nodeset.h"
#include "helpers/fake_orch.h"

static int64_t clock_ms;
static int64_t test_clock(void) { return clock_ms; }

/* What the monitor reported: "n2;n5;" */
static char confirmed_log[1024];
static void confirmed(void *ctx, const char *node, const char *jobs, const char *why)
{
    (void)ctx, (void)jobs, (void)why;
    size_t l = strlen(confirmed_log);
    snprintf(confirmed_log + l, sizeof confirmed_log - l, "%s;", node);
}

struct rig {
    struct vg_nodeset *nodes;
    struct vg_orch *probes;
    struct vg_heartbeats *hb;
};

/* The monotonic clock the node list's age is read on moves on by 2 ms. */
static void list_ages(void)
{
    struct timespec ts = { 0, 2000000 };
    nanosleep(&ts, NULL);
}

/* n nodes n1..nN in the double; the monitor over them (interval 1 s, 2
 * missed); the node list read again miss_ms after a name it lacks was asked
 * about (0: the default), else only when the test asks (vg_nodeset_refresh). */
static bool rig_track_all;   /* the monitor of a controller taking over */

static void rig_up(struct rig *r, int n, int miss_ms)
{
    char err[256], name[16];
    fake_reset();
    for (int i = 1; i <= n; i++) {
        snprintf(name, sizeof name, "n%d", i);
        fake_add_node(name, NULL);
    }
    clock_ms = 1000000;
    confirmed_log[0] = 0;
    struct vg_orch_conf c = { 0 };
    r->nodes = vg_nodeset_start(vg_orch_open_ops(&fake_orch_ops, &c, err, sizeof err), 3600000, miss_ms);
    assert_true(vg_nodeset_wait(r->nodes, 5000));
    struct vg_heartbeat_opts o = { .interval_ms = 1000, .missed = 2, .nodes = r->nodes, .clock = test_clock,
                                   .no_thread = true, .track_all = rig_track_all };
    r->probes = vg_orch_open_ops(&fake_orch_ops, &c, err, sizeof err);
    r->hb = vg_heartbeats_start(&o, r->probes, confirmed, NULL);
}

static void rig_down(struct rig *r)
{
    vg_heartbeats_stop(r->hb);
    vg_orch_close(r->probes);
    vg_nodeset_stop(r->nodes);
}

static int beat(struct rig *r, const char *node)
{
    char err[256];
    return vg_heartbeat_beat(r->hb, node, "", err, sizeof err);
}

/* Every node but those in skip ("n2,n3,") beats; then the clock moves on. */
static void beat_all_but(struct rig *r, int n, const char *skip, int64_t then_ms)
{
    char name[16], pat[20];
    for (int i = 1; i <= n; i++) {
        snprintf(name, sizeof name, "n%d", i);
        snprintf(pat, sizeof pat, "%s,", name);
        if (!strstr(skip, pat)) assert_int_equal(beat(r, name), 0);
    }
    clock_ms += then_ms;
}

/* The monitor's /metrics lines hold line ("vigil_heartbeat_holds_total 1\n"). */
static void metric_is(struct rig *r, const char *line)
{
    struct sbuf m = SBUF_INIT;
    vg_heartbeats_metrics(r->hb, &m);
    if (!strstr(m.s, line)) fail_msg("no '%s' in the metrics", line);
    sbuf_free(&m);
}

static size_t held(struct rig *r)
{
    size_t k;
    vg_heartbeats_tracked(r->hb, &k);
    return k;
}

/* ms of the monitor's life: the nodes but skip beat every second, the
 * monitor ticks every 100 ms. */
static void run(struct rig *r, int n, const char *skip, int ms)
{
    for (int t = 0; t < ms / 100; t++) {
        if (t % 10 == 0) beat_all_but(r, n, skip, 0);
        clock_ms += 100;
        vg_heartbeats_tick(r->hb);
    }
}

static void test_only_scheduler_nodes(void **state)
{
    (void)state;
    struct rig r;
    rig_up(&r, 5, 0);
    beat_all_but(&r, 5, "", 0);
    unsigned reads = fake.node_reads;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* the ghost: one forged beat, then silence */
    char err[256];
    assert_int_equal(vg_heartbeat_beat(r.hb, "ghost1", "", err, sizeof err), 403);
    assert_non_null(strstr(err, "'ghost1' is not a node the scheduler lists"));
    /* 100,000 beats under new names: none tracked, and the scheduler read at most
     * once more per VG_NODESET_MISS_MS they took (a name that misses rereads the
     * list at most that often) */
    for (int i = 0; i < 100000; i++) {
        char name[32];
        snprintf(name, sizeof name, "fake%06d", i);
        assert_int_equal(beat(&r, name), 403);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long took_ms = (long)(t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    assert_int_equal(vg_heartbeats_tracked(r.hb, NULL), 5);
    assert_true(fake.node_reads <= reads + 2 + took_ms / VG_NODESET_MISS_MS);
    /* n2 crashes: silent, its daemon does not answer; the ghost counts for nothing */
    fake_node("n2")->responding = false;
    for (int t = 0; t < 4; t++) {
        beat_all_but(&r, 5, "n2,", 1000);
        vg_heartbeats_tick(r.hb);
    }
    assert_string_equal(confirmed_log, "n2;");
    assert_int_equal(held(&r), 0);
    metric_is(&r, "vigil_heartbeat_refused_total 100001\n");
    metric_is(&r, "vigil_heartbeat_holds_total 0\n");
    rig_down(&r);
}

/* A controller that takes over from another watches every node the
 * scheduler lists from its start: n3 died during the takeover (it beat only
 * to the old leader, never here) and is found; the others, which beat here
 * once their agents moved over, are not. */
static void test_takeover_tracks_all(void **state)
{
    (void)state;
    struct rig r;
    rig_track_all = true;
    rig_up(&r, 5, 0);
    rig_track_all = false;
    assert_int_equal(vg_heartbeats_tracked(r.hb, NULL), 5);
    fake_node("n3")->responding = false;
    run(&r, 5, "n3,", 4000);
    assert_string_equal(confirmed_log, "n3;");
    assert_int_equal(held(&r), 0);
    rig_down(&r);
}

/* A node added to the scheduler is taken at its first beat; one removed from
 * it leaves the table when the list is read again. */
static void test_table_follows_scheduler(void **state)
{
    (void)state;
    struct rig r;
    rig_up(&r, 3, 1);   /* a name the list lacks: read again at once */
    beat_all_but(&r, 3, "", 0);
    fake_add_node("n4", NULL);
    list_ages();
    assert_int_equal(beat(&r, "n4"), 0);   /* missing from the list held: read again */
    assert_int_equal(vg_heartbeats_tracked(r.hb, NULL), 4);
    fake.nnodes = 2;   /* n3 and n4 leave the cluster */
    assert_true(vg_nodeset_refresh(r.nodes, 5000));
    vg_heartbeats_tick(r.hb);
    assert_int_equal(vg_heartbeats_tracked(r.hb, NULL), 2);
    list_ages();
    assert_int_equal(beat(&r, "n3"), 403);
    /* gone from the table, n3 and n4 are never probed nor reported */
    for (int t = 0; t < 5; t++) {
        beat_all_but(&r, 2, "", 1000);
        vg_heartbeats_tick(r.hb);
    }
    assert_int_equal(fake.probes, 0);
    assert_string_equal(confirmed_log, "");
    rig_down(&r);
}

/* A silent node that cannot be probed is tried again 1 s, 2 s, 4 s … later:
 * over 20 s of 100 ms ticks, a handful of probes, not 200. */
static void test_probe_backs_off(void **state)
{
    (void)state;
    struct rig r;
    rig_up(&r, 10, 0);
    beat_all_but(&r, 10, "", 0);
    fake.probe_fails = true;
    run(&r, 10, "n7,", 23000);   /* 23 s */
    /* silent after 2.5 s; probed at 2.6, 3.6, 5.6, 9.6, 17.6 s */
    assert_int_equal(fake.probes, 5);
    fake.probe_fails = false;
    fake_node("n7")->responding = false;
    run(&r, 10, "n7,", 17000);   /* the next try, 16 s after the last */
    assert_int_equal(fake.probes, 6);
    assert_string_equal(confirmed_log, "n7;");
    rig_down(&r);
}

/* Issue 26: two nodes crash together on a six-node cluster (more than the one
 * allowed at once: held), one comes back 5 s later; the other is decided
 * again at once, confirmed and reported. */
static void test_held_node_decided_again(void **state)
{
    (void)state;
    struct rig r;
    rig_up(&r, 6, 0);
    beat_all_but(&r, 6, "", 0);
    fake_node("n2")->responding = false;
    fake_node("n5")->responding = false;
    run(&r, 6, "n2,n5,", 3000);   /* 3 s: both silent at once */
    assert_int_equal(held(&r), 2);
    assert_int_equal(fake.probes, 0);
    assert_string_equal(confirmed_log, "");
    run(&r, 6, "n2,n5,", 5000);   /* 5 s more: still held */
    assert_string_equal(confirmed_log, "");
    fake_node("n5")->responding = true;   /* n5 comes back and beats */
    beat_all_but(&r, 6, "n2,", 0);
    vg_heartbeats_tick(r.hb);
    assert_int_equal(held(&r), 0);
    assert_string_equal(confirmed_log, "n2;");
    metric_is(&r, "vigil_heartbeat_holds_total 1\n");
    metric_is(&r, "vigil_heartbeat_confirmed_total 1\n");
    rig_down(&r);
}

/* A mass silence that lasts is held however long it lasts (past the 10
 * minutes after which a node no longer counts as beating): nothing isolated. */
static void test_long_mass_silence_stays_held(void **state)
{
    (void)state;
    struct rig r;
    rig_up(&r, 5, 0);
    beat_all_but(&r, 5, "", 0);
    for (int i = 1; i <= 5; i++) {
        char name[8];
        snprintf(name, sizeof name, "n%d", i);
        fake_node(name)->responding = false;   /* as seen from a controller cut off */
    }
    for (int t = 0; t < 120; t++) {   /* 12 minutes, a tick every 6 s */
        clock_ms += 6000;
        vg_heartbeats_tick(r.hb);
    }
    assert_int_equal(held(&r), 5);
    assert_int_equal(fake.probes, 0);
    assert_string_equal(confirmed_log, "");
    rig_down(&r);
}

/* A node already decided (its agent died, the node answers) does not count
 * as part of a mass silence: a later crash elsewhere is confirmed. */
static void test_decided_nodes_do_not_hold(void **state)
{
    (void)state;
    struct rig r;
    rig_up(&r, 8, 0);
    beat_all_but(&r, 8, "", 0);
    run(&r, 8, "n1,", 3000);   /* the agent on n1 dies; the node answers */
    assert_int_equal(fake.probes, 1);
    fake_node("n4")->responding = false;
    run(&r, 8, "n1,n4,", 3000);
    assert_string_equal(confirmed_log, "n4;");
    rig_down(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_only_scheduler_nodes),
        cmocka_unit_test(test_takeover_tracks_all),
        cmocka_unit_test(test_table_follows_scheduler),
        cmocka_unit_test(test_probe_backs_off),            cmocka_unit_test(test_held_node_decided_again),
        cmocka_unit_test(test_long_mass_silence_stays_held), cmocka_unit_test(test_decided_nodes_do_not_hold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
