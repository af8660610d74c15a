/* test_k8s_live.c — the k8s orchestrator backend (orch.h ops) against the
 * Kubernetes API test double (build/tests/kapi, started here): nodes read
 * back, a DRAIN and a DOWN with their marks, only vigil's isolation resumed,
 * the workloads on a node and their requeue (the gang recreated), the spare
 * pool by taint, and a drill Job submitted, read back running on 2 nodes and
 * deleted.  Skipped (TAP "ok # skip") when the double is not built. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "orch/orch.h"
#include "util/timeutil.h"

#define KAPI "build/tests/kapi"

static pid_t kapi;
static char dir[] = "/tmp/vigil-k8s-live-XXXXXX";
static char kc[128];

static int start(void **state)
{
    (void)state;
    if (access(KAPI, X_OK)) return 0;
    if (!mkdtemp(dir)) return -1;
    char port_file[128];
    snprintf(port_file, sizeof port_file, "%s/port", dir);
    kapi = fork();
    if (kapi == 0) {
        execl(KAPI, KAPI, "--port-file", port_file, "--state", "tests/fixtures/k8s/cluster.json", (char *)NULL);
        _exit(127);
    }
    int port = 0;
    for (int i = 0; i < 100 && !port; i++) {
        FILE *f = fopen(port_file, "r");
        if (f) {
            if (fscanf(f, "%d", &port) != 1) port = 0;
            fclose(f);
        }
        if (!port) vg_sleep_ms(20);
    }
    snprintf(kc, sizeof kc, "%s/kubeconfig", dir);
    FILE *f = fopen(kc, "w");
    fprintf(f, "current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\nclusters:\n- name: k\n"
               "  cluster: {server: 'http://127.0.0.1:%d'}\nusers:\n- name: u\n  user: {}\n", port);
    fclose(f);
    vg_sleep_ms(100);   /* the Job controller starts the pods */
    return port ? 0 : -1;
}

static int stop(void **state)
{
    (void)state;
    if (kapi > 0) {
        kill(kapi, SIGTERM);
        waitpid(kapi, NULL, 0);
        char p[160];
        snprintf(p, sizeof p, "%s/port", dir), unlink(p);
        snprintf(p, sizeof p, "%s/kubeconfig", dir), unlink(p);
        rmdir(dir);
    }
    return 0;
}

static struct vg_orch_node node(struct vg_orch *o, const char *name)
{
    struct vg_orch_node n;
    if (vg_orch_node(o, name, &n)) fail_msg("%s", o->err);
    return n;
}

/* The double speaks plain HTTP: without insecure_http the backend will not
 * open (credentials would cross it in clear), naming the server and the option. */
static void test_plain_http_refused(void **state)
{
    (void)state;
    if (kapi <= 0) skip();
    char err[512];
    struct vg_orch_conf c = { .config = kc };
    assert_null(vg_orch_open("k8s", &c, err, sizeof err));
    assert_non_null(strstr(err, "is plain HTTP"));
    assert_non_null(strstr(err, "--insecure-http"));
}

static void test_k8s_on_double(void **state)
{
    (void)state;
    if (kapi <= 0) skip();
    char err[512];
    struct vg_orch_conf c = { .config = kc, .insecure_http = true };   /* the double speaks plain HTTP here */
    struct vg_orch *o = vg_orch_open("k8s", &c, err, sizeof err);
    if (!o) fail_msg("%s", err);

    struct vg_orch_node *ns;
    size_t n;
    assert_int_equal(o->ops->nodes(o, NULL, 0, &ns, &n), 0);
    assert_int_equal(n, 5);
    free(ns);

    /* an administrator's cordon is not vigil's */
    const char *n4 = "n4";
    assert_int_equal(o->ops->isolate(o, &n4, 1, VG_ISOLATE_DRAIN, "vigil: test drain"), 0);
    struct vg_orch_node st = node(o, "n4");
    assert_true(st.drain);
    assert_false(st.down);
    assert_string_equal(st.reason, "vigil: test drain");
    assert_int_equal(vg_orch_resume_ours(o, &n4, 1), 1);
    st = node(o, "n4");
    assert_false(st.drain);
    assert_string_equal(st.reason, "");

    /* the workloads on n2, requeued: the gang recreated */
    const char *n2 = "n2";
    char **jobs, **moved;
    size_t nj, nmoved;
    assert_int_equal(o->ops->jobs_on(o, &n2, 1, "", 0, &jobs, &nj, &moved, &nmoved), 0);
    assert_int_equal(nmoved, 0);   /* listed before the isolation: nothing moved yet */
    vg_strv_free(moved, nmoved);
    assert_int_equal(nj, 1);
    assert_string_equal(jobs[0], "default/Job/train");
    assert_int_equal(o->ops->isolate(o, &n2, 1, VG_ISOLATE_DOWN, "vigil: test down"), 0);
    st = node(o, "n2");
    assert_true(st.drain && st.down);
    assert_int_equal(o->ops->requeue(o, (const char *const *)jobs, nj), 0);
    vg_strv_free(jobs, nj);
    assert_int_equal(o->ops->requeue(o, (const char *const[]){ "12345" }, 1), -1);
    assert_non_null(strstr(o->err, "not a workload"));

    /* the pool: n5 is labelled and tainted; promote it, then put it back */
    char **pool;
    size_t np;
    assert_int_equal(o->ops->pool_get(o, "spares", &pool, &np), 0);
    assert_int_equal(np, 1);
    assert_string_equal(pool[0], "n5");
    vg_strv_free(pool, np);
    assert_int_equal(o->ops->pool_set(o, "spares", NULL, 0, true), 0);
    assert_int_equal(o->ops->pool_get(o, "spares", &pool, &np), 0);
    assert_int_equal(np, 0);
    vg_strv_free(pool, np);
    const char *n5 = "n5";
    assert_int_equal(o->ops->pool_set(o, "spares", &n5, 1, false), 0);
    assert_int_equal(o->ops->pool_get(o, "spares", &pool, &np), 0);
    assert_int_equal(np, 1);
    vg_strv_free(pool, np);

    /* a drill Job: 2 pods, running, deleted */
    setenv("VIGIL_K8S_IMAGE", "trainer:1", 1);
    const char *argv[] = { "/bin/true", NULL };
    struct vg_orch_jobspec spec = { .name = "drill", .nodes = 2, .argv = argv };
    char id[64];
    assert_int_equal(o->ops->job_submit(o, &spec, id, sizeof id), 0);
    struct vg_orch_job j = { 0 };
    for (int64_t end = vg_mono_ms() + 5000; vg_mono_ms() < end && j.phase != VG_JOB_RUNNING; vg_sleep_ms(20))
        assert_int_equal(o->ops->job_get(o, id, &j), 0);
    assert_int_equal(j.phase, VG_JOB_RUNNING);
    assert_non_null(strchr(j.nodes, ','));   /* two nodes */
    assert_int_equal(o->ops->job_cancel(o, id), 0);
    assert_int_equal(o->ops->job_get(o, id, &j), -1);
    assert_non_null(strstr(o->err, "404"));

    struct vg_spawn_result r;
    assert_int_equal(o->ops->exec_on(o, "n1", argv, NULL, 1000, &r), -1);
    assert_non_null(strstr(o->err, "did not finish within 1000 ms"));   /* the double runs no process without --exec */
    vg_spawn_result_free(&r);
    vg_orch_close(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_k8s_on_double), cmocka_unit_test(test_plain_http_refused) };
    return cmocka_run_group_tests(tests, start, stop);
}
