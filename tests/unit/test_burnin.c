/* test_burnin.c — the burn-in parsers on the tools' real output
 * (tests/fixtures/burnin/, copied verbatim; sources in its README.md):
 * dcgmi diag tables and JSON (passing and failing, DCGM 3.x and 4.x),
 * nccl-tests all_reduce_perf (current, legacy, launcher-prefixed, wrong
 * values, failures), perftest ib_write_bw (Gb/sec, MB/sec, MiB/sec, a run
 * that broke off); vigil-gpu's lines; the thresholds file; node verdicts. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "burnin/burnin.h"
#include "burnin/burnin_int.h"
#include "catalog/catalog.h"
#include "burnin/parsers.h"
#include "util/rootfs.h"
#include "util/strutil.h"

static char *fixture(const char *name, size_t *len)
{
    char path[256], *text;
    snprintf(path, sizeof path, "tests/fixtures/burnin/%s", name);
    assert_int_equal(vg_read_file(NULL, path, 1 << 20, &text, len), 0);
    return text;
}

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 0.005)

/* ---- nccl-tests ----------------------------------------------------------- */

static void nccl(const char *name, struct vg_nccl_result *r)
{
    size_t len;
    char *t = fixture(name, &len), err[200];
    assert_int_equal(vg_parse_nccl(t, len, r, err, sizeof err), 0);
    free(t);
}

static void test_nccl_h200(void **state)
{
    (void)state;
    struct vg_nccl_result r;
    nccl("nccl-tests-all_reduce_perf-h200-8gpu-8G-single-size.txt", &r);
    assert_int_equal(r.rows, 1);
    assert_true(r.has_avg);
    NEAR(r.avg_busbw, 476.967);
    NEAR(r.max_busbw, 476.98);
    assert_int_equal(r.oob, 0);
    assert_int_equal(r.wrong, 0);
    assert_string_equal(r.error, "");
}

static void test_nccl_sweep_and_legacy(void **state)
{
    (void)state;
    struct vg_nccl_result r;
    nccl("nccl-tests-all_reduce_perf-h100-a3mega-2node-16gpu.txt", &r);
    assert_int_equal(r.rows, 31);   /* 8 B .. 8 GiB, factor 2 */
    NEAR(r.max_busbw, 338.82);
    assert_true(r.has_avg);
    nccl("nccl-tests-all_reduce_perf-a100-40gb-8gpu-legacy-format.txt", &r);   /* N/A #wrong, no redop/root */
    assert_true(r.rows > 20);
    NEAR(r.max_busbw, 235.26);
    assert_int_equal(r.wrong, 0);
    nccl("nccl-tests-all_reduce_perf-h100-p5-2node-eks-mpirun-excerpt.txt", &r);   /* "[1,0]<stdout>:" */
    assert_true(r.rows > 0);
    NEAR(r.max_busbw, 437.89);
    NEAR(r.avg_busbw, 52.9753);
}

static void test_nccl_failures(void **state)
{
    (void)state;
    struct vg_nccl_result r;
    nccl("nccl-tests-all_reduce_perf-gh200-2node-wrong-nonzero-FAILED.txt", &r);
    assert_int_equal(r.oob, 4);
    assert_int_equal(r.wrong, 128);   /* 96 out-of-place + 32 in-place at 1 MiB */
    assert_non_null(strstr(r.error, "Test failure common.cu:1189"));
    nccl("nccl-tests-all_reduce_perf-gh200-2node-cuda-busy-failure.txt", &r);
    assert_int_equal(r.rows, 0);
    assert_non_null(strstr(r.error, "Test CUDA failure"));
    nccl("nccl-tests-all_reduce_perf-rtx5090-2gpu-test-nccl-failure.txt", &r);
    assert_non_null(strstr(r.error, "Test NCCL failure"));
    char err[200];
    const char *junk = "hello\nworld 1 2 3\n";
    assert_int_equal(vg_parse_nccl(junk, strlen(junk), &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "not nccl-tests output"));
}

/* ---- perftest ------------------------------------------------------------- */

static void perftest(const char *name, struct vg_perftest_result *r)
{
    size_t len;
    char *t = fixture(name, &len), err[200];
    assert_int_equal(vg_parse_perftest(t, len, r, err, sizeof err), 0);
    free(t);
}

