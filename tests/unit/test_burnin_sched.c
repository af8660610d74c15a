/* test_burnin_sched.c — the burn-in scheduler (src/burnin/schedule.c,
 * sched_state.c) against the in-memory orchestrator with a set clock: only
 * idle nodes of the burn-in partition get a pass, each on exactly that node,
 * alone on it, its time limit the budget left; a node with a pass in flight,
 * a busy, drained or down node, a hot spare gets none; a preempted pass counts as
 * preempted and against the budget only for what it ran; a spent budget
 * submits nothing; the result comes from the job's output document; the
 * state file round-trips and names what is wrong with a bad one. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "burnin/schedule.h"
#include "helpers/fake_orch.h"
#include "util/jsonutil.h"
#include "util/strutil.h"

#define MIN 60000LL
#define T0 1800000000000LL   /* the clock the tests set (2027-01-15) */

static const char *const job_argv[] = { "/usr/bin/vigil", "burnin", "--suite", "quick", "--drain", "--json", NULL };
static char jobs_dir[64];

static struct vg_orch *open_fake(void)
{
    char err[256];
    struct vg_orch_conf c = { 0 };
    struct vg_orch *o = vg_orch_open_ops(&fake_orch_ops, &c, err, sizeof err);
    assert_non_null(o);
    return o;
}

static void add(const char *name, const char *partitions)
{
    fake_add_node(name, "");
    vg_strlcpy(fake_node(name)->partitions, partitions, sizeof fake_node(name)->partitions);
}

static struct vg_bi_sched_opts sopts(int64_t now)
{
    return (struct vg_bi_sched_opts){ .partition = "vigil-burnin", .suite = VG_BI_QUICK, .budget_ms = 20 * MIN,
                                      .window_ms = 60 * MIN, .jobs_dir = jobs_dir, .argv = job_argv,
                                      .node_flag = "--node", .now_ms = now };
}

static struct fake_job *job(const char *id)
{
    for (size_t i = 0; i < fake.njobs; i++)
        if (!strcmp(fake.jobs[i].id, id)) return &fake.jobs[i];
    fail_msg("no job %s", id);
    return NULL;
}

/* "n1:submitted n2:skipped …" */
static char *actions(json_t *r)
{
    static char buf[512];
    buf[0] = 0;
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(r, "nodes"), i, e) {
        size_t l = strlen(buf);
        snprintf(buf + l, sizeof buf - l, "%s%s:%s", l ? " " : "", vg_json_str(e, "node", ""),
                 vg_json_str(e, "action", ""));
    }
    return buf;
}

static const char *why(json_t *r, const char *node)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(r, "nodes"), i, e)
        if (!strcmp(vg_json_str(e, "node", ""), node)) return vg_json_str(e, "why", "");
    return "?";
}

static int setup(void **state)
{
    (void)state;
    fake_reset();
    snprintf(jobs_dir, sizeof jobs_dir, "/tmp/vigil-test-bisched.XXXXXX");
    assert_non_null(mkdtemp(jobs_dir));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    for (size_t i = 0; i < 8; i++) {   /* the output files the tests wrote */
        snprintf(cmd, sizeof cmd, "%s/out%zu", jobs_dir, i);
        unlink(cmd);
    }
    snprintf(cmd, sizeof cmd, "%s/state.json", jobs_dir);
    unlink(cmd);
    rmdir(jobs_dir);
    return 0;
}

