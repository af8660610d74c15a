/* executor.c — the executor's queues, threads, batches and retries; the
 * steps themselves are in remedy.c.  See executor.h. */
#include "controller/executor_int.h"
#include "controller/clock.h"
#include "util/condwait.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RETRY_FIRST_MS 1000
#define RETRY_MAX_MS 60000
#define RECONCILE_MS 2000
#define STOP_REPAIR_WAIT_S 5

void vg_exec_push(struct queue *q, struct item *it)
{
    pthread_mutex_lock(&q->lock);
    it->next = NULL;
    if (q->tail) q->tail->next = it;
    else q->head = it;
    q->tail = it;
    pthread_cond_signal(&q->cond);
    pthread_mutex_unlock(&q->lock);
}

/* Takes everything queued, waiting at most timeout_ms (< 0: until something
 * comes or the queue stops).  *stopped: the queue was stopped. */
static struct item *take_all(struct queue *q, int64_t timeout_ms, bool *stopped)
{
    pthread_mutex_lock(&q->lock);
    int64_t end = vg_mono_ms() + (timeout_ms < 0 ? 0 : timeout_ms);
    while (!q->head && !q->stop)
        if (timeout_ms < 0) pthread_cond_wait(&q->cond, &q->lock);
        else if (vg_cond_wait_ms(&q->cond, &q->lock, end - vg_mono_ms())) break;
    *stopped = q->stop;
    struct item *all = q->head;
    q->head = q->tail = NULL;
    pthread_mutex_unlock(&q->lock);
    return all;
}

static void item_free(struct item *it)
{
    if (!it) return;
    free(it->plan);
    free(it);
}

static void free_items(struct item *it)
{
    while (it) {
        struct item *next = it->next;
        item_free(it);
        it = next;
    }
}

/* A copy of it for another queue (the plan stays with it). */
static struct item *item_copy(const struct item *it)
{
    struct item *r = vg_xcalloc(1, sizeof *r);
    *r = *it;
    r->plan = NULL;
    r->next = NULL;
    return r;
}

/* Reads the scheduler's epoch (orch.h: changes when its controller restarts
 * or fails over) into x->epoch; 0, or -1 (unknown: none, or the call failed). */
static int epoch_read(struct vg_executor *x)
{
    if (!vg_orch_can(x->orch->ops, VG_CAP_EPOCH)) return -1;
    char e[sizeof x->epoch];
    pthread_mutex_lock(&x->orch_lock);
    int rc = x->orch->ops->epoch(x->orch, e, sizeof e);
    if (rc) vg_warn("the scheduler's epoch: %s", x->orch->err);
    pthread_mutex_unlock(&x->orch_lock);
    x->epoch_stale = rc != 0;
    if (rc) return -1;
    if (x->epoch[0] && strcmp(x->epoch, e)) vg_info("the scheduler restarted (epoch %s, was %s)", e, x->epoch);
    vg_strlcpy(x->epoch, e, sizeof x->epoch);
    return 0;
}

/* Another controller's stamp on a node vigil isolated ("[controller ID]"
 * after its reason): two controllers on one cluster each keep their own
 * breaker and act on each other's nodes.  Said loudly, once per controller. */
static void note_foreign(struct vg_executor *x)
{
    if (!x->id[0]) return;   /* its own id not read from the store: none is foreign */
    for (size_t i = 0; i < x->nview; i++) {
        const char *at = vg_orch_ours(&x->view[i]) ? strstr(x->view[i].reason, "[controller ") : NULL;
        char id[16];
        if (!at || sscanf(at, "[controller %15[0-9a-f]]", id) != 1 || !strcmp(id, x->id)) continue;
        size_t k = 0, n = __atomic_load_n(&x->nforeign, __ATOMIC_SEQ_CST);
        while (k < n && strcmp(x->foreign[k], id)) k++;
        if (k < n || n == sizeof x->foreign / sizeof *x->foreign) continue;
        vg_strlcpy(x->foreign[n], id, sizeof x->foreign[n]);
        __atomic_store_n(&x->nforeign, n + 1, __ATOMIC_SEQ_CST);
        vg_err("ALERT another vigil controller (%s; this one is %s) acts on this cluster: %s carries its reason "
               "\"%s\"; each keeps its own breaker and both act on every fault, so more nodes can go out than the "
               "policy allows: run one controller per cluster",
               id, x->id, x->view[i].name, x->view[i].reason);
    }
}

/* Reads the cluster view (every node's state) into x->view; periodic reads
 * are counted apart from those an incident causes.  0, or -1 with the
 * orchestrator's error in err.  After a failed call the scheduler's epoch
 * is read again with the next view (it may have restarted meanwhile). */
static int view_read(struct vg_executor *x, bool periodic, char *err, size_t n)
{
    struct vg_orch_node *ns = NULL;
    size_t nn = 0;
    x->view_tried = vg_mono_ms();
    pthread_mutex_lock(&x->orch_lock);
    int rc = x->orch->ops->nodes(x->orch, NULL, 0, &ns, &nn);
    if (periodic) x->reconcile_calls++;
    if (rc && err) vg_strlcpy(err, x->orch->err, n);
    pthread_mutex_unlock(&x->orch_lock);
    if (rc) {
        free(ns);
        x->epoch_stale = true;
        return -1;
    }
    free(x->view);
    x->view = ns;
    x->nview = nn;
    x->view_mono = vg_mono_ms();
    note_foreign(x);
    if (x->epoch_stale) epoch_read(x);
    return 0;
}

