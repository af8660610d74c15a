/* fuzz_kmsg.c — libFuzzer target for the kernel-log parser: any bytes, fed in
 * two pieces split at a data-chosen point, then classified, counted against
 * the catalog's repeat rules and deduplicated. */
#include "catalog/catalog.h"
#include "catalog/dedup.h"
#include "catalog/repeat.h"
#include "signal/kmsg.h"
#include <stdint.h>
#include <stdlib.h>

static struct vg_catalog *cat;
static struct vg_repeat *rep;

static void to_dedup(const struct vg_event *e, void *arg)
{
    struct vg_event c = *e, r[4];
    int n = 0;
    if (cat) {
        vg_catalog_classify(cat, &c);
        n = vg_repeat_add(rep, &c, r, 4);
    }
    vg_dedup_add(arg, &c);
    for (int i = 0; i < n; i++) to_dedup(&r[i], arg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!cat) {
        char err[256];
        cat = vg_catalog_load(NULL, err, sizeof err);
        if (cat) rep = vg_repeat_new(cat);   /* reused: flat and bounded */
    }
    static struct vg_kmsg k;
    static struct vg_dedup *d;
    if (!d) d = vg_dedup_new(NULL, cat, NULL, NULL); /* reused: it is flat and bounded */
    struct vg_kmsg_opts o = { 1700000000000LL, 2024, "fuzz" };
    vg_kmsg_init(&k, &o, to_dedup, d);
    size_t cut = size ? data[0] % (size + 1) : 0;
    vg_kmsg_feed(&k, (const char *)data, cut);
    vg_kmsg_feed(&k, (const char *)data + cut, size - cut);
    vg_kmsg_finish(&k);
    vg_dedup_finish(d);
    return 0;
}