static void test_perftest(void **state)
{
    (void)state;
    struct vg_perftest_result r;
    perftest("perftest-ib_write_bw-ndr-cx7-gbits.txt", &r);   /* a "Conflicting CPU frequency" line in the table */
    assert_string_equal(r.unit, "Gb/sec");
    assert_int_equal(r.rows, 1);
    assert_int_equal(r.bytes, 65536);
    NEAR(r.bw_avg, 392.34);
    NEAR(r.avg_gbps, 392.34);
    assert_string_equal(r.error, "");
    perftest("perftest-ib_write_bw-a-hdr-cx6-client-mbsec.txt", &r);   /* -a: 2 B .. 8 MiB */
    assert_string_equal(r.unit, "MB/sec");
    assert_int_equal(r.rows, 23);
    assert_int_equal(r.bytes, 8388608);
    NEAR(r.bw_avg, 23317.65);
    NEAR(r.avg_gbps, 186.5412);
    perftest("perftest-ib_write_bw-hdr-loopback-8M-mbsec.txt", &r);
    NEAR(r.bw_avg, 24056.72);
    perftest("perftest-ib_send_bw-ndr-cx7-mibsec.txt", &r);
    assert_string_equal(r.unit, "MiB/sec");
    assert_true(r.avg_gbps > r.bw_avg * 8 / 1000);
    perftest("perftest-ib_write_bw-a-roce400-h200-completion-error.txt", &r);
    assert_non_null(strstr(r.error, "Completion with error at client"));
    assert_int_equal(r.bytes, 65536);
    NEAR(r.bw_avg, 381.41);
    char err[200];
    const char *junk = " 65536 5000 1 2 3\n";
    assert_int_equal(vg_parse_perftest(junk, strlen(junk), &r, err, sizeof err), -1);
}

/* ---- dcgmi diag ----------------------------------------------------------- */

static void dcgm(const char *name, struct vg_dcgm_result *r)
{
    size_t len;
    char *t = fixture(name, &len), err[200] = "";
    int rc = vg_parse_dcgm(t, len, r, err, sizeof err);
    if (rc) fprintf(stderr, "# %s: %s\n", name, err);
    assert_int_equal(rc, 0);
    free(t);
}

static void test_dcgm_tables(void **state)
{
    (void)state;
    struct vg_dcgm_result r;
    dcgm("dcgmi-diag-r2-table-pass-a100-p4de-dcgm3.3.3.txt", &r);
    assert_false(r.json);
    assert_string_equal(r.version, "3.3.3");
    assert_int_equal(r.tests, 11);
    assert_int_equal(r.failed, 0);
    dcgm("dcgmi-diag-r3-table-pass-a10g-dcgm3.3.9.txt", &r);
    assert_int_equal(r.failed, 0);
    assert_int_equal(r.skipped, 1);   /* EUD Test: Skip - All */
    dcgm("dcgmi-diag-r2-table-pass-1gpu-dcgm4.4.2.txt", &r);   /* 4.x: per-GPU rows */
    assert_int_equal(r.tests, 3);
    assert_int_equal(r.failed, 0);
    dcgm("dcgmi-diag-r3-table-fail-targeted-power-a10g-dcgm3.3.9.txt", &r);
    assert_int_equal(r.failed, 1);
    /* the warning, re-joined where dcgmi wrapped it mid-word */
    assert_true(vg_startswith(r.first_fail, "Targeted Power: Fail - GPU: 1: GPU 1 Max power of 224.1 did not "
                                            "reach desired power minimum target_power_min_ratio of 224.2 for GPU 1 "
                                            "Verify that the clock speeds and GPU utilization are high."));
    dcgm("dcgmi-diag-r2-table-fail-pcie-internal-error-b200-8gpu-dcgm4.4.1.txt", &r);
    assert_int_equal(r.failed, 1);
    assert_true(vg_startswith(r.first_fail, "pcie: Fail: There was an internal error during the test:"));
    assert_null(strstr(r.first_fail, "GPU0: Pass"));
    dcgm("dcgmi-diag-r1-table-fail-persistence-h200-8gpu-dcgm3.1.8.txt", &r);
    assert_int_equal(r.failed, 1);
    assert_true(vg_startswith(r.first_fail, "Persistence Mode: Fail: Persistence mode for GPU 0 is currently disabled."));
}

