/* executor.c — applies policy decisions to Slurm and records the steps; see executor.h. */
#include "controller/executor.h"
#include "orch/slurm.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/spawn.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define VG_REPAIR_TIMEOUT_MS (30 * 60 * 1000)

struct item {
    int64_t incident;
    struct vg_event e;
    char node[64];
    struct item *next;
};

struct queue {
    struct item *head, *tail;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stop;
};

struct vg_executor {
    struct vg_store *store;
    const struct vg_policy *policy;
    bool act;
    struct vg_slurm slurm, repair_slurm; /* one per thread */
    struct queue work, repair;
    pthread_t worker, repairer;
    struct vg_isolation_log log;
    pthread_mutex_t pool_lock;  /* the spare pool, shared by both threads */
    char **pool;
    size_t npool;
    bool pool_exists;
    unsigned long actions, holds, recorded, failures, returned;
    unsigned reconcile_calls;   /* of slurm.calls: spent noticing nodes resumed outside vigil */
};

static void push(struct queue *q, struct item *it)
{
    pthread_mutex_lock(&q->lock);
    if (q->tail) q->tail->next = it;
    else q->head = it;
    q->tail = it;
    pthread_cond_signal(&q->cond);
    pthread_mutex_unlock(&q->lock);
}

/* Blocks for the next item, at most timeout_ms when >= 0; NULL once stopped
 * and drained, or at the timeout (then *stopped tells which). */
static struct item *pop_timed(struct queue *q, int64_t timeout_ms, bool *stopped)
{
    pthread_mutex_lock(&q->lock);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)(timeout_ms / 1000);
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    while (!q->head && !q->stop)
        if (timeout_ms < 0) pthread_cond_wait(&q->cond, &q->lock);
        else if (pthread_cond_timedwait(&q->cond, &q->lock, &until)) break;
    if (stopped) *stopped = q->stop && !q->head;
    struct item *it = q->head;
    if (it) {
        q->head = it->next;
        if (!q->head) q->tail = NULL;
    }
    pthread_mutex_unlock(&q->lock);
    return it;
}

static void describe(const struct vg_event *e, char *buf, size_t n)
{
    int l = e->code >= 0 ? snprintf(buf, n, "%s %d", e->kind, e->code) : snprintf(buf, n, "%s", e->kind);
    if (e->gpu >= 0 && (size_t)l < n) l += snprintf(buf + l, n - (size_t)l, " gpu %d", e->gpu);
    if (e->pci[0] && (size_t)l < n) snprintf(buf + l, n - (size_t)l, " %s", e->pci);
}

static void state(struct vg_executor *x, int64_t id, const char *fmt, const char *a, const char *b)
{
    char s[400];
    snprintf(s, sizeof s, fmt, a, b);
    vg_store_set_state(x->store, id, s);
}

static bool in_list(char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i], s)) return true;
    return false;
}

/* Makes the reservation hold the pool; caller holds pool_lock. */
static int pool_sync(struct vg_executor *x, struct vg_slurm *s)
{
    int rc = vg_slurm_reservation_set(s, x->policy->spare_reservation, (const char *const *)x->pool, x->npool,
                                      x->pool_exists);
    if (!rc) x->pool_exists = x->npool > 0;
    return rc;
}

/* At start: the pool is the reservation if it exists, else the policy's
 * spares that are healthy now (and the reservation is created). */
