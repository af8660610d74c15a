/* fuzz_gpuprobe.c — libFuzzer target for the GPU probe's reader: any bytes as
 * what a probe child wrote (JSON lines of vendors, steps, GPU states with
 * their extras), the child done, killed or dead as the first byte says;
 * then the events and the hung text of the result. */
#include "signal/gpuprobe.h"
#include "signal/probe.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vg_probe p;
    memset(&p, 0, sizeof p);
    strcpy(p.name, "gpu");
    if (size) {
        p.done = data[0] & 1;
        p.timed_out = data[0] & 2;
        p.starved = data[0] & 4;
        data++, size--;
    }
    sbuf_add(&p.out, (const char *)data, size);
    sbuf_putc(&p.out, '\0');
    struct vg_gpu_probe_result r;
    vg_gpu_probe_collect(&p, NULL, &r);
    struct vg_event ev[64];
    int n = 0;
    vg_gpu_probe_events(&r, "fuzz", ev, &n, 64);
    char text[160];
    if (r.hung) vg_gpu_probe_hung_text(&r, text, sizeof text);
    for (int i = 0; i < r.n; i++) {
        struct vg_gpu_state *s = &r.gpus[i];
        char why[80];
        vg_gpu_throttle_names(s->throttle, why, sizeof why);
        json_decref(vg_gpu_state_to_json(s));
    }
    vg_gpu_probe_free(&r);
    sbuf_free(&p.out);
    return 0;
}
