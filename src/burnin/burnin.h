/* burnin.h — active tests on a node (`vigil burnin`): the faults no log line
 * shows (silent data corruption, a slow GPU, an NVLink or InfiniBand link at
 * a fraction of its bandwidth, a failing DCGM diagnostic).  Each test is one
 * line of the table in tests.c: the tool (found on PATH or configured), the
 * parser of its real output (parsers.h), the pass rule with the figure per
 * GPU model from data/burnin-thresholds.tsv, and the fault kind a failure
 * means.  A failure becomes an event that the fault catalog classifies. */
#ifndef VG_BURNIN_H
#define VG_BURNIN_H
#include "core/event.h"
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

enum vg_bi_suite { VG_BI_QUICK = 1, VG_BI_STANDARD = 2, VG_BI_LONG = 4 };
enum vg_bi_result { VG_BI_PASS, VG_BI_FAIL, VG_BI_UNKNOWN, VG_BI_PREEMPTED };

const char *vg_bi_suite_name(enum vg_bi_suite s);
bool vg_bi_suite_parse(const char *s, enum vg_bi_suite *out);
const char *vg_bi_result_name(enum vg_bi_result r);
bool vg_bi_result_parse(const char *s, enum vg_bi_result *out);

/* ---- thresholds (thresholds.c) ------------------------------------------ */
struct vg_bi_threshold {
    char model[96];        /* fnmatch pattern on the GPU name */
    char metric[24];       /* nccl-busbw, ib-write-bw, ib-rate, h2d-bw, gemm-ratio, rvs-pass,
                            * transferbench-a2a, transferbench-p2p-uni, transferbench-p2p-bi */
    double min;
    char unit[16];
    char at[24];           /* the message size the figure is defined at ("16G"; nccl-busbw), "" none */
    long long at_bytes;    /* that size in bytes, 0 none */
    bool in_place;         /* the figure is the in-place busbw ("8G in-place"), not both columns' mean */
    char source[320];
};
struct vg_bi_thresholds {
    struct vg_bi_threshold *t;
    size_t n;
};
/* path NULL: vg_data_path("burnin-thresholds.tsv").  Returns 0, or -1 with
 * "file:line: what" in err. */
int vg_bi_thresholds_load(const char *path, struct vg_bi_thresholds *out, char *err, size_t errlen);
int vg_bi_thresholds_parse(const char *text, size_t len, const char *name, struct vg_bi_thresholds *out,
                           char *err, size_t errlen);
/* The first row of metric whose pattern matches model; NULL when none. */
const struct vg_bi_threshold *vg_bi_threshold_find(const struct vg_bi_thresholds *th, const char *model,
                                                   const char *metric);
void vg_bi_thresholds_free(struct vg_bi_thresholds *th);

/* ---- one test's outcome ------------------------------------------------- */
struct vg_bi_outcome {
    char name[32];
    enum vg_bi_result result;
    bool has_value;
    double value;
    char unit[16];
    char expected[64];     /* ">= 460 GB/s", "no failed test", "" when unknown */
    char kind[24];         /* the fault a failure means ("" when it passed) */
    char detail[256];      /* what was measured or why the test could not run */
    char source[320];      /* where the expected figure comes from */
    long elapsed_ms;
};

/* ---- a node's pass (run.c) ---------------------------------------------- */
/* A program a test runs, replaced by a path ("all_reduce_perf=/opt/nccl-tests/build/all_reduce_perf"). */
struct vg_bi_tool {
    const char *name, *path;
};
struct vg_bi_opts {
    const char *node;                  /* the node name reported (required) */
    const char *root;                  /* sysfs under this root (fixtures, the lab's node tree) */
    enum vg_bi_suite suite;
    const struct vg_bi_thresholds *th;
    const struct vg_bi_tool *tools;    /* overrides, n_tools of them */
    size_t ntools;
    const char *only;                  /* run only the test of this name (NULL: the whole suite) */
    const char *vendors;               /* the vendors' suites to run ("amd", "nvidia,amd"); NULL: those of
                                        * the GPUs found on the node */
};
struct vg_bi_node {
    char node[64];
    char model[96];        /* the GPU name NVML reports, "" when unknown */
    int gpus;              /* -1 when unknown */
    char vendors[64];      /* whose suites ran ("nvidia", "amd", "nvidia,amd") */
    char picked[64];       /* why those: "the GPUs found", "--vendor", or "no GPU vendor answered" */
    enum vg_bi_suite suite;
    enum vg_bi_result result;
    struct vg_bi_outcome *tests;
    size_t ntests;
    long elapsed_ms;
};
/* Runs the suite's tests on this machine, as opts->node.  Always fills out
 * (a test that cannot run is "unknown").  Returns 0, or -1 when opts are
 * bad (err says which). */
int vg_bi_run(const struct vg_bi_opts *o, struct vg_bi_node *out, char *err, size_t errlen);
void vg_bi_node_free(struct vg_bi_node *n);
/* Node result from its tests: fail if any failed, else unknown if any was
 * unknown, else pass. */
enum vg_bi_result vg_bi_node_result(const struct vg_bi_outcome *t, size_t n);
/* The events of the failed tests (source "burnin", kind the test's fault,
 * raw the test and its figure), actions from cat: the fault catalog with
 * the site policy, as vg_catalog_open loads it for every reader (the caller
 * stops when it cannot: there is no fallback verdict).  Returns how many
 * were stored (at most max). */
struct vg_catalog;
int vg_bi_events(const struct vg_bi_node *n, const struct vg_catalog *cat, struct vg_event *ev, int max);
/* "vigil: burnin nccl-allreduce 238.5 GB/s < 460 GB/s (+1 more)" for a
 * failed node; "" otherwise. */
void vg_bi_reason(const struct vg_bi_node *n, char *buf, size_t len);
/* {node, model, gpus, vendors: [..], picked, suite, result, elapsed_ms, tests: [{name, result,
 * value, unit, expected, kind, detail, source, elapsed_ms}], events, reason} */
json_t *vg_bi_node_to_json(const struct vg_bi_node *n, const struct vg_catalog *cat);

/* Checks a --vendor list: names of gpu.h's vendors, comma-separated.  0, or
 * -1 with "'x' is not a GPU vendor (nvidia, amd)" in err. */
int vg_bi_vendors_check(const char *list, char *err, size_t errlen);

/* The names of the tests in a suite of those vendors ("amd", "nvidia,amd";
 * NULL: every vendor's), in order (for help and docs). */
size_t vg_bi_suite_tests(enum vg_bi_suite s, const char *vendors, const char **names, size_t max);

#endif
