/* test_burnin_amd.c — the burn-in on AMD Instinct's tools, on their real
 * output (tests/fixtures/burnin/, sources in its README.md): a real 8x
 * MI300X rccl-tests sweep judged at AMD's 304 GB/s floor (its 8 GB
 * in-place row, never its average), the ROCm Validation Suite's modules
 * (RVS 1.6.75 runs with their summary table, older runs without one, its
 * errors), TransferBench a2a and p2p against AMD's figures; the AMD rows of
 * the thresholds file. */
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
#include "burnin/parsers.h"
#include "util/rootfs.h"
#include "util/strutil.h"

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 0.005)

static char *fixture(const char *name, size_t *len)
{
    char path[256], *text;
    snprintf(path, sizeof path, "tests/fixtures/burnin/%s", name);
    assert_int_equal(vg_read_file(NULL, path, 1 << 20, &text, len), 0);
    return text;
}

static struct vg_bi_thresholds th;

static int setup(void **state)
{
    (void)state;
    char err[256] = "";
    if (vg_bi_thresholds_load(NULL, &th, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    vg_bi_thresholds_free(&th);
    return 0;
}

static const struct vg_bi_test *test_named(const char *name)
{
    size_t n;
    const struct vg_bi_test *t = vg_bi_tests(&n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(t[i].name, name)) return &t[i];
    fail_msg("no burn-in test %s", name);
    return NULL;
}

/* Runs test name's rule on text as a node with GPU model (the pass's context). */
static void judge(const char *name, const char *model, const char *text, size_t len, struct vg_bi_outcome *oc)
{
    struct vg_bi_opts o = { .node = "n1", .th = &th };
    struct vg_bi_ctx c = { .o = &o, .model = model, .gpus = 8 };
    memset(oc, 0, sizeof *oc);
    test_named(name)->rule(&c, text, len, 0, oc);
}

static void judge_fixture(const char *name, const char *model, const char *file, struct vg_bi_outcome *oc)
{
    size_t len;
    char *text = fixture(file, &len);
    judge(name, model, text, len, oc);
    free(text);
}

/* ---- rccl-tests ----------------------------------------------------------- */

/* AMD's rocm-blogs run on 8x MI300X, 8 B .. 16 GiB: the sweep's average is
 * 116.669 GB/s, its 8 GiB in-place busbw 317.66 — AMD's criterion. */
static void test_rccl_mi300x_sweep_passes_at_amds_floor(void **state)
{
    (void)state;
    const char *f = "rccl-tests-all_reduce_perf-mi300x-8gpu-sweep-8-16G.txt";
    size_t len;
    char *text = fixture(f, &len), err[200];
    struct vg_nccl_result r;
    assert_int_equal(vg_parse_nccl(text, len, &r, err, sizeof err), 0);
    assert_int_equal(r.rows, 32);
    NEAR(r.avg_busbw, 116.669);   /* far below any floor: never what is judged */
    assert_int_equal(r.oob, 0);
    free(text);
    struct vg_bi_outcome oc;
    judge_fixture("nccl-allreduce", "AMD Instinct MI300X", f, &oc);
    assert_int_equal(oc.result, VG_BI_PASS);
    NEAR(oc.value, 317.66);
    assert_string_equal(oc.detail, "busbw at 8G in-place 317.66 GB/s >= 304 GB/s");
    assert_string_equal(oc.expected, ">= 304 GB/s");
    assert_non_null(strstr(oc.source, "rccl-benchmarking.md"));
    judge_fixture("nccl-allreduce", "AMD Instinct MI325X", f, &oc);   /* MI325X: the same 304 GB/s */
    assert_int_equal(oc.result, VG_BI_PASS);
    assert_non_null(strstr(oc.source, "mi325x.md"));
    judge_fixture("nccl-allreduce", "AMD Instinct MI355X", f, &oc);   /* MI350X/MI355X: 350 GB/s */
    assert_int_equal(oc.result, VG_BI_FAIL);
    assert_string_equal(oc.detail, "busbw at 8G in-place 317.66 GB/s < 350 GB/s");
    judge_fixture("nccl-allreduce", "AMD Instinct MI250X", f, &oc);   /* no published figure */
    assert_int_equal(oc.result, VG_BI_UNKNOWN);
}

/* ---- the ROCm Validation Suite ---------------------------------------------- */

static void rvs(const char *file, struct vg_rvs_result *r)
{
    size_t len;
    char *text = fixture(file, &len), err[200];
    assert_int_equal(vg_parse_rvs(text, len, r, err, sizeof err), 0);
    free(text);
}

static void test_rvs_modules(void **state)
{
    (void)state;
    struct vg_rvs_result r;
    rvs("rvs-gst-mi355x-8gpu-rvs1.6.75-summary-excerpt.txt", &r);
    assert_string_equal(r.module, "gst");
    assert_int_equal(r.actions, 1);
    assert_int_equal(r.verdicts, 5);   /* four "met: TRUE" in the excerpt, one summary row */
    assert_int_equal(r.failed, 0);
    assert_int_equal(r.summary_rows, 1);
    assert_string_equal(r.version, "1.6.75");
    rvs("rvs-gst-mi300x-8gpu-acceptance-excerpt.txt", &r);   /* no summary table (older RVS) */
    assert_int_equal(r.verdicts, 1);
    assert_int_equal(r.summary_rows, 0);
    rvs("rvs-iet-mi300x-8gpu-acceptance-excerpt.txt", &r);
    assert_string_equal(r.module, "iet");
    assert_int_equal(r.actions, 2);
    assert_int_equal(r.verdicts, 3);
    rvs("rvs-iet-mi355x-8gpu-rvs1.6.75-summary-excerpt.txt", &r);
    assert_int_equal(r.verdicts, 9);
    rvs("rvs-mem-mi355x-8gpu-rvs1.6.75-summary-excerpt.txt", &r);
    assert_string_equal(r.module, "mem");
    assert_int_equal(r.verdicts, 8);   /* seven "Test N : PASS", one summary row */
    NEAR(r.min_gbps, 6392.145508);      /* Test 11's slowest GPU */
    rvs("rvs-pebb-mi355x-8gpu-rvs1.6.75-summary-excerpt.txt", &r);
    assert_int_equal(r.verdicts, 11);
    NEAR(r.min_gbps, 54.034);
    rvs("rvs-pbqt-mi355x-8gpu-rvs1.6.75-summary-excerpt.txt", &r);
    assert_int_equal(r.verdicts, 17);   /* 7 peers:true, 9 bandwidths, the summary */
    NEAR(r.min_gbps, 59.704);
    rvs("rvs-peqt-mi355x-8gpu-rvs1.6.75-summary-excerpt.txt", &r);
    assert_int_equal(r.verdicts, 2);
    rvs("rvs-gm-mi355x-8gpu-rvs1.6.75-summary-excerpt.txt", &r);
    assert_int_equal(r.verdicts, 6);
    assert_int_equal(r.failed, 0);
    char err[200];
    const char *junk = "TransferBench v1.60.00\nnothing of RVS here\n";
    assert_int_equal(vg_parse_rvs(junk, strlen(junk), &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "not RVS output"));
}

/* A real run with one verdict turned over, as RVS writes it (gst_worker.cpp:
 * " met: " + (result ? "TRUE" : "FALSE")), and other failures. */
static char *replace(const char *text, const char *from, const char *to)
{
    const char *p = strstr(text, from);
    assert_non_null(p);
    size_t a = (size_t)(p - text), fl = strlen(from), tl = strlen(to), n = strlen(text);
    char *out = malloc(n - fl + tl + 1);
    memcpy(out, text, a);
    memcpy(out + a, to, tl);
    memcpy(out + a + tl, p + fl, n - a - fl + 1);
    return out;
}

static void test_rvs_rule(void **state)
{
    (void)state;
    struct vg_bi_outcome oc;
    judge_fixture("rvs-gst", "AMD Instinct MI355X", "rvs-gst-mi355x-8gpu-rvs1.6.75-summary-excerpt.txt", &oc);
    assert_int_equal(oc.result, VG_BI_PASS);
    assert_string_equal(oc.detail, "gst: 5 verdicts TRUE");
    assert_non_null(strstr(oc.source, "system-acceptance-docs"));
    judge_fixture("rvs-pbqt", "AMD Instinct MI355X", "rvs-pbqt-mi355x-8gpu-rvs1.6.75-summary-excerpt.txt", &oc);
    assert_int_equal(oc.result, VG_BI_PASS);
    assert_string_equal(oc.detail, "pbqt: 17 verdicts TRUE, slowest 59.704 GB/s");
    /* no model known (no AMD backend answered): nothing failed, but no figure to hold it to */
    judge_fixture("rvs-gst", "", "rvs-gst-mi300x-8gpu-acceptance-excerpt.txt", &oc);
    assert_int_equal(oc.result, VG_BI_UNKNOWN);

    size_t len;
    char *text = fixture("rvs-gst-mi300x-8gpu-acceptance-excerpt.txt", &len);
    char *bad = replace(text, "met: TRUE", "met: FALSE");
    judge("rvs-gst", "", bad, strlen(bad), &oc);   /* the tool's own FALSE fails whatever the model */
    assert_int_equal(oc.result, VG_BI_FAIL);
    assert_string_equal(oc.detail, "gst: 1 of 1 verdicts failed: [gst-1215Tflops-4K4K8K-rand-fp8] [GPU:: 28851] "
                                   "GFLOPS 1687129 Target GFLOPS: 1215000 met: FALSE");
    free(bad);
    free(text);

    text = fixture("rvs-gm-mi355x-8gpu-rvs1.6.75-summary-excerpt.txt", &len);
    bad = replace(text, "temp violations 0", "temp violations 3");
    judge("rvs-gst", "AMD Instinct MI355X", bad, strlen(bad), &oc);   /* one rule reads every module */
    assert_int_equal(oc.result, VG_BI_FAIL);
    assert_non_null(strstr(oc.detail, "gm 57875 temp violations 3"));
    free(bad);
    free(text);

    /* the summary's result cell as RVS writes it on a terminal (rvsexec_do_yaml.cpp: red FAIL) */
    text = fixture("rvs-mem-mi355x-8gpu-rvs1.6.75-summary-excerpt.txt", &len);
    bad = replace(text, "| PASS            |", "| \033[31mFAIL          \033[0m  |");
    judge("rvs-mem", "AMD Instinct MI355X", bad, strlen(bad), &oc);
    assert_int_equal(oc.result, VG_BI_FAIL);
    assert_string_equal(oc.detail, "mem: 1 of 8 verdicts failed: action_1 (MEM): FAIL in the RVS summary");
    free(bad);
    /* an older RVS (no summary) says a failed mem action only on stderr, after its results */
    const char *tail = "RVS-ERROR [mem] [action_1] Action failed to run successfully.\n";
    char *both = malloc(len + strlen(tail) + 1);
    memcpy(both, text, len);
    strcpy(both + len, tail);
    judge("rvs-mem", "AMD Instinct MI355X", both, strlen(both), &oc);
    assert_int_equal(oc.result, VG_BI_FAIL);
    assert_string_equal(oc.detail, "mem: RVS-ERROR [mem] [action_1] Action failed to run successfully.");
    free(both);
    free(text);

    /* RVS that could not start: unknown with its own words (real message: ROCmValidationSuite#1263) */
    const char *noplat = "RVS-ERROR [CLI] No platform support for the detected GPU or no GPU detected !\n";
    judge("rvs-gst", "AMD Instinct MI300X", noplat, strlen(noplat), &oc);
    assert_int_equal(oc.result, VG_BI_UNKNOWN);
    assert_non_null(strstr(oc.detail, "No platform support for the detected GPU"));
    judge("rvs-gst", "AMD Instinct MI300X", "", 0, &oc);
    assert_int_equal(oc.result, VG_BI_UNKNOWN);
    assert_non_null(strstr(oc.detail, "not RVS output"));
}

/* ---- TransferBench ---------------------------------------------------------- */

static void test_transferbench(void **state)
{
    (void)state;
    size_t len;
    char err[200];
    struct vg_tb_result r;
    char *text = fixture("transferbench-a2a-mi300x-8gpu-64M-8cu-v1.60.txt", &len);
    assert_int_equal(vg_parse_transferbench(text, len, &r, err, sizeof err), 0);
    assert_string_equal(r.version, "1.60.00");
    assert_true(r.has_a2a);
    NEAR(r.a2a_avg, 46.552);
    NEAR(r.a2a_min, 45.095);   /* GPU 07 -> GPU 00, the slowest link of the summary matrix */
    assert_int_equal(r.a2a_min_src, 7);
    assert_int_equal(r.a2a_min_dst, 0);
    assert_false(r.has_uni);
    free(text);
    text = fixture("transferbench-p2p-mi300x-8gpu-docs.txt", &len);
    assert_int_equal(vg_parse_transferbench(text, len, &r, err, sizeof err), 0);
    assert_true(r.has_uni && r.has_bi);
    NEAR(r.uni[VG_TB_GPU_GPU], 48.65);
    NEAR(r.uni[1], 33.67);   /* CPU->GPU, under 33.9: not what AMD holds a node to */
    NEAR(r.bi[VG_TB_GPU_GPU], 46.28);
    NEAR(r.bi[0], 35.83);
    assert_false(r.has_a2a);
    free(text);
    const char *junk = "# nThread 1 nGpus 8\n";
    assert_int_equal(vg_parse_transferbench(junk, strlen(junk), &r, err, sizeof err), -1);
}

static void test_transferbench_rules(void **state)
{
    (void)state;
    struct vg_bi_outcome oc;
    judge_fixture("transferbench-a2a", "AMD Instinct MI300X", "transferbench-a2a-mi300x-8gpu-64M-8cu-v1.60.txt", &oc);
    assert_int_equal(oc.result, VG_BI_PASS);
    assert_string_equal(oc.detail,
                        "avg GPU-GPU 46.55 GB/s >= 32.9 GB/s; slowest link GPU 07 -> GPU 00 45.095 GB/s");
    judge_fixture("transferbench-a2a", "AMD Instinct MI355X", "transferbench-a2a-mi300x-8gpu-64M-8cu-v1.60.txt", &oc);
    assert_int_equal(oc.result, VG_BI_UNKNOWN);   /* AMD publishes no TransferBench figure for MI355X */
    judge_fixture("transferbench-p2p", "AMD Instinct MI300X", "transferbench-p2p-mi300x-8gpu-docs.txt", &oc);
    assert_int_equal(oc.result, VG_BI_PASS);
    NEAR(oc.value, 48.65);
    assert_string_equal(oc.detail, "GPU->GPU unidirectional 48.65 GB/s >= 33.9 GB/s; bidirectional 46.28 GB/s >= 43.9 GB/s");

    size_t len;
    char *text = fixture("transferbench-p2p-mi300x-8gpu-docs.txt", &len);
    char *slow = replace(text, "Averages (During  BiDir):     35.83     37.51     36.98     46.28",
                         "Averages (During  BiDir):     35.83     37.51     36.98     23.14");
    judge("transferbench-p2p", "AMD Instinct MI325X", slow, strlen(slow), &oc);
    assert_int_equal(oc.result, VG_BI_FAIL);
    NEAR(oc.value, 23.14);
    assert_string_equal(oc.expected, ">= 43.9 GB/s");
    free(slow);
    free(text);

    /* data that came out different: silent data corruption (TransferBench.cpp's message) */
    const char *mism = "TransferBench v1.60.00\n\n[ERROR] Unexpected mismatch at index 1024 of destination array 0:\n";
    judge("transferbench-a2a", "AMD Instinct MI300X", mism, strlen(mism), &oc);
    assert_int_equal(oc.result, VG_BI_FAIL);
    assert_string_equal(oc.kind, "sdc");
    /* a run that could not start (a real MI350X run with the gfx942-only build) */
    const char *hip = "TransferBench v1.62.00\n...\n[ERROR] HIP Error: invalid resource handle\n";
    judge("transferbench-p2p", "AMD Instinct MI300X", hip, strlen(hip), &oc);
    assert_int_equal(oc.result, VG_BI_UNKNOWN);
    assert_non_null(strstr(oc.detail, "invalid resource handle"));
}

static void test_amd_thresholds(void **state)
{
    (void)state;
    const struct vg_bi_threshold *t = vg_bi_threshold_find(&th, "AMD Instinct MI325X", "nccl-busbw");
    assert_non_null(t);
    NEAR(t->min, 304);
    assert_true(t->in_place);
    NEAR(vg_bi_threshold_find(&th, "AMD Instinct MI300X", "transferbench-a2a")->min, 32.9);
    NEAR(vg_bi_threshold_find(&th, "AMD Instinct MI325X", "transferbench-p2p-uni")->min, 33.9);
    NEAR(vg_bi_threshold_find(&th, "AMD Instinct MI300X", "transferbench-p2p-bi")->min, 43.9);
    assert_null(vg_bi_threshold_find(&th, "AMD Instinct MI355X", "transferbench-a2a"));
    assert_non_null(vg_bi_threshold_find(&th, "AMD Instinct MI250X", "rvs-pass"));
    assert_null(vg_bi_threshold_find(&th, "NVIDIA H100 80GB HBM3", "rvs-pass"));
}

/* The names of suite s of those vendors, space-separated (static buffer). */
static const char *suite(enum vg_bi_suite s, const char *vendors)
{
    static char all[512];
    const char *names[32];
    size_t n = vg_bi_suite_tests(s, vendors, names, 32);
    all[0] = 0;
    for (size_t i = 0; i < n; i++) snprintf(all + strlen(all), sizeof all - strlen(all), "%s%s", i ? " " : "", names[i]);
    return all;
}

/* Each vendor's suites: AMD's tools only in AMD's, NVIDIA's only in NVIDIA's,
 * the probe, InfiniBand and all_reduce_perf (nccl-tests, rccl-tests) in both;
 * a node with both vendors' GPUs runs both. */
static void test_vendor_suites(void **state)
{
    (void)state;
    assert_string_equal(suite(VG_BI_QUICK, "amd"), "nvml ib-port rvs-peqt transferbench-a2a");
    assert_string_equal(suite(VG_BI_STANDARD, "amd"), "nvml ib-port nccl-allreduce ib-write-bw rvs-peqt "
                                                      "transferbench-a2a transferbench-p2p rvs-gst rvs-iet rvs-pebb rvs-pbqt");
    assert_non_null(strstr(suite(VG_BI_LONG, "amd"), "rvs-mem"));
    assert_string_equal(suite(VG_BI_STANDARD, "nvidia"), "nvml ib-port h2d-bw dcgm-diag nccl-allreduce ib-write-bw gemm");
    assert_string_equal(suite(VG_BI_QUICK, "nvidia,amd"), "nvml ib-port h2d-bw gemm-small rvs-peqt transferbench-a2a");
    char err[200];
    assert_int_equal(vg_bi_vendors_check("nvidia,amd", err, sizeof err), 0);
    assert_int_equal(vg_bi_vendors_check("amd,intel", err, sizeof err), -1);
    assert_string_equal(err, "--vendor: 'intel' is not a GPU vendor (nvidia, amd)");
    assert_int_equal(vg_bi_vendors_check("", err, sizeof err), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rccl_mi300x_sweep_passes_at_amds_floor),
        cmocka_unit_test(test_rvs_modules),
        cmocka_unit_test(test_rvs_rule),
        cmocka_unit_test(test_transferbench),
        cmocka_unit_test(test_transferbench_rules),
        cmocka_unit_test(test_amd_thresholds),
        cmocka_unit_test(test_vendor_suites),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
