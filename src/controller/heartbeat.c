/* heartbeat.c — the heartbeat monitor: a table of the nodes that beat, a
 * thread that finds the silent ones every 100 ms, confirms each through the
 * orchestrator and reports it once; see heartbeat.h. */
#include "controller/heartbeat.h"
#include "core/event.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TICK_MS 100
#define FORGET_MS (10 * 60 * 1000)   /* a node silent this long is no longer counted as beating */

enum state { ST_OK, ST_AGENT_ONLY, ST_REPORTED, ST_HELD };

struct node {
    char name[64];
    int64_t last;             /* vg_mono_ms() of the last beat */
    char jobs[VG_EVENT_JOBS]; /* as the last beat listed them */
    enum state st;
    bool unprobed_said;       /* "cannot be probed" logged for this silence */
};

struct vg_heartbeats {
    struct vg_heartbeat_opts o;
    struct vg_orch *orch;
    void (*confirmed)(void *ctx, const char *node, const char *jobs, const char *why);
    void *ctx;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stop;
    pthread_t th;
    struct node *nodes;
    size_t n, cap;
    unsigned long beats, reported, agent_only, holds;
    bool holding;             /* an alert about mass silence is out */
};

static struct node *find(struct vg_heartbeats *h, const char *name)
{
    for (size_t i = 0; i < h->n; i++)
        if (!strcmp(h->nodes[i].name, name)) return &h->nodes[i];
    return NULL;
}

void vg_heartbeat_beat(struct vg_heartbeats *h, const char *node, const char *jobs)
{
    if (!h) return;
    pthread_mutex_lock(&h->lock);
    struct node *nd = find(h, node);
    if (!nd) {
        if (h->n == h->cap) {
            h->cap = h->cap ? h->cap * 2 : 64;
            h->nodes = vg_xrealloc(h->nodes, h->cap * sizeof *h->nodes);
        }
        nd = &h->nodes[h->n++];
        memset(nd, 0, sizeof *nd);
        vg_strlcpy(nd->name, node, sizeof nd->name);
    } else if (nd->st != ST_OK) {
        vg_info("heartbeat: %s beats again", node);
    }
    nd->last = vg_mono_ms();
    vg_strlcpy(nd->jobs, jobs ? jobs : "", sizeof nd->jobs);
    nd->st = ST_OK;
    nd->unprobed_said = false;
    h->beats++;
    pthread_mutex_unlock(&h->lock);
}

size_t vg_heartbeats_nodes(struct vg_heartbeats *h, char ***out)
{
    *out = NULL;
    if (!h) return 0;
    pthread_mutex_lock(&h->lock);
    size_t n = h->n;
    *out = vg_xcalloc(n ? n : 1, sizeof **out);
    for (size_t i = 0; i < n; i++) (*out)[i] = vg_xstrdup(h->nodes[i].name);
    pthread_mutex_unlock(&h->lock);
    return n;
}

/* One pass: the silent nodes, confirmed one by one (outside the lock). */
static void tick(struct vg_heartbeats *h)
{
    int64_t now = vg_mono_ms(), silent_after = (int64_t)h->o.interval_ms * h->o.missed + h->o.interval_ms / 2;
    pthread_mutex_lock(&h->lock);
    size_t beating = 0, silent = 0;
    char (*cand)[64] = vg_xcalloc(h->n + 1, sizeof *cand);
    size_t nc = 0;
    for (size_t i = 0; i < h->n; i++) {
        struct node *nd = &h->nodes[i];
        int64_t quiet = now - nd->last;
        if (quiet > FORGET_MS) continue;
        beating++;
        if (quiet <= silent_after) continue;
        silent++;
        if (nd->st == ST_OK) vg_strlcpy(cand[nc++], nd->name, 64);
    }
    /* many at once: the controller's own network, most likely */
    size_t allowed = beating * (size_t)h->o.max_silent_percent / 100;
    if (allowed < 1) allowed = 1;
    if (silent > allowed) {
        for (size_t i = 0; i < h->n; i++)
            if (h->nodes[i].st == ST_OK && now - h->nodes[i].last > silent_after) h->nodes[i].st = ST_HELD;
        if (!h->holding) {
            h->holding = true;
            h->holds++;
            vg_err("ALERT heartbeat: %zu of %zu nodes went silent at once (more than %d%%): more likely the "
                   "controller's own network than the nodes; holding, nothing isolated",
                   silent, beating, h->o.max_silent_percent);
        }
        nc = 0;
    } else if (!silent)
        h->holding = false;
    pthread_mutex_unlock(&h->lock);
    for (size_t i = 0; i < nc; i++) {
        int alive = h->orch->ops->node_alive ? h->orch->ops->node_alive(h->orch, cand[i], h->o.probe_timeout_ms) : -1;
        char why[256];
        enum state st = ST_OK;
        if (alive == 0) {
            snprintf(why, sizeof why, "no heartbeat for %.1f s and its node daemon does not answer",
                     (double)(vg_mono_ms() - now + silent_after) / 1000.0);
            st = ST_REPORTED;
        } else if (alive == 1) {
            vg_warn("heartbeat: the agent on %s is silent but the node answers: not isolated (restart the agent)",
                    cand[i]);
            st = ST_AGENT_ONLY;
        } else {   /* tried again next tick; said once */
            pthread_mutex_lock(&h->lock);
            struct node *nd = find(h, cand[i]);
            bool say = nd && !nd->unprobed_said;
            if (nd) nd->unprobed_said = true;
            pthread_mutex_unlock(&h->lock);
            if (say) vg_warn("heartbeat: %s is silent and cannot be probed (tried again every %d ms): %s", cand[i],
                             TICK_MS, h->orch->err);
            continue;
        }
        pthread_mutex_lock(&h->lock);
        struct node *nd = find(h, cand[i]);
        bool still = nd && nd->st == ST_OK && vg_mono_ms() - nd->last > silent_after;
        char jobs[sizeof nd->jobs] = "";
        if (still) nd->st = st, vg_strlcpy(jobs, nd->jobs, sizeof jobs);
        if (still && st == ST_REPORTED) h->reported++;
        if (still && st == ST_AGENT_ONLY) h->agent_only++;
        pthread_mutex_unlock(&h->lock);
        if (still && st == ST_REPORTED) {
            vg_err("heartbeat: %s: %s", cand[i], why);
            h->confirmed(h->ctx, cand[i], jobs, why);
        }
    }
    free(cand);
}

