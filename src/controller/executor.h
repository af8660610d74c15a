/* executor.h — the controller's hands: applies the policy's decisions to the
 * cluster through the orchestrator (orch.h) for each new incident, and
 * records every step in the store.
 *
 * One worker thread takes the queued incidents a batch at a time:
 *   - incidents below drain_at are only recorded: one store transaction for
 *     all of them, no orchestrator call, so thousands of them never delay an
 *     action behind them;
 *   - the rest, most severe first, share one look at the cluster (one
 *     `nodes` call per batch), then each runs the steps of its verdict from
 *     the table in remedy.c (DOWN: requeue its jobs, isolate, promote a
 *     spare; DRAIN: isolate, promote);
 *   - an incident whose action failed (the scheduler was down, a timeout) is
 *     retried with backoff (1 s doubling to 60 s) until it succeeds or the
 *     node is no longer vigil's to act on;
 *   - the decision (the plan) is committed to the store before its first step,
 *     and the repair's rung, a jobs read still to do and the scheduler's epoch
 *     are kept there too: a restart takes up every unfinished incident by the
 *     rule of its state (resume_work in executor.c, docs/controller.md).
 * A second thread runs repairs (remediation command, then the health check,
 * then back to the spare pool) so a slow repair never delays isolating the
 * next failed node.  While nodes vigil isolated are out, one `nodes` call
 * every 2 s notices those back in service: put out again when the scheduler
 * lost vigil's state (its epoch changed), closed when someone resumed them. */
#ifndef VG_EXECUTOR_H
#define VG_EXECUTOR_H
#include "controller/policy.h"
#include "controller/store.h"
#include "core/event.h"
#include "orch/orch.h"
#include "util/sbuf.h"
#include <stdbool.h>

struct vg_executor;

/* Whether this controller may act now (the leader of several, inside its
 * trust window: election.h), and its term: asked before every change to the
 * cluster and written into the reasons it sets.  NULL: always. */
struct vg_exec_gate {
    bool (*may_act)(void *ctx, int64_t *term);
    void *ctx;
};

/* act=false: decide and record, but never change the cluster (a dry run;
 * it still reads the cluster when it can).  The executor uses orch from its
 * worker threads only; the caller keeps it open until vg_executor_stop. */
struct vg_executor *vg_executor_start(struct vg_store *st, const struct vg_policy *p, struct vg_orch *orch,
                                      bool act, const struct vg_exec_gate *gate);
/* Queues a new incident (called from the intake; returns at once). */
void vg_executor_submit(struct vg_executor *x, int64_t incident, const struct vg_event *e);
/* Prometheus lines: actions taken, holds, retries pending, orchestrator
 * calls, the latency histograms and the repair ladder's counters. */
void vg_executor_metrics(struct vg_executor *x, struct sbuf *out);
/* What it holds now (executor_view.c): {acting, spare_pool, pool [nodes],
 * repairing [incident ids queued for or in repair], breaker {percent,
 * window_s, isolations_in_window, holds_total}}. */
json_t *vg_executor_view(struct vg_executor *x);
/* Waits until the queue is empty and no retry is pending, at most timeout_ms;
 * true when idle (tests). */
bool vg_executor_idle(struct vg_executor *x, int timeout_ms);
/* Stops within a bound: the incident in hand is finished, queued ones are
 * left to restart recovery (they are in the store already), a repair still
 * running is waited for at most a few seconds. */
void vg_executor_stop(struct vg_executor *x);

#endif
