/* tests_amd.c — the rules of the burn-in tests that run AMD's own tools
 * (their table lines are in tests.c): the ROCm Validation Suite, judged by
 * its verdicts as AMD's acceptance criteria say (data/burnin-thresholds.tsv,
 * rvs-pass), and TransferBench's a2a and p2p presets against AMD's figures
 * for the node's Instinct model.  rccl-tests are read by the nccl-tests rule
 * (same program name, same format). */
#include "burnin/burnin_int.h"
#include "burnin/parsers.h"
#include "util/strutil.h"
#include <stdio.h>
#include <string.h>

void vg_bi_rule_rvs(const struct vg_bi_ctx *c, const char *out, size_t len, int status, struct vg_bi_outcome *oc)
{
    struct vg_rvs_result r;
    char err[200];
    if (vg_parse_rvs(out, len, &r, err, sizeof err)) return vg_bi_unknown(oc, "rvs (exit %d): %s", status, err);
    const char *mod = r.module[0] ? r.module : "rvs";
    if (r.failed) {   /* the tool's own FALSE/FAIL: a failure whatever the model */
        vg_bi_compare(c, "rvs-pass", "verdicts passed", (double)(r.verdicts - r.failed) / r.verdicts, "ratio", oc);
        oc->result = VG_BI_FAIL;
        snprintf(oc->detail, sizeof oc->detail, "%s: %d of %d verdicts failed: %.180s", mod, r.failed, r.verdicts,
                 r.first_fail);
        return;
    }
    if (r.errors && r.verdicts) {   /* an action broke off after it reported (mem reports its errors so) */
        vg_bi_compare(c, "rvs-pass", "verdicts passed", 1, "ratio", oc);
        oc->result = VG_BI_FAIL;
        snprintf(oc->detail, sizeof oc->detail, "%s: %.200s", mod, r.error);
        return;
    }
    if (!r.verdicts)
        return vg_bi_unknown(oc, "%s printed no verdict%s%.160s (vigil runs `rvs -m MODULE`, RVS 1.5.122 or later)",
                             mod, r.error[0] ? ": " : "", r.error);
    vg_bi_compare(c, "rvs-pass", "verdicts passed", 1, "ratio", oc);
    char what[sizeof oc->detail];
    snprintf(what, sizeof what, "%s: %d verdicts TRUE", mod, r.verdicts);
    if (r.min_gbps >= 0) {
        size_t l = strlen(what);
        snprintf(what + l, sizeof what - l, ", slowest %.3f GB/s", r.min_gbps);
    }
    if (oc->result == VG_BI_PASS) vg_strlcpy(oc->detail, what, sizeof oc->detail);
}

/* Reads TransferBench's output for a preset.  Returns true when that already
 * decided the outcome: output it could not read (unknown, with the reason), or
 * a data mismatch it found (a failure: silent data corruption). */
static bool tb_read(const char *preset, const char *out, size_t len, int status, struct vg_tb_result *r,
                    struct vg_bi_outcome *oc)
{
    char err[200];
    if (vg_parse_transferbench(out, len, r, err, sizeof err)) {
        vg_bi_unknown(oc, "TransferBench %s (exit %d): %s", preset, status, err);
        return true;
    }
    if (r->mismatches) {
        oc->result = VG_BI_FAIL;
        vg_strlcpy(oc->kind, "sdc", sizeof oc->kind);
        oc->has_value = true;
        oc->value = r->mismatches;
        vg_strlcpy(oc->unit, "mismatches", sizeof oc->unit);
        vg_strlcpy(oc->expected, "0 mismatches", sizeof oc->expected);
        snprintf(oc->detail, sizeof oc->detail, "TransferBench %s: %.200s", preset, r->error);
        return true;
    }
    return false;
}

void vg_bi_rule_tb_a2a(const struct vg_bi_ctx *c, const char *out, size_t len, int status, struct vg_bi_outcome *oc)
{
    struct vg_tb_result r;
    if (tb_read("a2a", out, len, status, &r, oc)) return;
    if (!r.has_a2a)
        return vg_bi_unknown(oc, "TransferBench a2a printed no average bandwidth%s%.160s", r.error[0] ? ": " : "",
                             r.error);
    vg_bi_compare(c, "transferbench-a2a", "avg GPU-GPU", r.a2a_avg, "GB/s", oc);
    if (r.a2a_min >= 0) {
        size_t l = strlen(oc->detail);
        snprintf(oc->detail + l, sizeof oc->detail - l, "; slowest link GPU %02d -> GPU %02d %.3f GB/s", r.a2a_min_src,
                 r.a2a_min_dst, r.a2a_min);
    }
}

void vg_bi_rule_tb_p2p(const struct vg_bi_ctx *c, const char *out, size_t len, int status, struct vg_bi_outcome *oc)
{
    struct vg_tb_result r;
    if (tb_read("p2p", out, len, status, &r, oc)) return;
    double uni = r.uni[VG_TB_GPU_GPU], bi = r.bi[VG_TB_GPU_GPU];
    if (!r.has_uni || !r.has_bi || uni < 0 || bi < 0)
        return vg_bi_unknown(oc, "TransferBench p2p printed no GPU->GPU %s average%s%.160s",
                             !r.has_uni || uni < 0 ? "unidirectional" : "bidirectional", r.error[0] ? ": " : "",
                             r.error);
    /* both directions are held to their figure; the worse outcome counts */
    struct vg_bi_outcome u = *oc, b = *oc;
    vg_bi_compare(c, "transferbench-p2p-uni", "GPU->GPU unidirectional", uni, "GB/s", &u);
    vg_bi_compare(c, "transferbench-p2p-bi", "bidirectional", bi, "GB/s", &b);
    *oc = b.result == VG_BI_FAIL && u.result != VG_BI_FAIL ? b : u;
    if (oc->result == VG_BI_PASS && b.result != VG_BI_PASS) *oc = b;
    char both[sizeof oc->detail];
    snprintf(both, sizeof both, "%.120s; %.120s", u.detail, b.detail);
    vg_strlcpy(oc->detail, both, sizeof oc->detail);
}
