/* serve_fleet.c — the controller's fleet audit (GET /v1/audit): the reports
 * the agents sent (POST /v1/inventory), merged as `vigil audit merge` does,
 * with when each node reported; a report older than --audit-stale is stale,
 * and a node the controller knows but never heard an audit from is "not
 * reporting".  The controller knows a node from the dashboard's view of
 * the fleet (the scheduler's node list, read at most every few seconds
 * whatever the requests, and the nodes with incidents) and from the agents'
 * heartbeats.  A scheduler that cannot be read leaves the heartbeats. */
#include "cmd/serve_fleet.h"
#include "controller/fleetview.h"
#include "report/audit_report.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdlib.h>
#include <string.h>

/* The names of the nodes the dashboard's view knows (the scheduler's list,
 * read at most every few seconds, and the nodes with incidents). */
static size_t view_nodes(struct vg_fleetview *v, char ***out)
{
    json_t *nodes = v ? vg_fleetview_nodes(v) : NULL;
    size_t n = json_array_size(nodes), k = 0, i;
    json_t *nd;
    *out = vg_xcalloc(n + 1, sizeof **out);
    json_array_foreach(nodes, i, nd)
        if (*vg_json_str(nd, "node", "")) (*out)[k++] = vg_xstrdup(vg_json_str(nd, "node", ""));
    json_decref(nodes);
    return k;
}

json_t *vg_serve_fleet(void *ctx, json_t *reports)
{
    struct vg_serve_fleet *sf = ctx;
    struct vg_fleet *fl = vg_fleet_new();
    size_t i;
    json_t *r;
    char err[256];
    json_array_foreach(reports, i, r) {
        const char *node = vg_json_str(r, "node", "?");
        int64_t at = 0;
        if (vg_fleet_add_json(fl, json_object_get(r, "report"), node, err, sizeof err) == 0) {
            vg_parse_time(vg_json_str(r, "at", ""), &at);
            vg_fleet_reported(fl, node, at);
        }
    }
    json_decref(reports);
    char **beat = NULL, **sched;
    size_t nbeat = vg_heartbeats_nodes(sf->hb ? __atomic_load_n(sf->hb, __ATOMIC_ACQUIRE) : NULL, &beat);
    size_t nsched = view_nodes(sf->view ? __atomic_load_n(sf->view, __ATOMIC_ACQUIRE) : NULL, &sched);
    const char **known = vg_xcalloc(nsched + nbeat + 1, sizeof *known);
    for (size_t k = 0; k < nsched; k++) known[k] = sched[k];
    for (size_t k = 0; k < nbeat; k++) known[nsched + k] = beat[k];
    vg_fleet_coverage(fl, known, nsched + nbeat, vg_now_ms(), sf->stale_after_ms);
    free(known);
    vg_strv_free(beat, nbeat);
    vg_strv_free(sched, nsched);
    json_t *doc = vg_fleet_json(fl);
    vg_fleet_free(fl);
    return doc;
}
