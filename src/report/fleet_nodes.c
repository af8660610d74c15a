/* fleet_nodes.c — which nodes the fleet view covers: when each node last sent
 * its audit report, the reports older than the staleness limit (stale), and
 * the nodes the controller knows (its scheduler's node list, the nodes whose
 * agents beat) that never sent one (not reporting).  A fleet audit that
 * misses nodes is not a clean one: `vigil audit fleet` exits 1 on either.
 * Rendering and the read-back of the controller's document; the controller
 * decides (src/cmd/serve_fleet.c). */
#include "report/fleet_int.h"
#include "report/table.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdlib.h>
#include <string.h>

void vg_fleet_reported(struct vg_fleet *fl, const char *node, int64_t at_ms)
{
    for (int i = 0; i < fl->nrep; i++)
        if (!strcmp(fl->rep[i].node, node)) {
            if (at_ms > fl->rep[i].at) fl->rep[i].at = at_ms;
            return;
        }
    fl->rep = vg_xrealloc(fl->rep, sizeof *fl->rep * (size_t)(fl->nrep + 1));
    fl->rep[fl->nrep++] = (struct mreported){ vg_xstrdup(node), at_ms };
}

static const struct mreported *reported(const struct vg_fleet *fl, const char *node)
{
    for (int i = 0; i < fl->nrep; i++)
        if (!strcmp(fl->rep[i].node, node)) return &fl->rep[i];
    return NULL;
}

static bool listed(char *const *v, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v[i], s)) return true;
    return false;
}

static void push(char ***v, int *n, const char *s)
{
    *v = vg_xrealloc(*v, sizeof **v * (size_t)(*n + 1));
    (*v)[(*n)++] = vg_xstrdup(s);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

void vg_fleet_coverage(struct vg_fleet *fl, const char *const *known, size_t nknown, int64_t now_ms,
                       int64_t stale_after_ms)
{
    fl->coverage = true;
    fl->stale_after_ms = stale_after_ms;
    for (int i = 0; i < fl->nrep; i++)
        if (now_ms - fl->rep[i].at > stale_after_ms) push(&fl->stale, &fl->nstale, fl->rep[i].node);
    for (size_t i = 0; i < nknown; i++)
        if (known[i] && *known[i] && !reported(fl, known[i]) && !listed(fl->missing, fl->nmissing, known[i]))
            push(&fl->missing, &fl->nmissing, known[i]);
    if (fl->nstale > 1) qsort(fl->stale, (size_t)fl->nstale, sizeof *fl->stale, cmp_str);
    if (fl->nmissing > 1) qsort(fl->missing, (size_t)fl->nmissing, sizeof *fl->missing, cmp_str);
}

int vg_fleet_unseen(const struct vg_fleet *fl) { return fl->nstale + fl->nmissing; }

static json_t *names(char *const *v, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++) json_array_append_new(a, json_string(v[i]));
    return a;
}

void vg_fleet_nodes_json(const struct vg_fleet *fl, json_t *doc)
{
    if (fl->nrep) {
        json_t *r = json_object();
        for (int i = 0; i < fl->nrep; i++) json_object_set_new(r, fl->rep[i].node, vg_json_time(fl->rep[i].at));
        json_object_set_new(doc, "reported", r);
    }
    if (!fl->coverage) return;
    json_object_set_new(doc, "stale_after_s", json_integer(fl->stale_after_ms / 1000));
    json_object_set_new(doc, "stale", names(fl->stale, fl->nstale));
    json_object_set_new(doc, "not_reporting", names(fl->missing, fl->nmissing));
    json_t *sum = json_object_get(doc, "summary");
    if (sum) {
        json_object_set_new(sum, "stale", json_integer(fl->nstale));
        json_object_set_new(sum, "not_reporting", json_integer(fl->nmissing));
    }
}

void vg_fleet_nodes_print(const struct vg_fleet *fl, FILE *f, bool md)
{
    if (!fl->coverage || (!fl->nstale && !fl->nmissing)) return;
    static const char *const h[] = { "NODE", "AUDIT REPORT", "LAST REPORT" };
    struct vg_table *t = vg_table_new(3, h);
    char when[40], what[64];
    long long lim = fl->stale_after_ms / 1000;
    if (lim % 3600) snprintf(what, sizeof what, "stale (older than %lld s)", lim);
    else snprintf(what, sizeof what, "stale (older than %lld h)", lim / 3600);
    for (int i = 0; i < fl->nstale; i++) {
        const struct mreported *r = reported(fl, fl->stale[i]);
        if (r) vg_format_time(r->at, when);
        vg_table_rowf(t, "%s\t%s\t%s", fl->stale[i], what, r ? when : "-");
    }
    for (int i = 0; i < fl->nmissing; i++) vg_table_rowf(t, "%s\tnot reporting\tnever", fl->missing[i]);
    fputs(md ? "\n### Nodes without a current audit\n\n" : "\nNodes without a current audit\n", f);
    if (md) vg_table_print_markdown(t, f);
    else vg_table_print(t, f);
    vg_table_free(t);
}

static int load_names(const json_t *doc, const char *key, char ***v, int *n, char *err, size_t errlen)
{
    const json_t *a = json_object_get(doc, key);
    if (!a) return 0;
    if (!json_is_array(a)) return snprintf(err, errlen, "field '%s': not an array of node names", key), -1;
    for (size_t i = 0; i < json_array_size(a); i++) {
        const char *s = json_string_value(json_array_get(a, i));
        if (!s) return snprintf(err, errlen, "field '%s': not an array of node names", key), -1;
        push(v, n, s);
    }
    return 0;
}

int vg_fleet_nodes_load(struct vg_fleet *fl, const json_t *doc, char *err, size_t errlen)
{
    const json_t *rep = json_object_get(doc, "reported");
    if (rep && !json_is_object(rep)) return snprintf(err, errlen, "field 'reported': not an object"), -1;
    const char *node;
    json_t *at;
    json_object_foreach((json_t *)rep, node, at) {
        int64_t ms;
        if (!json_is_string(at) || !vg_parse_time(json_string_value(at), &ms))
            return snprintf(err, errlen, "field 'reported.%s': not a time", node), -1;
        vg_fleet_reported(fl, node, ms);
    }
    const json_t *after = json_object_get(doc, "stale_after_s");
    if (!after) return 0;
    if (!json_is_integer(after)) return snprintf(err, errlen, "field 'stale_after_s': not a number"), -1;
    fl->coverage = true;
    fl->stale_after_ms = json_integer_value(after) * 1000;
    if (load_names(doc, "stale", &fl->stale, &fl->nstale, err, errlen)) return -1;
    return load_names(doc, "not_reporting", &fl->missing, &fl->nmissing, err, errlen);
}

void vg_fleet_nodes_free(struct vg_fleet *fl)
{
    for (int i = 0; i < fl->nrep; i++) free(fl->rep[i].node);
    for (int i = 0; i < fl->nstale; i++) free(fl->stale[i]);
    for (int i = 0; i < fl->nmissing; i++) free(fl->missing[i]);
    free(fl->rep);
    free(fl->stale);
    free(fl->missing);
}