static void pool_init(struct vg_executor *x)
{
    if (!x->act || !x->policy->nspares) return;
    char **nodes;
    size_t n;
    int rc = vg_slurm_reservation_nodes(&x->slurm, x->policy->spare_reservation, &nodes, &n);
    if (rc < 0) {
        vg_err("spare pool: %s", x->slurm.err);
        return;
    }
    if (rc == 0) {
        x->pool = nodes;
        x->npool = n;
        x->pool_exists = true;
        return;
    }
    struct vg_node_state *ns;
    size_t nn;
    if (vg_slurm_nodes(&x->slurm, NULL, &ns, &nn)) {
        vg_err("spare pool: %s", x->slurm.err);
        return;
    }
    for (size_t i = 0; i < x->policy->nspares; i++)
        for (size_t j = 0; j < nn; j++)
            if (!strcmp(ns[j].name, x->policy->spares[i]) && !ns[j].drain && !ns[j].down && ns[j].responding) {
                x->pool = vg_xrealloc(x->pool, (x->npool + 1) * sizeof *x->pool);
                x->pool[x->npool++] = vg_xstrdup(ns[j].name);
            }
    free(ns);
    if (pool_sync(x, &x->slurm)) vg_err("spare pool: %s", x->slurm.err);
    else vg_info("spare pool: reservation %s holds %zu node(s)", x->policy->spare_reservation, x->npool);
}

static void handle(struct vg_executor *x, struct item *it)
{
    char what[160];
    describe(&it->e, what, sizeof what);
    struct vg_node_state *ns = NULL;
    size_t nn = 0;
    /* a dry run reads the cluster too when it can, but goes on without it */
    if (vg_slurm_nodes(&x->slurm, NULL, &ns, &nn) && x->act) {
        x->failures++;
        state(x, it->incident, "failed: %s%s", x->slurm.err, "");
        vg_err("incident %lld on %s: %s", (long long)it->incident, it->node, x->slurm.err);
        return;
    }
    struct vg_node_view *views = vg_xcalloc(nn + 1, sizeof *views);
    pthread_mutex_lock(&x->pool_lock);
    for (size_t i = 0; i < nn; i++)
        views[i] = (struct vg_node_view){ .name = ns[i].name,
                                          .unavailable = ns[i].drain || ns[i].down,
                                          .ours = vg_startswith(ns[i].reason, VG_REASON_PREFIX),
                                          .spare = in_list(x->pool, x->npool, ns[i].name) };
    struct vg_decision d;
    vg_policy_decide(x->policy, views, nn, it->node, it->e.action, what, vg_now_ms(), &x->log, &d);
    pthread_mutex_unlock(&x->pool_lock);

    if (d.op == VG_OP_RECORD) {
        x->recorded++;
        state(x, it->incident, "recorded: %s%s", d.note, "");
    } else if (d.held) {
        x->holds++;
        state(x, it->incident, "held: %s%s", d.note, "");
        vg_err("ALERT incident %lld on %s (%s): %s", (long long)it->incident, it->node, what, d.note);
    } else if (!x->act) {
        state(x, it->incident, "dry run: would %s (%s)", d.op == VG_OP_DOWN ? "down and requeue" : "drain", d.reason);
    } else if (d.nisolate) {
        const char *const *iso = (const char *const *)d.isolate;
        long *jobs = NULL;
        size_t njobs = 0;
        if (d.op == VG_OP_DOWN && vg_slurm_jobs_on(&x->slurm, iso, d.nisolate, &jobs, &njobs))
            vg_warn("incident %lld: cannot list jobs: %s", (long long)it->incident, x->slurm.err);
        /* Requeue first, then DOWN: the requeued job is held for cred_expire+1 s
         * anyway, and by then the node is out; slurmctld never has to notice. */
        bool requeued = false;
        char ids[512] = "";
        for (size_t i = 0, l = 0; i < njobs && l < sizeof ids - 24; i++)
            l += (size_t)snprintf(ids + l, sizeof ids - l, "%s%ld", i ? "," : "", jobs[i]);
        if (njobs && vg_slurm_requeue(&x->slurm, jobs, njobs))
            vg_warn("incident %lld: requeue %s: %s", (long long)it->incident, ids, x->slurm.err);
        else
            requeued = njobs > 0;
        int64_t requeued_at = vg_now_ms();
        if (vg_slurm_set_state(&x->slurm, iso, d.nisolate, d.op == VG_OP_DOWN ? "down" : "drain", d.reason)) {
            x->failures++;
            state(x, it->incident, "failed: %s%s", x->slurm.err, "");
            vg_err("incident %lld: %s", (long long)it->incident, x->slurm.err);
        } else {
            x->actions++;
            char detail[1024];
            snprintf(detail, sizeof detail, "%s %s (%s)%s%s", d.op == VG_OP_DOWN ? "DOWN" : "DRAIN", iso[0], d.reason,
                     d.note[0] ? "; " : "", d.note);
            vg_store_step(x->store, it->incident, VG_STEP_ISOLATED, vg_now_ms(), detail);
            if (requeued) vg_store_step(x->store, it->incident, VG_STEP_JOBS_REQUEUED, requeued_at, ids);
            if (d.npromote) {
                pthread_mutex_lock(&x->pool_lock);
                size_t keep = 0;
                for (size_t i = 0; i < x->npool; i++) {
                    if (in_list(d.promote, d.npromote, x->pool[i])) free(x->pool[i]);
                    else x->pool[keep++] = x->pool[i];
                }
                x->npool = keep;
                int rc = pool_sync(x, &x->slurm);
                pthread_mutex_unlock(&x->pool_lock);
                char *names = vg_xstrdup(d.promote[0]);
                for (size_t i = 1; i < d.npromote; i++) {
                    char *t = names;
                    if (asprintf(&names, "%s,%s", t, d.promote[i]) < 0) names = NULL;
                    free(t);
                    if (!names) names = vg_xstrdup("?");
                }
                if (rc) vg_warn("incident %lld: promoting %s: %s", (long long)it->incident, names, x->slurm.err);
                else vg_store_step(x->store, it->incident, VG_STEP_SPARE_PROMOTED, vg_now_ms(), names);
                free(names);
            }
            state(x, it->incident, "isolated%s%s", d.note[0] ? ": " : "", d.note);
            if (x->policy->remediate || x->policy->healthcheck) {
                struct item *r = vg_xcalloc(1, sizeof *r);
                *r = *it;
                r->next = NULL;
                push(&x->repair, r);
            }
        }
        free(jobs);
    }
    vg_decision_free(&d);
    free(views);
    free(ns);
}