static void *monitor(void *arg)
{
    struct vg_heartbeats *h = arg;
    pthread_mutex_lock(&h->lock);
    while (!h->stop) {
        pthread_mutex_unlock(&h->lock);
        tick(h);
        pthread_mutex_lock(&h->lock);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += TICK_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
        if (!h->stop) pthread_cond_timedwait(&h->cond, &h->lock, &until);
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

struct vg_heartbeats *vg_heartbeats_start(const struct vg_heartbeat_opts *o, struct vg_orch *orch,
                                          void (*confirmed)(void *ctx, const char *node, const char *jobs,
                                                            const char *why),
                                          void *ctx)
{
    struct vg_heartbeats *h = vg_xcalloc(1, sizeof *h);
    h->o = *o;
    if (h->o.interval_ms <= 0) h->o.interval_ms = 1000;
    if (h->o.missed <= 0) h->o.missed = 2;
    if (h->o.probe_timeout_ms <= 0) h->o.probe_timeout_ms = 500;
    if (h->o.max_silent_percent <= 0) h->o.max_silent_percent = 10;
    h->orch = orch;
    h->confirmed = confirmed;
    h->ctx = ctx;
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->cond, NULL);
    pthread_create(&h->th, NULL, monitor, h);
    return h;
}

void vg_heartbeats_metrics(struct vg_heartbeats *h, struct sbuf *out)
{
    if (!h) return;
    pthread_mutex_lock(&h->lock);
    int64_t now = vg_mono_ms(), silent_after = (int64_t)h->o.interval_ms * h->o.missed + h->o.interval_ms / 2;
    size_t beating = 0, silent = 0;
    for (size_t i = 0; i < h->n; i++) {
        int64_t q = now - h->nodes[i].last;
        if (q > FORGET_MS) continue;
        beating++;
        silent += q > silent_after;
    }
    sbuf_printf(out,
                "# HELP vigil_heartbeat_nodes Nodes whose agent beat in the last 10 minutes.\n"
                "# TYPE vigil_heartbeat_nodes gauge\nvigil_heartbeat_nodes %zu\n"
                "# HELP vigil_heartbeat_silent_nodes Of those, silent now.\n"
                "# TYPE vigil_heartbeat_silent_nodes gauge\nvigil_heartbeat_silent_nodes %zu\n"
                "# HELP vigil_heartbeats_total Heartbeats received.\n"
                "# TYPE vigil_heartbeats_total counter\nvigil_heartbeats_total %lu\n"
                "# HELP vigil_heartbeat_confirmed_total Silent nodes the orchestrator confirmed down.\n"
                "# TYPE vigil_heartbeat_confirmed_total counter\nvigil_heartbeat_confirmed_total %lu\n"
                "# HELP vigil_heartbeat_agent_only_total Silent agents on nodes that still answer.\n"
                "# TYPE vigil_heartbeat_agent_only_total counter\nvigil_heartbeat_agent_only_total %lu\n"
                "# HELP vigil_heartbeat_holds_total Mass silences held as the controller's own network.\n"
                "# TYPE vigil_heartbeat_holds_total counter\nvigil_heartbeat_holds_total %lu\n",
                beating, silent, h->beats, h->reported, h->agent_only, h->holds);
    pthread_mutex_unlock(&h->lock);
}

void vg_heartbeats_stop(struct vg_heartbeats *h)
{
    if (!h) return;
    pthread_mutex_lock(&h->lock);
    h->stop = true;
    pthread_cond_signal(&h->cond);
    pthread_mutex_unlock(&h->lock);
    pthread_join(h->th, NULL);
    free(h->nodes);
    free(h);
}
