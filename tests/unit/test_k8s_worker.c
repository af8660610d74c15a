/* test_k8s_worker.c — node writes on a worker per node (src/orch/k8s_worker.c),
 * with a job that blocks until the test lets it go: a write still running at
 * the deadline is reported under way and goes on; asked again it starts
 * nothing new and its result is taken once; another node's write runs
 * beside it; a different write to a busy node waits for the one running;
 * the shared state lives until the last write ends. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <string.h>
#include "orch/k8s.h"
#include "util/timeutil.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static bool go[2];      /* the job on n0 / n1 may finish */
static int runs[2];     /* jobs started, per node */
static int refs = 1;    /* holds of the shared state (the handle's own: 1) */

static int job(struct vg_orch *o, const struct vg_k8s_write *w)
{
    int n = w->node[1] - '0';
    pthread_mutex_lock(&mu);
    runs[n]++;
    while (!go[n]) pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    o->calls += 3;
    return w->how ? vg_orch_fail(o, "PATCH %s: 500", w->node) : 0;
}

static void hold(void *p) { (void)p, __atomic_add_fetch(&refs, 1, __ATOMIC_SEQ_CST); }
static void release(void *p) { (void)p, __atomic_sub_fetch(&refs, 1, __ATOMIC_SEQ_CST); }

static void let(int n)
{
    pthread_mutex_lock(&mu);
    go[n] = true;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static struct vg_k8s_write W(const char *node, int how)
{
    struct vg_k8s_write w = { .op = 0, .how = how };
    strcpy(w.node, node);
    strcpy(w.reason, "vigil: xid 79");
    return w;
}

static void test_workers(void **state)
{
    (void)state;
    static const struct vg_orch_ops ops = { .name = "test" };
    struct vg_k8s_workers w;
    vg_k8s_workers_init(&w, &ops, NULL, 1000, job, hold, release);
    struct vg_k8s_write a = W("n0", 0), b = W("n1", 1), a2 = W("n0", 1);
    char err[256];
    unsigned calls;

    /* n0's write hangs: reported under way at the deadline, and it goes on */
    assert_true(vg_k8s_write_start(&w, &a));
    int64_t t0 = vg_mono_ms();
    assert_int_equal(vg_k8s_write_wait(&w, &a, t0 + 100, &calls, err, sizeof err), 1);
    assert_true(vg_mono_ms() - t0 >= 100);
    assert_non_null(strstr(err, "node n0: the write is still waiting for the API server"));
    assert_int_equal(calls, 0);

    /* n1's write runs beside it, and fails on its own */
    assert_true(vg_k8s_write_start(&w, &b));
    let(1);
    assert_int_equal(vg_k8s_write_wait(&w, &b, vg_mono_ms() + 5000, &calls, err, sizeof err), -1);
    assert_string_equal(err, "PATCH n1: 500");
    assert_int_equal(calls, 3);

    /* asked again: nothing new starts; another write to n0 waits for the one running */
    assert_false(vg_k8s_write_start(&w, &a));
    assert_false(vg_k8s_write_start(&w, &a2));
    assert_int_equal(vg_k8s_write_wait(&w, &a2, 0, &calls, err, sizeof err), 1);
    assert_non_null(strstr(err, "an earlier write"));
    /* n1's job released the state when it ended (just after its result); n0's still holds it */
    for (int64_t end = vg_mono_ms() + 5000; __atomic_load_n(&refs, __ATOMIC_SEQ_CST) > 2 && vg_mono_ms() < end;)
        vg_sleep_ms(1);
    assert_int_equal(__atomic_load_n(&refs, __ATOMIC_SEQ_CST), 2);

    /* the API answers: the result is taken once, the calls with it */
    let(0);
    assert_int_equal(vg_k8s_write_wait(&w, &a, vg_mono_ms() + 5000, &calls, err, sizeof err), 0);
    assert_int_equal(calls, 3);
    assert_int_equal(runs[0], 1);
    for (int64_t end = vg_mono_ms() + 5000; __atomic_load_n(&refs, __ATOMIC_SEQ_CST) > 1 && vg_mono_ms() < end;)
        vg_sleep_ms(1);
    assert_int_equal(__atomic_load_n(&refs, __ATOMIC_SEQ_CST), 1);
    assert_int_equal(vg_k8s_write_wait(&w, &a, 0, &calls, err, sizeof err), -1);   /* taken already */

    /* the same write asked again runs again */
    assert_true(vg_k8s_write_start(&w, &a));
    assert_int_equal(vg_k8s_write_wait(&w, &a, vg_mono_ms() + 5000, &calls, err, sizeof err), 0);
    assert_int_equal(runs[0], 2);
    for (int64_t end = vg_mono_ms() + 5000; __atomic_load_n(&refs, __ATOMIC_SEQ_CST) > 1 && vg_mono_ms() < end;)
        vg_sleep_ms(1);
    vg_k8s_workers_fini(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_workers) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
