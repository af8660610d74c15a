/* burnin_int.h — inside src/burnin/: the test table (tests.c) and what a
 * test's evaluation gets from the pass (run.c). */
#ifndef VG_BURNIN_INT_H
#define VG_BURNIN_INT_H
#include "burnin/burnin.h"
#include "signal/gpuprobe.h"

/* What one node's pass knows when a test is evaluated. */
struct vg_bi_ctx {
    const struct vg_bi_opts *o;
    const char *model;                       /* "" when NVML did not answer */
    int gpus;                                /* -1 when unknown */
    const struct vg_gpu_probe_result *probe; /* the GPUs as NVML reported them */
    struct { char dev[32]; int port; } ib[16];   /* ACTIVE InfiniBand ports ({ibdev} {ibport}) */
    int nib;
};

/* A tool test's rule: reads the tool's output (stdout then stderr as the
 * tool wrote them: out) and exit status, fills the outcome's result, value,
 * expected, detail (and kind when a failure means another fault than the
 * test's). */
typedef void (*vg_bi_rule_fn)(const struct vg_bi_ctx *c, const char *out, size_t len, int status,
                              struct vg_bi_outcome *oc);
/* A built-in test (no external tool). */
typedef void (*vg_bi_builtin_fn)(const struct vg_bi_ctx *c, struct vg_bi_outcome *oc);

#define VG_BI_MAX_ARGS 16
struct vg_bi_test {
    const char *name;
    unsigned suites;                         /* VG_BI_QUICK | VG_BI_STANDARD | VG_BI_LONG */
    const char *kind;                        /* the fault a failure means */
    const char *tool;                        /* program (PATH or --tool NAME=PATH); NULL = built in */
    const char *args[VG_BI_MAX_ARGS];        /* its arguments; "{gpus}" becomes the GPU count, "{nccl_size}"
                                              * the message size the model's busbw floor is defined at; with
                                              * "{ibdev}" and "{ibport}" it runs once per ACTIVE
                                              * InfiniBand port and the worst figure counts */
    const char *server[VG_BI_MAX_ARGS];      /* a loopback server started first with these arguments, or {NULL} */
    int timeout_s;
    vg_bi_rule_fn rule;
    vg_bi_builtin_fn builtin;
    const char *vendor;                      /* the GPU vendor whose suite it is in (gpu.h's name: "nvidia",
                                              * "amd"); NULL: every vendor's */
};
const struct vg_bi_test *vg_bi_tests(size_t *n);

/* Sets the outcome from a measured figure and the model's threshold for
 * metric: pass when value >= min, fail below, unknown when the model has no
 * figure.  what names the figure in the detail ("busbw"). */
void vg_bi_compare(const struct vg_bi_ctx *c, const char *metric, const char *what, double value,
                   const char *unit, struct vg_bi_outcome *oc);
/* The test could not measure: result unknown, detail from fmt. */
void vg_bi_unknown(struct vg_bi_outcome *oc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* vendor.c: whether name is in a comma-separated vendor list; the vendors
 * whose suites a node's pass runs (opts->vendors, else those the probe found),
 * and why, into out->vendors and out->picked. */
bool vg_bi_vendor_in(const char *list, const char *name);
void vg_bi_pick_vendors(const struct vg_bi_opts *o, const struct vg_gpu_probe_result *p, struct vg_bi_node *out);

/* The rules of AMD's tools (tests_amd.c): the ROCm Validation Suite (every
 * module through one rule: its verdicts) and TransferBench's a2a and p2p
 * presets against AMD's figures. */
void vg_bi_rule_rvs(const struct vg_bi_ctx *c, const char *out, size_t len, int status, struct vg_bi_outcome *oc);
void vg_bi_rule_tb_a2a(const struct vg_bi_ctx *c, const char *out, size_t len, int status, struct vg_bi_outcome *oc);
void vg_bi_rule_tb_p2p(const struct vg_bi_ctx *c, const char *out, size_t len, int status, struct vg_bi_outcome *oc);

#endif