/* What vigil itself did to the nodes since the view was read. */
static void view_isolated(struct vg_executor *x, const struct vg_decision *d)
{
    for (size_t i = 0; i < x->nview; i++)
        if (vg_in_list(d->isolate, d->nisolate, x->view[i].name)) {
            struct vg_orch_node *n = &x->view[i];
            if (d->op == VG_OP_DOWN) n->down = true;
            else n->drain = true;
            vg_strlcpy(n->reason, d->reason, sizeof n->reason);
        }
}

static void describe(const struct vg_event *e, char *buf, size_t n)
{
    int l = e->code >= 0 ? snprintf(buf, n, "%s %d", e->kind, e->code) : snprintf(buf, n, "%s", e->kind);
    if (e->gpu >= 0 && (size_t)l < n) l += snprintf(buf + l, n - (size_t)l, " gpu %d", e->gpu);
    if (e->pci[0] && (size_t)l < n) snprintf(buf + l, n - (size_t)l, " %s", e->pci);
}

/* ---- retries -------------------------------------------------------------- */

/* Puts a failed item on the retry list, doubling its wait each time; returns
 * the wait (ms).  it belongs to the list from then on. */
static int64_t queue_retry(struct vg_executor *x, struct item *it)
{
    it->attempts++;
    int64_t wait = RETRY_FIRST_MS;
    for (int i = 1; i < it->attempts && wait < RETRY_MAX_MS; i++) wait *= 2;
    if (wait > RETRY_MAX_MS) wait = RETRY_MAX_MS;
    it->due = vg_mono_ms() + wait;
    x->failures++;
    struct item **p = &x->retries;
    while (*p && (*p)->due <= it->due) p = &(*p)->next;
    it->next = *p;
    *p = it;
    __atomic_add_fetch(&x->nretries, 1, __ATOMIC_SEQ_CST);
    return wait;
}

static void retry_later(struct vg_executor *x, struct item *it, const char *why)
{
    int64_t id = it->incident;
    char node[64];
    vg_strlcpy(node, it->node, sizeof node);
    int attempt = it->attempts + 1;
    int64_t wait = queue_retry(x, it);
    char detail[512];
    snprintf(detail, sizeof detail, "retrying in %lld s (attempt %d): %s", (long long)(wait / 1000), attempt, why);
    vg_store_set_failed(x->store, id, detail, attempt);
    vg_err("incident %lld on %s: %s (retrying in %lld s)", (long long)id, node, why, (long long)(wait / 1000));
}

/* Whether this controller may change the cluster now (the gate: the leader
 * inside its trust window); *term its term (0: no election). */
static bool may_act(struct vg_executor *x, int64_t *term)
{
    *term = 0;
    return !x->gate.may_act || x->gate.may_act(x->gate.ctx, term);
}

/* Whose reason it is: a second controller on the cluster shows, and a
 * stale leader's late write shows by its term. */
static void stamp(struct vg_executor *x, char *reason, size_t n)
{
    int64_t term;
    size_t l = strlen(reason);
    may_act(x, &term);
    if (term) snprintf(reason + l, n - l, " [controller %s term %lld]", x->id, (long long)term);
    else snprintf(reason + l, n - l, " [controller %s]", x->id);
}

/* Runs a table of steps on a; false when a required one failed (why in a->err). */
static bool run_steps(struct vg_executor *x, const struct vg_remedy_step *s, struct act *a)
{
    for (; s && s->name; s++) {
        int64_t term;
        if (!may_act(x, &term)) {
            snprintf(a->err, sizeof a->err, "this controller is no longer the leader (term %lld)", (long long)term);
            a->fenced = true;
            return false;
        }
        if (s->apply(x, a) < 0 && s->required) return false;
    }
    return true;
}

static void act_free(struct act *a)
{
    vg_strv_free(a->jobs, a->njobs);
    vg_strv_free(a->told, a->ntold);
    vg_strv_free(a->moved, a->nmoved);
    vg_decision_free(&a->d);
}

/* Puts a jobs read on the retry list; returns the wait (ms). */
static int64_t jobs_read_retry(struct vg_executor *x, struct item *r, const char *why)
{
    int64_t wait = queue_retry(x, r);
    vg_err("incident %lld on %s: the jobs read after the DOWN failed: %s (read again in %lld s)",
           (long long)r->incident, r->node, why, (long long)(wait / 1000));
    return wait;
}

/* The jobs read after a DOWN failed (the scheduler went away between the
 * two): the node is out and the incident stays isolated; the read alone is
 * tried again, with the time the node went out, so a job that ended there a
 * moment before is still found and requeued however late the scheduler
 * answers.  Said once in the incident's steps.  it is copied; the caller keeps it. */
static void jobs_read_later(struct vg_executor *x, const struct item *it, int64_t out_ms, const char *why)
{
    struct item *r = item_copy(it);
    r->attempts = 0;
    r->jobs_unread_ms = out_ms;
    vg_store_set_jobs_unread(x->store, it->incident, out_ms);   /* a restart reads them too */
    int64_t wait = jobs_read_retry(x, r, why);
    char detail[400];
    snprintf(detail, sizeof detail, "%s (read again in %lld s)", why, (long long)(wait / 1000));
    vg_store_step_named(x->store, it->incident, "jobs unread", vg_clock_ms(), detail);
}

/* A retried jobs read (jobs_read_later): list, tell, requeue on the node;
 * false when it failed again and it is back on the retry list. */
