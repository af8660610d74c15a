/* fuzz_kmsg.c — libFuzzer target for the kernel-log parser: any bytes, fed in
 * two pieces split at a data-chosen point, then classified and deduplicated. */
#include "catalog/catalog.h"
#include "catalog/dedup.h"
#include "signal/kmsg.h"
#include <stdint.h>
#include <stdlib.h>

static struct vg_catalog *cat;

static void to_dedup(const struct vg_event *e, void *arg)
{
    struct vg_event c = *e;
    if (cat) vg_catalog_classify(cat, &c);
    vg_dedup_add(arg, &c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!cat) {
        char err[256];
        cat = vg_catalog_load(NULL, err, sizeof err);
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
