/* test_drill.c — the drill's statistics (median/p90/max with stages that
 * never happened), the job-log follower (last step before the fault, the
 * step resumed from, the first step after it), a report's summary and
 * recovery verdict, and the HTML page drawn from it; the terminal, HTML and
 * comparison outputs print seconds to the millisecond while the JSON keeps
 * every digit. */
#include "drill/drill.h"
#include "orch/slurm_launch.h"
#include "helpers/precision.h"
#include "util/jsonutil.h"
#include "util/timeutil.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_stats_plain(void **state)
{
    (void)state;
    struct vg_stat st;
    double v[] = { 3, 1, 2, 10, 4 };
    vg_stat_compute(v, 5, &st);
    assert_true(st.have_median && st.have_p90 && st.have_max);
    assert_true(st.median == 3 && st.p90 == 10 && st.max == 10);
    assert_int_equal(st.count, 5);
    assert_int_equal(st.never, 0);
    double w[] = { 4, 1, 3, 2 };   /* even count: mean of the middle two; p90 = 4th of 4 */
    vg_stat_compute(w, 4, &st);
    assert_true(st.median == 2.5 && st.p90 == 4 && st.max == 4);
    double ten[10];
    for (int i = 0; i < 10; i++) ten[i] = i + 1;   /* nearest rank: ceil(9) = 9th */
    vg_stat_compute(ten, 10, &st);
    assert_true(st.p90 == 9 && st.max == 10 && st.median == 5.5);
}

static void test_stats_nulls(void **state)
{
    (void)state;
    struct vg_stat st;
    double one_never[] = { 1, -1, 2 };   /* median 2, p90 and max never */
    vg_stat_compute(one_never, 3, &st);
    assert_true(st.have_median && st.median == 2);
    assert_false(st.have_p90);
    assert_false(st.have_max);
    assert_int_equal(st.count, 2);
    assert_int_equal(st.never, 1);
    double mostly[] = { -1, 5, -1 };
    vg_stat_compute(mostly, 3, &st);
    assert_false(st.have_median);
    double all[] = { -1 };
    vg_stat_compute(all, 1, &st);
    assert_false(st.have_median || st.have_p90 || st.have_max);
    vg_stat_compute(NULL, 0, &st);
    assert_int_equal(st.count, 0);
    json_t *j = vg_stat_json(&st);
    assert_true(json_is_null(json_object_get(j, "median")));
    json_decref(j);
    double nan_[] = { NAN, 1 };   /* NaN counts as never */
    vg_stat_compute(nan_, 2, &st);
    assert_int_equal(st.never, 1);
}

static void feed(struct vg_joblog *l, const char *line) { vg_joblog_line(l, line, 0); }

static void test_joblog(void **state)
{
    (void)state;
    struct vg_joblog l;
    char err[256];
    assert_int_equal(vg_joblog_init(&l, "/nonexistent", "step ([0-9]+)", "resumed from step ([0-9]+)", err,
                                    sizeof err), 0);
    feed(&l, "2026-01-01T00:00:00.000Z start rank 0/2 restart 0");
    feed(&l, "2026-01-01T00:00:01.000Z step 1");
    feed(&l, "2026-01-01T00:00:02.000Z step 2");
    assert_int_equal(l.max_step, 2);
    vg_parse_time("2026-01-01T00:00:02.500Z", &l.mark);   /* the fault */
    feed(&l, "2026-01-01T00:00:02.400Z step 3");            /* stamped before the fault: counts as before */
    feed(&l, "2026-01-01T00:00:03.000Z step 4");            /* after the fault, no resume yet: ignored */
    assert_int_equal(l.step_before, 3);
    assert_int_equal(l.resume_step, -1);
    feed(&l, "2026-01-01T00:00:09.000Z resumed from step 2");
    assert_int_equal(l.resumed_from, 2);
    feed(&l, "2026-01-01T00:00:09.200Z step 3");
    assert_int_equal(l.resume_step, 3);
    int64_t t;
    vg_parse_time("2026-01-01T00:00:09.200Z", &t);
    assert_true(l.resume_step_at == t);
    feed(&l, "2026-01-01T00:00:09.400Z step 4");             /* only the first step after the resume */
    assert_int_equal(l.resume_step, 3);
    vg_joblog_free(&l);
    /* a user's job without timestamps: the read time counts */
    assert_int_equal(vg_joblog_init(&l, "", "iter=([0-9]+)", "restored ckpt ([0-9]+)", err, sizeof err), 0);
    vg_joblog_line(&l, "iter=40 loss=1.2", 1000);
    l.mark = 1500;
    vg_joblog_line(&l, "restored ckpt 30", 2000);
    vg_joblog_line(&l, "iter=31 loss=1.3", 2100);
    assert_int_equal(l.step_before, 40);
    assert_int_equal(l.resumed_from, 30);
    assert_true(l.resume_step_at == 2100);
    vg_joblog_free(&l);
    assert_int_equal(vg_joblog_init(&l, "", "step [0-9]+", "x([0-9]+)", err, sizeof err), -1);   /* no group */
    assert_non_null(strstr(err, "--step-pattern"));
    assert_int_equal(vg_joblog_init(&l, "", "s([0-9]+)", "(", err, sizeof err), -1);
    assert_non_null(strstr(err, "--resume-pattern"));
}