/* argv template with {node} and {gpu} replaced; malloc'd, NULL-terminated. */
static char **expand(char *const *tmpl, const struct item *it)
{
    size_t n = 0;
    while (tmpl[n]) n++;
    char **v = vg_xcalloc(n + 1, sizeof *v);
    char gpu[16];
    snprintf(gpu, sizeof gpu, "%d", it->e.gpu >= 0 ? it->e.gpu : 0);
    for (size_t i = 0; i < n; i++) {
        struct sbuf b = SBUF_INIT;
        for (const char *p = tmpl[i]; *p;) {
            if (vg_startswith(p, "{node}")) { sbuf_puts(&b, it->node); p += 6; }
            else if (vg_startswith(p, "{gpu}")) { sbuf_puts(&b, gpu); p += 5; }
            else sbuf_putc(&b, *p++);
        }
        v[i] = sbuf_take(&b);
    }
    return v;
}

/* Runs a repair command; returns its exit status (-1: could not run / timed out). */
static int run_repair(char *const *tmpl, const struct item *it, char *out, size_t n)
{
    char **argv = expand(tmpl, it);
    struct vg_spawn_result r;
    vg_spawn((const char *const *)argv, NULL, NULL, VG_REPAIR_TIMEOUT_MS, &r);
    int status = r.timed_out ? -1 : r.status;
    const char *text = *vg_trim(r.err) ? vg_trim(r.err) : vg_trim(r.out);
    snprintf(out, n, "%s: %s%s%s", argv[0], r.timed_out ? "timed out" : status ? "failed" : "ok",
             *text ? ": " : "", text);
    char *nl = strchr(out, '\n');
    if (nl) *nl = 0;
    vg_spawn_result_free(&r);
    for (size_t i = 0; argv[i]; i++) free(argv[i]);
    free(argv);
    return status;
}

