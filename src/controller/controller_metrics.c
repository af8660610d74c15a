/* controller_metrics.c — the controller's lines in GET /metrics after the
 * HTTP server's own: the executor's, the election's (vigil_leader and the
 * term, on a shared store), the heartbeat monitor's, the scheduler's node
 * list's, the nodes' reports', the open incidents by state, the store
 * file's and the cluster view's. */
#include "controller/controller_int.h"
#include "controller/election.h"
#include "controller/executor.h"
#include "controller/fleetview.h"
#include "controller/nodereport.h"
#include "controller/nodeset.h"
#include "controller/storeguard.h"
#include "util/jsonutil.h"
#include <string.h>

/* Open incidents by their state (store.h: every state but closed), from the
 * read connection. */
static void incident_states(struct vg_store *reader, struct sbuf *out)
{
    size_t count[VG_INC_COUNT] = { 0 };
    json_t *open = vg_store_open_states(reader);
    size_t i;
    json_t *inc;
    json_array_foreach(open, i, inc) {
        int st = vg_inc_state_parse(vg_json_str(inc, "state", ""));
        if (st >= 0) count[st]++;
    }
    json_decref(open);
    sbuf_puts(out, "# HELP vigil_open_incidents Open incidents by state.\n"
                   "# TYPE vigil_open_incidents gauge\n");
    for (int k = 0; k < VG_INC_CLOSED; k++)
        sbuf_printf(out, "vigil_open_incidents{state=\"%s\"} %zu\n", vg_inc_state_name((enum vg_inc_state)k), count[k]);
}

void vg_controller_metrics(void *ctx, struct sbuf *out)
{
    struct vg_controller *c = ctx;
    struct vg_executor *x = __atomic_load_n(&c->exec, __ATOMIC_ACQUIRE);
    if (x) vg_executor_metrics(x, out);
    if (c->election) {
        char role[16], url[256];
        int64_t term;
        vg_election_role(c->election, role, sizeof role, &term, url, sizeof url);
        sbuf_printf(out, "# HELP vigil_leader 1 while this controller is the leader of those sharing its store.\n"
                         "# TYPE vigil_leader gauge\nvigil_leader %d\n"
                         "# HELP vigil_leader_term The controllers' current term as this one last saw it.\n"
                         "# TYPE vigil_leader_term gauge\nvigil_leader_term %lld\n",
                    !strcmp(role, "leader"), (long long)term);
    }
    vg_heartbeats_metrics(__atomic_load_n(&c->hb, __ATOMIC_ACQUIRE), out);
    if (c->nodes) vg_nodeset_metrics(c->nodes, out);
    vg_nodereports_metrics(c->reports, out);
    if (c->reader) incident_states(c->reader, out);
    vg_storeguard_metrics(c->guard, out);
    if (c->view) vg_fleetview_metrics(c->view, out);
}
