/* fuzz_amdras.c — libFuzzer target for the amdgpu driver's RAS sysfs text:
 * any bytes as a "<block>_err_count" file and as "gpu_vram_bad_pages", a
 * block name looked up, and the counts put into a GPU state and its events
 * (the checks a bad count must pass before it reaches a verdict). */
#include "signal/amd.h"
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    long long ue = -1, ce = -1, r, p, f;
    struct vg_amd_ras ras;
    vg_amd_ras_init(&ras);
    if (vg_amd_parse_err_count(text, size, &ue, &ce) == 0) {
        ras.ue[0] = ue;
        ras.ce[0] = ce;
    }
    vg_amd_parse_bad_pages(text, size, &r, &p, &f);
    ras.bad_reserved = r, ras.bad_pending = p, ras.bad_failed = f;
    ras.bad_threshold = size ? data[0] : -1;
    const struct vg_amd_block *b = vg_amd_block_named(text, size < 16 ? size : 16);
    if (b) ras.ue[b - vg_amd_blocks] = 1;
    struct vg_gpu_state st;
    vg_gpu_state_init(&st, 0);
    st.v = &vg_gpu_amd;
    vg_amd_ras_to_state(&ras, &st);
    struct vg_event ev[8];
    int n = 0;
    vg_gpu_state_events(&st, "fuzz", ev, &n, 8);
    return 0;
}