/* Each test counted once however many GPU rows it has; the hardware tests
 * (outside Deployment) that ran counted apart: none ran in the Blackwell and
 * GB10 runs, whose every hardware test DCGM skipped. */
static void test_dcgm_counts(void **state)
{
    (void)state;
    struct vg_dcgm_result r;
    dcgm("dcgmi-diag-r3-table-all-hw-skipped-gb10-dcgm4.4.2.txt", &r);   /* 4.x: a GPU row under each test */
    assert_string_equal(r.version, "4.4.2");
    assert_int_equal(r.tests, 8);
    assert_int_equal(r.passed, 1);     /* software */
    assert_int_equal(r.skipped, 7);    /* not 14: the GPU0 rows are the same tests */
    assert_int_equal(r.failed, 0);
    assert_int_equal(r.hw_tests, 7);
    assert_int_equal(r.hw_ran, 0);
    assert_string_equal(r.skipped_names, "memory, diagnostic, nvbandwidth, pcie, memory_bandwidth, targeted_stress, "
                                         "targeted_power");
    dcgm("dcgmi-diag-r3-table-all-hw-skipped-rtxpro6000-blackwell-dcgm3.3.9.txt", &r);   /* two tables (srun) */
    assert_int_equal(r.tests, 30);
    assert_int_equal(r.passed, 18);
    assert_int_equal(r.skipped, 12);
    assert_int_equal(r.hw_tests, 12);
    assert_int_equal(r.hw_ran, 0);
    assert_string_equal(r.skipped_names, "PCIe, GPU Memory, Targeted Stress, Targeted Power, Memory Bandwidth, EUD Test");
    dcgm("dcgmi-diag-r2-table-fail-pcie-internal-error-b200-8gpu-dcgm4.4.1.txt", &r);   /* 8 GPU rows per test */
    assert_int_equal(r.tests, 3);
    assert_int_equal(r.passed, 2);
    assert_int_equal(r.failed, 1);
    assert_int_equal(r.hw_tests, 2);
    assert_int_equal(r.hw_ran, 2);
    dcgm("dcgmi-diag-r3-table-pass-a10g-dcgm3.3.9.txt", &r);
    assert_int_equal(r.hw_ran, r.hw_tests - 1);   /* EUD skipped, the rest ran */
    assert_string_equal(r.skipped_names, "EUD Test");
    dcgm("dcgmi-diag-r1-table-pass-a10g-dcgm3.3.9.txt", &r);   /* level 1: deployment checks only */
    assert_int_equal(r.hw_tests, 0);
    dcgm("dcgmi-diag-json-dcgm3.1.0-8gpu-nvvs-raw.txt", &r);
    assert_int_equal(r.passed + r.skipped + r.failed, r.tests);
    assert_true(r.hw_ran > 0);
}

static void test_dcgm_json(void **state)
{
    (void)state;
    struct vg_dcgm_result r;
    dcgm("dcgmi-diag-r1-json-fail-persistence-gb10-dcgm4.2.3.json", &r);
    assert_true(r.json);
    assert_string_equal(r.version, "4.2.3");
    assert_int_equal(r.tests, 1);
    assert_int_equal(r.failed, 1);
    assert_true(vg_startswith(r.first_fail, "software: Fail - GPU 0: Persistence Mode: Persistence mode for GPU 0"));
    dcgm("dcgmi-diag-json-dcgm3.1.0-8gpu-nvvs-raw.txt", &r);   /* banner first, nulls between tests */
    assert_true(r.json);
    assert_string_equal(r.version, "3.1.0");
    assert_int_equal(r.tests, 10);
    assert_int_equal(r.failed, 0);
    /* an excerpt (one test object) is not a dcgmi document */
    size_t len;
    char *t = fixture("dcgmi-diag-r3-json-v4-diagnostic-test-8gpu-dcgm4-excerpt.txt", &len), err[200];
    assert_int_equal(vg_parse_dcgm(t, len, &r, err, sizeof err), -1);
    free(t);
    const char *junk = "Error: unable to establish a connection to the specified host: localhost\n";
    assert_int_equal(vg_parse_dcgm(junk, strlen(junk), &r, err, sizeof err), -1);
}

/* ---- vigil-gpu ------------------------------------------------------------ */

