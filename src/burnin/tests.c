/* tests.c — the burn-in tests, one table line each: name, suites, the fault
 * a failure means, the tool and its arguments, and the rule that reads the
 * tool's real output (parsers.h) against the figure for the node's GPU model
 * (data/burnin-thresholds.tsv).  Suites: quick (≤ 30 s), standard (≤ 5 min),
 * long (≤ 30 min); see docs/burnin.md. */
#include "burnin/burnin_int.h"
#include "burnin/parsers.h"
#include "signal/sysfs.h"
#include "util/strutil.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vg_bi_compare(const struct vg_bi_ctx *c, const char *metric, const char *what, double value,
                   const char *unit, struct vg_bi_outcome *oc)
{
    const struct vg_bi_threshold *t = vg_bi_threshold_find(c->o->th, c->model, metric);
    oc->has_value = true;
    oc->value = value;
    vg_strlcpy(oc->unit, unit, sizeof oc->unit);
    if (!t) {
        oc->result = VG_BI_UNKNOWN;
        snprintf(oc->detail, sizeof oc->detail, "%s %.2f %s; no %s figure for GPU model '%s' in the thresholds",
                 what, value, unit, metric, c->model[0] ? c->model : "(unknown)");
        return;
    }
    snprintf(oc->expected, sizeof oc->expected, ">= %g %s", t->min, t->unit);
    vg_strlcpy(oc->source, t->source, sizeof oc->source);
    oc->result = value >= t->min ? VG_BI_PASS : VG_BI_FAIL;
    snprintf(oc->detail, sizeof oc->detail, "%s %.2f %s %s %g %s", what, value, unit, value >= t->min ? ">=" : "<",
             t->min, t->unit);
}

void vg_bi_unknown(struct vg_bi_outcome *oc, const char *fmt, ...)
{
    oc->result = VG_BI_UNKNOWN;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(oc->detail, sizeof oc->detail, fmt, ap);
    va_end(ap);
}

/* ---- rules for the tools' output ----------------------------------------- */

static void rule_dcgm(const struct vg_bi_ctx *c, const char *out, size_t len, int status, struct vg_bi_outcome *oc)
{
    (void)c;
    struct vg_dcgm_result r;
    char err[200];
    vg_strlcpy(oc->expected, "no failed test", sizeof oc->expected);
    vg_strlcpy(oc->source, "dcgmi diag: a test row or result with status Fail", sizeof oc->source);
    if (vg_parse_dcgm(out, len, &r, err, sizeof err) || r.tests == 0) {
        return vg_bi_unknown(oc, "dcgmi diag (exit %d): %s", status, r.tests ? err : "no test result in its output");
    }
    const char *ver = r.version[0] ? r.version : "?";
    if (!r.failed && !r.hw_ran) {   /* only software checks ran: nothing tested the GPUs */
        if (r.hw_tests)
            return vg_bi_unknown(oc, "every hardware test was skipped (%d: %s; DCGM %s): nothing tested the GPUs",
                                 r.hw_tests, r.skipped_names, ver);
        return vg_bi_unknown(oc, "no hardware test in its output, only the %d deployment checks (DCGM %s)", r.tests, ver);
    }
    oc->has_value = true;
    oc->value = r.failed;
    vg_strlcpy(oc->unit, "failed", sizeof oc->unit);
    oc->result = r.failed ? VG_BI_FAIL : VG_BI_PASS;
    if (r.failed) snprintf(oc->detail, sizeof oc->detail, "%s", r.first_fail);
    else snprintf(oc->detail, sizeof oc->detail, "%d tests passed, %d skipped%s%s (DCGM %s)", r.passed, r.skipped,
                  r.skipped_names[0] ? ": " : "", r.skipped_names, ver);
}

