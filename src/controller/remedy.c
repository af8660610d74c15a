/* remedy.c — the remediation steps, one small struct of function pointers
 * each, and the table of steps per verdict: DOWN = list the node's jobs,
 * tell those that hold spares of their own, isolate, requeue the rest,
 * promote spares (on a scheduler whose DOWN requeues the running jobs
 * itself, isolate first: the jobs listed after it are those it left);
 * DRAIN = isolate, promote spares.
 * Then the repair that follows an isolation: the repair ladder's rungs
 * (ladder.h), each followed by the health check, back to the spare pool on
 * the first pass, the RMA hand-off (rma.h) when none passes.  A new action is one function, one struct, one
 * line in a table (and its test in tests/unit/test_executor.c). */
#include "controller/executor_int.h"
#include "controller/clock.h"
#include "controller/burnin_hist.h"
#include "controller/rma.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/sbuf.h"
#include "util/spawn.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sets incident id's state, its detail formatted. */
static void set_state(struct vg_executor *x, int64_t id, enum vg_inc_state state, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void set_state(struct vg_executor *x, int64_t id, enum vg_inc_state state, const char *fmt, ...)
{
    char s[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s, sizeof s, fmt, ap);
    va_end(ap);
    vg_store_set_state(x->store, id, state, s);
}

/* Calls the orchestrator under the lock, copying its error into err. */
#define ORCH(x, errbuf, call)                                                     \
    ({                                                                            \
        pthread_mutex_lock(&(x)->orch_lock);                                      \
        int rc_ = (call);                                                         \
        if (rc_ < 0) vg_strlcpy((errbuf), (x)->orch->err, sizeof(errbuf));       \
        pthread_mutex_unlock(&(x)->orch_lock);                                    \
        rc_;                                                                      \
    })

static char *join(char *const *v, size_t n)
{
    struct sbuf b = SBUF_INIT;
    for (size_t i = 0; i < n; i++) sbuf_printf(&b, "%s%s", i ? "," : "", v[i]);
    return sbuf_take(&b);
}

/* The jobs on the nodes: listed before anything changes, or, where the
 * scheduler's DOWN requeues them itself, right after it (those it left).  A
 * read that fails after the nodes went out is the only way to the job that
 * ended there a moment before: the executor tries it again on its own. */
static int step_jobs(struct vg_executor *x, struct act *a)
{
    const char *const *iso = (const char *const *)a->d.isolate;
    if (ORCH(x, a->err, x->orch->ops->jobs_on(x->orch, iso, a->d.nisolate, a->it->e.jobs, a->out_ms, &a->jobs,
                                               &a->njobs, &a->moved, &a->nmoved)) < 0) {
        vg_warn("incident %lld: cannot list jobs: %s", (long long)a->it->incident, a->err);
        a->jobs_unread = a->out_ms != 0;
        return -1;
    }
    return a->njobs || a->nmoved ? 0 : 1;
}

/* Jobs that keep spares inside their allocation are told, before their node
 * goes out, instead of requeued (orch tell); one that cannot be told is
 * requeued. */
static int step_tell(struct vg_executor *x, struct act *a)
{
    if (!vg_orch_can(x->orch->ops, VG_CAP_TELL) || !a->njobs) return 1;
    const char *const *iso = (const char *const *)a->d.isolate;
    size_t keep = 0;
    for (size_t i = 0; i < a->njobs; i++) {
        char err[256];
        int told = ORCH(x, err, x->orch->ops->tell(x->orch, a->jobs[i], iso, a->d.nisolate));
        if (told < 0) vg_warn("incident %lld: telling job %s: %s (requeued instead)", (long long)a->it->incident,
                              a->jobs[i], err);
        if (told == 1) {
            a->told = vg_xrealloc(a->told, (a->ntold + 1) * sizeof *a->told);
            a->told[a->ntold++] = a->jobs[i];
        } else
            a->jobs[keep++] = a->jobs[i];
    }
    a->njobs = keep;
    return a->ntold ? 0 : 1;
}

static int step_isolate(struct vg_executor *x, struct act *a)
{
    if (!a->d.nisolate) return 1;
    enum vg_isolate how = a->d.op == VG_OP_DOWN ? VG_ISOLATE_DOWN : VG_ISOLATE_DRAIN;
    if (ORCH(x, a->err, x->orch->ops->isolate(x->orch, (const char *const *)a->d.isolate, a->d.nisolate, how,
                                               a->d.reason)) < 0)
        return -1;
    char detail[1024];
    snprintf(detail, sizeof detail, "%s %s (%s)%s%s", how == VG_ISOLATE_DOWN ? "DOWN" : "DRAIN", a->d.isolate[0],
             a->d.reason, a->d.note[0] ? "; " : "", a->d.note);
    a->out_ms = vg_now_ms();   /* on the scheduler's clock: the jobs read compares it with job end times */
    vg_store_step(x->store, a->it->incident, VG_STEP_ISOLATED, vg_clock_ms(), detail);
    return 0;
}

/* After the node is out, so the scheduler neither restarts the work there
 * nor spends its message timeout trying to stop it on a node that does not
 * answer.  On Slurm the DOWN requeued the running jobs (those of the agent's
 * list that Slurm shows requeued are named); the requeue matters for a job
 * that ended on the node a moment before (the fault killed its batch
 * script): DOWN does not bring that one back. */
static int step_requeue(struct vg_executor *x, struct act *a)
{
    if (!a->njobs && !a->ntold && !a->nmoved) return 1;
    char err[256];
    if (a->njobs && ORCH(x, err, x->orch->ops->requeue(x->orch, (const char *const *)a->jobs, a->njobs)) < 0) {
        /* the node stays out (isolation is what must hold); the incident says the job was not moved */
        vg_err("ALERT incident %lld: requeue: %s", (long long)a->it->incident, err);
        vg_store_step_named(x->store, a->it->incident, "requeue failed", vg_clock_ms(), err);
        return -1;
    }
    int64_t at = vg_clock_ms();
    int64_t from = a->it->e.time_ms ? a->it->e.time_ms : a->it->e.seen_ms;
    if ((a->njobs || a->nmoved) && from > 0) vg_histogram_observe(&x->to_requeued, (double)(vg_now_ms() - from) / 1000.0);
    char *ids = join(a->jobs, a->njobs), *told = join(a->told, a->ntold), *by_down = join(a->moved, a->nmoved);
    struct sbuf b = SBUF_INIT;
    sbuf_puts(&b, ids);
    if (a->nmoved) sbuf_printf(&b, "%s%s: requeued by the DOWN", b.len ? "; " : "", by_down);
    if (a->ntold) sbuf_printf(&b, "%s%s: told, restarts on a spare in its own allocation", b.len ? "; " : "", told);
    vg_store_step(x->store, a->it->incident, VG_STEP_JOBS_REQUEUED, at, b.s);
    sbuf_free(&b);
    free(ids);
    free(told);
    free(by_down);
    return 0;
}

static int step_promote(struct vg_executor *x, struct act *a)
{
    if (!a->d.npromote) return 1;
    char err[256];
    int rc = vg_pool_take(x, a->d.promote, a->d.npromote, err, sizeof err);
    char *names = join(a->d.promote, a->d.npromote);
    if (rc) vg_warn("incident %lld: promoting %s: %s", (long long)a->it->incident, names, err);
    else vg_store_step(x->store, a->it->incident, VG_STEP_SPARE_PROMOTED, vg_clock_ms(), names);
    free(names);
    return rc ? -1 : 0;
}

/* Initializers, not const objects: C11 (and clang) take only constants in a static table. */
#define JOBS { "jobs", false, step_jobs }
#define TELL { "tell", false, step_tell }
#define ISOLATE { "isolate", true, step_isolate }
#define REQUEUE { "requeue", false, step_requeue }
#define PROMOTE { "promote", false, step_promote }

static const struct vg_remedy_step down_steps[] = { JOBS, TELL, ISOLATE, REQUEUE, PROMOTE, { 0 } };
static const struct vg_remedy_step down_requeues_steps[] = { ISOLATE, JOBS, TELL, REQUEUE, PROMOTE, { 0 } };
static const struct vg_remedy_step drain_steps[] = { ISOLATE, PROMOTE, { 0 } };
const struct vg_remedy_step vg_remedy_late_jobs_steps[] = { { "jobs", true, step_jobs }, TELL, REQUEUE, { 0 } };

const struct vg_remedy_step *vg_remedy_steps(enum vg_verdict_op op, const struct vg_orch_ops *ops)
{
    if (op == VG_OP_DRAIN) return drain_steps;
    if (op != VG_OP_DOWN) return NULL;
    return vg_orch_can(ops, VG_CAP_DOWN_REQUEUES) ? down_requeues_steps : down_steps;
}

/* ---- repair and return ---------------------------------------------------- */

/* argv template with {node}, {gpu} and {suite} replaced; malloc'd, NULL-terminated. */
static char **expand(char *const *tmpl, const struct item *it, const char *suite)
{
    char gpu[16];
    snprintf(gpu, sizeof gpu, "%d", it->e.gpu >= 0 ? it->e.gpu : 0);
    const char *keys[] = { "node", "gpu", suite ? "suite" : NULL, NULL };
    const char *vals[] = { it->node, gpu, suite, NULL };
    return vg_argv_expand(tmpl, keys, vals);
}

/* Runs a repair command; returns its exit status (-1: could not run / timed
 * out), a one-line result in out, and, when stdout_out is given, its output
 * (malloc'd). */
static int run_command(char *const *tmpl, const struct item *it, const char *suite, int64_t timeout_ms, char *out,
                       size_t n, char **stdout_out)
{
    char **argv = expand(tmpl, it, suite);
    struct vg_spawn_result r;
    vg_spawn((const char *const *)argv, NULL, NULL, (int)timeout_ms, &r);
    if (stdout_out) *stdout_out = vg_xstrdup(r.out ? r.out : "");
    int status = r.timed_out ? -1 : r.status;
    const char *text = *vg_trim(r.err) ? vg_trim(r.err) : vg_trim(r.out);
    snprintf(out, n, "%s: %s%s%s", argv[0], r.timed_out ? "timed out" : status ? "failed" : "ok",
             *text ? ": " : "", text);
    char *nl = strchr(out, '\n');
    if (nl) *nl = 0;
    vg_spawn_result_free(&r);
    vg_argv_free(argv);
    return status;
}

/* A fault back within the repeat window starts one rung higher for each
 * time it came back (the same fault on the same GPU: a reset did not hold). */
static size_t first_rung(struct vg_executor *x, const struct item *it, size_t n)
{
    const struct vg_ladder *l = &x->policy->ladder;
    if (n < 2 || !l->repeat_window_ms) return 0;
    int back = vg_store_repeats(x->store, it->node, &it->e, vg_clock_ms() - l->repeat_window_ms, it->incident);
    return back <= 0 ? 0 : (size_t)back < n ? (size_t)back : n - 1;
}

static void return_node(struct vg_executor *x, struct item *it);

static void record_attempt(struct vg_executor *x, const struct item *it, json_t *attempts, const char *step,
                           const char *result)
{
    int64_t now = vg_clock_ms();
    vg_store_step_named(x->store, it->incident, step, now, result);
    json_array_append_new(attempts, json_pack("{s:s, s:s, s:o}", "step", step, "result", result, "at", vg_json_time(now)));
}

/* The burn-in gate (burnin_gate): suite on node, its pass recorded as
 * burn-in evidence under source; 0 only when the node's result is "pass"
 * (fail, unknown, a command that failed or printed no result: not proven). */
int vg_remedy_gate(struct vg_executor *x, const char *node, const char *suite, const char *source, char *out, size_t n)
{
    const struct vg_ladder *l = &x->policy->ladder;
    struct item it = { .e.gpu = -1 };
    vg_strlcpy(it.node, node, sizeof it.node);
    char *text = NULL, ran[256], err[256];
    int status = run_command(l->gate, &it, suite, l->timeout_ms, ran, sizeof ran, &text);
    json_t *doc = json_loads(text, 0, NULL), *one = NULL, *t;
    free(text);
    size_t i;
    json_array_foreach(json_object_get(doc, "nodes"), i, t)
        if (!strcmp(vg_json_str(t, "node", ""), node)) one = t;
    int rc = -1;
    if (!one) snprintf(out, n, "no burn-in result for %s (%.150s)", node, ran);
    else {
        json_t *rec = json_pack("{s:[O]}", "nodes", one);
        if (json_object_get(doc, "time")) json_object_set(rec, "time", json_object_get(doc, "time"));
        if (vg_burnin_record(x->store, rec, source, node, vg_clock_ms(), err, sizeof err) < 0)
            vg_warn("burn-in result of %s not kept: %s", node, err);
        json_decref(rec);
        const char *res = vg_json_str(one, "result", "unknown");
        rc = strcmp(res, "pass") || status ? -1 : 0;
        snprintf(out, n, "%s%s%s", res, *vg_json_str(one, "reason", "") ? ": " : "", vg_json_str(one, "reason", ""));
    }
    json_decref(doc);
    __atomic_add_fetch(rc ? &x->gates_failed : &x->gates_passed, 1, __ATOMIC_SEQ_CST);
    return rc;
}

/* The health check, then the burn-in gate when there is one, after the rung
 * named after (NULL: no rung; its steps are not recorded, the gate's is).
 * 0: the node may return; else failed names what failed and out says why. */
static int proven(struct vg_executor *x, const struct item *it, const char *after, json_t *attempts, char *out, size_t n,
                  const char **failed)
{
    const struct vg_ladder *l = &x->policy->ladder;
    char step[64];
    int rc = run_command(x->policy->healthcheck, it, NULL, l->timeout_ms, out, n, NULL);
    __atomic_add_fetch(rc ? &x->checks_failed : &x->checks_passed, 1, __ATOMIC_SEQ_CST);
    if (after) {
        snprintf(step, sizeof step, "health check after %s", after);
        record_attempt(x, it, attempts, step, out);
    }
    *failed = "health check";
    if (rc || !l->gate) return rc;
    *failed = "burn-in";
    rc = vg_remedy_gate(x, it->node, l->gate_suite, "gate", out, n);
    snprintf(step, sizeof step, "burn-in %s%s%s", l->gate_suite, after ? " after " : "", after ? after : "");
    record_attempt(x, it, attempts, step, out);
    return rc;
}

/* Where the repair stands, in the store: a restart resumes it there. */
static void at_rung(struct vg_executor *x, const struct item *it, size_t i, size_t n, const char *name, bool done)
{
    char detail[160];
    if (!n) snprintf(detail, sizeof detail, "health check");
    else snprintf(detail, sizeof detail, "rung %zu of %zu: %s%s", i + 1, n, name, done ? " ok; health check" : "");
    if (vg_store_set_rung(x->store, it->incident, (int)i, done, detail))
        vg_warn("incident %lld: the repair's position is not in the store: %s", (long long)it->incident,
                vg_store_error(x->store));
}

/* The repair ladder: each rung's command, then the health check; the first
 * pass returns the node; every rung failed: the RMA hand-off.  Resumed after
 * a restart at it->rung: that rung's command runs again unless it had
 * finished ok (it->rung_done), then its health check. */
void vg_remedy_repair(struct vg_executor *x, struct item *it)
{
    const struct vg_policy *p = x->policy;
    const struct vg_ladder *l = &p->ladder;
    char cause[64], out[256], step[64], last[320] = "";
    vg_event_cause_name(&it->e, cause, sizeof cause);
    const struct vg_rung *rungs[VG_RUNGS_MAX];
    size_t n = vg_ladder_for(l, cause, rungs), i;
    bool skip_command = false;
    if (it->rung >= 0) {   /* resumed */
        i = (size_t)it->rung < (n ? n : 1) ? (size_t)it->rung : (n ? n - 1 : 0);
        skip_command = it->rung_done;
    } else if ((i = first_rung(x, it, n))) {
        snprintf(out, sizeof out, "%s came back within %lld h: starting at %s", cause,
                 (long long)(l->repeat_window_ms / 3600000), rungs[i]->name);
        vg_store_step_named(x->store, it->incident, "escalated", vg_clock_ms(), out);
    }
    json_t *attempts = json_array();
    for (; i < (n ? n : 1); i++, skip_command = false) {   /* no rung: the health check alone */
        const char *name = n ? rungs[i]->name : "none";
        at_rung(x, it, i, n, name, !n || skip_command);
        if (n && !skip_command) {
            int rc = run_command(rungs[i]->argv, it, NULL, rungs[i]->timeout_ms ? rungs[i]->timeout_ms : l->timeout_ms,
                                 out, sizeof out, NULL);
            size_t r = (size_t)(rungs[i] - l->rung);
            __atomic_add_fetch(rc ? &x->rung_failed[r] : &x->rung_ok[r], 1, __ATOMIC_SEQ_CST);
            snprintf(step, sizeof step, "repair %s", name);
            vg_store_step_named(x->store, it->incident, step, vg_clock_ms(), out);
            json_array_append_new(attempts, json_pack("{s:s, s:s, s:o}", "step", name, "result", out, "at",
                                                      vg_json_time(vg_clock_ms())));
            if (rc) {
                snprintf(last, sizeof last, "repair failed, node stays isolated: %s", out);
                continue;
            }
            vg_store_step(x->store, it->incident, VG_STEP_REMEDIATED, vg_clock_ms(), out);
            at_rung(x, it, i, n, name, true);
        }
        if (!p->healthcheck) {
            set_state(x, it->incident, VG_INC_UNREPAIRED, "remediated; no health check configured, node stays "
                                                              "isolated");
            json_decref(attempts);
            return;
        }
        const char *failed;
        if (!proven(x, it, n ? name : NULL, attempts, out, sizeof out, &failed)) {
            json_decref(attempts);
            return_node(x, it);
            return;
        }
        snprintf(last, sizeof last, "%s failed, node stays isolated: %s", failed, out);
    }
    /* every rung failed: to the vendor */
    char ticket[600], err[256];
    if (vg_rma_handoff(x->store, l, it->incident, it->node, cause, attempts, ticket, sizeof ticket, err, sizeof err)) {
        __atomic_add_fetch(&x->rma_failed, 1, __ATOMIC_SEQ_CST);
        vg_err("ALERT incident %lld: %s: repair ladder exhausted; RMA hand-off failed: %s", (long long)it->incident,
               it->node, err);
        set_state(x, it->incident, VG_INC_UNREPAIRED, "%s; RMA hand-off failed: %s", last, err);
    } else if (ticket[0]) {
        __atomic_add_fetch(&x->rma_handoffs, 1, __ATOMIC_SEQ_CST);
        vg_store_step_named(x->store, it->incident, "rma", vg_clock_ms(), ticket);
        vg_err("ALERT incident %lld: %s: repair ladder exhausted; handed off for RMA: %s", (long long)it->incident,
               it->node, ticket);
        set_state(x, it->incident, VG_INC_RMA, "handed off for RMA (%s); %s", ticket, last);
    } else
        set_state(x, it->incident, VG_INC_UNREPAIRED, "%s", last);
    json_decref(attempts);
}

/* Back in service through the health check. */
static void return_node(struct vg_executor *x, struct item *it)
{
    char err[256];
    /* Back to the spare pool: into the pool first, so no job lands on it
     * between the resume and the pool update. */
    int rc = vg_pool_give(x, it->node, err, sizeof err);
    const char *node = it->node;
    if (rc) vg_warn("returning %s to the spare pool: %s", node, err);
    if (ORCH(x, err, vg_orch_resume_ours(x->orch, &node, 1)) < 0) {
        set_state(x, it->incident, VG_INC_UNREPAIRED, "health check passed, resume failed: %s", err);
        return;
    }
    x->returned++;
    int64_t now = vg_clock_ms();
    if (it->isolated_ms) vg_histogram_observe(&x->repair_s, (double)(now - it->isolated_ms) / 1000.0);
    vg_store_step(x->store, it->incident, VG_STEP_RETURNED, now, rc ? "to production" : "to the spare pool");
    json_t *inc = vg_store_incident(x->store, it->incident);
    vg_exec_observe_mttr(x, inc, now);
    json_decref(inc);
    vg_store_set_state(x->store, it->incident, VG_INC_CLOSED, rc ? "returned to production" : "returned to the spare pool");
}