/* vigil launch's lines (--spares-in-job): told, and the step started again
 * on nodes of its own; only after the fault, only the first restart. */
static void test_joblog_launch(void **state)
{
    (void)state;
    struct vg_joblog l;
    char err[256];
    assert_int_equal(vg_joblog_init(&l, "", "step ([0-9]+)", "resumed from step ([0-9]+)", err, sizeof err), 0);
    feed(&l, "2026-12-02T05:15:18.866Z launch: step 0 on n1,n2");
    vg_parse_time("2026-12-02T05:15:20.500Z", &l.mark);
    assert_true(l.told_at == 0 && l.relaunched_at == 0);
    feed(&l, "2026-12-02T05:15:20.630Z launch: told (SIGUSR1): stopping step 0");
    feed(&l, "2026-12-02T05:15:20.768Z launch: step 1 on n1,n3");
    feed(&l, "2026-12-02T05:15:25.000Z launch: step 2 on n1,n4");
    int64_t told, again;
    vg_parse_time("2026-12-02T05:15:20.630Z", &told);
    vg_parse_time("2026-12-02T05:15:20.768Z", &again);
    assert_true(l.told_at == told);
    assert_true(l.relaunched_at == again);
    assert_string_equal(l.relaunch_nodes, "n1,n3");
    assert_int_equal(l.max_step, -1);   /* "step 1 on …" is not a training step */
    vg_joblog_free(&l);
    /* the DOWN ended the step before the tell came: the failure is when the job learned of it,
     * and the late tell, which the launcher let pass, changes nothing */
    assert_int_equal(vg_joblog_init(&l, "", "step ([0-9]+)", "resumed from step ([0-9]+)", err, sizeof err), 0);
    feed(&l, "2026-12-02T07:41:29.883Z launch: step 0 on n1,n2");
    vg_parse_time("2026-12-02T07:41:34.000Z", &l.mark);
    feed(&l, "2026-12-02T07:41:34.047Z launch: step 0 failed (exit 137)");
    feed(&l, "2026-12-02T07:41:34.182Z launch: step 1 on n1,n3");
    feed(&l, "2026-12-02T07:41:34.300Z launch: a tell (SIGUSR1) with every node of step 1 up: it goes on");
    vg_parse_time("2026-12-02T07:41:34.047Z", &told);
    vg_parse_time("2026-12-02T07:41:34.182Z", &again);
    assert_true(l.told_at == told);
    assert_true(l.relaunched_at == again);
    vg_joblog_free(&l);
}

/* The nodes vigil launch runs a step on: the first N up, in allocation order. */
static void test_launch_pick(void **state)
{
    (void)state;
    char *names[] = { "n1", "n2", "n3", "n4" };
    struct vg_node_state st[4];
    memset(st, 0, sizeof st);
    for (int i = 0; i < 4; i++) snprintf(st[i].name, sizeof st[i].name, "n%d", i + 1), st[i].responding = true;
    const char *out[4];
    assert_int_equal(vg_launch_pick(names, 4, st, 4, 3, out), 4);
    assert_string_equal(out[2], "n3");
    assert_false(vg_launch_any_out(names, 3, st, 4));
    st[1].down = true;                                   /* vigil DOWNed n2 */
    assert_true(vg_launch_any_out(names, 3, st, 4));
    assert_int_equal(vg_launch_pick(names, 4, st, 4, 3, out), 3);
    assert_string_equal(out[0], "n1");
    assert_string_equal(out[1], "n3");
    assert_string_equal(out[2], "n4");                   /* the warm spare */
    st[2].responding = false;                            /* and n3 stops answering: too few */
    assert_int_equal(vg_launch_pick(names, 4, st, 4, 3, out), 2);
    assert_int_equal(vg_launch_pick(names, 4, st, 3, 3, out), 1);   /* n4 not listed: not up */
}

