/* controller_act.c — what makes the controller act, and the calls up into
 * it: the executor and the heartbeat monitor started (at once on SQLite;
 * on PostgreSQL when the election makes this controller the leader, every
 * decision then fenced by its term), the lease lost, heartbeats (taken only
 * by the one that acts), new incidents handed to the executor, a node the
 * monitor confirmed down fed to the intake, /healthz's role lines. */
#include "controller/controller_int.h"
#include "controller/domains.h"
#include "controller/election.h"
#include "controller/executor.h"
#include "controller/fleetview.h"
#include "controller/store.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdio.h>

/* The controller's own event for a node the heartbeat monitor confirmed
 * down: into the intake as an agent's would go (its verdict the catalog's). */
static void node_silent(void *ctx, const char *node, const char *jobs, const char *why)
{
    struct vg_controller *c = ctx;
    struct vg_event e;
    vg_event_init(&e);
    vg_strlcpy(e.node, node, sizeof e.node);
    vg_strlcpy(e.jobs, jobs, sizeof e.jobs);   /* as its last heartbeat listed them */
    vg_strlcpy(e.source, "probe", sizeof e.source);
    vg_strlcpy(e.kind, "node-silent", sizeof e.kind);
    e.time_ms = e.seen_ms = e.first_ms = e.last_ms = vg_now_ms();
    vg_strlcpy(e.raw, why, sizeof e.raw);
    char err[256];
    if (vg_intake_event(&c->ingest, &e, err, sizeof err)) vg_err("heartbeat: %s: %s", node, err);
}

static bool may_act(void *ctx, int64_t *term)
{
    return vg_election_leading(ctx, term);
}

void vg_controller_act(struct vg_controller *c)
{
    struct vg_exec_gate gate = { .may_act = may_act, .ctx = c->election };
    int64_t term = 0;
    if (c->election) {
        vg_election_leading(c->election, &term);
        vg_store_fence(c->store, vg_election_holder(c->election), term);
    }
    struct vg_executor *x = vg_executor_start(c->store, &c->policy, c->orch, c->o.act, c->election ? &gate : NULL);
    __atomic_store_n(&c->exec, x, __ATOMIC_RELEASE);
    vg_fleetview_set_exec(c->view, x);
    /* the monitor probes through an orchestrator of its own, from its thread;
     * elected, it watches every node (those that beat to the old leader too) */
    c->hbo.track_all = c->election != NULL;
    char err[256];
    if (c->http && c->hbo.interval_ms > 0 && !(c->hb_orch = vg_controller_orch(c, &c->o.orch_conf, err, sizeof err)))
        vg_err("serve: no heartbeat monitor: %s", err);
    if (c->hb_orch) __atomic_store_n(&c->hb, vg_heartbeats_start(&c->hbo, c->hb_orch, node_silent, c), __ATOMIC_RELEASE);
}

void vg_controller_on_lead(void *ctx, int64_t term)
{
    (void)term;
    vg_controller_act(ctx);
}

void vg_controller_on_lost(void *ctx, int64_t term, const char *why)
{
    struct vg_controller *c = ctx;
    (void)term;
    (void)why;
    __atomic_store_n(&c->lost, true, __ATOMIC_RELEASE);
    if (c->o.on_lost) c->o.on_lost(c->o.ctx);
}

int vg_controller_on_beat(void *ctx, const char *node, const char *jobs, const char *domain, char *err, size_t errlen)
{
    struct vg_controller *c = ctx;
    struct vg_heartbeats *hb = __atomic_load_n(&c->hb, __ATOMIC_ACQUIRE);
    if (!hb && c->election) {
        char role[16], url[256];
        int64_t term;
        vg_election_role(c->election, role, sizeof role, &term, url, sizeof url);
        snprintf(err, errlen, "this controller is a follower: beats go to the leader (%s)", url[0] ? url : "not elected yet");
        return 503;
    }
    if (!hb) {
        snprintf(err, errlen, "starting: the heartbeat monitor is not running yet; retry");
        return 503;
    }
    int code = vg_heartbeat_beat(hb, node, jobs, err, errlen);
    if (!code && domain && vg_domains_learn(c->domains, node, domain))   /* a node the scheduler lists */
        vg_info("serve: %s is in NVLink domain %s (its GPUs' fabric)", node, domain);
    return code;
}

void vg_controller_on_incident(void *ctx, int64_t incident, const struct vg_event *e)
{
    struct vg_controller *c = ctx;
    struct vg_executor *x = __atomic_load_n(&c->exec, __ATOMIC_ACQUIRE);
    if (x) vg_executor_submit(x, incident, e);   /* a follower: the leader takes it up from the store */
}

/* /healthz on a controller of several: its role, its term, the leader's URL. */
void vg_controller_health(void *ctx, struct sbuf *out)
{
    struct vg_controller *c = ctx;
    char role[16], url[256];
    int64_t term;
    vg_election_role(c->election, role, sizeof role, &term, url, sizeof url);
    sbuf_printf(out, "role %s\nterm %lld\nleader %s\n", role, (long long)term, url[0] ? url : "none");
}