static bool late_jobs(struct vg_executor *x, struct item *it)
{
    struct act a = { .it = it, .out_ms = it->jobs_unread_ms };
    a.d.op = VG_OP_DOWN;
    a.d.isolate = vg_xcalloc(1, sizeof *a.d.isolate);
    a.d.isolate[a.d.nisolate++] = vg_xstrdup(it->node);
    bool ok = run_steps(x, vg_remedy_late_jobs_steps, &a);
    if (!ok) jobs_read_retry(x, it, a.err);
    else {
        vg_store_set_jobs_unread(x->store, it->incident, 0);
        if (!a.njobs && !a.nmoved && !a.ntold)
            vg_store_step_named(x->store, it->incident, "jobs read", vg_clock_ms(),
                                "none left on the node after the DOWN");
    }
    act_free(&a);
    return ok;
}

/* Retries that are due, appended to batch. */
static struct item *due_retries(struct vg_executor *x, struct item *batch)
{
    int64_t now = vg_mono_ms();
    struct item **tail = &batch;
    while (*tail) tail = &(*tail)->next;
    while (x->retries && x->retries->due <= now) {
        struct item *it = x->retries;
        x->retries = it->next;
        __atomic_sub_fetch(&x->nretries, 1, __ATOMIC_SEQ_CST);
        x->retried++;
        it->next = NULL;
        *tail = it;
        tail = &it->next;
    }
    return batch;
}

/* ---- one batch ------------------------------------------------------------ */

/* States a batch leaves on incidents nothing more happens to (recorded,
 * held, dry run), written together in one transaction when the batch ends:
 * a burst of new incidents costs the store one commit, not one each. */
struct states {
    int64_t *ids;
    enum vg_inc_state *state;
    char **s;                  /* the details */
    size_t n, cap;
};

static void states_add(struct states *st, int64_t id, enum vg_inc_state state, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void states_add(struct states *st, int64_t id, enum vg_inc_state state, const char *fmt, ...)
{
    if (st->n == st->cap) {
        st->cap = st->cap ? 2 * st->cap : 16;
        st->ids = vg_xrealloc(st->ids, st->cap * sizeof *st->ids);
        st->state = vg_xrealloc(st->state, st->cap * sizeof *st->state);
        st->s = vg_xrealloc(st->s, st->cap * sizeof *st->s);
    }
    st->state[st->n] = state;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&st->s[st->n], fmt, ap) < 0) st->s[st->n] = NULL;
    va_end(ap);
    st->ids[st->n++] = id;
}

static void states_flush(struct vg_executor *x, struct states *st)
{
    if (st->n && vg_store_set_states(x->store, st->ids, st->state, (const char *const *)st->s, st->n))
        vg_err("recording %zu incident state(s) failed", st->n);
    for (size_t i = 0; i < st->n; i++) free(st->s[i]);
    free(st->s);
    free(st->state);
    free(st->ids);
    *st = (struct states){ 0 };
}

static int by_severity(const void *a, const void *b)
{
    const struct item *x = *(struct item *const *)a, *y = *(struct item *const *)b;
    return (int)y->e.action - (int)x->e.action;
}

/* The cluster as the policy sees it; views point into ns. */
static struct vg_node_view *views_of(struct vg_executor *x, const struct vg_orch_node *ns, size_t nn)
{
    struct vg_node_view *v = vg_xcalloc(nn + 1, sizeof *v);
    pthread_mutex_lock(&x->pool_lock);
    for (size_t i = 0; i < nn; i++)
        v[i] = (struct vg_node_view){ .name = ns[i].name,
                                      .unavailable = ns[i].drain || ns[i].down,
                                      .ours = vg_orch_ours(&ns[i]),
                                      .spare = vg_in_list(x->pool, x->npool, ns[i].name),
                                      .domain = ns[i].domain };
    pthread_mutex_unlock(&x->pool_lock);
    return v;
}

/* The decision as the store keeps it (the plan): op, the nodes it takes
 * out, the spares it claims, the reason, the note. */
static char *plan_json(const struct vg_decision *d)
{
    json_t *iso = json_array(), *pro = json_array();
    for (size_t i = 0; i < d->nisolate; i++) json_array_append_new(iso, json_string(d->isolate[i]));
    for (size_t i = 0; i < d->npromote; i++) json_array_append_new(pro, json_string(d->promote[i]));
    json_t *j = json_pack("{s:s, s:o, s:o, s:s, s:s}", "op", d->op == VG_OP_DOWN ? "down" : "drain", "isolate", iso,
                          "promote", pro, "reason", d->reason, "note", d->note);
    char *text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    return text;
}

static void strv_from(const json_t *a, char ***v, size_t *n)
{
    size_t i;
    json_t *e;
    *v = vg_xcalloc(json_array_size(a) + 1, sizeof **v);
    *n = 0;
    json_array_foreach(a, i, e) if (json_is_string(e)) (*v)[(*n)++] = vg_xstrdup(json_string_value(e));
}

/* A committed plan back into a decision; -1 when it is not one. */
static int plan_load(const char *text, struct vg_decision *d)
{
    memset(d, 0, sizeof *d);
    json_t *j = json_loads(text, 0, NULL);
    const char *op = vg_json_str(j, "op", "");
    int rc = -1;
    if (json_is_array(json_object_get(j, "isolate")) && (!strcmp(op, "down") || !strcmp(op, "drain"))) {
        d->op = !strcmp(op, "down") ? VG_OP_DOWN : VG_OP_DRAIN;
        strv_from(json_object_get(j, "isolate"), &d->isolate, &d->nisolate);
        strv_from(json_object_get(j, "promote"), &d->promote, &d->npromote);
        vg_strlcpy(d->reason, vg_json_str(j, "reason", VG_REASON_PREFIX), sizeof d->reason);
        vg_strlcpy(d->note, vg_json_str(j, "note", ""), sizeof d->note);
        rc = 0;
    }
    json_decref(j);
    return rc;
}

