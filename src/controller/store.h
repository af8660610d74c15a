/* store.h — the controller's incident store: SQLite in WAL mode with
 * synchronous=FULL, so an incident accepted (HTTP 202) is on disk before the
 * agent hears back and survives kill -9 of the controller at any moment.
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

struct vg_store;

/* Opens (creating) the database; a store written before messages carried a
 * spool id gains the column (old rows: spool "").  Returns 0, or -1 with a
 * message in err. */
int vg_store_open(const char *path, struct vg_store **st, char *err, size_t errlen);
/* A second, read-only connection to an existing database: in WAL mode its
 * reads never wait for the writer, nor the writer for them. */
int vg_store_open_reader(const char *path, struct vg_store **st, char *err, size_t errlen);
void vg_store_close(struct vg_store *st);

/* A write transaction around several vg_store_accept calls (group commit:
 * one fsync for all of them).  Return 0 or -1 (vg_store_error says why). */
int vg_store_begin(struct vg_store *st);
int vg_store_commit(struct vg_store *st);
void vg_store_rollback(struct vg_store *st);
/* what: 0 opens savepoint `name`, 1 releases it, -1 rolls back to it and
 * releases it.  Returns 0 or -1. */
int vg_store_savepoint(struct vg_store *st, const char *name, int what);
/* SQLite's reason for the last failure of begin/commit/savepoint/accept. */
const char *vg_store_error(const struct vg_store *st);

/* Accepts one event from an agent message (node, spool, seq) received at
 * `now`.  An event whose (node, spool, seq, index) is already stored is a
 * duplicate: nothing changes and *duplicate is set (deliveries from a spool
 * are idempotent; a new spool id is new data even when seq restarts).  Otherwise the
 * event joins the open incident of the same node and event key when the last
 * one was seen within window_ms (count and last updated), or opens a new
 * incident with `detected` = now — unless it happened while the node was
 * still out (its last time 3 s or more before the `returned` step of the
 * newest closed incident of that key — the step of a resume outside vigil
 * can be that late —, its start within window_ms of that incident's last
 * event): then it joins that closed incident, which stays closed.  *incident gets its id, *is_new whether it
 * was opened by this event.  A savepoint inside the caller's transaction
 * (vg_store_begin), or a transaction of its own.  Returns 0 or -1. */
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
/* Sets the incident's free-text state ("open", "isolated", "held: breaker", "closed"…). */
int vg_store_set_state(struct vg_store *st, int64_t incident, const char *state);
/* Sets the states of many incidents in one transaction (one fsync). */
int vg_store_set_states(struct vg_store *st, const int64_t *ids, const char *const *states, size_t n);
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
/* One page of them: ids below `before` (> 0; the pagination cursor; <= 0: from the newest). */
json_t *vg_store_incidents_page(struct vg_store *st, const char *node, bool open_only, int64_t before, int limit);
json_t *vg_store_incident(struct vg_store *st, int64_t id);
/* Per-node summary: open incidents, worst open action, last event time. */
json_t *vg_store_nodes(struct vg_store *st);
/* Open incidents, light: [{id, node, state}], oldest first. */
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
