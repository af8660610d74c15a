/* fuzz_policy.c — libFuzzer target for the catalog and site-policy parsers:
 * the input is parsed as a catalog, then as a policy applied to it. */
#include "catalog/catalog.h"
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    struct vg_catalog *c = vg_catalog_parse((const char *)data, size, "fuzz", err, sizeof err);
    if (!c) {
        static const char base[] = "xid\t1\tignore\tIGNORE\t\tone\nsxid\t*\treset-gpu\t(none)\t*\tany\n";
        c = vg_catalog_parse(base, sizeof base - 1, "base", err, sizeof err);
    }
    vg_catalog_apply_policy_text(c, (const char *)data, size, "fuzz", err, sizeof err);
    struct vg_event e;
    vg_event_init(&e);
    e.kind[0] = 'x', e.kind[1] = 'i', e.kind[2] = 'd';
    for (int code = 0; code < 200; code += 7) {
        e.code = code;
        vg_catalog_classify(c, &e);
        vg_catalog_is_cause(vg_catalog_lookup(c, "xid", code), &e);
    }
    vg_catalog_free(c);
    return 0;
}