/* The epoch to stamp on an incident whose node vigil just isolated: the
 * scheduler's as last read (read now when never read). */
static const char *epoch_now(struct vg_executor *x)
{
    if (!x->epoch[0] || x->epoch_stale) epoch_read(x);
    return x->epoch[0] ? x->epoch : NULL;
}

/* Decides and applies one incident (or, resumed after a restart, applies the
 * plan committed before it); false when it failed and goes to retry.  The
 * plan is committed before the first step changes the cluster, so a restart
 * at any moment finds the decision, its nodes and its spares in the store. */
static bool act_on(struct vg_executor *x, struct item *it, struct vg_node_view *views, size_t nn, struct states *st)
{
    struct act a = { .it = it };
    describe(&it->e, a.what, sizeof a.what);
    bool resumed = it->plan && !plan_load(it->plan, &a.d);
    free(it->plan);
    it->plan = NULL;
    if (!resumed) {
        pthread_mutex_lock(&x->pool_lock);
        vg_policy_decide(x->policy, views, nn, it->node, it->e.action, a.what, vg_clock_boot_ms(), &x->log, &a.d);
        pthread_mutex_unlock(&x->pool_lock);
        if (a.d.nisolate && x->id[0]) stamp(x, a.d.reason, sizeof a.d.reason);
    }
    bool ok = true;
    if (a.d.held) {
        x->holds++;
        states_add(st, it->incident, VG_INC_HELD, "%s", a.d.note);
        vg_err("ALERT incident %lld on %s (%s): %s", (long long)it->incident, it->node, a.what, a.d.note);
    } else if (!x->act) {
        states_add(st, it->incident, VG_INC_DRY_RUN, "would %s (%s)", a.d.op == VG_OP_DOWN ? "down and requeue" : "drain",
                   a.d.reason);
    } else if (!a.d.nisolate) {
        states_add(st, it->incident, VG_INC_ISOLATED, "%s", a.d.note);
    } else {
        const char *epoch = epoch_now(x);
        if (!resumed) {
            char *plan = plan_json(&a.d);
            if (vg_store_set_plan(x->store, it->incident, plan, vg_clock_ms(), vg_clock_boot_id(), vg_clock_boot_ms(),
                                  epoch)) {
                if (vg_store_fenced(x->store)) {
                    ok = false;   /* not this controller's to act on: the leader's */
                    a.fenced = true;
                    snprintf(a.err, sizeof a.err, "%s", vg_store_error(x->store));
                } else {
                    vg_err("incident %lld: the plan is not in the store (%s): a restart now would decide again",
                           (long long)it->incident, vg_store_error(x->store));
                }
            }
            free(plan);
        }
        if (ok) ok = run_steps(x, vg_remedy_steps(a.d.op, x->orch->ops), &a);
        if (ok) {
            x->actions++;
            int64_t from = it->e.time_ms ? it->e.time_ms : it->e.seen_ms;
            if (from > 0) vg_histogram_observe(&x->to_isolated, (double)(vg_now_ms() - from) / 1000.0);
            it->isolated_ms = vg_clock_ms();
            vg_store_set_state(x->store, it->incident, VG_INC_ISOLATED, a.d.note);
            if (a.jobs_unread) jobs_read_later(x, it, a.out_ms, a.err);
            /* later decisions (in this batch, and those the view serves until it is read again) see
             * these nodes out */
            for (size_t i = 0; i < nn; i++)
                if (vg_in_list(a.d.isolate, a.d.nisolate, views[i].name)) views[i].unavailable = views[i].ours = true;
                else if (vg_in_list(a.d.promote, a.d.npromote, views[i].name)) views[i].spare = false;
            view_isolated(x, &a.d);
            if (x->policy->ladder.nrung || x->policy->healthcheck) {
                struct item *r = item_copy(it);
                r->rung = -1;
                vg_exec_repairing(x, r->incident, true);
                vg_exec_push(&x->repair, r);
            }
        } else {
            pthread_mutex_lock(&x->pool_lock);   /* the lock vg_policy_decide's log is used under */
            vg_isolation_log_undo(&x->log, &a.d);
            pthread_mutex_unlock(&x->pool_lock);
            if (a.fenced) {
                /* as the store has it (open, or acting on a plan committed under
                 * a lease then valid), for the leader: its store watch, or its
                 * start, takes it up */
                vg_warn("incident %lld on %s: %s: left to the leader", (long long)it->incident, it->node, a.err);
                item_free(it);
            } else {
                retry_later(x, it, a.err);
            }
        }
    }
    act_free(&a);
    return ok;
}

