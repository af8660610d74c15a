/* store.h — the controller's incident store, on SQLite (the embedded default:
 * WAL, synchronous=FULL) or PostgreSQL (shared by several controllers): an
 * incident accepted (HTTP 202) is committed before the agent hears back and
 * survives kill -9 of the controller at any moment.  A store's target is a
 * file (or sqlite:PATH), or a postgresql:// URI or a libpq conninfo.
 * Every step of an incident is timestamped: detected, isolated,
 * jobs_requeued, spare_promoted, remediated, returned. */
#ifndef VG_STORE_H
#define VG_STORE_H
#include "core/event.h"
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

enum vg_step {
    VG_STEP_DETECTED = 0,
    VG_STEP_ISOLATED,
    VG_STEP_JOBS_REQUEUED,
    VG_STEP_SPARE_PROMOTED,
    VG_STEP_REMEDIATED,
    VG_STEP_RETURNED,
    VG_STEP_COUNT
};
const char *vg_step_name(enum vg_step s);

/* What became of an incident: its state (one of these words in the store and
 * in the API's `state`), with `detail` saying the rest in words.  Every state
 * but closed is open; what a restarted controller does with each is in
 * docs/controller.md ("Restarts"). */
enum vg_inc_state {
    VG_INC_OPEN,        /* accepted, not acted on yet */
    VG_INC_ACTING,      /* the decision is committed (the plan); its steps are under way */
    VG_INC_FAILED,      /* a required step failed; tried again with backoff */
    VG_INC_HELD,        /* the policy held it: breaker, ownership, not in the cluster */
    VG_INC_RECORDED,    /* below drain_at: recorded only */
    VG_INC_DRY_RUN,     /* --dry-run: what it would have done */
    VG_INC_ISOLATED,    /* the node is out; its repair is queued (or none is configured) */
    VG_INC_REPAIRING,   /* a rung of the repair ladder (or the health check after it) runs */
    VG_INC_UNREPAIRED,  /* the repair ended without returning the node: it stays out */
    VG_INC_RMA,         /* every rung failed: handed off to the vendor */
    VG_INC_CLOSED,      /* the node is back in service */
    VG_INC_COUNT
};
const char *vg_inc_state_name(enum vg_inc_state s);
/* The state named s; -1 when none is. */
int vg_inc_state_parse(const char *s);

struct vg_store;

/* The engine a target names: "sqlite" or "postgresql". */
const char *vg_store_engine(const char *target);
/* Opens (creating) the database; a store written before messages carried a
 * spool id gains the column (old rows: spool "").  Returns 0, or -1 with a
 * message in err. */
int vg_store_open(const char *path, struct vg_store **st, char *err, size_t errlen);
/* A second, read-only connection to an existing database: in WAL mode its
 * reads never wait for the writer, nor the writer for them. */
int vg_store_open_reader(const char *path, struct vg_store **st, char *err, size_t errlen);
void vg_store_close(struct vg_store *st);

/* A write transaction around several messages (vg_store_accept_message;
 * group commit: one fsync for all of them).  Return 0 or -1
 * (vg_store_error says why). */
int vg_store_begin(struct vg_store *st);
int vg_store_commit(struct vg_store *st);
void vg_store_rollback(struct vg_store *st);
/* Whether the connection is inside a transaction. */
bool vg_store_in_tx(struct vg_store *st);
/* what: 0 opens savepoint `name`, 1 releases it, -1 rolls back to it and
 * releases it.  Returns 0 or -1. */
int vg_store_savepoint(struct vg_store *st, const char *name, int what);
/* The database's reason for the last failure of begin/commit/savepoint/accept. */
const char *vg_store_error(const struct vg_store *st);

/* What became of one event of a message: the incident it joined or opened
 * (is_new), or it was stored before (duplicate: nothing changed). */
struct vg_accepted {
    int64_t incident;
    bool is_new, duplicate;
};
/* Accepts the n events of an agent message (node, spool, seq; event i has
 * index i) received at `now`, out[i] what became of event i.  An event whose
 * (node, spool, seq, index) is already stored is a duplicate: nothing
 * changes (deliveries from a spool are idempotent; a new spool id is new
 * data even when seq restarts).  Otherwise, in order, each event joins the
 * open incident of the same node and event key when the last one was seen
 * within window_ms (count and last updated), or opens a new incident with
 * `detected` = now — unless it happened while the node was still out (its
 * last time 3 s or more before the `returned` step of the newest closed
 * incident of that key — the step of a resume outside vigil can be that
 * late —, its start within window_ms of that incident's last event): then it
 * joins that closed incident, which stays closed.  Runs in the caller's
 * transaction (vg_store_begin) and returns 0, or -1 having written part of
 * the message: the caller rolls the transaction back (the message is all
 * or nothing). */