static void rule_nccl(const struct vg_bi_ctx *c, const char *out, size_t len, int status, struct vg_bi_outcome *oc)
{
    (void)status;
    struct vg_nccl_result r;
    char err[200];
    if (vg_parse_nccl(out, len, &r, err, sizeof err)) return vg_bi_unknown(oc, "all_reduce_perf: %s", err);
    if (r.oob > 0 || r.wrong > 0) {
        oc->result = VG_BI_FAIL;
        vg_strlcpy(oc->kind, "sdc", sizeof oc->kind);
        oc->has_value = true;
        oc->value = (double)(r.oob > 0 ? r.oob : r.wrong);
        vg_strlcpy(oc->unit, "wrong", sizeof oc->unit);
        vg_strlcpy(oc->expected, "0 wrong values", sizeof oc->expected);
        snprintf(oc->detail, sizeof oc->detail, "%ld wrong values (# Out of bounds values : %ld)", r.wrong, r.oob);
        return;
    }
    if (!r.rows && !r.has_avg)
        return vg_bi_unknown(oc, "all_reduce_perf did not measure: %s", r.error[0] ? r.error : "no size row");
    const struct vg_bi_threshold *t = vg_bi_threshold_find(c->o->th, c->model, "nccl-busbw");
    if (!t) return vg_bi_compare(c, "nccl-busbw", "avg busbw", r.avg_busbw, "GB/s", oc);
    /* the floor is defined at one message size (the large-message plateau):
     * that row, or the largest below it when it is at least half of it; the
     * average over a sweep, small sizes included, is far below any floor */
    int i = vg_nccl_row_at(&r, t->at_bytes);
    if (i < 0 || 2 * r.row[i].bytes < t->at_bytes) {
        oc->has_value = true;
        oc->value = r.avg_busbw;
        vg_strlcpy(oc->unit, "GB/s", sizeof oc->unit);
        snprintf(oc->expected, sizeof oc->expected, ">= %g %s at %s", t->min, t->unit, t->at);
        vg_strlcpy(oc->source, t->source, sizeof oc->source);
        if (i < 0) return vg_bi_unknown(oc, "no size row at or below %s, the message size the floor is defined at "
                                            "(avg busbw %.2f GB/s over the run is not judged)", t->at, r.avg_busbw);
        return vg_bi_unknown(oc, "the largest message measured (%lld bytes) is under half of %s, the size the floor is "
                                 "defined at", r.row[i].bytes, t->at);
    }
    char what[64], sz[24];
    long long b = r.row[i].bytes;
    if (b % (1LL << 30) == 0) snprintf(sz, sizeof sz, "%lldG", b >> 30);
    else if (b % (1LL << 20) == 0) snprintf(sz, sizeof sz, "%lldM", b >> 20);
    else snprintf(sz, sizeof sz, "%lld B", b);
    snprintf(what, sizeof what, "busbw at %s%s", sz, t->in_place ? " in-place" : "");
    vg_bi_compare(c, "nccl-busbw", what, t->in_place ? r.row[i].ip : (r.row[i].oop + r.row[i].ip) / 2, "GB/s", oc);
    if (b != t->at_bytes) {
        size_t have = strlen(oc->detail);
        snprintf(oc->detail + have, sizeof oc->detail - have, " (the floor is defined at %s)", t->at);
    }
}

static void rule_perftest(const struct vg_bi_ctx *c, const char *out, size_t len, int status,
                          struct vg_bi_outcome *oc)
{
    (void)status;
    struct vg_perftest_result r;
    char err[200];
    if (vg_parse_perftest(out, len, &r, err, sizeof err)) return vg_bi_unknown(oc, "ib_write_bw: %s", err);
    if (!r.rows) return vg_bi_unknown(oc, "ib_write_bw did not measure: %s", r.error[0] ? r.error : "no size row");
    vg_bi_compare(c, "ib-write-bw", "BW average", r.avg_gbps, "Gb/s", oc);
    if (r.error[0]) {   /* it broke off after some sizes: the link failed under load */
        oc->result = VG_BI_FAIL;
        snprintf(oc->detail, sizeof oc->detail, "%s after %d sizes", r.error, r.rows);
    }
}

