/* fuzz_nicprobe.c — libFuzzer target for the NIC probe's reader and the rate
 * judge: any bytes as what a probe child wrote (JSON lines of steps, ports
 * with their counters, verbs ports), the child done, killed or starved as
 * the first byte says; then the nic-hung event and its text, and the ports
 * read judged over two periods (the first half, then the second half of the
 * ports as the next reading, the second byte the seconds between them). */
#include "signal/nicprobe.h"
#include "signal/nicrate.h"
#include "signal/probe.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vg_probe p;
    memset(&p, 0, sizeof p);
    strcpy(p.name, "nic");
    int gap_s = 1;
    if (size >= 2) {
        p.done = data[0] & 1;
        p.timed_out = data[0] & 2;
        p.starved = data[0] & 4;
        p.elapsed_ms = data[0] * 17;
        gap_s = data[1];   /* 0: the same instant */
        data += 2, size -= 2;
    }
    sbuf_add(&p.out, (const char *)data, size);
    sbuf_putc(&p.out, '\0');
    struct vg_nic_probe_result r;
    vg_nic_probe_collect(&p, &r);
    struct vg_event ev[64];
    int n = 0;
    vg_nic_probe_events(&r, "fuzz", ev, &n, 64);
    char text[200];
    vg_nic_probe_hung_text(&r, text, sizeof text);
    struct vg_nic_rates *rates = vg_nic_rates_new();
    struct sbuf notes = SBUF_INIT;
    size_t half = r.nports / 2;
    vg_nic_rates_judge(rates, r.ports, half, 1000, "fuzz", ev, &n, 64, &notes);
    vg_nic_rates_judge(rates, r.ports + half, r.nports - half, 1000 + (int64_t)gap_s * 1000, "fuzz", ev, &n, 64,
                       &notes);
    vg_nic_rates_free(rates);
    sbuf_free(&notes);
    vg_nic_probe_free(&r);
    sbuf_free(&p.out);
    return 0;
}