static void test_idle_nodes_only(void **state)
{
    (void)state;
    add("n1", "gpu,vigil-burnin");
    add("n2", "gpu,vigil-burnin");
    add("n3", "gpu,vigil-burnin");
    add("n4", "gpu,vigil-burnin");
    add("n5", "gpu");                        /* not in the burn-in partition */
    add("n6", "gpu,vigil-burnin");           /* a hot spare */
    fake.pool_exists = true, fake.npool = 1;
    vg_strlcpy(fake.pool[0], "n6", sizeof fake.pool[0]);
    fake_add_job("7", "n2");                 /* busy */
    fake_node("n2")->busy = true;
    vg_strlcpy(fake_node("n2")->state, "ALLOCATED", sizeof fake_node("n2")->state);
    fake_node("n3")->drain = true, fake_node("n3")->idle = false;
    fake_node("n4")->down = true, fake_node("n4")->idle = false, fake_node("n4")->responding = false;
    struct vg_orch *o = open_fake();
    struct vg_bi_state st = { 0 };
    struct vg_bi_sched_opts so = sopts(T0);
    so.spare_pool = "vigil_spares";
    json_t *r;
    char err[256];
    assert_int_equal(vg_bi_schedule(o, &so, &st, &r, err, sizeof err), 0);
    assert_string_equal(actions(r), "n1:submitted n2:skipped n3:skipped n4:skipped n6:skipped");
    assert_string_equal(why(r, "n6"), "a hot spare (pool vigil_spares)");
    assert_string_equal(why(r, "n2"), "not idle (ALLOCATED)");
    assert_true(vg_startswith(why(r, "n3"), "drained"));
    assert_true(vg_startswith(why(r, "n4"), "down"));
    struct fake_job *j = job("100");
    assert_string_equal(j->node, "n1");
    assert_string_equal(j->partition, "vigil-burnin");
    assert_true(j->exclusive);
    assert_int_equal(j->time_limit_s, 20 * 60);
    assert_string_equal(j->argv, "/usr/bin/vigil burnin --suite quick --drain --json --node n1");
    assert_int_equal(st.n, 1);
    assert_string_equal(st.p[0].result, "pending");
    assert_int_equal(st.p[0].submitted_ms, T0);
    json_decref(r);

    /* the next round: n1's pass is in flight (running now), nothing new */
    vg_strlcpy(j->state, "RUNNING", sizeof j->state);
    j->started_ms = T0 + 2000;
    fake_node("n1")->idle = false;
    so.now_ms = T0 + 60000;
    assert_int_equal(vg_bi_schedule(o, &so, &st, &r, err, sizeof err), 0);
    assert_string_equal(actions(r), "n1:skipped n2:skipped n3:skipped n4:skipped n6:skipped");
    assert_string_equal(why(r, "n1"), "its pass is running (job 100)");
    assert_int_equal(fake.njobs, 2);
    assert_string_equal(st.p[0].result, "running");
    assert_int_equal(st.p[0].start_ms, T0 + 2000);
    json_decref(r);
    vg_bi_state_free(&st);
    vg_orch_close(o);
}

static void test_preempted_counts_what_it_ran(void **state)
{
    (void)state;
    add("n1", "vigil-burnin");
    struct vg_orch *o = open_fake();
    struct vg_bi_state st = { 0 };
    struct vg_bi_sched_opts so = sopts(T0);
    json_t *r;
    char err[256];
    assert_int_equal(vg_bi_schedule(o, &so, &st, &r, err, sizeof err), 0);
    json_decref(r);
    struct fake_job *j = job("100");
    vg_strlcpy(j->state, "PREEMPTED", sizeof j->state);
    j->started_ms = T0 + 1000;
    j->ended_ms = T0 + 1000 + 7 * MIN;       /* a production job took the node after 7 minutes */
    so.now_ms = T0 + 10 * MIN;
    assert_int_equal(vg_bi_schedule(o, &so, &st, &r, err, sizeof err), 0);
    json_t *e = json_array_get(json_object_get(r, "ended"), 0);
    assert_string_equal(vg_json_str(e, "result", ""), "preempted");
    assert_true(json_number_value(json_object_get(e, "ran_s")) == 7 * 60);
    assert_string_equal(st.p[0].result, "preempted");
    /* the node is idle again: a new pass, its limit the 13 minutes left */
    assert_string_equal(actions(r), "n1:submitted");
    assert_int_equal(job("101")->time_limit_s, 13 * 60);
    assert_int_equal(vg_bi_budget_used_ms(&st, "n1", so.now_ms, 60 * MIN), 7 * MIN);
    json_decref(r);
    vg_bi_state_free(&st);
    vg_orch_close(o);
}

static void test_budget_spent(void **state)
{
    (void)state;
    add("n1", "vigil-burnin");
    add("n2", "vigil-burnin");
    struct vg_bi_state st = { 0 };
    /* n1: 20 minutes in the last hour; n2: 25 minutes, of which 15 more than an hour ago */
    struct vg_bi_pass *p = vg_bi_state_add(&st);
    vg_strlcpy(p->node, "n1", sizeof p->node), vg_strlcpy(p->job, "5", sizeof p->job);
    vg_strlcpy(p->result, "pass", sizeof p->result);
    p->start_ms = T0 - 30 * MIN, p->end_ms = T0 - 10 * MIN;
    p = vg_bi_state_add(&st);
    vg_strlcpy(p->node, "n2", sizeof p->node), vg_strlcpy(p->job, "6", sizeof p->job);
    vg_strlcpy(p->result, "fail", sizeof p->result);
    p->start_ms = T0 - 75 * MIN, p->end_ms = T0 - 50 * MIN;
    struct vg_orch *o = open_fake();
    struct vg_bi_sched_opts so = sopts(T0);
    json_t *r;
    char err[256];
    assert_int_equal(vg_bi_schedule(o, &so, &st, &r, err, sizeof err), 0);
    assert_string_equal(actions(r), "n1:skipped n2:submitted");
    assert_string_equal(why(r, "n1"), "budget spent: 1200 s of 1200 s used in the last 60 min");
    assert_int_equal(job("100")->time_limit_s, 10 * 60);
    json_decref(r);
    /* the standard suite needs 5 minutes: 4 left is spent */
    so.now_ms = T0 + 1;
    st.p[0].end_ms = T0 - 14 * MIN, st.p[0].start_ms = T0 - 30 * MIN;   /* 16 minutes */
    so.suite = VG_BI_STANDARD;
    fake_reset();
    add("n1", "vigil-burnin");
    assert_int_equal(vg_bi_schedule(o, &so, &st, &r, err, sizeof err), 0);
    assert_string_equal(actions(r), "n1:skipped");
    json_decref(r);
    vg_bi_state_free(&st);
    vg_orch_close(o);
}