int vg_store_accept_message(struct vg_store *st, const char *node, const char *spool, int64_t seq,
                            const struct vg_event *ev, size_t n, int64_t now, int64_t window_ms,
                            struct vg_accepted *out);
/* One event of a message, event idx, as vg_store_accept_message does it, all
 * or nothing: a savepoint inside the caller's transaction, or a transaction
 * of its own.  *incident gets its id, *is_new whether it was opened by this
 * event.  Returns 0 or -1. */
int vg_store_accept(struct vg_store *st, const char *node, const char *spool, int64_t seq, int idx,
                    const struct vg_event *e, int64_t now, int64_t window_ms,
                    int64_t *incident, bool *is_new, bool *duplicate);
/* When the store began: the controller's first record (its oldest record for a
 * store from before that was kept); 0 unknown. */
int64_t vg_store_first_record(struct vg_store *st);
/* When node was last returned to service (its newest `returned` step), 0 never. */
int64_t vg_store_last_return(struct vg_store *st, const char *node);
/* Records a step (the first time only: a step's time never moves) with a detail. */
int vg_store_step(struct vg_store *st, int64_t incident, enum vg_step step, int64_t at,
                  const char *detail);
/* A step by name (a repair rung: "repair reboot", "rma"), the first time only. */
int vg_store_step_named(struct vg_store *st, int64_t incident, const char *step, int64_t at, const char *detail);
/* How many incidents before `before_id` on `node` had the same kind, code and
 * GPU and were detected at or after since_ms (a fault that came back). */
int vg_store_repeats(struct vg_store *st, const char *node, const struct vg_event *e, int64_t since_ms,
                     int64_t before_id);
/* Sets the incident's state and its detail (NULL: none). */
int vg_store_set_state(struct vg_store *st, int64_t incident, enum vg_inc_state state, const char *detail);
/* Sets the states of many incidents in one transaction (one fsync). */
int vg_store_set_states(struct vg_store *st, const int64_t *ids, const enum vg_inc_state *states,
                        const char *const *details, size_t n);

/* ---- what the executor keeps to resume after a restart (store_state.c) ---- */

/* The decision an incident acts on, committed before its first step (state
 * acting, in one statement): plan, a JSON object (op, isolate, promote,
 * reason); at, when it was taken (the controller's clock), and boot /
 * boot_ms, the machine's boot id and its boot-time clock then, so the
 * breaker's window is measured on one clock after a restart on the same boot;
 * epoch, the scheduler's (vg_orch_ops.epoch; NULL: unknown). */
int vg_store_set_plan(struct vg_store *st, int64_t incident, const char *plan, int64_t at, const char *boot,
                      int64_t boot_ms, const char *epoch);
/* From now on, a plan (vg_store_set_plan) is committed only while holder
 * holds the controllers' lease with term (PostgreSQL: election.h), in the
 * same statement that checks it, and the term is kept with it; one refused
 * fails with vg_store_fenced true. */
void vg_store_fence(struct vg_store *st, const char *holder, int64_t term);
bool vg_store_fenced(const struct vg_store *st);
/* A required step failed: state failed with detail, the plan dropped (its
 * nodes did not go out: the breaker must not count them), attempts kept. */
int vg_store_set_failed(struct vg_store *st, int64_t incident, const char *detail, int attempts);
/* The repair ladder's position: the rung in hand (its index among the
 * cause's rungs) and whether its command finished ok (the health check comes
 * next); state repairing with detail. */
int vg_store_set_rung(struct vg_store *st, int64_t incident, int rung, bool done, const char *detail);
/* The jobs read after the node went out at out_ms is still to do (0: done). */
int vg_store_set_jobs_unread(struct vg_store *st, int64_t incident, int64_t out_ms);
/* The scheduler's epoch at which vigil last set or saw its state on the node. */
int vg_store_set_epoch(struct vg_store *st, int64_t incident, const char *epoch);
/* Open incidents a restarted executor resumes or watches (open, acting,
 * failed, isolated, repairing, unrepaired, rma), oldest first: [{id, node,
 * state, detail, event, plan (object or null), rung (-1: none), rung_done,
 * jobs_unread, attempts, epoch}]. */
json_t *vg_store_work(struct vg_store *st);
/* The nodes decisions took out since since_ms (the breaker's window at
 * start): [{node, at, boot, boot_ms}], oldest first. */