static void handle_batch(struct vg_executor *x, struct item *batch)
{
    size_t n = 0, nrec = 0, nact = 0;
    for (struct item *it = batch; it; it = it->next) n++;
    struct item **rec = vg_xcalloc(n + 1, sizeof *rec), **act = vg_xcalloc(n + 1, sizeof *act);
    for (struct item *it = batch, *next; it; it = next) {
        next = it->next;
        if (it->jobs_unread_ms) {   /* a jobs read tried again: no decision, no cluster read */
            if (late_jobs(x, it)) item_free(it);
        } else if (vg_policy_acts(x->policy, it->e.action)) act[nact++] = it;
        else rec[nrec++] = it;
    }
    /* the actions first: a pile of records never delays a node going out */
    struct states st = { 0 };
    if (nact) {
        qsort(act, nact, sizeof *act, by_severity);
        /* the cluster read afresh, or the view the worker keeps when the policy allows one
         * (view_max_age: read every half of it, every RECONCILE_MS while nodes are out, and
         * updated with what vigil did), so an incident costs no read of every node.  A dry run
         * goes on without it. */
        char err[256] = "";
        int rc = 0;
        int64_t max_age = x->policy->view_max_age_ms;
        if (!max_age || !x->view_mono || vg_mono_ms() - x->view_mono > max_age)
            rc = view_read(x, false, err, sizeof err);
        size_t nn = rc ? 0 : x->nview;
        struct vg_node_view *views = views_of(x, x->view, nn);
        for (size_t i = 0; i < nact; i++) {
            struct item *it = act[i];
            if (rc && x->act) {
                retry_later(x, it, err);
                act[i] = NULL;
            } else if (!act_on(x, it, views, nn, &st)) act[i] = NULL;   /* now on the retry list */
        }
        free(views);
    }
    for (size_t i = 0; i < nrec; i++)
        states_add(&st, rec[i]->incident, VG_INC_RECORDED, "%s: recorded only (below drain_at)",
                   vg_action_name(rec[i]->e.action));
    x->recorded += nrec;
    states_flush(x, &st);
    for (size_t i = 0; i < nact; i++) item_free(act[i]);
    for (size_t i = 0; i < nrec; i++) item_free(rec[i]);
    free(act);
    free(rec);
}

/* Puts back vigil's isolation of a node the scheduler lost (it restarted or
 * failed over since vigil last knew its state there): the same DOWN/DRAIN
 * and reason as the incident's plan. */
static void reassert(struct vg_executor *x, const json_t *inc, const char *was)
{
    const char *node = vg_json_str(inc, "node", "");
    int64_t id = vg_json_int(inc, "id", 0);
    struct vg_decision d;
    const json_t *plan = json_object_get(inc, "plan");
    char *text = plan ? json_dumps(plan, JSON_COMPACT) : NULL;
    if (!text || plan_load(text, &d)) {   /* a store from before plans: DOWN with a reason naming the incident */
        memset(&d, 0, sizeof d);
        d.op = VG_OP_DOWN;
        snprintf(d.reason, sizeof d.reason, VG_REASON_PREFIX " incident %lld", (long long)id);
        stamp(x, d.reason, sizeof d.reason);
    }
    free(text);
    char err[256] = "";
    pthread_mutex_lock(&x->orch_lock);
    int rc = x->orch->ops->isolate(x->orch, &node, 1, d.op == VG_OP_DOWN ? VG_ISOLATE_DOWN : VG_ISOLATE_DRAIN,
                                   d.reason);
    if (rc) vg_strlcpy(err, x->orch->err, sizeof err);
    pthread_mutex_unlock(&x->orch_lock);
    char detail[600];
    if (rc) {
        vg_err("incident %lld: %s lost vigil's %s when the scheduler restarted; putting it back failed: %s "
               "(tried again in %d s)", (long long)id, node, d.op == VG_OP_DOWN ? "DOWN" : "DRAIN", err,
               RECONCILE_MS / 1000);
    } else {
        x->reasserted++;
        snprintf(detail, sizeof detail, "%s %s (%s): the scheduler lost it (epoch %s, now %s)",
                 d.op == VG_OP_DOWN ? "DOWN" : "DRAIN", node, d.reason, was, x->epoch);
        vg_store_step_named(x->store, id, "re-isolated", vg_clock_ms(), detail);
        vg_store_set_epoch(x->store, id, x->epoch);
        vg_warn("incident %lld: %s", (long long)id, detail);
        for (size_t i = 0; i < x->nview; i++)   /* the view: this node is out again */
            if (!strcmp(x->view[i].name, node)) {
                if (d.op == VG_OP_DOWN) x->view[i].down = true;
                else x->view[i].drain = true;
                vg_strlcpy(x->view[i].reason, d.reason, sizeof x->view[i].reason);
            }
    }
    vg_decision_free(&d);
}

/* A node vigil isolated that is back in service.  Either the scheduler lost
 * vigil's state (slurmctld restarted from an old state or failed over: its
 * epoch changed since the incident last saw the node out) — the state is put
 * back — or someone resumed it while the scheduler stayed up (an operator,
 * a drill): the incident closes with a `returned` step, so the next fault on
 * the node opens a new incident.  One `nodes` call for all nodes (the view
 * read afresh), only while such incidents exist, and one epoch read when a
 * node is found back.  Incidents under repair are the repair's. */