static bool gpubench(const char *out, size_t len, struct vg_gpubench_result *r, struct vg_bi_outcome *oc)
{
    char err[200];
    if (vg_parse_gpubench(out, len, r, err, sizeof err)) {
        vg_bi_unknown(oc, "vigil-gpu: %s", err);
        return false;
    }
    if (r->error[0] && r->error_gpu < 0) {   /* no device or driver for CUDA: nothing was measured */
        vg_bi_unknown(oc, "vigil-gpu: CUDA did not start: %s", r->error);
        return false;
    }
    if (r->error[0]) {
        oc->result = VG_BI_FAIL;
        snprintf(oc->detail, sizeof oc->detail, "vigil-gpu: %s", r->error);
        return false;
    }
    return true;
}

static void rule_copy(const struct vg_bi_ctx *c, const char *out, size_t len, int status, struct vg_bi_outcome *oc)
{
    (void)status;
    struct vg_gpubench_result *r = vg_xmalloc(sizeof *r);
    if (gpubench(out, len, r, oc)) {
        int worst = -1;
        for (int i = 0; i < r->ncopy; i++)
            if (!strcmp(r->copy[i].dir, "h2d") && (worst < 0 || r->copy[i].gbps < r->copy[worst].gbps)) worst = i;
        if (worst < 0) vg_bi_unknown(oc, "vigil-gpu copy: no h2d figure");
        else {
            char what[32];
            snprintf(what, sizeof what, "GPU %d h2d", r->copy[worst].gpu);
            vg_bi_compare(c, "h2d-bw", what, r->copy[worst].gbps, "GB/s", oc);
        }
    }
    free(r);
}

static void rule_gemm(const struct vg_bi_ctx *c, const char *out, size_t len, int status, struct vg_bi_outcome *oc)
{
    (void)status;
    struct vg_gpubench_result *r = vg_xmalloc(sizeof *r);
    if (!gpubench(out, len, r, oc)) goto done;
    if (!r->ngemm) {
        vg_bi_unknown(oc, "vigil-gpu gemm: no gemm figure");
        goto done;
    }
    int slow = 0, fast = 0;
    for (int i = 0; i < r->ngemm; i++) {
        if (r->gemm[i].mismatches > 0) {   /* a result that differs from the reference: silent data corruption */
            oc->result = VG_BI_FAIL;
            vg_strlcpy(oc->kind, "sdc", sizeof oc->kind);
            oc->has_value = true;
            oc->value = (double)r->gemm[i].mismatches;
            vg_strlcpy(oc->unit, "mismatches", sizeof oc->unit);
            vg_strlcpy(oc->expected, "0 mismatches", sizeof oc->expected);
            snprintf(oc->detail, sizeof oc->detail, "GPU %d: %ld elements differ from the reference result",
                     r->gemm[i].gpu, r->gemm[i].mismatches);
            goto done;
        }
        if (r->gemm[i].tflops < r->gemm[slow].tflops) slow = i;
        if (r->gemm[i].tflops > r->gemm[fast].tflops) fast = i;
    }
    double ratio = r->gemm[fast].tflops > 0 ? r->gemm[slow].tflops / r->gemm[fast].tflops : 0;
    char what[64];
    snprintf(what, sizeof what, "GPU %d %.3g TFLOP/s vs GPU %d %.3g:", r->gemm[slow].gpu, r->gemm[slow].tflops,
             r->gemm[fast].gpu, r->gemm[fast].tflops);
    vg_bi_compare(c, "gemm-ratio", what, ratio, "ratio", oc);
done:
    free(r);
}

/* ---- built-in tests ------------------------------------------------------ */

/* NVML answers, reports GPUs, and none shows a fault (lost, ECC DBE, row
 * remapping failure, PCIe link degraded, NVLink down, …). */