static void test_gpubench(void **state)
{
    (void)state;
    struct vg_gpubench_result *r = vg_xmalloc(sizeof *r);
    char err[200];
    const char *ok = "gemm gpu=0 n=2048 iters=10 ms=200.0 tflops=0.859 mismatches=0\n"
                     "gemm gpu=1 n=2048 iters=10 ms=400.0 tflops=0.4295 mismatches=17\n"
                     "copy gpu=0 dir=h2d bytes=268435456 ms=4.852 gbps=55.33\n";
    assert_int_equal(vg_parse_gpubench(ok, strlen(ok), r, err, sizeof err), 0);
    assert_int_equal(r->ngemm, 2);
    assert_int_equal(r->gemm[1].mismatches, 17);
    NEAR(r->gemm[1].tflops, 0.4295);
    assert_int_equal(r->ncopy, 1);
    assert_string_equal(r->copy[0].dir, "h2d");
    const char *e = "error gpu=3 msg=\"cudaMalloc: out of memory\"\n";
    assert_int_equal(vg_parse_gpubench(e, strlen(e), r, err, sizeof err), 0);
    assert_string_equal(r->error, "GPU 3: cudaMalloc: out of memory");
    assert_int_equal(r->error_gpu, 3);
    /* what vigil-gpu printed on a machine with nvcc and no GPU */
    const char *none = "error gpu=-1 msg=\"cudaGetDeviceCount: CUDA driver version is insufficient for CUDA runtime version\"\n";
    assert_int_equal(vg_parse_gpubench(none, strlen(none), r, err, sizeof err), 0);
    assert_int_equal(r->error_gpu, -1);
    const char *bad = "gemm gpu=0 tflops=fast mismatches=0\n";
    assert_int_equal(vg_parse_gpubench(bad, strlen(bad), r, err, sizeof err), -1);
    assert_int_equal(vg_parse_gpubench("", 0, r, err, sizeof err), -1);
    free(r);
}

/* ---- thresholds and verdicts ---------------------------------------------- */