static void repair(struct vg_executor *x, struct item *it)
{
    char out[256];
    const struct vg_policy *p = x->policy;
    if (p->remediate) {
        int rc = run_repair(p->remediate, it, out, sizeof out);
        if (rc) {
            state(x, it->incident, "repair failed, node stays isolated: %s%s", out, "");
            return;
        }
        vg_store_step(x->store, it->incident, VG_STEP_REMEDIATED, vg_now_ms(), out);
    }
    if (!p->healthcheck) {
        state(x, it->incident, "remediated; no health check configured, node stays isolated%s%s", "", "");
        return;
    }
    if (run_repair(p->healthcheck, it, out, sizeof out)) {
        state(x, it->incident, "health check failed, node stays isolated: %s%s", out, "");
        return;
    }
    /* Back to the spare pool: into the reservation first, so no job lands on
     * it between the resume and the pool update. */
    pthread_mutex_lock(&x->pool_lock);
    bool had = in_list(x->pool, x->npool, it->node);
    if (!had) {
        x->pool = vg_xrealloc(x->pool, (x->npool + 1) * sizeof *x->pool);
        x->pool[x->npool++] = vg_xstrdup(it->node);
    }
    int rc = p->nspares || x->pool_exists ? pool_sync(x, &x->repair_slurm) : 0;
    pthread_mutex_unlock(&x->pool_lock);
    const char *node = it->node;
    if (rc) vg_warn("returning %s to the spare pool: %s", node, x->repair_slurm.err);
    if (vg_slurm_resume_ours(&x->repair_slurm, &node, 1) < 0) {
        state(x, it->incident, "health check passed, resume failed: %s%s", x->repair_slurm.err, "");
        return;
    }
    x->returned++;
    vg_store_step(x->store, it->incident, VG_STEP_RETURNED, vg_now_ms(), rc ? "to production" : "to the spare pool");
    vg_store_set_state(x->store, it->incident, "closed");
}

/* A node vigil isolated that is back in service (an operator or a drill
 * resumed it) closes its incident with a `returned` step, so the next fault
 * on it opens a new incident instead of folding into the old one.  One
 * `scontrol show node` for all nodes, every 2 s, only while such incidents exist. */
static bool reconcile(struct vg_executor *x)
{
    json_t *open = vg_store_incidents(x->store, NULL, true, 0);
    bool watching = false;
    struct vg_node_state *ns = NULL;
    size_t nn = 0;
    for (size_t i = 0; i < json_array_size(open); i++) {
        json_t *inc = json_array_get(open, i);
        if (!vg_startswith(vg_json_str(inc, "state", ""), "isolated")) continue;
        watching = true;
        if (!ns) {
            x->reconcile_calls++;
            if (vg_slurm_nodes(&x->slurm, NULL, &ns, &nn)) break;
        }
        for (size_t k = 0; k < nn; k++)
            if (!strcmp(ns[k].name, vg_json_str(inc, "node", "")) && !ns[k].drain && !ns[k].down) {
                vg_store_step(x->store, vg_json_int(inc, "id", 0), VG_STEP_RETURNED, vg_now_ms(),
                              "back in service outside vigil (resumed by someone else)");
                vg_store_set_state(x->store, vg_json_int(inc, "id", 0), "closed");
            }
    }
    free(ns);
    json_decref(open);
    return watching;
}

static void *worker_main(void *arg)
{
    struct vg_executor *x = arg;
    pool_init(x);
    bool watching = x->act, stopped = false;
    while (!stopped) {
        struct item *it = pop_timed(&x->work, watching ? 2000 : -1, &stopped);
        if (it) {
            handle(x, it);
            free(it);
            watching = x->act;
        } else if (!stopped) {
            watching = reconcile(x);
        }
    }
    return NULL;
}

static void *repair_main(void *arg)
{
    struct vg_executor *x = arg;
    for (struct item *it; (it = pop_timed(&x->repair, -1, NULL));) {
        repair(x, it);
        free(it);
    }
    return NULL;
}

static void queue_init(struct queue *q)
{
    memset(q, 0, sizeof *q);
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->cond, NULL);
}

static void queue_stop(struct queue *q)
{
    pthread_mutex_lock(&q->lock);
    q->stop = true;
    pthread_cond_broadcast(&q->cond);
    pthread_mutex_unlock(&q->lock);
}