static bool reconcile(struct vg_executor *x)
{
    json_t *work = vg_store_work(x->store);
    bool watching = false, read = false, epoch_read_now = false;
    json_t *inc;
    size_t i;
    json_array_foreach(work, i, inc) {
        int st = vg_inc_state_parse(vg_json_str(inc, "state", ""));
        if (st != VG_INC_ISOLATED && st != VG_INC_UNREPAIRED && st != VG_INC_RMA) continue;
        watching = true;
        if (!read) {
            if (view_read(x, true, NULL, 0)) break;
            read = true;
        }
        const char *node = vg_json_str(inc, "node", ""), *was = vg_json_str(inc, "epoch", "");
        const struct vg_orch_node *n = NULL;
        for (size_t k = 0; k < x->nview && !n; k++)
            if (!strcmp(x->view[k].name, node)) n = &x->view[k];
        if (!n) continue;
        int64_t id = vg_json_int(inc, "id", 0);
        if (n->drain || n->down) {   /* still out: the epoch it was last seen out in */
            if (x->epoch[0] && !x->epoch_stale && vg_orch_ours(n) && strcmp(was, x->epoch))
                vg_store_set_epoch(x->store, id, x->epoch);
            continue;
        }
        /* back in service: did the scheduler restart since vigil last knew the node out? */
        if (was[0] && vg_orch_can(x->orch->ops, VG_CAP_EPOCH) && !epoch_read_now) {
            if (epoch_read(x)) continue;   /* cannot tell now: the next round */
            epoch_read_now = true;
        }
        if (was[0] && x->epoch[0] && strcmp(was, x->epoch)) {
            reassert(x, inc, was);
            continue;
        }
        int64_t now = vg_clock_ms();
        vg_store_step(x->store, id, VG_STEP_RETURNED, now, "back in service outside vigil (resumed by someone else)");
        json_t *full = vg_store_incident(x->store, id);
        vg_exec_observe_mttr(x, full, now);
        json_decref(full);
        vg_store_set_state(x->store, id, VG_INC_CLOSED, "resumed by someone else");
    }
    json_decref(work);
    return watching;
}

static void *worker_main(void *arg)
{
    struct vg_executor *x = arg;
    vg_pool_init(x);
    int64_t every = x->policy->view_max_age_ms / 2;   /* 0: no kept view */
    /* the first look: the scheduler's epoch, and another controller's nodes */
    if (every || x->act) view_read(x, true, NULL, 0);
    __atomic_store_n(&x->busy, false, __ATOMIC_SEQ_CST);   /* set by vg_executor_start */
    bool watching = x->act, stopped = false, looking = x->act && x->policy->ladder.new_node_suite[0];
    int64_t next_reconcile = vg_mono_ms() + RECONCILE_MS, next_look = vg_mono_ms();
    while (!stopped) {
        int64_t now = vg_mono_ms(), wait = -1;
        if (every && x->view_tried + every <= now) {
            view_read(x, true, NULL, 0);
            continue;
        }
        if (every) wait = x->view_tried + every - now;
        if (x->retries) {
            int64_t r = x->retries->due > now ? x->retries->due - now : 0;
            if (wait < 0 || r < wait) wait = r;
        }
        if (watching) {
            int64_t r = next_reconcile > now ? next_reconcile - now : 0;
            if (wait < 0 || r < wait) wait = r;
        }
        if (looking) {
            int64_t r = next_look > now ? next_look - now : 0;
            if (wait < 0 || r < wait) wait = r;
        }
        struct item *batch = take_all(&x->work, wait, &stopped);
        if (stopped) {
            free_items(batch);   /* in the store already: restart recovery takes them */
            break;
        }
        batch = due_retries(x, batch);
        if (batch) {
            __atomic_store_n(&x->busy, true, __ATOMIC_SEQ_CST);
            handle_batch(x, batch);
            __atomic_store_n(&x->busy, false, __ATOMIC_SEQ_CST);
            watching = x->act;
        }
        if (watching && vg_mono_ms() >= next_reconcile) {
            watching = reconcile(x) || x->retries;
            next_reconcile = vg_mono_ms() + RECONCILE_MS;
        }
        if (looking && vg_mono_ms() >= next_look) {
            vg_newnode_look(x);
            next_look = vg_mono_ms() + x->policy->ladder.new_node_every_ms;
        }
    }
    free_items(x->retries);
    x->retries = NULL;
    free(x->view);
    x->view = NULL;
    x->nview = 0;
    return NULL;
}

static void *repair_main(void *arg)
{
    struct vg_executor *x = arg;
    bool stopped = false;
    while (!stopped) {
        struct item *batch = take_all(&x->repair, -1, &stopped);
        for (struct item *it = batch; it && !stopped; it = it->next) {
            vg_remedy_repair(x, it);
            vg_exec_repairing(x, it->incident, false);
        }
        free_items(batch);
    }
    return NULL;
}

static void queue_init(struct queue *q)
{
    memset(q, 0, sizeof *q);
    pthread_mutex_init(&q->lock, NULL);
    vg_cond_init_mono(&q->cond);   /* a wall step changes nothing in the queue's waits */
}

static void queue_stop(struct queue *q)
{
    pthread_mutex_lock(&q->lock);
    q->stop = true;
    pthread_cond_broadcast(&q->cond);
    pthread_mutex_unlock(&q->lock);
}

/* The item of a stored incident (its event as accepted); NULL when the
 * event does not read back. */
struct item *vg_exec_stored_item(const json_t *inc)
{
    struct vg_event e;
    char err[128];
    if (vg_event_from_json(json_object_get(inc, "event"), &e, err, sizeof err)) return NULL;
    vg_strlcpy(e.node, vg_json_str(inc, "node", ""), sizeof e.node);
    struct item *it = vg_xcalloc(1, sizeof *it);
    it->incident = vg_json_int(inc, "id", 0);
    it->e = e;
    vg_strlcpy(it->node, e.node, sizeof it->node);
    it->rung = -1;
    return it;
}

/* At start: every incident the store says is not finished is taken up again,
 * once, by the rule of its state (docs/controller.md, "Restarts"):
 *   open, failed    decided and acted on (failed: its attempts count on);
 *   acting          the committed plan's steps run again (each is idempotent:
 *                   the same DOWN and reason, the jobs read after it, the
 *                   requeue, the spares it claimed), nothing decided again;
 *   isolated        the node is out: its repair starts (when the policy has one);
 *   repairing       the repair goes on at the rung it was at: that rung's
 *                   command runs again unless it had finished ok, then its
 *                   health check runs;
 *   and wherever a jobs read after the DOWN was still to do, it is done.
 * Unrepaired and RMA incidents wait for a human (reconcile watches them). */