static void test_result_from_output(void **state)
{
    (void)state;
    add("n1", "vigil-burnin");
    add("n2", "vigil-burnin");
    add("n3", "vigil-burnin");
    struct vg_orch *o = open_fake();
    struct vg_bi_state st = { 0 };
    struct vg_bi_sched_opts so = sopts(T0);
    json_t *r;
    char err[256];
    assert_int_equal(vg_bi_schedule(o, &so, &st, &r, err, sizeof err), 0);
    json_decref(r);
    /* n1 passed (a log line before the document), n2 failed, n3's job ended with no document */
    snprintf(st.p[0].output, sizeof st.p[0].output, "%s/out0", jobs_dir);
    snprintf(st.p[1].output, sizeof st.p[1].output, "%s/out1", jobs_dir);
    snprintf(st.p[2].output, sizeof st.p[2].output, "%s/out2", jobs_dir);
    FILE *f = fopen(st.p[0].output, "w");
    fputs("vigil: warning: something on stderr\n{\n  \"suite\": \"quick\",\n  \"nodes\": [\n"
          "    {\"node\": \"n1\", \"result\": \"pass\"}\n  ]\n}\n", f);
    fclose(f);
    f = fopen(st.p[1].output, "w");
    fputs("{\"suite\": \"quick\", \"nodes\": [{\"node\": \"n2\", \"result\": \"fail\"}]}\n", f);
    fclose(f);
    f = fopen(st.p[2].output, "w");
    fputs("srun: error: n3: task 0: Killed\n", f);
    fclose(f);
    for (int i = 0; i < 3; i++) {
        struct fake_job *j = &fake.jobs[i];
        vg_strlcpy(j->state, i == 1 ? "FAILED" : i == 2 ? "TIMEOUT" : "COMPLETED", sizeof j->state);
        j->started_ms = T0 + 1000, j->ended_ms = T0 + 31000;
    }
    fake_node("n1")->idle = false;           /* taken meanwhile */
    fake_node("n2")->idle = false;
    fake_node("n3")->idle = false;
    so.now_ms = T0 + 5 * MIN;
    assert_int_equal(vg_bi_schedule(o, &so, &st, &r, err, sizeof err), 1);
    assert_string_equal(err, "node n2 failed its burn-in pass (job 101)");
    assert_string_equal(st.p[0].result, "pass");
    assert_string_equal(st.p[1].result, "fail");
    assert_string_equal(st.p[2].result, "unknown");
    assert_string_equal(st.p[2].detail, "the job ended TIMEOUT and its output holds no result");
    assert_int_equal(vg_bi_budget_used_ms(&st, "n1", so.now_ms, 60 * MIN), 30000);
    json_decref(r);
    vg_bi_state_free(&st);
    vg_orch_close(o);
}

