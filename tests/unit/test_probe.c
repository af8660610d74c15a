/* test_probe.c — unit tests for the probe watchdog (src/signal/probe.c): a
 * probe that answers, one that answered while its caller came back late
 * (done, not hung), one that hangs (sleeping: killed at its deadline, a
 * hang), and one starved of CPU (at nice 19, runnable behind a nice -20
 * spinner on its core: its deadline extended, and killed as starved, not
 * hung). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "signal/probe.h"
#include "util/timeutil.h"

static int answer(void *arg, FILE *out)
{
    (void)arg;
    fputs("fine\n", out);
    return 0;
}

static int hang(void *arg, FILE *out)
{
    (void)arg, (void)out;
    while (pause() < 0) {
    }
    return 0;
}

/* Moves onto CPU 0, where the spinner runs, at the lowest priority, then works. */
static int crowded(void *arg, FILE *out)
{
    (void)arg;
    if (setpriority(PRIO_PROCESS, 0, 19)) return 1;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    sched_setaffinity(0, sizeof one, &one);
    for (volatile unsigned long i = 0; i < 4000000000ul; i++) {
    }
    fputs("late\n", out);
    return 0;
}

static void test_answers(void **state)
{
    (void)state;
    struct vg_probe p;
    assert_int_equal(vg_probe_start(&p, "t", answer, NULL), 0);
    vg_probe_wait(&p, 1, vg_mono_ms() + 5000);
    assert_true(p.done);
    assert_false(p.timed_out);
    assert_string_equal(p.out.s, "fine\n");
    vg_probe_free(&p);
}

/* The caller itself came back after the deadline (it waited for a CPU)
 * while the probe had answered: done, not killed as hung. */
static void test_answered_while_the_caller_was_late(void **state)
{
    (void)state;
    struct vg_probe p;
    assert_int_equal(vg_probe_start(&p, "t", answer, NULL), 0);
    int64_t deadline = vg_mono_ms() + 50;
    vg_sleep_ms(300);   /* the probe answers and exits meanwhile */
    vg_probe_wait(&p, 1, deadline);
    assert_true(p.done);
    assert_false(p.timed_out);
    assert_false(p.starved);
    assert_string_equal(p.out.s, "fine\n");
    vg_probe_free(&p);
    /* a hang found late is still a hang */
    assert_int_equal(vg_probe_start(&p, "t", hang, NULL), 0);
    deadline = vg_mono_ms() + 50;
    vg_sleep_ms(300);
    vg_probe_wait(&p, 1, deadline);
    assert_true(p.timed_out);
    assert_false(p.starved);
    vg_probe_free(&p);
}

static void test_hung_is_hung(void **state)
{
    (void)state;
    struct vg_probe p;
    assert_int_equal(vg_probe_start(&p, "t", hang, NULL), 0);
    int64_t t0 = vg_mono_ms();
    vg_probe_wait(&p, 1, t0 + 300);
    assert_true(p.timed_out);
    assert_false(p.starved);
    assert_true(vg_mono_ms() - t0 < 1500);   /* no grace: a sleeping probe is not waiting for a CPU */
    vg_probe_free(&p);
}

static void test_starved_is_not_hung(void **state)
{
    (void)state;
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) skip();
    /* this process on CPU 1; a spinner at nice -20 on CPU 0 */
    cpu_set_t c1, c0;
    CPU_ZERO(&c1);
    CPU_SET(1, &c1);
    CPU_ZERO(&c0);
    CPU_SET(0, &c0);
    cpu_set_t before;
    sched_getaffinity(0, sizeof before, &before);
    if (sched_setaffinity(0, sizeof c1, &c1)) skip();
    pid_t spin = fork();
    if (spin == 0) {
        sched_setaffinity(0, sizeof c0, &c0);
        if (setpriority(PRIO_PROCESS, 0, -20)) _exit(3);
        for (;;) {
        }
    }
    usleep(100000);
    int st;
    if (waitpid(spin, &st, WNOHANG) == spin) {   /* may not raise its priority here (not root) */
        sched_setaffinity(0, sizeof before, &before);
        skip();
    }
    struct vg_probe p;
    assert_int_equal(vg_probe_start(&p, "t", crowded, NULL), 0);
    int64_t t0 = vg_mono_ms();
    vg_probe_wait(&p, 1, t0 + 300);
    int64_t took = vg_mono_ms() - t0;
    kill(spin, SIGKILL);
    waitpid(spin, NULL, 0);
    sched_setaffinity(0, sizeof before, &before);
    assert_true(p.timed_out);
    assert_true(p.starved);
    assert_true(took >= 300 * (1 + VG_PROBE_GRACE) - 50);   /* the deadline was extended */
    vg_probe_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_answers),
        cmocka_unit_test(test_answered_while_the_caller_was_late),
        cmocka_unit_test(test_hung_is_hung),
        cmocka_unit_test(test_starved_is_not_hung),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