static void test_thresholds(void **state)
{
    (void)state;
    struct vg_bi_thresholds th;
    char err[256] = "";
    assert_int_equal(vg_bi_thresholds_load(NULL, &th, err, sizeof err), 0);
    const struct vg_bi_threshold *t = vg_bi_threshold_find(&th, "NVIDIA H100 80GB HBM3", "nccl-busbw");
    assert_non_null(t);
    NEAR(t->min, 460.0);
    assert_non_null(strstr(t->source, "azurehpc-health-checks"));
    NEAR(vg_bi_threshold_find(&th, "NVIDIA H200", "nccl-busbw")->min, 431.0);
    NEAR(vg_bi_threshold_find(&th, "A100-SXM4-40GB", "nccl-busbw")->min, 228.0);   /* older drivers' name */
    NEAR(vg_bi_threshold_find(&th, "NVIDIA A100-SXM4-80GB", "ib-write-bw")->min, 180.0);
    assert_null(vg_bi_threshold_find(&th, "NVIDIA H200 NVL", "nccl-busbw"));   /* PCIe card: no NVSwitch figure */
    assert_null(vg_bi_threshold_find(&th, "NVIDIA H100 PCIe", "nccl-busbw"));
    assert_null(vg_bi_threshold_find(&th, "", "gemm-ratio"));
    /* each busbw floor at the message size its source defines it at */
    assert_string_equal(t->at, "16G");
    assert_int_equal(t->at_bytes, 16LL << 30);
    assert_false(t->in_place);
    assert_string_equal(vg_bi_threshold_find(&th, "NVIDIA A100-SXM4-40GB", "nccl-busbw")->at, "8G");
    const struct vg_bi_threshold *mi = vg_bi_threshold_find(&th, "AMD Instinct MI350X", "nccl-busbw");
    assert_non_null(mi);
    NEAR(mi->min, 350);
    assert_true(mi->in_place);
    assert_int_equal(mi->at_bytes, 8LL << 30);
    NEAR(vg_bi_threshold_find(&th, "AMD Instinct MI300X", "nccl-busbw")->min, 304);
    assert_non_null(vg_bi_threshold_find(&th, "NVIDIA B200", "gemm-ratio"));
    for (size_t i = 0; i < th.n; i++) assert_true(strlen(th.t[i].source) > 10);
    vg_bi_thresholds_free(&th);
    const char *bad[][2] = {
        { "model\tmetric\tmin\tunit\tat\tsource\nX\tnccl-busbw\tfast\tGB/s\t8G\tsomewhere\n", "t:2: min is not a positive number" },
        { "model\tmetric\tmin\tunit\tat\tsource\nX\tspeed\t1\tGB/s\t-\tsomewhere\n", "t:2: unknown metric" },
        { "model\tmetric\tmin\tunit\tat\tsource\nX\tnccl-busbw\t1\tGB/s\t8G\t\n", "t:2: the source is empty (every figure names where it comes from)" },
        { "model\tmetric\tmin\tunit\tat\tsource\nX\tnccl-busbw\t1\tGB/s\t-\ts\n",
          "t:2: at: a busbw figure names the message size it is defined at (e.g. 16G, 8G in-place)" },
        { "model\tmetric\tmin\tunit\tat\tsource\nX\tnccl-busbw\t1\tGB/s\t8G inplace\ts\n",
          "t:2: at: a busbw figure names the message size it is defined at (e.g. 16G, 8G in-place)" },
        { "model\tmetric\tmin\tunit\tat\tsource\nX\tib-rate\t1\tGb/s\t8G\ts\n",
          "t:2: at: '-' (only nccl-busbw figures are per message size)" },
        { "model\tmetric\tmin\tunit\tat\tsource\nX\tib-rate\t1\tGb/s\ts\n", "t:2: expected 6 tab-separated columns" },
        { "# c\nX\tnccl-busbw\t1\tGB/s\t8G\ts\n",
          "t:2: expected the header 'model<TAB>metric<TAB>min<TAB>unit<TAB>at<TAB>source'" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(vg_bi_thresholds_parse(bad[i][0], strlen(bad[i][0]), "t", &th, err, sizeof err), -1);
        assert_string_equal(err, bad[i][1]);
    }
}

/* nccl-busbw judged on the row of the message size the floor is defined at,
 * never on the average over a sweep (small sizes included). */
static void test_nccl_rule(void **state)
{
    (void)state;
    struct vg_bi_thresholds th;
    char err[256] = "";
    assert_int_equal(vg_bi_thresholds_load(NULL, &th, err, sizeof err), 0);
    struct vg_bi_opts o = { .node = "n1", .th = &th };
    size_t n;
    const struct vg_bi_test *tests = vg_bi_tests(&n), *t = NULL;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(tests[i].name, "nccl-allreduce")) t = &tests[i];
    assert_non_null(t);
    struct vg_bi_outcome oc;
    size_t len;
    /* AMD's own MI350X sweep, 8 B .. 8 GiB: its average 111.827 GB/s, the 8 GiB in-place row 367.51 */
    char *text = fixture("rccl-tests-all_reduce_perf-mi350x-8gpu-sweep-excerpt.txt", &len);
    struct vg_bi_ctx amd = { .o = &o, .model = "AMD Instinct MI350X", .gpus = 8 };
    memset(&oc, 0, sizeof oc);
    t->rule(&amd, text, len, 0, &oc);
    assert_int_equal(oc.result, VG_BI_PASS);
    NEAR(oc.value, 367.51);
    assert_string_equal(oc.detail, "busbw at 8G in-place 367.51 GB/s >= 350 GB/s");
    free(text);
    /* a 2-node H100 sweep up to 8 GiB against the 16 GiB floor: judged on its 8 GiB row, said so */
    text = fixture("nccl-tests-all_reduce_perf-h100-a3mega-2node-16gpu.txt", &len);
    struct vg_bi_ctx h100 = { .o = &o, .model = "NVIDIA H100 80GB HBM3", .gpus = 8 };
    memset(&oc, 0, sizeof oc);
    t->rule(&h100, text, len, 0, &oc);
    assert_int_equal(oc.result, VG_BI_FAIL);
    assert_true(oc.value > 300 && oc.value < 340);   /* the 8 GiB row, not the sweep's average (~100) */
    assert_true(vg_startswith(oc.detail, "busbw at 8G "));
    assert_non_null(strstr(oc.detail, "(the floor is defined at 16G)"));
    free(text);
    /* a run whose sizes never reach the floor's: unknown, not judged on its average */
    const char *small = "# nThread 1 nGpus 8 minBytes 8 maxBytes 1048576 step: 2(factor)\n"
                        "     1048576        262144     float     sum      -1    40.0   26.21   45.87      0"
                        "    40.0   26.21   45.87      0\n# Avg bus bandwidth    : 45.87\n";
    memset(&oc, 0, sizeof oc);
    t->rule(&h100, small, strlen(small), 0, &oc);
    assert_int_equal(oc.result, VG_BI_UNKNOWN);
    assert_non_null(strstr(oc.detail, "under half of 16G"));
    vg_bi_thresholds_free(&th);
}