static void test_job_gone_and_errors(void **state)
{
    (void)state;
    add("n1", "vigil-burnin");
    struct vg_orch *o = open_fake();
    struct vg_bi_state st = { 0 };
    struct vg_bi_pass *p = vg_bi_state_add(&st);
    vg_strlcpy(p->node, "n1", sizeof p->node), vg_strlcpy(p->job, "42", sizeof p->job);
    vg_strlcpy(p->result, "running", sizeof p->result);
    p->start_ms = T0 - 2 * MIN;
    struct vg_bi_sched_opts so = sopts(T0);
    json_t *r;
    char err[256];
    fake_node("n1")->idle = false;
    assert_int_equal(vg_bi_schedule(o, &so, &st, &r, err, sizeof err), 0);
    assert_string_equal(st.p[0].result, "unknown");
    assert_true(vg_startswith(st.p[0].detail, "the job left the scheduler's records"));
    assert_int_equal(st.p[0].end_ms, T0);
    json_decref(r);
    /* a partition no node is in */
    so.partition = "nosuch";
    assert_int_equal(vg_bi_schedule(o, &so, &st, &r, err, sizeof err), 2);
    assert_string_equal(err,
                        "--burnin-partition: no node is in partition 'nosuch' (the fake orchestrator knows 1 nodes)");
    assert_null(r);
    /* an orchestrator without partitions (Kubernetes) */
    vg_strlcpy(fake_node("n1")->partitions, "", sizeof fake_node("n1")->partitions);
    so.partition = "vigil-burnin";
    assert_int_equal(vg_bi_schedule(o, &so, &st, &r, err, sizeof err), 2);
    assert_string_equal(err, "--orchestrator: the fake orchestrator has no partitions: scheduling burn-in on it "
                             "is not supported (it needs a preemptible low-priority partition)");
    /* the scheduler unreachable */
    so.partition = "vigil-burnin";
    fake.down = true;
    assert_int_equal(vg_bi_schedule(o, &so, &st, &r, err, sizeof err), 1);
    assert_null(r);
    vg_bi_state_free(&st);
    vg_orch_close(o);
}

static void test_state_file(void **state)
{
    (void)state;
    char path[128], err[256];
    snprintf(path, sizeof path, "%s/state.json", jobs_dir);
    struct vg_bi_state st = { 0 }, back;
    assert_int_equal(vg_bi_state_load(path, &back, err, sizeof err), 0);   /* missing: empty */
    assert_int_equal(back.n, 0);
    struct vg_bi_pass *p = vg_bi_state_add(&st);
    vg_strlcpy(p->node, "n1", sizeof p->node), vg_strlcpy(p->job, "9", sizeof p->job);
    vg_strlcpy(p->suite, "quick", sizeof p->suite), vg_strlcpy(p->result, "preempted", sizeof p->result);
    p->submitted_ms = T0, p->start_ms = T0 + 1000, p->end_ms = T0 + 4500;
    p = vg_bi_state_add(&st);
    vg_strlcpy(p->node, "n2", sizeof p->node), vg_strlcpy(p->job, "10", sizeof p->job);
    vg_strlcpy(p->result, "pending", sizeof p->result);
    p->submitted_ms = T0 - 100 * MIN;
    assert_int_equal(vg_bi_state_save(path, &st, err, sizeof err), 0);
    assert_int_equal(vg_bi_state_load(path, &back, err, sizeof err), 0);
    assert_int_equal(back.n, 2);
    assert_string_equal(back.p[0].result, "preempted");
    assert_int_equal(back.p[0].start_ms, T0 + 1000);
    assert_int_equal(back.p[0].end_ms, T0 + 4500);
    assert_int_equal(back.p[1].start_ms, 0);
    /* pruning keeps what is in flight */
    vg_bi_state_prune(&back, T0 + 10 * MIN);
    assert_int_equal(back.n, 1);
    assert_string_equal(back.p[0].node, "n2");
    vg_bi_state_free(&back);
    vg_bi_state_free(&st);
    /* the lock is held by one scheduler at a time */
    int fd = vg_bi_state_lock(path, err, sizeof err);
    assert_true(fd >= 0);
    assert_int_equal(vg_bi_state_lock(path, err, sizeof err), -1);
    assert_true(strstr(err, "another burn-in scheduler holds it") != NULL);
    close(fd);
    snprintf(err, sizeof err, "%s.lock", path);
    unlink(err);
    /* bad files name what is wrong */
    assert_int_equal(vg_bi_state_parse("{\"version\": 1, \"passes\": [{\"node\": \"n1\", \"job\": \"3\", "
                                       "\"result\": \"maybe\"}]}", &back, err, sizeof err), -1);
    assert_string_equal(err, "passes[0]: result is not pending, running, pass, fail, unknown or preempted");
    assert_int_equal(vg_bi_state_parse("[1, 2]", &back, err, sizeof err), -1);
    assert_string_equal(err, "not a burn-in state file (version 1 with passes)");
    assert_int_equal(vg_bi_state_parse("{\"version\": 1,", &back, err, sizeof err), -1);
    assert_true(vg_startswith(err, "line 1: "));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_idle_nodes_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_preempted_counts_what_it_ran, setup, teardown),
        cmocka_unit_test_setup_teardown(test_budget_spent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_result_from_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_gone_and_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_file, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