json_t *vg_store_isolations_since(struct vg_store *st, int64_t since_ms);
/* This store's controller id (8 hex digits), made once and kept: the stamp
 * in every reason the controller writes, so a second controller on the same
 * cluster shows. */
int vg_store_controller_id(struct vg_store *st, char *buf, size_t n);
/* Whether the connection's last failure was SQLite finding the file corrupt
 * (or not a database at all). */
bool vg_store_corrupt(const struct vg_store *st);
/* Calls on_corrupt (from the failing thread) whenever SQLite finds the file
 * corrupt on this connection: the controller's store guard stops
 * acknowledging. */
void vg_store_watch_corrupt(struct vg_store *st, void (*on_corrupt)(void *ctx, const char *why), void *ctx);
/* Checks the SQLite database at target (PRAGMA quick_check) before it is
 * opened for writing: 0 sound or absent, 1 corrupt (why says how), -1 cannot tell. */
int vg_store_verify(const char *path, char *why, size_t n);
/* The latest audit report of a node (`vigil audit --json` text), replacing
 * the one before; and, one row at a time by node, the reports of the nodes
 * after `after` (NULL: from the first), at most limit (<= 0: all): cb
 * returns nonzero to stop.  0, or -1 when the read failed. */
int vg_store_put_audit(struct vg_store *st, const char *node, int64_t at, const char *report);
int vg_store_audits_each(struct vg_store *st, const char *after, int limit,
                         int (*cb)(void *ctx, const char *node, int64_t at, const char *report), void *ctx);
/* One node's burn-in pass (tests: its JSON array; source: "post", "gate" …);
 * and the passes since since_ms, of one node or all (node NULL), by node then
 * time: [{node, at_ms, suite, result, tests, source}]. */
int vg_store_put_burnin(struct vg_store *st, const char *node, int64_t at, const char *suite, const char *result,
                        const char *tests, const char *source);
json_t *vg_store_burnin(struct vg_store *st, const char *node, int64_t since_ms);
/* The same one row at a time (cb returns nonzero to stop): 0, or -1 when the read failed. */
int vg_store_burnin_each(struct vg_store *st, const char *node, int64_t since_ms,
                         int (*cb)(void *ctx, const char *node, int64_t at, const char *suite, const char *result,
                                   const char *tests),
                         void *ctx);
/* Keeps the newest `keep` passes of node: the older ones are deleted.
 * Returns how many were, or -1. */
int vg_store_burnin_trim(struct vg_store *st, const char *node, int keep);
/* The store's bytes on disk (the database and its write-ahead log); -1 when
 * they cannot be read. */
int64_t vg_store_bytes(struct vg_store *st);
/* The nodes the new-node gate has seen (newnode.c): state "known",
 * "gating", "passed" or "failed", when, and why; {node: {state, at, detail}}. */
int vg_store_set_seen(struct vg_store *st, const char *node, const char *state, int64_t at, const char *detail);
json_t *vg_store_seen(struct vg_store *st);
/* Incidents, newest first, optionally of one node / only open ones; limit <= 0: all. */
json_t *vg_store_incidents(struct vg_store *st, const char *node, bool open_only, int limit);
/* Which incidents a read selects: each field set narrows it (NULL, -1, false: any). */
struct vg_incident_filter {
    const char *node, *kind, *pci;
    int code, gpu;
    bool open_only;
};
/* One page of those f selects: ids below `before` (> 0; the pagination cursor; <= 0: from the newest). */
json_t *vg_store_incidents_page(struct vg_store *st, const struct vg_incident_filter *f, int64_t before, int limit);
json_t *vg_store_incident(struct vg_store *st, int64_t id);
/* Per-node summary: open incidents, worst open action, last event time. */
json_t *vg_store_nodes(struct vg_store *st);
/* Open incidents no decision holds for (state open, or failed: to be
 * decided again): [{id, node, event}], oldest first. */
json_t *vg_store_undecided(struct vg_store *st);
/* Open incidents, light: [{id, node, state, detail}], oldest first. */
json_t *vg_store_open_states(struct vg_store *st);
/* The nodes whose latest incident is closed with a `returned` step at or
 * after since_ms: [{node, incident, at, detail}] by node. */
json_t *vg_store_returns(struct vg_store *st, int64_t since_ms);
/* Incidents open now or with a step at or after since_ms (those a window
 * starting then can count), newest first. */
json_t *vg_store_incidents_since(struct vg_store *st, int64_t since_ms);
/* Counters for /metrics: incidents total and open, events accepted, duplicates. */
int vg_store_counts(struct vg_store *st, int64_t *incidents, int64_t *open, int64_t *messages);

#endif
