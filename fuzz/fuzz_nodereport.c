/* fuzz_nodereport.c — a node's audit report and burn-in document as the
 * controller takes them in (nodereport.c: node binding, every string and
 * size checked, the report and passes kept in an in-memory store) on
 * arbitrary bytes, with a scheduler that lists n1, n2 and n3.  Whatever the
 * input, the answer is one of the documented statuses, a refusal names its
 * field, and nothing outside that list is ever kept. */
#include "controller/nodereport.h"
#include "util/strutil.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int three_nodes(struct vg_orch *o, const char *const *names, size_t n, struct vg_orch_node **out, size_t *nout)
{
    (void)o, (void)names, (void)n;
    *out = vg_xcalloc(3, sizeof **out);
    for (int i = 0; i < 3; i++) (*out)[i].name[0] = 'n', (*out)[i].name[1] = (char)('1' + i);
    *nout = 3;
    return 0;
}
static const struct vg_orch_ops ops = { .name = "fuzz", .nodes = three_nodes };

static int only_known(void *ctx, const char *node, int64_t at, const char *report)
{
    (void)ctx, (void)at, (void)report;
    if (strcmp(node, "n1") && strcmp(node, "n2") && strcmp(node, "n3")) abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct vg_store *st;
    static struct vg_nodeset *nodes;
    static struct vg_nodereports *r;
    char err[256];
    if (!st) {
        struct vg_orch_conf c = { 0 };
        if (vg_store_open(":memory:", &st, err, sizeof err)) abort();
        nodes = vg_nodeset_start(vg_orch_open_ops(&ops, &c, err, sizeof err), 0, 0);
        if (!nodes || !vg_nodeset_wait(nodes, 10000)) abort();
        r = vg_nodereports_new(&(struct vg_nodereports_opts){ .store = st, .nodes = nodes });
    }
    char *text = vg_xstrndup((const char *)data, size);
    json_t *resp = NULL;
    for (int kind = 0; kind < 2; kind++) {
        int code = kind ? vg_nodereports_burnin(r, text, size % 2 ? "n2" : NULL, &resp)
                        : vg_nodereports_inventory(r, text, NULL, &resp);
        if (code != 200 && code != 400 && code != 403) abort();
        if (code != 200 && !json_string_value(json_object_get(resp, "error"))) abort();
        json_decref(resp);
    }
    free(text);
    if (vg_store_audits_each(st, NULL, 0, only_known, NULL)) abort();
    return 0;
}