static void resume_work(struct vg_executor *x)
{
    bool repairs = x->policy->ladder.nrung || x->policy->healthcheck;
    json_t *work = vg_store_work(x->store), *inc;
    size_t i;
    json_array_foreach(work, i, inc) {
        int st = vg_inc_state_parse(vg_json_str(inc, "state", ""));
        int64_t id = vg_json_int(inc, "id", 0), unread = vg_json_int(inc, "jobs_unread", 0);
        struct item *it = vg_exec_stored_item(inc);
        if (it) vg_exec_take(x, it->incident);
        if (!it) {
            vg_err("incident %lld: its event does not read back; left as it is", (long long)id);
            continue;
        }
        const json_t *plan = json_object_get(inc, "plan");
        const char *what = NULL;
        if (st == VG_INC_OPEN || st == VG_INC_FAILED) {
            it->attempts = (int)vg_json_int(inc, "attempts", 0);
            what = "deciding again";
        } else if (st == VG_INC_ACTING && json_is_object(plan)) {
            it->plan = json_dumps(plan, JSON_COMPACT);
            what = "its committed plan runs again";
        } else if (st == VG_INC_ACTING) {
            what = "deciding again (no plan kept)";
        } else if ((st == VG_INC_ISOLATED && json_is_true(json_object_get(inc, "took_out")) && repairs) ||
                   st == VG_INC_REPAIRING) {
            it->rung = (int)vg_json_int(inc, "rung", -1);
            it->rung_done = json_is_true(json_object_get(inc, "rung_done"));
            vg_warn("resuming incident %lld (%s, %s): repair%s", (long long)id, it->node, vg_inc_state_name(st),
                    it->rung < 0 ? "" : it->rung_done ? ": the health check after its last rung" : " at its last rung");
            vg_exec_repairing(x, id, true);
            vg_exec_push(&x->repair, item_copy(it));
        }
        if (unread) {
            struct item *r = item_copy(it);
            r->jobs_unread_ms = unread;
            vg_warn("resuming incident %lld (%s): the jobs read after the DOWN", (long long)id, it->node);
            vg_exec_push(&x->work, r);
        }
        if (what) {
            vg_warn("resuming incident %lld (%s, %s): %s", (long long)id, it->node, vg_inc_state_name(st), what);
            vg_exec_push(&x->work, it);
        } else
            item_free(it);
    }
    json_decref(work);
}

/* The breaker's window as the store has it: the nodes decisions took out
 * within it, their times on this boot's clock (a store from another boot:
 * from the stamps, never in the future). */
static void breaker_load(struct vg_executor *x)
{
    int64_t now = vg_clock_ms(), boot_now = vg_clock_boot_ms(), window = x->policy->breaker_window_ms;
    json_t *iso = vg_store_isolations_since(x->store, now - window), *e;
    size_t i;
    json_array_foreach(iso, i, e) {
        int64_t at = vg_json_int(e, "at", 0), boot_ms = vg_json_int(e, "boot_ms", 0);
        int64_t age = now > at ? now - at : 0;
        bool same_boot = boot_ms > 0 && !strcmp(vg_json_str(e, "boot", ""), vg_clock_boot_id()) && boot_ms <= boot_now;
        vg_isolation_log_add(&x->log, same_boot ? boot_ms : boot_now - age, vg_json_str(e, "node", ""));
    }
    if (json_array_size(iso))
        vg_info("breaker: %zu isolation(s) within the last %lld s, from the store", json_array_size(iso),
                (long long)(window / 1000));
    json_decref(iso);
}

struct vg_executor *vg_executor_start(struct vg_store *st, const struct vg_policy *p, struct vg_orch *orch,
                                      bool act, const struct vg_exec_gate *gate)
{
    struct vg_executor *x = vg_xcalloc(1, sizeof *x);
    if (gate) x->gate = *gate;
    pthread_mutex_init(&x->taken_lock, NULL);
    x->store = st;
    x->policy = p;
    x->orch = orch;
    x->act = act;
    queue_init(&x->work);
    queue_init(&x->repair);
    pthread_mutex_init(&x->pool_lock, NULL);
    pthread_mutex_init(&x->orch_lock, NULL);
    vg_histogram_init(&x->to_isolated);
    vg_histogram_init(&x->to_requeued);
    vg_histogram_init(&x->repair_s);
    vg_histogram_init(&x->mttr);
    if (vg_store_controller_id(st, x->id, sizeof x->id)) vg_warn("no controller id kept in the store: %s",
                                                                 vg_store_error(st));
    x->epoch_stale = true;   /* read with the first view */
    breaker_load(x);
    resume_work(x);
    if (gate) vg_exec_watch_start(x, 200);   /* several controllers: the others' intake too */
    x->busy = true;   /* until the worker has the spare pool and its first view of the cluster */
    pthread_create(&x->worker, NULL, worker_main, x);
    pthread_create(&x->repairer, NULL, repair_main, x);
    return x;
}

void vg_executor_submit(struct vg_executor *x, int64_t incident, const struct vg_event *e)
{
    if (!vg_exec_take(x, incident)) return;   /* the store watch took it up first */
    struct item *it = vg_xcalloc(1, sizeof *it);
    it->incident = incident;
    it->e = *e;
    vg_strlcpy(it->node, e->node, sizeof it->node);
    vg_exec_push(&x->work, it);
}

