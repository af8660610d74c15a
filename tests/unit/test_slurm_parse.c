/* test_slurm_parse.c — the Slurm adapter's parsers on output captured from a
 * real slurm-wlm 22.05 lab (tests/fixtures/slurm/), on hand-made edge cases,
 * and the argument checks that refuse a call before anything is spawned. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <time.h>
#include "orch/slurm.h"
#include "util/rootfs.h"

static char *fixture(const char *name)
{
    char path[256], *text;
    snprintf(path, sizeof path, "tests/fixtures/slurm/%s", name);
    assert_int_equal(vg_read_file(NULL, path, 1 << 20, &text, NULL), 0);
    return text;
}

static void test_nodes_idle(void **state)
{
    (void)state;
    char *t = fixture("show-node-idle.txt");
    struct vg_node_state *n;
    size_t k;
    assert_int_equal(vg_slurm_parse_nodes(t, &n, &k), 0);
    assert_int_equal(k, 5);
    assert_string_equal(n[0].name, "n1");
    assert_string_equal(n[0].state, "IDLE");
    assert_string_equal(n[0].reason, "");
    assert_string_equal(n[0].partitions, "gpu");
    assert_string_equal(n[0].features, "rack1");
    assert_string_equal(n[4].name, "n5");
    assert_string_equal(n[4].features, "rack3,spare");
    for (size_t i = 0; i < k; i++) assert_true(!n[i].drain && !n[i].down && n[i].responding);
    free(n);
    free(t);
}

static void test_nodes_drained_and_down(void **state)
{
    (void)state;
    char *t = fixture("show-node-mixed.txt");
    struct vg_node_state *n;
    size_t k;
    assert_int_equal(vg_slurm_parse_nodes(t, &n, &k), 0);
    assert_int_equal(k, 5);
    assert_string_equal(n[0].state, "MIXED");
    assert_false(n[0].drain);
    assert_string_equal(n[2].state, "IDLE+DRAIN");
    assert_true(n[2].drain);
    assert_false(n[2].down);
    /* spaces, an upper-case "Xid=79" and the [user@time] stamp in one reason */
    assert_string_equal(n[2].reason, "vigil: xid 79 GPU fallen off the bus (Xid=79) on gpu 0");
    assert_string_equal(n[4].state, "DOWN");
    assert_true(n[4].down);
    assert_string_equal(n[4].reason, "vigil: ecc-dbe [gpu 1]");
    free(n);
    free(t);
}

static void test_nodes_edge_cases(void **state)
{
    (void)state;
    struct vg_node_state *n;
    size_t k;
    /* a field after the reason; NOT_RESPONDING; a line without NodeName */
    const char *t = "NodeName=a State=DOWN+DRAIN+NOT_RESPONDING Reason=Not responding [slurm@2026-01-01T00:00:00] "
                    "Comment=x y AvailableFeatures=(null)\n"
                    "garbage line without fields\n"
                    "NodeName=b State=IDLE Reason=no stamp here Partitions=p1,p2";
    assert_int_equal(vg_slurm_parse_nodes(t, &n, &k), 0);
    assert_int_equal(k, 2);
    assert_string_equal(n[0].reason, "Not responding");
    assert_true(n[0].down && n[0].drain && !n[0].responding);
    assert_string_equal(n[0].features, "");
    assert_string_equal(n[1].reason, "no stamp here");
    assert_string_equal(n[1].partitions, "p1,p2");
    free(n);
    assert_int_equal(vg_slurm_parse_nodes("", &n, &k), 0);
    assert_int_equal(k, 0);
    free(n);
    assert_int_equal(vg_slurm_parse_nodes("NodeName= State==x =y Reason=[", &n, &k), 0);
    assert_int_equal(k, 0);
    free(n);
}