/* A report with two runs: one complete, one never detected. */
static json_t *report(void)
{
    const char *text =
        "{\"fault\":\"node-crash\",\"cluster\":\"lab\",\"nodes\":2,\"deadline_s\":30,\"ckpt_every\":5,"
        "\"targets\":{\"clustermax\":{\"detect\":120,\"restart\":3600},\"vigil\":{\"detect\":1,\"isolate\":2,"
        "\"restart\":10}},\"runs\":["
        "{\"run\":1,\"job\":7,\"victim\":\"n2\",\"t0\":\"2026-01-01T00:00:00.000Z\","
        "\"detect\":{\"at\":\"2026-01-01T00:00:04.000Z\",\"after_s\":4.0,\"by\":\"slurm\",\"detail\":\"n2 <DOWN>\"},"
        "\"isolate\":{\"after_s\":9.0},\"requeue\":{\"after_s\":9.0},"
        "\"restart\":{\"after_s\":15.0,\"nodes\":\"n[1,3]\",\"spare\":false,\"same_node\":false},"
        "\"resume\":{\"after_s\":15.5,\"from_step\":10},\"work_lost_steps\":2},"
        "{\"run\":2,\"job\":8,\"victim\":\"n2\",\"t0\":\"2026-01-01T00:01:00.000Z\","
        "\"detect\":{\"after_s\":null},\"isolate\":{\"after_s\":null},\"requeue\":{\"after_s\":null},"
        "\"restart\":{\"after_s\":null},\"resume\":{\"after_s\":null},\"work_lost_steps\":null,"
        "\"message\":\"never detected within the 30 s deadline\"}]}";
    json_t *r = json_loads(text, 0, NULL);
    assert_non_null(r);
    return r;
}

static void test_summarize(void **state)
{
    (void)state;
    json_t *r = report();
    vg_drill_summarize(r);
    const json_t *d = json_object_get(r, "detect");
    assert_true(json_is_null(json_object_get(d, "median")));
    assert_true(json_is_null(json_object_get(d, "max")));
    assert_int_equal(vg_json_int(d, "count", 0), 1);
    assert_int_equal(vg_json_int(d, "never", 0), 1);
    assert_true(json_is_null(json_object_get(json_object_get(r, "work_lost_steps"), "max")));
    assert_false(vg_drill_recovered(r));
    /* drop the failed run: everything recovered, the figures are run 1's */
    json_array_remove(json_object_get(r, "runs"), 1);
    vg_drill_summarize(r);
    assert_true(vg_drill_recovered(r));
    assert_true(json_number_value(json_object_get(json_object_get(r, "restart"), "p90")) == 15.0);
    assert_true(json_number_value(json_object_get(json_object_get(r, "work_lost_steps"), "median")) == 2.0);
    json_decref(r);
    json_t *empty = json_pack("{s:[]}", "runs");
    vg_drill_summarize(empty);
    assert_false(vg_drill_recovered(empty));
    json_decref(empty);
}

static void test_html(void **state)
{
    (void)state;
    json_t *r = report();
    vg_drill_summarize(r);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(vg_drill_html(f, r), 0);
    fclose(f);
    assert_non_null(strstr(buf, "<!DOCTYPE html>"));
    assert_non_null(strstr(buf, "<svg"));
    assert_non_null(strstr(buf, "never detected"));
    assert_non_null(strstr(buf, "n2 &lt;DOWN&gt;"));        /* escaped */
    assert_null(strstr(buf, "<DOWN>"));
    assert_null(strstr(buf, "http://"));                    /* nothing fetched (the SVG namespace aside) */
    assert_null(strstr(buf, "https://"));
    assert_null(strstr(buf, "<script"));
    /* one timeline per run */
    int svgs = 0;
    for (const char *p = buf; (p = strstr(p, "aria-label=\"timeline of run")); p++) svgs++;
    assert_int_equal(svgs, 2);
    free(buf);
    json_decref(r);
}

