/* fuzz_burnin.c — libFuzzer target for the burn-in parsers: dcgmi diag (JSON
 * and table), nccl-tests, perftest, vigil-gpu, and the thresholds file. */
#include "burnin/burnin.h"
#include "burnin/parsers.h"
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    char err[256];
    struct vg_dcgm_result d;
    vg_parse_dcgm(text, size, &d, err, sizeof err);
    struct vg_nccl_result n;
    vg_parse_nccl(text, size, &n, err, sizeof err);
    struct vg_perftest_result p;
    vg_parse_perftest(text, size, &p, err, sizeof err);
    struct vg_gpubench_result *g = malloc(sizeof *g);
    if (g) vg_parse_gpubench(text, size, g, err, sizeof err);
    free(g);
    struct vg_bi_thresholds th;
    if (vg_bi_thresholds_parse(text, size, "fuzz", &th, err, sizeof err) == 0) vg_bi_thresholds_free(&th);
    return 0;
}