static void test_verdicts(void **state)
{
    (void)state;
    struct vg_bi_outcome t[3] = { { .name = "nvml", .result = VG_BI_PASS },
                                  { .name = "ib-port", .result = VG_BI_UNKNOWN },
                                  { .name = "gemm-small", .result = VG_BI_PASS } };
    assert_int_equal(vg_bi_node_result(t, 3), VG_BI_UNKNOWN);   /* unknown is never a pass */
    assert_int_equal(vg_bi_node_result(t, 1), VG_BI_PASS);
    t[2].result = VG_BI_FAIL;
    vg_strlcpy(t[2].kind, "sdc", sizeof t[2].kind);
    vg_strlcpy(t[2].detail, "GPU 3: 17 elements differ from the reference result", sizeof t[2].detail);
    assert_int_equal(vg_bi_node_result(t, 3), VG_BI_FAIL);
    struct vg_bi_node n = { .node = "n2", .tests = t, .ntests = 3, .result = VG_BI_FAIL };
    char reason[256];
    vg_bi_reason(&n, reason, sizeof reason);
    assert_string_equal(reason, "vigil: burnin gemm-small: GPU 3: 17 elements differ from the reference result");
    struct vg_event ev[4];
    char err[256];
    struct vg_catalog *cat = vg_catalog_open(NULL, NULL, NULL, err, sizeof err);
    assert_non_null(cat);
    assert_int_equal(vg_bi_events(&n, cat, ev, 4), 1);
    assert_string_equal(ev[0].kind, "sdc");
    assert_string_equal(ev[0].source, "burnin");
    assert_int_equal(ev[0].action, VG_ACT_DRAIN_RMA);   /* the catalog's row for sdc */
    t[1].result = VG_BI_FAIL;
    vg_strlcpy(t[1].kind, "ib-bw-low", sizeof t[1].kind);
    vg_strlcpy(t[1].detail, "BW average 196.17 Gb/s < 380 Gb/s", sizeof t[1].detail);
    vg_bi_reason(&n, reason, sizeof reason);
    assert_string_equal(reason, "vigil: burnin ib-port: BW average 196.17 Gb/s < 380 Gb/s (+1 more)");
    assert_int_equal(vg_bi_events(&n, cat, ev, 4), 2);
    assert_int_equal(ev[0].action, VG_ACT_REBOOT);
    /* the site policy decides as it does for every other reader of the catalog */
    static const char site[] = "kind ib-bw-low action=drain-rma\n";
    assert_int_equal(vg_catalog_apply_policy_text(cat, site, sizeof site - 1, "policy.tsv", err, sizeof err), 0);
    assert_int_equal(vg_bi_events(&n, cat, ev, 4), 2);
    assert_int_equal(ev[0].action, VG_ACT_DRAIN_RMA);
    vg_catalog_free(cat);
    enum vg_bi_suite s;
    assert_true(vg_bi_suite_parse("standard", &s));
    assert_int_equal(s, VG_BI_STANDARD);
    assert_false(vg_bi_suite_parse("medium", &s));
    const char *names[16];
    size_t k = vg_bi_suite_tests(VG_BI_QUICK, "nvidia", names, 16);
    assert_int_equal(k, 4);
    assert_string_equal(names[0], "nvml");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nccl_h200),   cmocka_unit_test(test_nccl_sweep_and_legacy),
        cmocka_unit_test(test_nccl_failures), cmocka_unit_test(test_perftest),
        cmocka_unit_test(test_dcgm_tables), cmocka_unit_test(test_dcgm_json), cmocka_unit_test(test_dcgm_counts),
        cmocka_unit_test(test_gpubench),    cmocka_unit_test(test_thresholds), cmocka_unit_test(test_nccl_rule),
        cmocka_unit_test(test_verdicts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