static void test_job(void **state)
{
    (void)state;
    char *t = fixture("show-job-running.txt");
    struct vg_job_state j;
    assert_int_equal(vg_slurm_parse_job(t, &j), 0);
    assert_int_equal(j.id, 2);
    assert_string_equal(j.name, "train job");
    assert_string_equal(j.state, "RUNNING");
    assert_string_equal(j.reason, "None");
    assert_string_equal(j.nodelist, "n[1-2]");   /* not ReqNodeList=(null) */
    assert_string_equal(j.batch_host, "n1");
    assert_int_equal(j.restarts, 0);
    free(t);
    t = fixture("show-job-pending.txt");
    assert_int_equal(vg_slurm_parse_job(t, &j), 0);
    assert_string_equal(j.state, "PENDING");
    assert_string_equal(j.reason, "BeginTime");
    assert_string_equal(j.nodelist, "");
    assert_int_equal(j.restarts, 1);
    free(t);
    assert_string_equal(j.comment, "");   /* no Comment= */
    t = fixture("show-job-inalloc.txt");
    assert_int_equal(vg_slurm_parse_job(t, &j), 0);
    assert_string_equal(j.comment, "vigil:spares=1");   /* vigil launch's mark: tell it, do not requeue */
    assert_string_equal(j.batch_host, "n1");
    free(t);
    /* a burn-in job a production job preempted: when it ran, in the local time zone slurmctld prints */
    t = fixture("show-job-preempted.txt");
    assert_int_equal(vg_slurm_parse_job(t, &j), 0);
    assert_string_equal(j.state, "PREEMPTED");
    struct tm tm = { .tm_year = 126, .tm_mon = 11, .tm_mday = 2, .tm_hour = 5, .tm_min = 38, .tm_sec = 20,
                     .tm_isdst = -1 };
    int64_t start = (int64_t)mktime(&tm) * 1000;
    assert_int_equal(j.start_ms, start);
    assert_int_equal(j.end_ms, start + 2000);
    free(t);
    t = fixture("show-job-pending.txt");   /* EndTime=Unknown */
    assert_int_equal(vg_slurm_parse_job(t, &j), 0);
    assert_int_equal(j.end_ms, 0);
    free(t);
    assert_int_equal(vg_slurm_parse_job("slurm_load_jobs error: Invalid job id specified", &j), -1);
    assert_int_equal(vg_slurm_parse_job("JobId=-3 JobState=RUNNING", &j), -1);
}

