/* check_pcie.c — the `pcie` check: GPU and NIC links at full width and their
 * AER counters, from sysfs (sysfs_pci.c).
 *   * || pcie gpu=full nic=full aer_fatal=0 aer_nonfatal=0 */
#include "signal/checks.h"
#include "signal/sysfs.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const pcie_keys[] = { "gpu=full|any", "nic=full|any", "aer_fatal=int", "aer_nonfatal=int", NULL };

static void pcie_run(const struct vg_check_ctx *ctx, const struct vg_check_line *l, struct vg_check_results *out)
{
    struct vg_pci_dev *d;
    size_t n = vg_pci_devices(ctx->root, &d);
    static const char *const kinds[] = { "gpu", "nic" };
    for (int k = 0; k < 2; k++) {
        const char *v = vg_check_get(l, kinds[k]);
        if (!v || strcmp(v, "full") != 0) continue;
        struct sbuf bad = SBUF_INIT;
        struct vg_check_result tmp;
        memset(&tmp, 0, sizeof tmp);
        int seen = 0;
        for (size_t i = 0; i < n; i++) {
            if (strcmp(d[i].kind, kinds[k]) != 0) continue;
            seen++;
            if (d[i].width < 0 || d[i].width_max < 0 || d[i].width >= d[i].width_max) continue;
            sbuf_printf(&bad, "%s%s x%d of x%d", bad.len ? "; " : "", d[i].addr, d[i].width, d[i].width_max);
            struct vg_event ev[2];
            int nev = 0;
            vg_pci_dev_events(&d[i], ctx->node, ev, &nev, 2);
            for (int e = 0; e < nev; e++)
                if (!strcmp(ev[e].kind, "pcie-degraded")) vg_check_add_event(&tmp, &ev[e]);
        }
        char name[32];
        snprintf(name, sizeof name, "pcie %s width", kinds[k]);
        struct vg_check_result *r = vg_check_add(out, l, bad.len == 0, name, "%s",
                                                 bad.len ? bad.s : seen ? "all links at full width" : "no device");
        r->ev = tmp.ev;
        r->nev = tmp.nev;
        sbuf_free(&bad);
    }
    static const char *const aer[] = { "aer_fatal", "aer_nonfatal" };
    for (int a = 0; a < 2; a++) {
        const char *v = vg_check_get(l, aer[a]);
        if (!v) continue;
        long lim = atol(v);
        struct sbuf bad = SBUF_INIT;
        struct vg_check_result tmp;
        memset(&tmp, 0, sizeof tmp);
        for (size_t i = 0; i < n; i++) {
            long long c = a == 0 ? d[i].aer_fatal : d[i].aer_nonfatal;
            if (c <= lim) continue;
            sbuf_printf(&bad, "%s%s %s: %lld", bad.len ? "; " : "", d[i].kind, d[i].addr, c);
            struct vg_event ev[2];
            int nev = 0;
            vg_pci_dev_events(&d[i], ctx->node, ev, &nev, 2);
            for (int e = 0; e < nev; e++)
                if (!strncmp(ev[e].kind, "aer-", 4)) vg_check_add_event(&tmp, &ev[e]);
        }
        char name[32];
        snprintf(name, sizeof name, "pcie %s", aer[a]);
        struct vg_check_result *r = vg_check_add(out, l, bad.len == 0, name, "%s", bad.len ? bad.s : "none");
        r->ev = tmp.ev;
        r->nev = tmp.nev;
        sbuf_free(&bad);
    }
    free(d);
}

static void pcie_init(const struct vg_check_ctx *ctx, struct sbuf *out)
{
    struct vg_pci_dev *d;
    size_t n = vg_pci_devices(ctx->root, &d);
    bool gpu = false, nic = false, aer = false;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(d[i].kind, "gpu") && d[i].width_max > 0) gpu = true;
        if (!strcmp(d[i].kind, "nic") && d[i].width_max > 0) nic = true;
        if (d[i].aer_fatal >= 0) aer = true;
    }
    free(d);
    if (!gpu && !nic && !aer) return;
    sbuf_puts(out, "* || pcie");
    if (gpu) sbuf_puts(out, " gpu=full");
    if (nic) sbuf_puts(out, " nic=full");
    if (aer) sbuf_puts(out, " aer_fatal=0");
    sbuf_putc(out, '\n');
}

const struct vg_check vg_check_pcie = {
    .name = "pcie", .keys = pcie_keys, .run = pcie_run, .init = pcie_init, .defaults = pcie_init,
};
