/* heartbeat.c — the heartbeat monitor: a table of the scheduler's nodes that
 * beat, a thread that looks at it every 100 ms, holds the silent nodes when
 * many fell silent at once, confirms the others through the orchestrator
 * (backing off while it cannot tell) and reports each once; see heartbeat.h. */
#include "controller/heartbeat.h"
#include "core/event.h"
#include "util/condwait.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TICK_MS 100
#define FORGET_MS (10 * 60 * 1000)     /* metrics: a node silent this long no longer counts as beating */
#define PROBE_BACKOFF_MIN_MS 1000      /* a probe that cannot tell is tried again after 1 s, 2 s, 4 s … */
#define PROBE_BACKOFF_MAX_MS 60000     /* … at most a minute apart */
#define HOLD_REPEAT_MS 30000           /* while a hold lasts, its alert is repeated this often */

enum state {
    ST_OK,          /* beating, or silent and not decided yet */
    ST_HELD,        /* silent while many were: not decided, decided again each tick */
    ST_AGENT_ONLY,  /* silent, its node answers: only the agent died */
    ST_REPORTED,    /* silent, its node does not answer: reported */
};

struct node {
    char name[64];
    int64_t last;             /* the clock at its last beat */
    char jobs[VG_EVENT_JOBS]; /* as the last beat listed them */
    enum state st;
    int64_t probe_at;         /* an undecided silent node is probed from then on */
    int backoff_ms;           /* the wait after its next probe that cannot tell */
    bool unprobed_said;       /* "cannot be probed" logged for this silence */
};

struct vg_heartbeats {
    struct vg_heartbeat_opts o;
    struct vg_orch *orch;
    void (*confirmed)(void *ctx, const char *node, const char *jobs, const char *why);
    void *ctx;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stop, started;
    pthread_t th;
    struct node *nodes;
    size_t n, cap;
    json_t *index;            /* name → its position in nodes */
    uint64_t generation;      /* of the scheduler's list the table was last pruned to */
    unsigned long beats, refused, probes, reported, agent_only, holds;
    bool holding;             /* an alert about mass silence is out */
    int64_t alert_at;
};

static int64_t now_ms(const struct vg_heartbeats *h) { return h->o.clock ? h->o.clock() : vg_mono_ms(); }

static int64_t silent_after(const struct vg_heartbeats *h)
{
    return (int64_t)h->o.interval_ms * h->o.missed + h->o.interval_ms / 2;
}

static struct node *find(struct vg_heartbeats *h, const char *name)
{
    json_t *at = json_object_get(h->index, name);
    return at ? &h->nodes[json_integer_value(at)] : NULL;
}

static struct node *insert(struct vg_heartbeats *h, const char *name)
{
    if (h->n == h->cap) {
        h->cap = h->cap ? h->cap * 2 : 64;
        h->nodes = vg_xrealloc(h->nodes, h->cap * sizeof *h->nodes);
    }
    struct node *nd = &h->nodes[h->n];
    memset(nd, 0, sizeof *nd);
    vg_strlcpy(nd->name, name, sizeof nd->name);
    json_object_set_new(h->index, nd->name, json_integer((json_int_t)h->n++));
    return nd;
}