static void builtin_nvml(const struct vg_bi_ctx *c, struct vg_bi_outcome *oc)
{
    const struct vg_gpu_probe_result *p = c->probe;
    vg_strlcpy(oc->expected, "no GPU fault", sizeof oc->expected);
    if (p->error[0]) return vg_bi_unknown(oc, "NVML: %s", p->error);
    struct vg_event ev[32];
    int n = 0;
    vg_gpu_probe_events(p, c->o->node, ev, &n, 32);
    oc->has_value = true;
    oc->value = p->count;
    vg_strlcpy(oc->unit, "GPUs", sizeof oc->unit);
    if (n) {
        oc->result = VG_BI_FAIL;
        vg_strlcpy(oc->kind, ev[0].kind, sizeof oc->kind);
        snprintf(oc->detail, sizeof oc->detail, "%.200s%s", ev[0].raw, n > 1 ? " (and more)" : "");
    } else if (p->count <= 0) {
        oc->result = VG_BI_FAIL;
        vg_strlcpy(oc->kind, "gpu-count-mismatch", sizeof oc->kind);
        vg_strlcpy(oc->detail, "NVML reports no GPU", sizeof oc->detail);
    } else {
        oc->result = VG_BI_PASS;
        snprintf(oc->detail, sizeof oc->detail, "%d GPUs (%s) answer", p->count, c->model);
    }
}

/* Every InfiniBand port (link layer InfiniBand; RoCE ports are skipped)
 * ACTIVE, at the model's rate when the thresholds have one. */
static void builtin_ib(const struct vg_bi_ctx *c, struct vg_bi_outcome *oc)
{
    struct vg_ib_port *ports;
    size_t all = vg_ib_ports(c->o->root, &ports), n = 0;
    for (size_t i = 0; i < all; i++)   /* RoCE (Ethernet) ports are not held to the InfiniBand rate */
        if (strcmp(ports[i].link_layer, "Ethernet")) ports[n++] = ports[i];
    if (!n) {
        free(ports);
        return vg_bi_unknown(oc, "no InfiniBand port under %s/sys/class/infiniband", c->o->root ? c->o->root : "");
    }
    const struct vg_bi_threshold *t = vg_bi_threshold_find(c->o->th, c->model, "ib-rate");
    size_t worst = 0;
    for (size_t i = 0; i < n; i++)
        if (ports[i].rate_gbps < ports[worst].rate_gbps) worst = i;
    oc->has_value = true;
    oc->value = ports[worst].rate_gbps;
    vg_strlcpy(oc->unit, "Gb/s", sizeof oc->unit);
    if (t) {
        snprintf(oc->expected, sizeof oc->expected, "ACTIVE, >= %g %s", t->min, t->unit);
        vg_strlcpy(oc->source, t->source, sizeof oc->source);
    } else
        vg_strlcpy(oc->expected, "ACTIVE", sizeof oc->expected);
    oc->result = VG_BI_PASS;
    snprintf(oc->detail, sizeof oc->detail, "%zu ports ACTIVE, slowest %s:%d %s", n, ports[worst].dev,
             ports[worst].port, ports[worst].rate);
    for (size_t i = 0; i < n; i++) {
        if (ports[i].state != 4) {
            oc->result = VG_BI_FAIL;
            vg_strlcpy(oc->kind, "ib-down", sizeof oc->kind);
            snprintf(oc->detail, sizeof oc->detail, "%s:%d is %s (%s)", ports[i].dev, ports[i].port,
                     ports[i].state_name[0] ? ports[i].state_name : "not ACTIVE", ports[i].phys_name);
            break;
        }
        if (t && ports[i].rate_gbps < t->min) {
            oc->result = VG_BI_FAIL;
            vg_strlcpy(oc->kind, "ib-degraded", sizeof oc->kind);
            snprintf(oc->detail, sizeof oc->detail, "%s:%d at %s < %g Gb/s", ports[i].dev, ports[i].port,
                     ports[i].rate, t->min);
        }
    }
    free(ports);
}

/* ---- the table ----------------------------------------------------------- */

#define Q VG_BI_QUICK
#define S VG_BI_STANDARD
#define L VG_BI_LONG
#define NV "nvidia"
#define AMD "amd"
/* perftest, as Azure's NHC runs it: 8 MiB messages, report in Gb/s, loopback. */
#define IB_BW "-d", "{ibdev}", "-i", "{ibport}", "-s", "8388608", "-F", "--report_gbits"

