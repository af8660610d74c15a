/* fuzz_burnin_amd.c — libFuzzer target for the parsers of AMD's burn-in
 * tools: the ROCm Validation Suite's output and TransferBench's a2a and p2p
 * presets, with what their rules rely on checked: no more failed verdicts
 * than verdicts, the summary rows among the verdicts, the strings kept
 * within their buffers, a slowest a2a link only with its GPUs named.  A
 * broken count aborts. */
#include "burnin/parsers.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    char err[256];
    struct vg_rvs_result r;
    if (vg_parse_rvs(text, size, &r, err, sizeof err) == 0) {
        if (r.failed < 0 || r.failed > r.verdicts || r.summary_rows > r.verdicts || r.actions < 0) abort();
        if (r.failed && !r.first_fail[0]) abort();
        if (strlen(r.first_fail) >= sizeof r.first_fail || strlen(r.error) >= sizeof r.error ||
            strlen(r.module) >= sizeof r.module || strlen(r.version) >= sizeof r.version)
            abort();
        if (r.errors && !r.error[0]) abort();
    }
    struct vg_tb_result t;
    if (vg_parse_transferbench(text, size, &t, err, sizeof err) == 0) {
        if (t.mismatches > t.errors || (t.errors && !t.error[0])) abort();
        if (t.a2a_min >= 0 && (t.a2a_min_src < 0 || t.a2a_min_dst < 0)) abort();
        if (strlen(t.version) >= sizeof t.version || strlen(t.error) >= sizeof t.error) abort();
    }
    return 0;
}
