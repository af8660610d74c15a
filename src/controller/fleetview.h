/* fleetview.h — the fleet as the dashboard, GET /v1/nodes, GET /v1/summary
 * and the vigil_nodes gauges show it: every node the controller knows (the
 * scheduler's node list, the policy's spares and domains, the spare pool, the
 * incident store), each with its rack/domain and one state:
 *   repairing    an incident of it is queued for or in the repair ladder
 *   rma          handed off for RMA (every repair step failed)
 *   isolated     out of service by vigil (its incident, or the scheduler shows
 *                a vigil reason: a domain taken out with it)
 *   failed       its incident's action failed and is being retried
 *   held         its incident was held (breaker, or a state vigil did not set)
 *   unavailable  out of service for a reason vigil did not write
 *   suspect      an open incident not acted on (recorded, dry run, queued)
 *   returned     its latest incident closed with a `returned` step (repaired
 *                and back, in production or the pool) within the last 24 h
 *   spare        in the hot-spare pool
 *   healthy      none of those
 * (the first that applies, in this order).  The scheduler's node list is read
 * through the view's own orchestrator handle, at most once per
 * orch_max_age_ms and never by two requests at once (the others get the last
 * list), so the dashboard never waits behind, nor delays, an isolation. */
#ifndef VG_FLEETVIEW_H
#define VG_FLEETVIEW_H
#include "controller/executor.h"
#include "controller/policy.h"
#include "controller/store.h"
#include "orch/orch.h"
#include "util/sbuf.h"
#include <jansson.h>

struct vg_fleetview_opts {
    struct vg_store *reader;          /* the read connection */
    struct vg_executor *exec;         /* NULL: no pool, no repairs, no breaker */
    const struct vg_policy *policy;   /* NULL: none (no domains, no spares) */
    struct vg_orch *orch;             /* the view's own; NULL: the scheduler is not read */
    int orch_max_age_ms;              /* 0: 3000 */
    int acct_max_age_ms;              /* the accounting is recomputed at most this often; 0: 10000 */
};

struct vg_fleetview;

struct vg_fleetview *vg_fleetview_new(const struct vg_fleetview_opts *o);
/* The executor whose view it shows, once there is one (a follower that
 * became the leader). */
void vg_fleetview_set_exec(struct vg_fleetview *v, struct vg_executor *exec);
void vg_fleetview_free(struct vg_fleetview *v);
/* [{node, domain, state, spare, incidents, open_incidents, worst_open_action,
 * last_event, incident (the open one its state comes from, or null),
 * returned ({incident, at, detail} while it shows returned, else null),
 * scheduler_state, reason}], by domain then name. */
json_t *vg_fleetview_nodes(struct vg_fleetview *v);
/* {at, scheduler {name, read_at, error}, nodes (as above), states {STATE: n},
 * domain_max_unavailable, open_incidents (count), incidents (the 100 newest
 * open, with their steps), spares {pool, nodes, configured}, breaker
 * {percent, window_s, isolations_in_window, allowed, holds_total, held_open,
 * state}, accounting (vg_accounting over the last 30 days, from the controller's
 * first record when later)}. */
json_t *vg_fleetview_summary(struct vg_fleetview *v);
/* vigil_nodes{state="…"} for every state, and the view's scheduler reads. */
void vg_fleetview_metrics(struct vg_fleetview *v, struct sbuf *out);
/* The node state an open incident (its state, store.h) gives its node (pure; tests). */
const char *vg_fleetview_incident_state(const char *state, bool repairing);

#endif