static const struct vg_bi_test tests[] = {
    /* every vendor's: the GPU probe (its backends: NVML, AMD SMI), InfiniBand, and all_reduce_perf
     * (nccl-tests on NVIDIA, rccl-tests on AMD: one program name, one output format) */
    { "nvml", Q | S | L, "gpu-lost", NULL, { NULL }, { NULL }, 15, NULL, builtin_nvml, NULL },
    { "ib-port", Q | S | L, "ib-down", NULL, { NULL }, { NULL }, 5, NULL, builtin_ib, NULL },
    /* NVIDIA's */
    { "h2d-bw", Q | S | L, "h2d-bw-low", "vigil-gpu", { "copy", "--bytes", "268435456" }, { NULL }, 30, rule_copy, NULL, NV },
    { "gemm-small", Q, "gpu-slow", "vigil-gpu", { "gemm", "--n", "2048", "--iters", "10" }, { NULL }, 20, rule_gemm, NULL, NV },
    { "dcgm-diag", S, "dcgm-diag-fail", "dcgmi", { "diag", "-r", "2" }, { NULL }, 240, rule_dcgm, NULL, NV },
    { "nccl-allreduce", S | L, "nccl-slow", "all_reduce_perf", { "-b", "{nccl_size}", "-e", "{nccl_size}", "-f", "2", "-g", "{gpus}" },
      { NULL }, 180, rule_nccl, NULL, NULL },
    { "ib-write-bw", S | L, "ib-bw-low", "ib_write_bw", { IB_BW, "127.0.0.1" }, { IB_BW }, 60, rule_perftest, NULL, NULL },
    { "gemm", S, "gpu-slow", "vigil-gpu", { "gemm", "--n", "8192", "--iters", "50" }, { NULL }, 120, rule_gemm, NULL, NV },
    { "dcgm-diag-long", L, "dcgm-diag-fail", "dcgmi", { "diag", "-r", "3" }, { NULL }, 1500, rule_dcgm, NULL, NV },
    { "gemm-sdc", L, "sdc", "vigil-gpu", { "gemm", "--n", "8192", "--iters", "2000" }, { NULL }, 600, rule_gemm, NULL, NV },
    /* AMD's (rules in tests_amd.c): quick, the PCIe qualification (peqt reads the links' capabilities) and
     * XGMI all-to-all; standard, AMD's acceptance tools but the memory test; long, all of them.  Time
     * limits: AMD's own (ROCm/cvs mi300_health_config.json) for RVS; TransferBench runs in minutes. */
    { "rvs-peqt", Q | S | L, "rvs-fail", "rvs", { "-m", "peqt" }, { NULL }, 600, vg_bi_rule_rvs, NULL, AMD },
    { "transferbench-a2a", Q | S | L, "xgmi-bw-low", "TransferBench", { "a2a" }, { NULL }, 300, vg_bi_rule_tb_a2a, NULL, AMD },
    { "transferbench-p2p", S | L, "xgmi-bw-low", "TransferBench", { "p2p" }, { NULL }, 900, vg_bi_rule_tb_p2p, NULL, AMD },
    { "rvs-gst", S | L, "rvs-fail", "rvs", { "-m", "gst" }, { NULL }, 9000, vg_bi_rule_rvs, NULL, AMD },
    { "rvs-iet", S | L, "rvs-fail", "rvs", { "-m", "iet" }, { NULL }, 3600, vg_bi_rule_rvs, NULL, AMD },
    { "rvs-pebb", S | L, "rvs-fail", "rvs", { "-m", "pebb" }, { NULL }, 3600, vg_bi_rule_rvs, NULL, AMD },
    { "rvs-pbqt", S | L, "rvs-fail", "rvs", { "-m", "pbqt" }, { NULL }, 3600, vg_bi_rule_rvs, NULL, AMD },
    { "rvs-mem", L, "rvs-fail", "rvs", { "-m", "mem" }, { NULL }, 9000, vg_bi_rule_rvs, NULL, AMD },
};

const struct vg_bi_test *vg_bi_tests(size_t *n)
{
    *n = sizeof tests / sizeof tests[0];
    return tests;
}