/* Incidents accepted but never acted on (the controller died in between). */
static void requeue_pending(struct vg_executor *x)
{
    json_t *open = vg_store_incidents(x->store, NULL, true, 0);
    for (size_t i = json_array_size(open); i-- > 0;) { /* oldest first */
        json_t *inc = json_array_get(open, i);
        if (strcmp(vg_json_str(inc, "state", ""), "open")) continue;
        struct vg_event e;
        char err[128];
        if (vg_event_from_json(json_object_get(inc, "event"), &e, err, sizeof err)) continue;
        vg_strlcpy(e.node, vg_json_str(inc, "node", ""), sizeof e.node);
        vg_info("resuming work on incident %lld (%s)", (long long)vg_json_int(inc, "id", 0), e.node);
        vg_executor_submit(x, vg_json_int(inc, "id", 0), &e);
    }
    json_decref(open);
}

struct vg_executor *vg_executor_start(struct vg_store *st, const struct vg_policy *p, const char *slurm_conf,
                                      bool act)
{
    struct vg_executor *x = vg_xcalloc(1, sizeof *x);
    x->store = st;
    x->policy = p;
    x->act = act;
    x->slurm.conf = x->repair_slurm.conf = slurm_conf;
    queue_init(&x->work);
    queue_init(&x->repair);
    pthread_mutex_init(&x->pool_lock, NULL);
    requeue_pending(x);
    pthread_create(&x->worker, NULL, worker_main, x);
    pthread_create(&x->repairer, NULL, repair_main, x);
    return x;
}

void vg_executor_submit(struct vg_executor *x, int64_t incident, const struct vg_event *e)
{
    struct item *it = vg_xcalloc(1, sizeof *it);
    it->incident = incident;
    it->e = *e;
    vg_strlcpy(it->node, e->node, sizeof it->node);
    push(&x->work, it);
}

void vg_executor_metrics(struct vg_executor *x, struct sbuf *out)
{
    sbuf_printf(out,
                "# HELP vigil_actions_total Incidents vigil isolated a node for.\n# TYPE vigil_actions_total counter\n"
                "vigil_actions_total %lu\n"
                "# HELP vigil_breaker_holds_total Incidents held by the breaker or by ownership.\n"
                "# TYPE vigil_breaker_holds_total counter\nvigil_breaker_holds_total %lu\n"
                "# HELP vigil_recorded_total Incidents only recorded (below drain_at).\n"
                "# TYPE vigil_recorded_total counter\nvigil_recorded_total %lu\n"
                "# HELP vigil_action_failures_total Slurm actions that failed.\n"
                "# TYPE vigil_action_failures_total counter\nvigil_action_failures_total %lu\n"
                "# HELP vigil_nodes_returned_total Nodes returned after a passing health check.\n"
                "# TYPE vigil_nodes_returned_total counter\nvigil_nodes_returned_total %lu\n"
                "# HELP vigil_slurm_commands_total Slurm commands issued.\n"
                "# TYPE vigil_slurm_commands_total counter\nvigil_slurm_commands_total %u\n"
                "# HELP vigil_slurm_reconcile_commands_total Of those, node-state reads while isolated nodes are out.\n"
                "# TYPE vigil_slurm_reconcile_commands_total counter\nvigil_slurm_reconcile_commands_total %u\n"
                "# HELP vigil_spare_pool_nodes Nodes in the hot-spare pool.\n# TYPE vigil_spare_pool_nodes gauge\n"
                "vigil_spare_pool_nodes %zu\n",
                x->actions, x->holds, x->recorded, x->failures, x->returned, x->slurm.calls + x->repair_slurm.calls,
                x->reconcile_calls, x->npool);
}

void vg_executor_stop(struct vg_executor *x)
{
    if (!x) return;
    queue_stop(&x->work);
    pthread_join(x->worker, NULL);
    queue_stop(&x->repair);
    pthread_join(x->repairer, NULL);
    for (size_t i = 0; i < x->npool; i++) free(x->pool[i]);
    free(x->pool);
    vg_isolation_log_free(&x->log);
    free(x);
}
