/* serve_fleet.c — the controller's fleet audit (GET /v1/audit): the reports
 * the agents sent (POST /v1/inventory), merged as `vigil audit merge` does,
 * with when each node reported; a report older than --audit-stale is stale,
 * and a node the controller knows but never heard an audit from is "not
 * reporting".  The controller knows a node from its scheduler's node list
 * (read at most once a minute, through an orchestrator of its own: the
 * controller never polls slurmctld per request) and from the agents'
 * heartbeats.  A scheduler that cannot be read leaves the heartbeats. */
#include "cmd/serve_fleet.h"
#include "report/audit_report.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdlib.h>
#include <string.h>

#define SCHED_CACHE_MS 60000

void vg_serve_fleet_init(struct vg_serve_fleet *sf) { pthread_mutex_init(&sf->lock, NULL); }

static void sched_clear(struct vg_serve_fleet *sf)
{
    for (size_t i = 0; i < sf->nsched; i++) free(sf->sched[i]);
    free(sf->sched);
    sf->sched = NULL;
    sf->nsched = 0;
}

void vg_serve_fleet_free(struct vg_serve_fleet *sf)
{
    sched_clear(sf);
    vg_orch_close(sf->orch);
    sf->orch = NULL;
    pthread_mutex_destroy(&sf->lock);
}

/* The scheduler's node names, read again when older than a minute (under sf->lock). */
static void sched_refresh(struct vg_serve_fleet *sf)
{
    int64_t now = vg_mono_ms();
    if (sf->sched_at && now - sf->sched_at < SCHED_CACHE_MS) return;
    sf->sched_at = now;
    char err[256];
    if (!sf->orch && !sf->orch_failed) {
        sf->orch = vg_orch_open(sf->orchestrator, &sf->oc, err, sizeof err);
        if (!sf->orch) {
            sf->orch_failed = true;
            vg_warn("serve: fleet audit: %s; nodes are known from heartbeats only", err);
        }
    }
    if (!sf->orch || !sf->orch->ops->nodes) return;
    struct vg_orch_node *nodes = NULL;
    size_t n = 0;
    if (sf->orch->ops->nodes(sf->orch, NULL, 0, &nodes, &n)) {
        vg_warn("serve: fleet audit: the scheduler's node list: %s (kept: %zu nodes read before)", sf->orch->err,
                sf->nsched);
        free(nodes);
        return;
    }
    sched_clear(sf);
    sf->sched = vg_xcalloc(n ? n : 1, sizeof *sf->sched);
    for (size_t i = 0; i < n; i++) sf->sched[sf->nsched++] = vg_xstrdup(nodes[i].name);
    free(nodes);
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
    char **beat = NULL;
    size_t nbeat = vg_heartbeats_nodes(sf->hb ? __atomic_load_n(sf->hb, __ATOMIC_ACQUIRE) : NULL, &beat);
    pthread_mutex_lock(&sf->lock);
    sched_refresh(sf);
    size_t nknown = sf->nsched + nbeat;
    const char **known = vg_xcalloc(nknown ? nknown : 1, sizeof *known);
    for (size_t k = 0; k < sf->nsched; k++) known[k] = sf->sched[k];
    for (size_t k = 0; k < nbeat; k++) known[sf->nsched + k] = beat[k];
    vg_fleet_coverage(fl, known, nknown, vg_now_ms(), sf->stale_after_ms);
    pthread_mutex_unlock(&sf->lock);
    free(known);
    for (size_t k = 0; k < nbeat; k++) free(beat[k]);
    free(beat);
    json_t *doc = vg_fleet_json(fl);
    vg_fleet_free(fl);
    return doc;
}
