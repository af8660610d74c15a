/* test_k8s_burnin.c — the Kubernetes burn-in parsers (src/orch/k8s_burnin.c):
 * which PriorityClass fits a burn-in pass, idle nodes from a NodeList and a
 * PodList, a pass's pod read as a job (running, succeeded, deadline, the
 * DisruptionTarget a preempting scheduler sets), and a gone pod's events
 * (kube-scheduler's "Preempted by pod UID on node NODE"). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include "orch/k8s.h"

static json_t *J(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    if (!v) fail_msg("bad test JSON: %s", e.text);
    return v;
}

static void test_pc_check(void **state)
{
    (void)state;
    char why[400];
    json_t *ours = vg_k8s_pc_new("vigil-burnin");
    assert_int_equal(vg_k8s_pc_check(ours, why, sizeof why), 0);
    assert_int_equal(json_integer_value(json_object_get(ours, "value")), -100);
    assert_string_equal(json_string_value(json_object_get(ours, "preemptionPolicy")), "Never");
    json_decref(ours);
    json_t *high = J("{\"metadata\":{\"name\":\"vigil-burnin\"},\"value\":1000,\"preemptionPolicy\":\"PreemptLowerPriority\"}");
    assert_int_equal(vg_k8s_pc_check(high, why, sizeof why), 1);
    assert_non_null(strstr(why, "value 1000, preemptionPolicy PreemptLowerPriority"));
    json_decref(high);
    json_t *preempting = J("{\"metadata\":{\"name\":\"b\"},\"value\":-5}");   /* policy defaults to preempting */
    assert_int_equal(vg_k8s_pc_check(preempting, why, sizeof why), 1);
    json_decref(preempting);
    json_t *dflt = J("{\"metadata\":{\"name\":\"b\"},\"value\":-5,\"preemptionPolicy\":\"Never\",\"globalDefault\":true}");
    assert_int_equal(vg_k8s_pc_check(dflt, why, sizeof why), 1);
    assert_non_null(strstr(why, "globalDefault"));
    json_decref(dflt);
    json_t *novalue = J("{\"metadata\":{\"name\":\"b\"},\"preemptionPolicy\":\"Never\"}");
    assert_int_equal(vg_k8s_pc_check(novalue, why, sizeof why), 1);
    json_decref(novalue);
}

static void test_idle(void **state)
{
    (void)state;
    struct vg_orch_node n[4] = { { .name = "n1", .state = "Ready", .responding = true },
                                 { .name = "n2", .state = "Ready", .responding = true },
                                 { .name = "n3", .state = "Ready,SchedulingDisabled", .responding = true, .drain = true },
                                 { .name = "cpu", .state = "Ready", .responding = true } };
    json_t *nl = J("{\"items\":[{\"metadata\":{\"name\":\"n1\"},\"status\":{\"allocatable\":{\"nvidia.com/gpu\":\"8\"}}},"
                   "{\"metadata\":{\"name\":\"n2\"},\"status\":{\"allocatable\":{\"nvidia.com/gpu\":\"8\"}}},"
                   "{\"metadata\":{\"name\":\"n3\"},\"status\":{\"allocatable\":{\"nvidia.com/gpu\":\"8\"}}},"
                   "{\"metadata\":{\"name\":\"cpu\"},\"status\":{\"allocatable\":{\"cpu\":\"8\"}}}]}");
    /* n1: a training pod holds GPUs; n2: only a DaemonSet's pod and a CPU pod */
    json_t *pl = J("{\"items\":[{\"metadata\":{\"name\":\"train-0\",\"namespace\":\"default\"},\"spec\":{\"nodeName\":\"n1\","
                   "\"containers\":[{\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"8\"}}}]},\"status\":{\"phase\":\"Running\"}},"
                   "{\"metadata\":{\"name\":\"dcgm\",\"namespace\":\"gpu\",\"ownerReferences\":[{\"kind\":\"DaemonSet\",\"name\":\"d\",\"controller\":true}]},"
                   "\"spec\":{\"nodeName\":\"n2\",\"containers\":[{\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]},"
                   "\"status\":{\"phase\":\"Running\"}},"
                   "{\"metadata\":{\"name\":\"web\",\"namespace\":\"default\"},\"spec\":{\"nodeName\":\"n2\",\"containers\":[{}]},"
                   "\"status\":{\"phase\":\"Running\"}}]}");
    vg_k8s_burnin_idle(n, 4, nl, pl);
    assert_false(n[0].idle);
    assert_true(n[0].busy);
    assert_string_equal(n[0].state, "Ready,GPUs held by train-0");
    assert_true(n[1].idle);
    assert_false(n[1].busy);
    assert_false(n[2].idle);   /* cordoned */
    assert_false(n[3].idle);   /* no GPUs */
    assert_string_equal(n[3].state, "Ready,no nvidia.com/gpu or amd.com/gpu");
    json_decref(nl);
    json_decref(pl);
}