int vg_heartbeat_beat(struct vg_heartbeats *h, const char *node, const char *jobs, char *err, size_t errlen)
{
    pthread_mutex_lock(&h->lock);
    struct node *nd = find(h, node);
    pthread_mutex_unlock(&h->lock);
    if (!nd) {   /* a name not tracked yet: only a node the scheduler lists enters */
        int code = vg_nodeset_may_name(h->o.nodes, "node", node, NULL, err, errlen);
        if (code) {
            pthread_mutex_lock(&h->lock);
            h->refused++;
            pthread_mutex_unlock(&h->lock);
            return code;
        }
    }
    pthread_mutex_lock(&h->lock);
    nd = find(h, node);
    if (!nd) nd = insert(h, node);
    else if (nd->st != ST_OK || nd->unprobed_said) vg_info("heartbeat: %s beats again", node);
    nd->last = now_ms(h);
    vg_strlcpy(nd->jobs, jobs ? jobs : "", sizeof nd->jobs);
    nd->st = ST_OK;
    nd->probe_at = 0;
    nd->backoff_ms = PROBE_BACKOFF_MIN_MS;
    nd->unprobed_said = false;
    h->beats++;
    pthread_mutex_unlock(&h->lock);
    return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The table keeps only the nodes of the scheduler's current list. */
static void prune(struct vg_heartbeats *h)
{
    uint64_t gen = vg_nodeset_generation(h->o.nodes);
    if (gen == h->generation) return;
    char **names;
    long nl = vg_nodeset_names(h->o.nodes, &names, &gen);
    size_t nn = nl > 0 ? (size_t)nl : 0;
    pthread_mutex_lock(&h->lock);
    size_t keep = 0;
    for (size_t i = 0; i < h->n; i++) {
        const char *name = h->nodes[i].name;
        if (bsearch(&name, names, nn, sizeof *names, by_name))
            h->nodes[keep++] = h->nodes[i];
        else
            vg_info("heartbeat: %s is no longer in the scheduler's node list: not watched any more", name);
    }
    if (keep != h->n) {
        h->n = keep;
        json_object_clear(h->index);
        for (size_t i = 0; i < h->n; i++) json_object_set_new(h->index, h->nodes[i].name, json_integer((json_int_t)i));
    }
    h->generation = gen;
    pthread_mutex_unlock(&h->lock);
    vg_nodeset_names_free(names, nl);
}

/* Under the lock: decides every silent node from this tick's counts, and
 * lists the nodes to probe now in cand.  Returns how many. */
static size_t decide(struct vg_heartbeats *h, int64_t now, char (*cand)[64])
{
    int64_t after = silent_after(h);
    size_t silent = 0, held = 0, nc = 0;
    for (size_t i = 0; i < h->n; i++) {
        const struct node *nd = &h->nodes[i];
        if ((nd->st == ST_OK || nd->st == ST_HELD) && now - nd->last > after) silent++, held += nd->st == ST_HELD;
    }
    /* many at once: the controller's own network, most likely */
    size_t allowed = h->n * (size_t)h->o.max_silent_percent / 100;
    if (allowed < 1) allowed = 1;
    if (silent > allowed) {
        for (size_t i = 0; i < h->n; i++)
            if (h->nodes[i].st == ST_OK && now - h->nodes[i].last > after) h->nodes[i].st = ST_HELD;
        if (!h->holding || now - h->alert_at >= HOLD_REPEAT_MS) {
            if (!h->holding) h->holds++;
            vg_err("ALERT heartbeat: %zu of %zu nodes %s silent at once (more than %d%%): more likely the "
                   "controller's own network than the nodes; holding, nothing isolated",
                   silent, h->n, h->holding ? "still" : "went", h->o.max_silent_percent);
            h->holding = true;
            h->alert_at = now;
        }
        return 0;
    }
    if (h->holding)
        vg_warn("heartbeat: %zu of %zu nodes silent now (at most %zu at once): the hold ends, %zu held node(s) "
                "decided again", silent, h->n, allowed, held);
    h->holding = false;
    for (size_t i = 0; i < h->n; i++) {
        struct node *nd = &h->nodes[i];
        if ((nd->st != ST_OK && nd->st != ST_HELD) || now - nd->last <= after) continue;
        if (nd->st == ST_HELD) nd->st = ST_OK, nd->probe_at = 0;
        if (nd->probe_at <= now) vg_strlcpy(cand[nc++], nd->name, 64);
    }
    return nc;
}

/* Probes one silent node (outside the lock) and records what it says. */
static void probe(struct vg_heartbeats *h, const char *name)
{
    /* without VG_CAP_NODE_ALIVE: -1, "the … orchestrator cannot tell whether a node's daemon answers" */
    int alive = h->orch->ops->node_alive(h->orch, name, h->o.probe_timeout_ms);
    int64_t now = now_ms(h);
    pthread_mutex_lock(&h->lock);
    h->probes++;
    struct node *nd = find(h, name);
    if (!nd || nd->st != ST_OK || now - nd->last <= silent_after(h)) {   /* beat, held or pruned meanwhile */
        pthread_mutex_unlock(&h->lock);
        return;
    }
    char jobs[sizeof nd->jobs], why[256];
    vg_strlcpy(jobs, nd->jobs, sizeof jobs);
    snprintf(why, sizeof why, "no heartbeat for %.1f s and its node daemon does not answer",
             (double)(now - nd->last) / 1000.0);
    int wait_ms = nd->backoff_ms;
    bool say = false;
    if (alive == 0) nd->st = ST_REPORTED, h->reported++;
    else if (alive == 1) nd->st = ST_AGENT_ONLY, h->agent_only++;
    else {
        nd->probe_at = now + wait_ms;
        nd->backoff_ms = wait_ms * 2 > PROBE_BACKOFF_MAX_MS ? PROBE_BACKOFF_MAX_MS : wait_ms * 2;
        say = !nd->unprobed_said;
        nd->unprobed_said = true;
    }
    pthread_mutex_unlock(&h->lock);
    if (alive == 0) {
        vg_err("heartbeat: %s: %s", name, why);
        h->confirmed(h->ctx, name, jobs, why);
    } else if (alive == 1) {
        vg_warn("heartbeat: the agent on %s is silent but the node answers: not isolated (restart the agent)", name);
    } else if (say) {
        vg_warn("heartbeat: %s is silent and cannot be probed (tried again after %d s, then twice as long each "
                "time, up to %d s): %s", name, wait_ms / 1000, PROBE_BACKOFF_MAX_MS / 1000, h->orch->err);
    }
}

void vg_heartbeats_tick(struct vg_heartbeats *h)
{
    prune(h);
    pthread_mutex_lock(&h->lock);
    char (*cand)[64] = vg_xcalloc(h->n + 1, sizeof *cand);
    size_t nc = decide(h, now_ms(h), cand);
    pthread_mutex_unlock(&h->lock);
    for (size_t i = 0; i < nc; i++) probe(h, cand[i]);
    free(cand);
}

static void *monitor(void *arg)
{
    struct vg_heartbeats *h = arg;
    pthread_mutex_lock(&h->lock);
    while (!h->stop) {
        pthread_mutex_unlock(&h->lock);
        vg_heartbeats_tick(h);
        pthread_mutex_lock(&h->lock);
        if (!h->stop) vg_cond_wait_ms(&h->cond, &h->lock, TICK_MS);   /* a wall step back never stops the ticks */
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
    h->index = json_object();
    pthread_mutex_init(&h->lock, NULL);
    vg_cond_init_mono(&h->cond);
    if (h->o.track_all) {
        char **names;
        long n = vg_nodeset_names(h->o.nodes, &names, &h->generation);
        for (long i = 0; i < n; i++) insert(h, names[i])->last = now_ms(h);
        if (n > 0) vg_nodeset_names_free(names, n);
        vg_info("heartbeat: %ld nodes the scheduler lists are watched from now, beating or not", n > 0 ? n : 0);
    }
    if (!h->o.no_thread) h->started = pthread_create(&h->th, NULL, monitor, h) == 0;
    return h;
}

size_t vg_heartbeats_tracked(struct vg_heartbeats *h, size_t *held)
{
    pthread_mutex_lock(&h->lock);
    size_t n = h->n, k = 0;
    for (size_t i = 0; i < h->n; i++) k += h->nodes[i].st == ST_HELD;
    pthread_mutex_unlock(&h->lock);
    if (held) *held = k;
    return n;
}

void vg_heartbeats_metrics(struct vg_heartbeats *h, struct sbuf *out)
{
    if (!h) return;
    pthread_mutex_lock(&h->lock);
    int64_t now = now_ms(h), after = silent_after(h);
    size_t beating = 0, silent = 0, held = 0;
    for (size_t i = 0; i < h->n; i++) {
        int64_t q = now - h->nodes[i].last;
        held += h->nodes[i].st == ST_HELD;
        if (q > FORGET_MS) continue;
        beating++;
        silent += q > after;
    }
    sbuf_printf(out,
                "# HELP vigil_heartbeat_nodes Nodes whose agent beat in the last 10 minutes.\n"
                "# TYPE vigil_heartbeat_nodes gauge\nvigil_heartbeat_nodes %zu\n"
                "# HELP vigil_heartbeat_silent_nodes Of those, silent now.\n"
                "# TYPE vigil_heartbeat_silent_nodes gauge\nvigil_heartbeat_silent_nodes %zu\n"
                "# HELP vigil_heartbeat_held_nodes Silent nodes held by a mass silence, decided again each tick.\n"
                "# TYPE vigil_heartbeat_held_nodes gauge\nvigil_heartbeat_held_nodes %zu\n"
                "# HELP vigil_heartbeats_total Heartbeats received.\n"
                "# TYPE vigil_heartbeats_total counter\nvigil_heartbeats_total %lu\n"
                "# HELP vigil_heartbeat_refused_total Heartbeats for nodes the scheduler does not list (or before "
                "its list was read): refused, never tracked.\n"
                "# TYPE vigil_heartbeat_refused_total counter\nvigil_heartbeat_refused_total %lu\n"
                "# HELP vigil_heartbeat_probes_total Liveness probes of silent nodes through the orchestrator.\n"
                "# TYPE vigil_heartbeat_probes_total counter\nvigil_heartbeat_probes_total %lu\n"
                "# HELP vigil_heartbeat_confirmed_total Silent nodes the orchestrator confirmed down.\n"
                "# TYPE vigil_heartbeat_confirmed_total counter\nvigil_heartbeat_confirmed_total %lu\n"
                "# HELP vigil_heartbeat_agent_only_total Silent agents on nodes that still answer.\n"
                "# TYPE vigil_heartbeat_agent_only_total counter\nvigil_heartbeat_agent_only_total %lu\n"
                "# HELP vigil_heartbeat_holds_total Mass silences held as the controller's own network.\n"
                "# TYPE vigil_heartbeat_holds_total counter\nvigil_heartbeat_holds_total %lu\n",
                beating, silent, held, h->beats, h->refused, h->probes, h->reported, h->agent_only, h->holds);
    pthread_mutex_unlock(&h->lock);
}

void vg_heartbeats_stop(struct vg_heartbeats *h)
{
    if (!h) return;
    pthread_mutex_lock(&h->lock);
    h->stop = true;
    pthread_cond_signal(&h->cond);
    pthread_mutex_unlock(&h->lock);
    if (h->started) pthread_join(h->th, NULL);
    json_decref(h->index);
    free(h->nodes);
    pthread_cond_destroy(&h->cond);
    pthread_mutex_destroy(&h->lock);
    free(h);
}