/* What a render function writes, as one string (the caller frees it). */
static char *render(void (*print)(FILE *, const json_t *), int (*html)(FILE *, const json_t *),
                    void (*cprint)(FILE *, json_t *const *, size_t), int (*chtml)(FILE *, json_t *const *, size_t),
                    json_t *const *reps)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    if (print) print(f, reps[0]);
    if (html) assert_int_equal(html(f, reps[0]), 0);
    if (cprint) cprint(f, reps, 2);
    if (chtml) assert_int_equal(chtml(f, reps, 2), 0);
    fclose(f);
    return buf;
}

static void test_precision(void **state)
{
    (void)state;
    /* seconds as a clock difference gives them (0.005 is 0.0050000000000000001
     * to 17 digits), targets and the deadline with stray digits too */
    const char *text =
        "{\"fault\":\"xid:79\",\"cluster\":\"lab\",\"nodes\":2,\"deadline_s\":30,\"ckpt_every\":5,"
        "\"controller\":\"http://127.0.0.1:8470\","
        "\"targets\":{\"clustermax\":{\"detect\":120.00001,\"restart\":3600},\"vigil\":{\"detect\":0.30000000000000004,"
        "\"isolate\":2.7182818,\"restart\":10}},\"runs\":["
        "{\"run\":1,\"job\":7,\"victim\":\"n2\",\"t0\":\"2026-01-01T00:00:00.000Z\","
        "\"detect\":{\"after_s\":0.0050000000000000001},\"isolate\":{\"after_s\":1.0000001},"
        "\"requeue\":{\"after_s\":2.3333333333},\"restart\":{\"after_s\":6.674123},"
        "\"resume\":{\"after_s\":7.123456789,\"from_step\":10},\"work_lost_steps\":2},"
        "{\"run\":2,\"job\":8,\"victim\":\"n1\",\"t0\":\"2026-01-01T00:01:00.000Z\","
        "\"detect\":{\"after_s\":6.674123},\"isolate\":{\"after_s\":6.7777777},"
        "\"requeue\":{\"after_s\":6.8888888},\"restart\":{\"after_s\":9.1234567},"
        "\"resume\":{\"after_s\":null},\"work_lost_steps\":null}]}";
    json_t *reps[2] = { json_loads(text, 0, NULL), NULL };
    assert_non_null(reps[0]);
    vg_drill_summarize(reps[0]);
    reps[1] = json_deep_copy(reps[0]);
    json_object_del(reps[1], "controller");   /* the plain-Slurm side of a comparison */
    char where[160];
    char *out = render(vg_drill_print, NULL, NULL, NULL, reps);
    if (long_decimal(out, where, sizeof where)) fail_msg("terminal: %s", where);
    assert_non_null(strstr(out, "0.005"));
    assert_non_null(strstr(out, "6.674"));
    assert_non_null(strstr(out, "< 0.3 s"));       /* the target, not 0.30000000000000004 */
    assert_non_null(strstr(out, "< 2.718 s"));
    free(out);
    out = render(NULL, vg_drill_html, NULL, NULL, reps);
    if (long_decimal(out, where, sizeof where)) fail_msg("HTML: %s", where);
    assert_non_null(strstr(out, "deadline 30 s"));
    assert_non_null(strstr(out, "&le; 120 s"));
    assert_non_null(strstr(out, "&lt; 2.718 s"));
    free(out);
    out = render(NULL, NULL, vg_drill_compare_print, NULL, reps);
    if (long_decimal(out, where, sizeof where)) fail_msg("comparison: %s", where);
    assert_non_null(strstr(out, "3.340 s"));       /* the median of 0.005 and 6.674123 */
    free(out);
    out = render(NULL, NULL, NULL, vg_drill_compare_html, reps);
    if (long_decimal(out, where, sizeof where)) fail_msg("comparison HTML: %s", where);
    free(out);
    /* the JSON document keeps every digit */
    char *js = json_dumps(reps[0], JSON_COMPACT);
    assert_non_null(strstr(js, "\"after_s\":0.0050000000000000001"));
    json_t *back = json_loads(js, 0, NULL);
    const json_t *run1 = json_array_get(json_object_get(back, "runs"), 0);
    assert_true(json_number_value(json_object_get(json_object_get(run1, "restart"), "after_s")) == 6.674123);
    json_decref(back);
    free(js);
    json_decref(reps[0]);
    json_decref(reps[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stats_plain), cmocka_unit_test(test_stats_nulls), cmocka_unit_test(test_joblog),
        cmocka_unit_test(test_joblog_launch), cmocka_unit_test(test_launch_pick),
        cmocka_unit_test(test_summarize),   cmocka_unit_test(test_html),  cmocka_unit_test(test_precision),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
