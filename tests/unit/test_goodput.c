/* test_goodput.c — goodput of trainer jobs from their logs: the real
 * `vigil trainer` killed twice and started again on its checkpoints (its
 * log is what it printed, appended across the three starts); job logs
 * captured on the lab with Slurm's and vigil launch's own lines in them
 * (tests/fixtures/slurm/);
 * the arithmetic on a log with a restart that resumed twice from the same
 * checkpoint; a drill report naming its runs' logs; and bad input (a line
 * that is not the trainer's, a missing file, a directory without logs, a
 * drill of a user's job script). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "drill/goodput.h"
#include "util/jsonutil.h"
#include "util/sbuf.h"
#include "util/spawn.h"
#include "util/timeutil.h"
#include <sys/stat.h>

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/vigil-goodput.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    const char *argv[] = { "rm", "-rf", dir, NULL };
    struct vg_spawn_result r;
    int rc = vg_spawn(argv, NULL, NULL, 10000, &r);
    vg_spawn_result_free(&r);
    return rc;
}

static void path_in(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", dir, name); }

static void put(const char *name, const char *text, const char *mode)
{
    char p[128];
    path_in(p, sizeof p, name);
    FILE *f = fopen(p, mode);
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static double num(const json_t *j, const char *k) { return json_number_value(json_object_get(j, k)); }

/* The goodput of one path; asserts it was read. */
static json_t *one(const char *path)
{
    json_t *jobs = json_array();
    char err[1200] = "";
    if (vg_goodput_add(jobs, path, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(json_array_size(jobs), 1);
    json_t *j = json_incref(json_array_get(jobs, 0));
    json_decref(jobs);
    return j;
}

/* The error message for a path that must not be read. */
static void refused(const char *path, const char *want)
{
    json_t *jobs = json_array();
    char err[1200] = "";
    assert_int_equal(vg_goodput_add(jobs, path, err, sizeof err), -1);
    if (!strstr(err, want)) fail_msg("'%s' does not say '%s'", err, want);
    json_decref(jobs);
}

/* The trainer, run as vigil runs it (the binary under test), its stdout
 * appended to DIR/job.log; killed (SIGKILL to its group) after kill_ms when > 0.
 * 90 steps of 40 ms: a run resumed from the first kill's checkpoint still has
 * over 2 s to go, so the second kill always lands, however fast the machine. */
static void trainer(int kill_ms)
{
    const char *vigil = getenv("VIGIL") ? getenv("VIGIL") : "build/vigil-san";
    char ckpt[128];
    path_in(ckpt, sizeof ckpt, "ckpt");
    const char *argv[] = { vigil, "trainer", "--ckpt-dir", ckpt, "--steps", "90", "--step-ms", "40",
                           "--ckpt-every", "5", NULL };
    struct vg_spawn_result r;
    assert_int_equal(vg_spawn(argv, NULL, NULL, kill_ms, &r), 0);
    assert_int_equal(r.timed_out, kill_ms > 0);
    if (kill_ms <= 0) assert_int_equal(r.status, 0);
    put("job.log", r.out, "a");
    vg_spawn_result_free(&r);
}

static void test_real_trainer_killed_twice(void **state)
{
    (void)state;
    trainer(700);
    trainer(700);
    trainer(0);
    char log[128];
    path_in(log, sizeof log, "job.log");
    json_t *j = one(log);
    assert_int_equal(vg_json_int(j, "restarts", -1), 2);
    /* the result: steps 1..90, each counted once; the rest was done twice */
    assert_int_equal(vg_json_int(j, "productive_steps", -1), 90);
    assert_int_equal(vg_json_int(j, "last_step", -1), 90);
    json_int_t lost = vg_json_int(j, "lost_steps", -1);
    assert_int_equal(vg_json_int(j, "steps", -1), 90 + lost);
    assert_true(json_is_true(json_object_get(j, "done")));
    assert_int_equal(vg_json_int(j, "ckpt_every", -1), 5);
    assert_int_equal(vg_json_int(j, "ranks", -1), 1);
    const json_t *rs = json_object_get(j, "resumes");
    assert_int_equal(json_array_size(rs), 2);
    json_int_t lost_sum = 0;
    double over = 0;
    for (size_t i = 0; i < 2; i++) {
        const json_t *r = json_array_get(rs, i);
        json_int_t last = vg_json_int(r, "last_step", -1), l = vg_json_int(r, "lost_steps", -1);
        /* resumed from the newest checkpoint at or before the last step (a
         * multiple of 5; the last step itself when it was checkpointed just before the kill) */
        json_int_t from = json_is_integer(json_object_get(r, "resumed_from")) ? vg_json_int(r, "resumed_from", -1) : 0;
        assert_int_equal(from % 5, 0);
        assert_true(from <= last && last - from <= 5);
        assert_int_equal(l, last - from);   /* work after the checkpoint, done again */
        lost_sum += l;
        assert_true(num(r, "overhead_s") > 0);
        over += num(r, "overhead_s");
    }
    assert_int_equal(lost_sum, lost);
    assert_true(fabs(num(j, "restart_overhead_s") - over) < 1e-9);
    /* step-times are disjoint stretches of the wall time (a checkpoint's
     * write, between a step line and its checkpoint line, is no step's) */
    double wall = num(j, "wall_s"), prod = num(j, "productive_s");
    assert_true(prod > 0 && prod + num(j, "lost_s") <= wall + 1e-9);
    assert_true(fabs(num(j, "goodput") - prod / wall) < 1e-12);
    assert_true(over < wall);
    json_decref(j);
}

/* A job log from the lab (3 ranks under srun; a node crashed at step 8, Slurm
 * requeued the job, it resumed from step 5's checkpoint; then the drill
 * cancelled it): Slurm's lines between the trainer's. */
static void test_lab_log(void **state)
{
    (void)state;
    json_t *j = one("tests/fixtures/slurm/trainer-node-crash.log");
    assert_int_equal(vg_json_int(j, "ranks", -1), 3);
    assert_int_equal(vg_json_int(j, "steps", -1), 10);
    assert_int_equal(vg_json_int(j, "productive_steps", -1), 7);
    assert_int_equal(vg_json_int(j, "lost_steps", -1), 3);
    assert_int_equal(vg_json_int(j, "restarts", -1), 1);
    assert_int_equal(vg_json_int(j, "ckpt_every", -1), 5);
    assert_false(json_is_true(json_object_get(j, "done")));
    const json_t *r = json_array_get(json_object_get(j, "resumes"), 0);
    assert_int_equal(vg_json_int(r, "last_step", -1), 8);
    assert_int_equal(vg_json_int(r, "resumed_from", -1), 5);
    assert_string_equal(vg_json_str(r, "stopped_at", ""), "2026-12-02T07:37:13.839Z");
    assert_string_equal(vg_json_str(r, "first_step_at", ""), "2026-12-02T07:37:22.519Z");
    assert_true(fabs(num(r, "overhead_s") - 8.680) < 1e-9);
    assert_true(fabs(num(j, "wall_s") - 10.542) < 1e-9);   /* 07:37:12.177 (rank 2's start) to 07:37:22.719 */
    /* steps 1–5 (from rank 0's start at .238), 6 and 7 after the resume line */
    assert_true(fabs(num(j, "productive_s") - 1.401) < 1e-9);
    assert_true(fabs(num(j, "lost_s") - 0.578) < 1e-9);   /* 6, 7 and 8 of the first attempt */
    assert_true(fabs(num(j, "goodput") - 1.401 / 10.542) < 1e-12);
    json_decref(j);
    /* under vigil launch: its own stamped lines between the trainer's, the
     * restart on the warm spare inside the allocation */
    j = one("tests/fixtures/slurm/trainer-in-allocation.log");
    assert_int_equal(vg_json_int(j, "ranks", -1), 2);
    assert_int_equal(vg_json_int(j, "steps", -1), 9);
    assert_int_equal(vg_json_int(j, "productive_steps", -1), 6);
    assert_int_equal(vg_json_int(j, "restarts", -1), 1);
    r = json_array_get(json_object_get(j, "resumes"), 0);
    assert_int_equal(vg_json_int(r, "resumed_from", -1), 5);
    assert_true(fabs(num(r, "overhead_s") - 2.956) < 1e-9);   /* step 8 at 31.636, step 6 again at 34.592 */
    assert_true(fabs(num(j, "wall_s") - 4.709) < 1e-9);       /* from launch's first line */
    json_decref(j);
}

/* Two restarts resume from the same checkpoint (the second attempt died
 * before its next one): its steps are lost too, to the third. */
static void test_resume_twice_from_one_checkpoint(void **state)
{
    (void)state;
    struct sbuf b = SBUF_INIT;
    int64_t t = 1764547200000LL;   /* 2025-12-01T00:00:00Z */
    char ts[32];
#define LINE(ms, ...) (t += (ms), vg_format_time(t, ts), sbuf_printf(&b, "%s ", ts), sbuf_printf(&b, __VA_ARGS__), sbuf_puts(&b, "\n"))
    LINE(0, "start rank 0/1 restart 0");
    for (int s = 1; s <= 12; s++) {
        LINE(100, "step %d", s);
        if (s % 5 == 0) LINE(0, "checkpoint %d", s);
    }
    LINE(2000, "start rank 0/1 restart 1");
    LINE(0, "resumed from step 10");
    for (int s = 11; s <= 13; s++) LINE(100, "step %d", s);
    sbuf_puts(&b, "srun: error: n2: task 0: Killed\n");
    LINE(3000, "start rank 0/1 restart 2");
    LINE(0, "resumed from step 10");
    for (int s = 11; s <= 20; s++) {
        LINE(100, "step %d", s);
        if (s % 5 == 0) LINE(0, "checkpoint %d", s);
    }
    LINE(0, "done 20 steps");
#undef LINE
    put("twice.log", b.s, "w");
    sbuf_free(&b);
    char log[128];
    path_in(log, sizeof log, "twice.log");
    json_t *j = one(log);
    assert_int_equal(vg_json_int(j, "steps", -1), 12 + 3 + 10);
    assert_int_equal(vg_json_int(j, "productive_steps", -1), 20);
    assert_int_equal(vg_json_int(j, "lost_steps", -1), 2 + 3);
    assert_int_equal(vg_json_int(j, "restarts", -1), 2);
    const json_t *rs = json_object_get(j, "resumes");
    assert_int_equal(vg_json_int(json_array_get(rs, 0), "lost_steps", -1), 2);   /* 11, 12 */
    assert_int_equal(vg_json_int(json_array_get(rs, 1), "lost_steps", -1), 3);   /* 11–13 again */
    /* from the last line of the stopped attempt to the first new step */
    assert_true(fabs(num(json_array_get(rs, 0), "overhead_s") - 2.1) < 1e-9);
    assert_true(fabs(num(json_array_get(rs, 1), "overhead_s") - 3.1) < 1e-9);
    assert_true(fabs(num(j, "productive_s") - 2.0) < 1e-9);
    assert_true(fabs(num(j, "lost_s") - 0.5) < 1e-9);
    assert_true(fabs(num(j, "wall_s") - 7.5) < 1e-9);   /* 1.2 + 2.3 + 4.0 */
    assert_true(fabs(num(j, "goodput") - 2.0 / 7.5) < 1e-12);
    /* the totals over two jobs */
    json_t *jobs = json_array();
    json_array_append(jobs, j);
    json_array_append_new(jobs, one("tests/fixtures/slurm/trainer-node-crash.log"));
    json_t *sum = vg_goodput_summary(jobs);
    const json_t *tot = json_object_get(sum, "totals");
    assert_int_equal(vg_json_int(tot, "jobs", -1), 2);
    assert_int_equal(vg_json_int(tot, "lost_steps", -1), 8);
    assert_int_equal(vg_json_int(tot, "restarts", -1), 3);
    assert_true(fabs(num(tot, "goodput") - (2.0 + 1.401) / (7.5 + 10.542)) < 1e-9);
    json_decref(sum);
    json_decref(j);
}

/* A drill report names its runs' logs; the drill and run are kept. */
static void test_drill_report(void **state)
{
    (void)state;
    char cwd[1024], rep[2048];
    assert_non_null(getcwd(cwd, sizeof cwd));
    snprintf(rep, sizeof rep,
             "{\"fault\": \"node-crash\", \"job\": \"vigil trainer\", \"ckpt_every\": 5, \"runs\": [{\"run\": 1, "
             "\"log\": \"%s/tests/fixtures/slurm/trainer-node-crash.log\"}]}\n", cwd);
    put("drill.json", rep, "w");
    char p[128];
    path_in(p, sizeof p, "drill.json");
    json_t *j = one(p);
    assert_int_equal(vg_json_int(j, "run", -1), 1);
    assert_string_equal(vg_json_str(j, "drill", ""), p);
    assert_int_equal(vg_json_int(j, "lost_steps", -1), 3);
    json_decref(j);
    /* a drill of the user's own job: its log is not the trainer's */
    put("user.json", "{\"fault\": \"xid:79\", \"job\": \"train.sh\", \"runs\": [{\"run\": 1, \"log\": \"x\"}]}", "w");
    path_in(p, sizeof p, "user.json");
    refused(p, "field 'job': 'train.sh' is not vigil trainer");
    put("other.json", "{\"runs\": 3}", "w");
    path_in(p, sizeof p, "other.json");
    refused(p, "not a vigil drill report");
}

static void test_bad_input(void **state)
{
    (void)state;
    char p[128];
    put("bad.log", "2025-12-01T00:00:00.000Z start rank 0/1 restart 0\n2025-12-01T00:00:00.100Z step 1\n"
                   "Epoch 1: loss 0.3\n", "w");
    path_in(p, sizeof p, "bad.log");
    refused(p, "bad.log:3: not a line of vigil trainer");
    /* a trainer word without its stamp, or with more after it */
    put("bad.log", "step 1\n", "w");
    refused(p, "bad.log:1: not a line");
    put("bad.log", "2025-12-01T00:00:00.100Z step 1 of 9\n", "w");
    refused(p, "bad.log:1: not a line");
    put("bad.log", "", "w");
    refused(p, "no line of vigil trainer in it");
    path_in(p, sizeof p, "missing.log");
    refused(p, "missing.log: No such file or directory");
    /* a directory: every *.log below it, and none is an error */
    char sub[128];
    path_in(sub, sizeof sub, "empty");
    assert_int_equal(mkdir(sub, 0755), 0);
    refused(sub, "empty: no *.log file in it");
    put("empty/notes.txt", "not a log\n", "w");
    refused(sub, "empty: no *.log file in it");
    put("empty/a.log", "2025-12-01T00:00:00.000Z start rank 0/1 restart 0\n2025-12-01T00:00:00.100Z step 1\n", "w");
    json_t *j = one(sub);
    assert_int_equal(vg_json_int(j, "steps", -1), 1);
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_real_trainer_killed_twice, setup, teardown),
        cmocka_unit_test(test_lab_log),
        cmocka_unit_test_setup_teardown(test_resume_twice_from_one_checkpoint, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drill_report, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
    };
    return cmocka_run_group_tests_name("goodput", tests, NULL, NULL);
}