static void test_jobs_on(void **state)
{
    (void)state;
    char *t = fixture("show-jobs-three.txt");   /* scontrol show job -o: 2 running, 1 pending */
    struct vg_job_brief *j;
    size_t n;
    const char *n2[] = { "n2" }, *n1[] = { "n1" }, *n3[] = { "n3" }, *both[] = { "n3", "n2", "n1" };
    assert_int_equal(vg_slurm_parse_jobs_on(t, n2, 1, "", 0, &j, &n), 0);   /* n2 inside n[1-2] */
    assert_int_equal(n, 1);
    assert_int_equal(j[0].id, 1);
    assert_string_equal(j[0].batch_host, "n1");
    assert_string_equal(j[0].comment, "nightly eval run");   /* a comment with blanks */
    free(j);
    assert_int_equal(vg_slurm_parse_jobs_on(t, n1, 1, "", 0, &j, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(j[1].id, 2);
    assert_string_equal(j[1].comment, "vigil:spares=1");
    free(j);
    assert_int_equal(vg_slurm_parse_jobs_on(t, n3, 1, "", 0, &j, &n), 0);   /* the pending job holds no node */
    assert_int_equal(n, 0);
    free(j);
    assert_int_equal(vg_slurm_parse_jobs_on(t, both, 3, "", 0, &j, &n), 0);   /* each job once */
    assert_int_equal(n, 2);
    free(j);
    free(t);
    assert_int_equal(vg_slurm_parse_jobs_on("No jobs in the system\n", n1, 1, "", 0, &j, &n), 0);
    assert_int_equal(n, 0);
    free(j);
    assert_int_equal(vg_slurm_parse_jobs_on("JobId=7 JobState=COMPLETING NodeList=n1 Comment=(null)\n", n1, 1, "", 0, &j, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(j[0].comment, "");
    free(j);
    assert_int_equal(vg_slurm_parse_jobs_on("JobId=x JobState=RUNNING NodeList=n1\n", n1, 1, "", 0, &j, &n), -1);
    assert_null(j);
    /* a requeueable job that ended FAILED on n1 (EndTime 12:31:03 local) beside a running one */
    t = fixture("show-jobs-failed.txt");
    struct tm tm = { .tm_year = 126, .tm_mon = 11, .tm_mday = 2, .tm_hour = 12, .tm_min = 31, .tm_sec = 3, .tm_isdst = -1 };
    int64_t end = (int64_t)mktime(&tm) * 1000;
    assert_int_equal(vg_slurm_parse_jobs_on(t, n1, 1, "", end + 10000, &j, &n), 0);   /* 10 s after: both */
    assert_int_equal(n, 2);
    assert_int_equal(j[0].id, 1);
    free(j);
    assert_int_equal(vg_slurm_parse_jobs_on(t, n1, 1, "", end + VG_SLURM_RECENT_END_MS + 1000, &j, &n), 0);   /* too long ago */
    assert_int_equal(n, 1);
    assert_int_equal(j[0].id, 2);
    free(j);
    free(t);
    assert_int_equal(vg_slurm_parse_jobs_on("JobId=9 JobState=FAILED Requeue=0 EndTime=2026-12-02T12:31:03 NodeList=n1\n",
                                            n1, 1, "", end + 1000, &j, &n), 0);   /* may not be requeued */
    assert_int_equal(n, 0);
    free(j);
    /* still completing after its batch script failed on n1 as the fault hit, n1 gone from its
     * NodeList by the DOWN, not requeued by it (Restarts=0, EndTime past): on n1 by its batch
     * host, to requeue; the same record read with no time of the DOWN is not */
    const char *completing = "JobId=8 JobState=COMPLETING Requeue=1 Restarts=0 EndTime=2026-12-02T12:31:03 "
                             "NodeList=n2 BatchHost=n1\n";
    assert_int_equal(vg_slurm_parse_jobs_on(completing, n1, 1, "", end + 1000, &j, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(j[0].id, 8);
    assert_false(j[0].requeued);
    free(j);
    assert_int_equal(vg_slurm_parse_jobs_on(completing, n1, 1, "", 0, &j, &n), 0);
    assert_int_equal(n, 0);
    free(j);
    /* ended by the DOWN though it may not be requeued: listed (its requeue is refused, and said) */
    assert_int_equal(vg_slurm_parse_jobs_on("JobId=9 JobState=NODE_FAIL Requeue=0 EndTime=2026-12-02T12:31:03 NodeList=n1\n",
                                            n1, 1, "", end + 1000, &j, &n), 0);
    assert_int_equal(n, 1);
    free(j);
}

/* Read after the DOWN (real lines, the lab): job 3, `sbatch -N2 -w n3,n4
 * --no-kill --requeue`, its batch host n3 DOWN (still RUNNING, NodeList=n4,
 * BatchHost=n3); job 1, `sbatch -N2 -w n1,n2 --no-kill --comment
 * vigil:spares=1`, n2 DOWN (RUNNING on n1 alone: nothing names n2). */
static void test_jobs_after_down(void **state)
{
    (void)state;
    char *t = fixture("show-jobs-after-down.txt");
    struct vg_job_brief *j;
    size_t n;
    const char *n3[] = { "n3" }, *n2[] = { "n2" };
    assert_int_equal(vg_slurm_parse_jobs_on(t, n3, 1, "", 0, &j, &n), 0);   /* found by its batch host */
    assert_int_equal(n, 1);
    assert_int_equal(j[0].id, 3);
    assert_string_equal(j[0].batch_host, "n3");
    free(j);
    /* n2 went out at 16:55:41 local, when job 1 shrank (its ResizeTime) */
    struct tm tm = { .tm_year = 126, .tm_mon = 11, .tm_mday = 2, .tm_hour = 16, .tm_min = 55, .tm_sec = 41,
                     .tm_isdst = -1 };
    int64_t out = (int64_t)mktime(&tm) * 1000 + 400;
    assert_int_equal(vg_slurm_parse_jobs_on(t, n2, 1, "", out, &j, &n), 0);   /* n2 is gone from job 1 */
    assert_int_equal(n, 0);
    free(j);
    assert_int_equal(vg_slurm_parse_jobs_on(t, n2, 1, "5,1", out, &j, &n), 0);   /* n2's agent saw job 1 there */
    assert_int_equal(n, 1);
    assert_int_equal(j[0].id, 1);
    assert_string_equal(j[0].comment, "vigil:spares=1");
    free(j);
    /* a read retried later still finds it: the shrink came at the DOWN, before the read */
    assert_int_equal(vg_slurm_parse_jobs_on(t, n2, 1, "5,1", out - 1500, &j, &n), 0);
    assert_int_equal(n, 1);
    free(j);
    /* but a node naming a marked job that lost nothing when it went out is not believed: the
     * job's allocation never held it (a forged list would make vigil signal someone's job) */
    assert_int_equal(vg_slurm_parse_jobs_on(t, n2, 1, "5,1", out + 60000, &j, &n), 0);
    assert_int_equal(n, 0);
    free(j);
    assert_int_equal(vg_slurm_parse_jobs_on(t, n2, 1, "3,11", out, &j, &n), 0);   /* known, but no spares of its own */
    assert_int_equal(n, 0);
    free(j);
    free(t);
    /* a marked job that never shrank (no ResizeTime), named by a node it does not run on */
    t = fixture("show-job-inalloc.txt");
    const char *n7[] = { "n7" };
    assert_int_equal(vg_slurm_parse_jobs_on(t, n7, 1, "1", 0, &j, &n), 0);
    assert_int_equal(n, 0);
    free(j);
    free(t);
    /* requeued by the DOWN: pending again, nothing in its record names the node; marked when known */
    t = fixture("show-job-requeued-by-down.txt");
    const char *n4[] = { "n4" };   /* a node neither record names (job 1's n1 is gone from it) */
    assert_int_equal(vg_slurm_parse_jobs_on(t, n4, 1, "", 0, &j, &n), 0);
    assert_int_equal(n, 0);
    free(j);
    assert_int_equal(vg_slurm_parse_jobs_on(t, n4, 1, "1", 0, &j, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(j[0].id, 1);
    assert_true(j[0].requeued);
    free(j);
    /* job 2: still completing on n3, its node n2 gone */
    assert_int_equal(vg_slurm_parse_jobs_on(t, n2, 1, "2", 0, &j, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(j[0].id, 2);
    assert_true(j[0].requeued);
    free(j);
    /* the same job when the node the DOWN took was its batch host: it keeps BatchHost=n1
     * while completing, and is still only named, not requeued again */
    const char *b1[] = { "n1" };
    assert_int_equal(vg_slurm_parse_jobs_on(t, b1, 1, "2", 0, &j, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(j[0].id, 2);
    assert_true(j[0].requeued);
    free(j);
    free(t);
    /* a job the DOWN left is not marked */
    const char *n1[] = { "n1" };
    assert_int_equal(vg_slurm_parse_jobs_on("JobId=7 JobState=COMPLETING NodeList=n1 Comment=(null)\n", n1, 1, "7", 0, &j, &n), 0);
    assert_int_equal(n, 1);
    assert_false(j[0].requeued);
    free(j);
}

/* scontrol requeue 1,2,3 after n1 (job 1's node) went DOWN, on the lab
 * (Slurm 22.05): one stderr line per job it refused, exit 1. */
static void test_requeue_refusals(void **state)
{
    (void)state;
    char out[256];
    const char *err = "Job is pending execution for job 1\nRequested operation is presently disabled for job 3\n";
    assert_true(vg_slurm_requeue_refused(err, out, sizeof out));
    assert_string_equal(out, "Requested operation is presently disabled for job 3");
    assert_false(vg_slurm_requeue_refused("Job is pending execution for job 1\n", out, sizeof out));
    assert_string_equal(out, "");   /* requeued already (by the DOWN): done */
    assert_true(vg_slurm_requeue_refused("Requested operation is presently disabled for job 2\n"
                                         "Requested operation is presently disabled for job 3", out, sizeof out));
    assert_string_equal(out, "Requested operation is presently disabled for job 2; "
                             "Requested operation is presently disabled for job 3");
    assert_false(vg_slurm_requeue_refused("", out, sizeof out));
}

static void test_refusals(void **state)
{
    (void)state;
    struct vg_slurm s = { .conf = "/nonexistent/slurm.conf" };
    const char *bad[] = { "n1", "n2 State=resume" };
    const char *ok[] = { "n1", "n[2-3]" };
    assert_int_equal(vg_slurm_set_state(&s, ok, 2, "drain", "no prefix"), -1);
    assert_non_null(strstr(s.err, "vigil:"));
    assert_int_equal(vg_slurm_set_state(&s, ok, 2, "down", NULL), -1);
    assert_int_equal(vg_slurm_set_state(&s, bad, 2, "drain", "vigil: x"), -1);
    assert_non_null(strstr(s.err, "invalid node name"));
    assert_int_equal(vg_slurm_set_state(&s, ok, 2, "drain", "vigil: two\nlines"), -1);
    assert_int_equal(vg_slurm_set_state(&s, ok, 0, "drain", "vigil: none"), 0);
    struct vg_job_brief *jobs;
    size_t nj;
    assert_int_equal(vg_slurm_jobs_on(&s, bad, 2, "", 0, &jobs, &nj), -1);
    struct vg_node_state *ns;
    size_t nn;
    assert_int_equal(vg_slurm_nodes(&s, "n1 n2", &ns, &nn), -1);
    /* a name that is an option ("--help" from a forged heartbeat) never reaches a command */
    assert_int_equal(vg_slurm_nodes(&s, "--help", &ns, &nn), -1);
    const char *opt[] = { "-h" };
    assert_int_equal(vg_slurm_set_state(&s, opt, 1, "down", "vigil: x"), -1);
    assert_int_equal(vg_slurm_jobs_on(&s, opt, 1, "", 0, &jobs, &nj), -1);
    assert_int_equal(vg_slurm_reservation_set(&s, "-h", ok, 1, true), -1);
    assert_int_equal(s.calls, 0);
}

/* What the commands receive: a stand-in scontrol (first on PATH) answers with
 * a job line whose Comment is its own argv, so the test reads it back: every
 * operand comes after "--". */
static void test_operands_follow_dashdash(void **state)
{
    (void)state;
    char dir[] = "/tmp/vigil-argv-XXXXXX", path[128], *old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/scontrol", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("#!/bin/sh\nIFS=_\necho \"JobId=5 JobState=RUNNING Comment=$*\"\n", f);
    fclose(f);
    chmod(path, 0755);
    char newpath[4200];
    snprintf(newpath, sizeof newpath, "%s:%s", dir, old ? old : "/usr/bin:/bin");
    setenv("PATH", newpath, 1);
    struct vg_slurm s = { .timeout_ms = 5000 };
    struct vg_job_state js;
    assert_int_equal(vg_slurm_job(&s, 5, &js), 0);
    assert_string_equal(js.comment, "show_job_-o_--_5");
    struct vg_node_state *ns;
    size_t nn;
    assert_int_equal(vg_slurm_nodes(&s, "n1", &ns, &nn), 0);   /* the stand-in prints no node: none parsed */
    free(ns);
    assert_int_equal(s.calls, 2);
    if (old) setenv("PATH", old, 1);
    free(old);
    unlink(path);
    rmdir(dir);
}

/* A requeue while slurmctld cannot be reached (nothing listens on its port)
 * fails with the command's own outcome: only "pending execution" counts as
 * done, never silence or a timeout. */
static void test_requeue_scheduler_down(void **state)
{
    (void)state;
    char conf[] = "/tmp/vigil-down-XXXXXX";
    int fd = mkstemp(conf);
    assert_true(fd >= 0);
    const char *text = "ClusterName=down\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=1\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    struct vg_slurm s = { .conf = conf, .timeout_ms = 1500 };
    const long ids[] = { 5 };
    assert_int_equal(vg_slurm_requeue(&s, ids, 1), -1);
    assert_int_equal(s.calls, 1);
    assert_non_null(strstr(s.err, "scontrol requeue"));
    assert_null(strstr(s.err, "pending execution"));
    unlink(conf);
}

/* sdiag from Slurm 22.05 (the lab): the times and both tables. */
static void test_sdiag(void **state)
{
    (void)state;
    char *text;
    assert_int_equal(vg_read_file(NULL, "tests/fixtures/slurm/sdiag-22.05-lab-root.txt", 1 << 20, &text, NULL), 0);
    struct vg_sdiag d;
    assert_int_equal(vg_slurm_parse_sdiag(text, &d), 0);
    free(text);
    assert_int_equal(d.at, 1796111548);
    assert_int_equal(d.since, 1796111548);
    assert_int_equal(d.nusers, 1);
    assert_string_equal(d.users[0].name, "root");
    assert_int_equal(d.users[0].id, 0);
    assert_int_equal(d.users[0].count, 73);
    assert_int_equal(d.ntypes, 6);
    assert_string_equal(d.types[2].name, "REQUEST_SUBMIT_BATCH_JOB");
    assert_int_equal(d.types[2].id, 4003);
    assert_int_equal(d.types[2].count, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sdiag), cmocka_unit_test(test_nodes_idle), cmocka_unit_test(test_nodes_drained_and_down),
        cmocka_unit_test(test_nodes_edge_cases), cmocka_unit_test(test_job),
        cmocka_unit_test(test_jobs_on),
        cmocka_unit_test(test_jobs_after_down), cmocka_unit_test(test_requeue_refusals), cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_requeue_scheduler_down), cmocka_unit_test(test_operands_follow_dashdash),
    };
    return cmocka_run_group_tests_name("slurm_parse", tests, NULL, NULL);
}