bool vg_executor_idle(struct vg_executor *x, int timeout_ms)
{
    for (int64_t end = vg_mono_ms() + timeout_ms;; vg_sleep_ms(5)) {
        pthread_mutex_lock(&x->work.lock);
        bool empty = !x->work.head;
        pthread_mutex_unlock(&x->work.lock);
        if (empty && !__atomic_load_n(&x->busy, __ATOMIC_SEQ_CST) && !__atomic_load_n(&x->nretries, __ATOMIC_SEQ_CST))
            return true;
        if (vg_mono_ms() >= end) return false;
    }
}

void vg_executor_metrics(struct vg_executor *x, struct sbuf *out)
{
    const char *o = x->orch->ops->name;
    sbuf_printf(out,
                "# HELP vigil_actions_total Incidents vigil isolated a node for.\n# TYPE vigil_actions_total counter\n"
                "vigil_actions_total %lu\n"
                "# HELP vigil_breaker_holds_total Incidents held by the breaker or by ownership.\n"
                "# TYPE vigil_breaker_holds_total counter\nvigil_breaker_holds_total %lu\n"
                "# HELP vigil_recorded_total Incidents only recorded (below drain_at).\n"
                "# TYPE vigil_recorded_total counter\nvigil_recorded_total %lu\n"
                "# HELP vigil_action_failures_total Actions that failed (each is retried).\n"
                "# TYPE vigil_action_failures_total counter\nvigil_action_failures_total %lu\n"
                "# HELP vigil_action_retries_total Retries of failed actions.\n"
                "# TYPE vigil_action_retries_total counter\nvigil_action_retries_total %lu\n"
                "# HELP vigil_action_retries_pending Failed actions waiting for their next try.\n"
                "# TYPE vigil_action_retries_pending gauge\nvigil_action_retries_pending %zu\n"
                "# HELP vigil_nodes_returned_total Nodes returned after a passing health check.\n"
                "# TYPE vigil_nodes_returned_total counter\nvigil_nodes_returned_total %lu\n"
                "# HELP vigil_orchestrator_calls_total Requests to the orchestrator.\n"
                "# TYPE vigil_orchestrator_calls_total counter\nvigil_orchestrator_calls_total{orchestrator=\"%s\"} %u\n"
                "# HELP vigil_orchestrator_reconcile_calls_total Of those, the periodic reads of every node's state (every 2 s "
                "while isolated nodes are out; the kept view's, when the policy sets view_max_age), not caused by an "
                "incident.\n"
                "# TYPE vigil_orchestrator_reconcile_calls_total counter\n"
                "vigil_orchestrator_reconcile_calls_total{orchestrator=\"%s\"} %u\n"
                "# HELP vigil_spare_pool_nodes Nodes in the hot-spare pool.\n# TYPE vigil_spare_pool_nodes gauge\n"
                "vigil_spare_pool_nodes %zu\n"
                "# HELP vigil_reisolated_total Nodes isolated again after the scheduler lost vigil's state on them (it "
                "restarted or failed over).\n# TYPE vigil_reisolated_total counter\nvigil_reisolated_total %lu\n"
                "# HELP vigil_other_controllers Other vigil controllers whose stamp is on this cluster's nodes.\n"
                "# TYPE vigil_other_controllers gauge\nvigil_other_controllers %zu\n",
                x->actions, x->holds, x->recorded, x->failures, x->retried, __atomic_load_n(&x->nretries, __ATOMIC_SEQ_CST),
                x->returned, o, x->orch->calls, o, x->reconcile_calls, x->npool, x->reasserted,
                __atomic_load_n(&x->nforeign, __ATOMIC_SEQ_CST));
    vg_histogram_print(&x->to_isolated, "vigil_fault_to_isolated_seconds",
                       "From the fault's time (as the node logged it) to the node isolated.", out);
    vg_histogram_print(&x->to_requeued, "vigil_fault_to_requeued_seconds",
                       "From the fault's time to its node's jobs requeued (the scheduler restarts them).", out);
    vg_histogram_print(&x->repair_s, "vigil_repair_seconds",
                       "From the node isolated to back in service through the health check (MTTR's repairs).", out);
    vg_histogram_print(&x->mttr, "vigil_detected_to_returned_seconds",
                       "MTTR: from the incident detected to its node back in service (by vigil or by someone else).",
                       out);
    vg_executor_ladder_metrics(x, out);
}

void vg_executor_stop(struct vg_executor *x)
{
    if (!x) return;
    vg_exec_watch_stop(x);
    queue_stop(&x->work);
    pthread_join(x->worker, NULL);
    queue_stop(&x->repair);
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += STOP_REPAIR_WAIT_S;
    if (!vg_newnode_stop(x, vg_mono_ms() + STOP_REPAIR_WAIT_S * 1000)) {
        vg_warn("stopping with a new node's burn-in still running (the node stays drained; the next start runs it "
                "again)");
        return;
    }
    if (pthread_clockjoin_np(x->repairer, NULL, CLOCK_MONOTONIC, &until)) {
        /* a repair command is still running: leave it to its own timeout;
         * the process is on its way out */
        vg_warn("stopping with a repair still running (its incident stays isolated)");
        return;
    }
    free_items(x->repair.head);
    free(x->repairing);
    for (size_t i = 0; i < x->npool; i++) free(x->pool[i]);
    free(x->pool);
    vg_isolation_log_free(&x->log);
    free(x->taken);
    free(x);
}
