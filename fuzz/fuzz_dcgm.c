/* fuzz_dcgm.c — libFuzzer target for the dcgmi diag parser (table and JSON)
 * and the nccl-tests rows, with what their callers rely on checked: each
 * test counted once by one outcome, the hardware tests that ran within the
 * hardware tests, the kept busbw rows within their bound and a row found at
 * or below the size asked for.  A broken count aborts. */
#include "burnin/parsers.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    char err[256];
    struct vg_dcgm_result d;
    if (vg_parse_dcgm(text, size, &d, err, sizeof err) == 0) {
        if (d.passed < 0 || d.failed < 0 || d.skipped < 0 || d.passed + d.failed + d.skipped != d.tests) abort();
        if (d.hw_ran < 0 || d.hw_ran > d.hw_tests || d.hw_tests > d.tests) abort();
        if (strlen(d.skipped_names) >= sizeof d.skipped_names || strlen(d.first_fail) >= sizeof d.first_fail) abort();
    }
    struct vg_nccl_result n;
    if (vg_parse_nccl(text, size, &n, err, sizeof err) == 0) {
        if (n.nrow < 0 || n.nrow > VG_NCCL_ROWS || n.nrow > n.rows) abort();
        int i = vg_nccl_row_at(&n, 8LL << 30);
        if (i >= n.nrow || (i >= 0 && n.row[i].bytes > 8LL << 30)) abort();
    }
    return 0;
}