/* AMD nodes offer amd.com/gpu (AMD's device plugin): idle or held like NVIDIA's. */
static void test_amd_gpus(void **state)
{
    (void)state;
    struct vg_orch_node n[2] = { { .name = "m1", .state = "Ready", .responding = true },
                                 { .name = "m2", .state = "Ready", .responding = true } };
    json_t *nl = J("{\"items\":[{\"metadata\":{\"name\":\"m1\"},\"status\":{\"allocatable\":{\"amd.com/gpu\":\"8\"}}},"
                   "{\"metadata\":{\"name\":\"m2\"},\"status\":{\"allocatable\":{\"amd.com/gpu\":8}}}]}");
    json_t *pl = J("{\"items\":[{\"metadata\":{\"name\":\"rccl-0\",\"namespace\":\"default\"},\"spec\":{\"nodeName\":\"m1\","
                   "\"containers\":[{\"resources\":{\"requests\":{\"amd.com/gpu\":\"8\"}}}]},\"status\":{\"phase\":\"Running\"}}]}");
    vg_k8s_burnin_idle(n, 2, nl, pl);
    assert_true(n[0].busy);
    assert_string_equal(n[0].state, "Ready,GPUs held by rccl-0");
    assert_true(n[1].idle);
    long count;
    const json_t *alloc = json_object_get(json_object_get(json_array_get(json_object_get(nl, "items"), 1), "status"),
                                          "allocatable");
    assert_string_equal(vg_k8s_gpu_resource(alloc, &count), "amd.com/gpu");
    assert_int_equal(count, 8);
    json_t *none = J("{\"cpu\":\"8\"}");
    assert_null(vg_k8s_gpu_resource(none, &count));
    assert_int_equal(count, 0);
    assert_int_equal(vg_k8s_pod_gpus(json_array_get(json_object_get(pl, "items"), 0)), 8);
    json_decref(none);
    json_decref(nl);
    json_decref(pl);
}

static void pod_job(const char *text, struct vg_orch_job *j)
{
    memset(j, 0, sizeof *j);
    json_t *p = J(text);
    vg_k8s_burnin_pod_job(p, j);
    json_decref(p);
}

static void test_pod_job(void **state)
{
    (void)state;
    struct vg_orch_job j;
    pod_job("{\"metadata\":{\"name\":\"p\"},\"spec\":{},\"status\":{\"phase\":\"Pending\"}}", &j);
    assert_int_equal(j.phase, VG_JOB_PENDING);
    pod_job("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"nodeName\":\"n2\"},\"status\":{\"phase\":\"Running\","
            "\"startTime\":\"2026-01-01T00:00:00Z\",\"containerStatuses\":[{\"state\":{\"running\":{\"startedAt\":"
            "\"2026-01-01T00:00:02Z\"}}}]}}", &j);
    assert_int_equal(j.phase, VG_JOB_RUNNING);
    assert_string_equal(j.nodes, "n2");
    assert_int_equal(j.started_ms, 1767225602000LL);
    pod_job("{\"metadata\":{\"name\":\"p\"},\"spec\":{},\"status\":{\"phase\":\"Succeeded\",\"containerStatuses\":[{\"state\":"
            "{\"terminated\":{\"exitCode\":0,\"startedAt\":\"2026-01-01T00:00:02Z\",\"finishedAt\":\"2026-01-01T00:01:02Z\"}}}]}}", &j);
    assert_int_equal(j.phase, VG_JOB_ENDED);
    assert_string_equal(j.state, "SUCCEEDED");
    assert_int_equal(j.ended_ms - j.started_ms, 60000);
    pod_job("{\"metadata\":{\"name\":\"p\"},\"spec\":{},\"status\":{\"phase\":\"Failed\",\"reason\":\"DeadlineExceeded\","
            "\"message\":\"Pod was active on the node longer than the specified deadline\"}}", &j);
    assert_string_equal(j.state, "DEADLINE");
    /* the scheduler's victim before its deletion completes (kube-scheduler's condition) */
    pod_job("{\"metadata\":{\"name\":\"p\",\"deletionTimestamp\":\"2026-01-01T00:00:10Z\"},\"spec\":{},\"status\":{\"phase\":"
            "\"Running\",\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\",\"reason\":\"PreemptionByScheduler\","
            "\"message\":\"default-scheduler: preempting to accommodate a higher priority pod\",\"lastTransitionTime\":"
            "\"2026-01-01T00:00:09Z\"}]}}", &j);
    assert_int_equal(j.phase, VG_JOB_ENDED);
    assert_string_equal(j.state, "PREEMPTED");
    assert_int_equal(j.ended_ms, 1767225609000LL);
    assert_string_equal(j.reason, "default-scheduler: preempting to accommodate a higher priority pod");
}

static void test_events(void **state)
{
    (void)state;
    struct vg_orch_job j = { 0 };
    json_t *none = J("{\"items\":[{\"reason\":\"Started\",\"lastTimestamp\":\"2026-01-01T00:00:02Z\"}]}");
    assert_false(vg_k8s_burnin_events(none, &j));
    assert_int_equal(j.started_ms, 1767225602000LL);
    json_decref(none);
    json_t *ev = J("{\"items\":[{\"reason\":\"Started\",\"lastTimestamp\":\"2026-01-01T00:00:02Z\"},"
                   "{\"reason\":\"Preempted\",\"action\":\"Preempting\",\"eventTime\":\"2026-01-01T00:00:12.000000Z\","
                   "\"message\":\"Preempted by pod 3f1c on node n4\",\"lastTimestamp\":null}]}");
    memset(&j, 0, sizeof j);
    assert_true(vg_k8s_burnin_events(ev, &j));
    assert_int_equal(j.phase, VG_JOB_ENDED);
    assert_string_equal(j.state, "PREEMPTED");
    assert_int_equal(j.ended_ms - j.started_ms, 10000);
    assert_string_equal(j.reason, "Preempted by pod 3f1c on node n4");
    json_decref(ev);
    assert_true(vg_k8s_burnin_id("pod/default/vigil-burnin-n1-1"));
    assert_false(vg_k8s_burnin_id("default/Job/train"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pc_check),
        cmocka_unit_test(test_idle),
        cmocka_unit_test(test_amd_gpus),
        cmocka_unit_test(test_pod_job),
        cmocka_unit_test(test_events),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
