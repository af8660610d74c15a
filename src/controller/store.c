/* store.c — the incident store's intake and reads, in SQL every driver runs
 * (store_int.h); see store.h. */
#include "controller/store_int.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const step_names[VG_STEP_COUNT] = {
    "detected", "isolated", "jobs_requeued", "spare_promoted", "remediated", "returned",
};

const char *vg_step_name(enum vg_step s) { return s < VG_STEP_COUNT ? step_names[s] : "?"; }

/* How long before its `returned` step a node may already have been back: a
 * resume by someone else is seen at the executor's next look (every 2 s
 * while a node vigil isolated is out), so the step can be that late. */
#define RETURN_UNSEEN_MS 3000

int64_t vg_store_first_record(struct vg_store *st)
{
    /* a store only ever opened read-only since it was written has no meta row */
    struct vg_stmt *s = vg_store_prep(st, "SELECT value FROM meta WHERE key = 'created'", "");
    int64_t at = s && vg_store_row(st, s) ? vg_store_int(st, s, 0) : 0;
    vg_store_done(st, s);
    if (at) return at;
    s = vg_store_prep(st, "SELECT min(t) FROM (" VG_STORE_OLDEST_RECORD ") AS o", "");
    at = s && vg_store_row(st, s) ? vg_store_int(st, s, 0) : 0;
    vg_store_done(st, s);
    return at;
}

int64_t vg_store_last_return(struct vg_store *st, const char *node)
{
    struct vg_stmt *s = vg_store_prep(st,
                           "SELECT max(r.at) FROM incidents i JOIN steps r ON r.incident = i.id"
                           " AND r.step = 'returned' WHERE i.node=?1",
                           "s", node);
    int64_t at = s && vg_store_row(st, s) ? vg_store_int(st, s, 0) : 0;
    vg_store_done(st, s);
    return at;
}

/* What a message's events of one key may join (read once per key, then
 * kept as the message's own events change it): the newest open incident of
 * the node and key, and the newest closed one with a `returned` step — the
 * incident an event belongs to though it is closed: repeats that all happened
 * before the node was returned to service (an agent's folded repeats, sent
 * when it learns of the return or when its window closes) join the incident
 * that was open then instead of opening a new one on a node just back in
 * service.  A repeat in the last RETURN_UNSEEN_MS before the step may have
 * come after an unseen resume: it opens an incident (a fault is never dropped
 * on a guess).  An id 0: none. */
struct fold_target {
    char key[128];
    bool open_read, closed_read;   /* what is known yet */
    int64_t open_id, open_last;
    int64_t closed_id, closed_last, returned_at;
};

/* An incident the message's events folded into: what its row gets added. */
struct fold_write {
    int64_t id, count, last;
};

/* The usual event — one more of a fault whose incident is open — in one
 * statement: it joins the newest open incident of its node and key when it
 * began within the window of that incident's last event, and nothing of its
 * message was stored before (else a redelivery: it joins nothing).  1 and
 * the incident's id and new last time, 0 it did not join, -1 failed. */
static int fold_into_open(struct vg_store *st, const char *node, const char *spool, int64_t seq, const char *key,
                          const struct vg_event *e, int64_t start, int64_t when, int64_t window_ms,
                          int64_t *id, int64_t *last)
{
    struct vg_stmt *s = vg_store_prep(st,
                                      "UPDATE incidents SET count=count+?1, last=CASE WHEN last > ?2 THEN last ELSE ?2 END"
                                      " WHERE id = (SELECT id FROM incidents WHERE node=?3 AND key=?4 AND open=1"
                                      " ORDER BY id DESC LIMIT 1) AND ?5 - last <= ?6"
                                      " AND NOT EXISTS (SELECT 1 FROM messages WHERE node=?3 AND spool=?7 AND seq=?8)"
                                      " RETURNING id, last",
                                      "iissiisi", (int64_t)e->count, when, node, key, start, window_ms, spool, seq);
    if (!s) return -1;
    int rc = vg_store_row(st, s);
    if (rc) {
        *id = vg_store_int(st, s, 0);
        *last = vg_store_int(st, s, 1);
    }
    vg_store_done(st, s);
    return rc;
}

/* One statement (one round trip on a server) reads a key's fold targets
 * and, ?5 = 1, the message's rows already stored (rows tagged 0: idx and
 * incident of a stored event, the message a redelivery; 1: the open
 * incident; 2: the closed one with its step's time). */
static const char lookup_sql[] =
    "SELECT 0, idx, incident, 0 FROM messages WHERE ?5 = 1 AND node=?1 AND spool=?2 AND seq=?3"
    " UNION ALL SELECT 1, id, last, 0 FROM (SELECT id, last FROM incidents WHERE node=?1 AND key=?4 AND open=1"
    " ORDER BY id DESC LIMIT 1) AS o"
    " UNION ALL SELECT 2, id, last, at FROM (SELECT i.id, i.last, r.at FROM incidents i JOIN steps r"
    " ON r.incident = i.id AND r.step = 'returned' WHERE i.node=?1 AND i.key=?4 AND i.open=0"
    " ORDER BY i.id DESC LIMIT 1) AS c";

/* Reads t's fold targets (the open one only if not known yet: the
 * message's own folds may have moved it on); with stored (not NULL), the
 * message's events already stored too: stored[i] true for event idx0+i of
 * n, its incident in out[i]. */
static int look_up(struct vg_store *st, const char *node, const char *spool, int64_t seq, struct fold_target *t,
                   int idx0, size_t n, bool *stored, struct vg_accepted *out)
{
    struct vg_stmt *s = vg_store_prep(st, lookup_sql, "ssisi", node, spool, seq, t->key, (int64_t)(stored != NULL));
    if (!s) return -1;
    while (vg_store_row(st, s)) {
        int64_t tag = vg_store_int(st, s, 0), a = vg_store_int(st, s, 1), b = vg_store_int(st, s, 2);
        if (tag == 0 && a >= idx0 && a - idx0 < (int64_t)n) {
            stored[a - idx0] = true;
            out[a - idx0].incident = b;
        } else if (tag == 1 && !t->open_read) {
            t->open_id = a;
            t->open_last = b;
        } else if (tag == 2) {
            t->closed_id = a;
            t->closed_last = b;
            t->returned_at = vg_store_int(st, s, 3);
        }
    }
    vg_store_done(st, s);
    t->open_read = t->closed_read = true;
    return 0;
}

/* Opens an incident for e (and its `detected` step): its id, 0 failed. */
static int64_t open_incident(struct vg_store *st, const char *node, const char *key, const struct vg_event *e,
                             int64_t when, int64_t now)
{
    json_t *j = vg_event_to_json(e);
    json_object_set_new(j, "node", json_string(node));
    char *ev = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    int64_t first = e->first_ms ? e->first_ms : when;
    struct vg_stmt *s = vg_store_prep(st,
                                      "INSERT INTO incidents(node, key, kind, code, pci, gpu, action, count, first, last,"
                                      " event, state) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,'open') RETURNING id",
                                      "sssdsdsiiis", node, key, e->kind, e->code, e->pci[0] ? e->pci : NULL, e->gpu,
                                      vg_action_name(e->action), (int64_t)e->count, first, when, ev);
    free(ev);
    int64_t id = vg_store_row(st, s) ? vg_store_int(st, s, 0) : 0;
    vg_store_done(st, s);
    if (id && vg_store_run(st, vg_store_prep(st, "INSERT INTO steps(incident, step, at, detail) VALUES(?1,'detected',?2,?3)",
                                            "iis", id, now, e->source[0] ? e->source : NULL)))
        return 0;
    return id;
}

/* The events idx0 … idx0+n-1 of a message: the fold decided in order as
 * event by event (each sees what the ones before it did), the reads once per
 * key (the first event of a key that joins the open incident read and
 * written at once), then each incident folded into updated once more and the
 * message's rows written a run of consecutive events with one incident at a
 * time.  Inside the caller's transaction; a failure leaves it partly
 * written. */
static int accept_events(struct vg_store *st, const char *node, const char *spool, int64_t seq, int idx0,
                         const struct vg_event *ev, size_t n, int64_t now, int64_t window_ms,
                         struct vg_accepted *out)
{
    int rc = -1;
    bool *stored = vg_xcalloc(n, sizeof *stored), known = false;   /* known: stored[] is read */
    struct fold_target *targets = vg_xcalloc(n, sizeof *targets);
    struct fold_write *writes = vg_xcalloc(n, sizeof *writes);
    size_t ntargets = 0, nwrites = 0;
    memset(out, 0, n * sizeof *out);
    for (size_t i = 0; i < n; i++) {
        const struct vg_event *e = &ev[i];
        if (known && stored[i]) {
            out[i].duplicate = true;
            continue;
        }
        char key[sizeof targets->key];
        vg_event_key(e, key, sizeof key);
        struct fold_target *t = targets;
        while (t < targets + ntargets && strcmp(t->key, key)) t++;
        if (t == targets + ntargets) vg_strlcpy(targets[ntargets++].key, key, sizeof t->key);
        int64_t when = e->last_ms ? e->last_ms : e->time_ms ? e->time_ms : now;
        /* An event folds into the open incident when it began within the
         * window of the incident's last event: an agent's folded repeats
         * (first = the incident's first event) join it however long the
         * storm went on. */
        int64_t start = e->first_ms && e->first_ms < when ? e->first_ms : when;
        if (!t->open_read) {
            int folded = fold_into_open(st, node, spool, seq, key, e, start, when, window_ms, &t->open_id,
                                        &t->open_last);
            if (folded < 0) goto out;
            if (folded) {   /* nothing of the message was stored */
                known = t->open_read = true;
                out[i].incident = t->open_id;
                continue;
            }
            if (look_up(st, node, spool, seq, t, idx0, n, known ? NULL : stored, out)) goto out;
            known = true;
            if (stored[i]) {
                out[i].duplicate = true;
                continue;
            }
        }
        int64_t *last = NULL;
        if (t->open_id && start - t->open_last <= window_ms) {
            out[i].incident = t->open_id;
            last = &t->open_last;
        } else {
            if (!t->closed_read && look_up(st, node, spool, seq, t, idx0, n, NULL, out)) goto out;
            if (t->closed_id && when + RETURN_UNSEEN_MS <= t->returned_at && start - t->closed_last <= window_ms) {
                out[i].incident = t->closed_id;
                last = &t->closed_last;
            }
        }
        if (last) {
            if (when > *last) *last = when;
            struct fold_write *w = writes;
            while (w < writes + nwrites && w->id != out[i].incident) w++;
            if (w == writes + nwrites) *w = (struct fold_write){ .id = out[i].incident, .last = when }, nwrites++;
            w->count += e->count;
            if (when > w->last) w->last = when;
        } else {
            if (!(out[i].incident = open_incident(st, node, key, e, when, now))) goto out;
            out[i].is_new = true;
            t->open_id = out[i].incident;
            t->open_last = when;
        }
    }
    for (size_t k = 0; k < nwrites; k++)
        if (vg_store_run(st, vg_store_prep(st, "UPDATE incidents SET count=count+?1,"
                                               " last=CASE WHEN last > ?2 THEN last ELSE ?2 END WHERE id=?3",
                                           "iii", writes[k].count, writes[k].last, writes[k].id)))
            goto out;
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && !stored[i] && !stored[j] && out[j].incident == out[i].incident; j++) {}
        if (stored[i]) continue;
        if (vg_store_run(st, vg_store_prep(st, "WITH RECURSIVE k(i) AS (SELECT ?4 UNION ALL SELECT i + 1 FROM k WHERE i < ?5)"
                                               " INSERT INTO messages(node, spool, seq, idx, received, incident)"
                                               " SELECT ?1, ?2, ?3, i, ?6, ?7 FROM k",
                                           "ssiiiii", node, spool, seq, (int64_t)(idx0 + (int)i),
                                           (int64_t)(idx0 + (int)j - 1), now, out[i].incident)))
            goto out;
    }
    rc = 0;
out:
    free(stored);
    free(targets);
    free(writes);
    return rc;
}

int vg_store_accept_message(struct vg_store *st, const char *node, const char *spool, int64_t seq,
                            const struct vg_event *ev, size_t n, int64_t now, int64_t window_ms,
                            struct vg_accepted *out)
{
    return accept_events(st, node, spool, seq, 0, ev, n, now, window_ms, out);
}

int vg_store_accept(struct vg_store *st, const char *node, const char *spool, int64_t seq, int idx,
                    const struct vg_event *e, int64_t now, int64_t window_ms,
                    int64_t *incident, bool *is_new, bool *duplicate)
{
    struct vg_accepted a = { 0 };
    *incident = 0;
    *is_new = *duplicate = false;
    if (vg_store_savepoint(st, "accept", 0)) return -1;
    if (accept_events(st, node, spool, seq, idx, e, 1, now, window_ms, &a) || vg_store_savepoint(st, "accept", 1)) {
        vg_store_savepoint(st, "accept", -1);
        return -1;
    }
    *incident = a.incident;
    *is_new = a.is_new;
    *duplicate = a.duplicate;
    return 0;
}

int vg_store_step(struct vg_store *st, int64_t incident, enum vg_step step, int64_t at, const char *detail)
{
    if (step >= VG_STEP_COUNT) return -1;
    return vg_store_step_named(st, incident, step_names[step], at, detail);
}

int vg_store_step_named(struct vg_store *st, int64_t incident, const char *step, int64_t at, const char *detail)
{
    /* never before the incident's latest step: a wall clock stepped back
     * (or a restart on a machine whose clock is behind) cannot make a
     * duration negative */
    return vg_store_run(st, vg_store_prep(st,
                                          "INSERT INTO steps(incident, step, at, detail) SELECT ?1, ?2, CASE WHEN m > ?3 THEN m ELSE ?3 END, ?4"
                                          " FROM (SELECT coalesce(max(at), ?3) AS m FROM steps WHERE incident=?1) AS l"
                                          " WHERE true ON CONFLICT DO NOTHING",
                                          "isis", incident, step, at, detail));
}

int vg_store_repeats(struct vg_store *st, const char *node, const struct vg_event *e, int64_t since_ms,
                     int64_t before_id)
{
    struct vg_stmt *q = vg_store_prep(st,
                           "SELECT COUNT(*) FROM incidents i JOIN steps s ON s.incident = i.id AND s.step = 'detected'"
                           " WHERE i.node = ?1 AND i.kind = ?2 AND i.code IS NOT DISTINCT FROM ?3 AND i.gpu IS NOT DISTINCT FROM ?4 AND s.at >= ?5 AND i.id < ?6",
                           "ssddii", node, e->kind, e->code, e->gpu, since_ms, before_id);
    int n = q && vg_store_row(st, q) ? (int)vg_store_int(st, q, 0) : 0;
    vg_store_done(st, q);
    return n;
}

static json_t *incident_row(struct vg_store *st, struct vg_stmt *s)
{
    int64_t id = vg_store_int(st, s, 0);
    json_t *j = json_object();
    json_object_set_new(j, "id", json_integer(id));
    json_object_set_new(j, "node", json_string(vg_store_text(st, s, 1)));
    json_object_set_new(j, "kind", json_string(vg_store_text(st, s, 2)));
    json_object_set_new(j, "code", vg_store_null(st, s, 3) ? json_null()
                                                                          : json_integer((int)vg_store_int(st, s, 3)));
    vg_json_set_str(j, "pci", vg_store_text(st, s, 4));
    json_object_set_new(j, "gpu", vg_store_null(st, s, 5) ? json_null()
                                                                         : json_integer((int)vg_store_int(st, s, 5)));
    json_object_set_new(j, "action", json_string(vg_store_text(st, s, 6)));
    json_object_set_new(j, "count", json_integer(vg_store_int(st, s, 7)));
    json_object_set_new(j, "first", vg_json_time(vg_store_int(st, s, 8)));
    json_object_set_new(j, "last", vg_json_time(vg_store_int(st, s, 9)));
    json_object_set_new(j, "state", json_string(vg_store_text(st, s, 11)));
    json_object_set_new(j, "detail", json_string(vg_store_text(st, s, 12)));
    json_t *ev = json_loads(vg_store_text(st, s, 10), 0, NULL);
    json_object_set_new(j, "event", ev ? ev : json_null());
    json_t *steps = json_object();
    for (int i = 0; i < VG_STEP_COUNT; i++) json_object_set_new(steps, step_names[i], json_null());
    struct vg_stmt *q = vg_store_prep(st, "SELECT step, at, detail FROM steps WHERE incident=?1", "i", id);
    while (q && vg_store_row(st, q)) {
        json_t *step = json_object();
        json_object_set_new(step, "at", vg_json_time(vg_store_int(st, q, 1)));
        vg_json_set_str(step, "detail", vg_store_text(st, q, 2));
        json_object_set_new(steps, vg_store_text(st, q, 0), step);
    }
    vg_store_done(st, q);
    json_object_set_new(j, "steps", steps);
    return j;
}

#define INCIDENT_COLS "id, node, kind, code, pci, gpu, action, count, first, last, event, state, detail"

json_t *vg_store_incidents(struct vg_store *st, const char *node, bool open_only, int limit)
{
    struct vg_incident_filter f = { .node = node, .code = -1, .gpu = -1, .open_only = open_only };
    return vg_store_incidents_page(st, &f, 0, limit);
}

json_t *vg_store_incidents_page(struct vg_store *st, const struct vg_incident_filter *f, int64_t before, int limit)
{
    struct vg_stmt *s = vg_store_prep(st,
                           "SELECT " INCIDENT_COLS " FROM incidents WHERE (?1 IS NULL OR node=?1)"
                           " AND (?2=0 OR open=1) AND (?3<=0 OR id<?3) AND (?5 IS NULL OR kind=?5)"
                           " AND (?6 IS NULL OR code=?6) AND (?7 IS NULL OR pci=?7) AND (?8 IS NULL OR gpu=?8)"
                           " ORDER BY id DESC LIMIT ?4",
                           "siiisdsd", f->node, (int64_t)f->open_only, before,
                           (int64_t)(limit > 0 ? limit : INT64_MAX), f->kind, f->code, f->pci, f->gpu);
    json_t *arr = json_array();
    while (s && vg_store_row(st, s)) json_array_append_new(arr, incident_row(st, s));
    vg_store_done(st, s);
    return arr;
}

json_t *vg_store_incident(struct vg_store *st, int64_t id)
{
    struct vg_stmt *s = vg_store_prep(st, "SELECT " INCIDENT_COLS " FROM incidents WHERE id=?1", "i", id);
    json_t *j = s && vg_store_row(st, s) ? incident_row(st, s) : NULL;
    vg_store_done(st, s);
    return j;
}

json_t *vg_store_nodes(struct vg_store *st)
{
    struct vg_stmt *s = vg_store_prep(st,
                           "SELECT node, sum(open), count(*), max(last),"
                           " max(CASE WHEN open=1 THEN CASE action WHEN 'drain-rma' THEN 4 WHEN 'reboot' THEN 3"
                           " WHEN 'reset-gpu' THEN 2 WHEN 'restart-app' THEN 1 ELSE 0 END END)"
                           " FROM incidents GROUP BY node ORDER BY node",
                           "");
    json_t *arr = json_array();
    while (s && vg_store_row(st, s)) {
        json_t *j = json_object();
        json_object_set_new(j, "node", json_string(vg_store_text(st, s, 0)));
        json_object_set_new(j, "open_incidents", json_integer(vg_store_int(st, s, 1)));
        json_object_set_new(j, "incidents", json_integer(vg_store_int(st, s, 2)));
        json_object_set_new(j, "last_event", vg_json_time(vg_store_int(st, s, 3)));
        json_object_set_new(j, "worst_open_action",
                            vg_store_null(st, s, 4)
                                ? json_null()
                                : json_string(vg_action_name((enum vg_action)(int)vg_store_int(st, s, 4))));
        json_array_append_new(arr, j);
    }
    vg_store_done(st, s);
    return arr;
}

json_t *vg_store_returns(struct vg_store *st, int64_t since_ms)
{
    struct vg_stmt *s = vg_store_prep(st,
                           "SELECT i.node, i.id, s.at, s.detail FROM incidents i JOIN steps s ON s.incident = i.id"
                           " AND s.step = 'returned' WHERE i.open = 0 AND s.at >= ?1"
                           " AND i.id = (SELECT max(id) FROM incidents j WHERE j.node = i.node) ORDER BY i.node",
                           "i", since_ms);
    json_t *arr = json_array();
    while (s && vg_store_row(st, s)) {
        json_t *j = json_pack("{s:s, s:I, s:o}", "node", vg_store_text(st, s, 0), "incident",
                              (json_int_t)vg_store_int(st, s, 1), "at", vg_json_time(vg_store_int(st, s, 2)));
        vg_json_set_str(j, "detail", vg_store_text(st, s, 3));
        json_array_append_new(arr, j);
    }
    vg_store_done(st, s);
    return arr;
}

json_t *vg_store_incidents_since(struct vg_store *st, int64_t since_ms)
{
    struct vg_stmt *s = vg_store_prep(st,
                           "SELECT " INCIDENT_COLS " FROM incidents WHERE open=1"
                           " OR id IN (SELECT incident FROM steps WHERE at >= ?1) ORDER BY id DESC",
                           "i", since_ms);
    json_t *arr = json_array();
    while (s && vg_store_row(st, s)) json_array_append_new(arr, incident_row(st, s));
    vg_store_done(st, s);
    return arr;
}

int vg_store_counts(struct vg_store *st, int64_t *incidents, int64_t *open, int64_t *messages)
{
    struct vg_stmt *s = vg_store_prep(st,
                           "SELECT (SELECT count(*) FROM incidents), (SELECT count(*) FROM incidents WHERE open=1),"
                           " (SELECT count(*) FROM messages)",
                           "");
    if (!vg_store_row(st, s)) {
        vg_store_done(st, s);
        return -1;
    }
    *incidents = vg_store_int(st, s, 0);
    *open = vg_store_int(st, s, 1);
    *messages = vg_store_int(st, s, 2);
    vg_store_done(st, s);
    return 0;
}

int vg_store_put_audit(struct vg_store *st, const char *node, int64_t at, const char *report)
{
    int rc = vg_store_run(st, vg_store_prep(st, "INSERT INTO audits(node, at, report) VALUES(?1,?2,?3)"
                                            " ON CONFLICT(node) DO UPDATE SET at=excluded.at, report=excluded.report", "sis", node, at,
                          report));
    return rc;
}

int vg_store_audits_each(struct vg_store *st, const char *after, int limit,
                         int (*cb)(void *ctx, const char *node, int64_t at, const char *report), void *ctx)
{
    struct vg_stmt *s = vg_store_prep(st, "SELECT node, at, report FROM audits WHERE ?1 IS NULL OR node > ?1 ORDER BY node"
                               " LIMIT ?2", "si", after, (int64_t)(limit > 0 ? limit : INT64_MAX));
    if (!s) return -1;
    int rc;
    while ((rc = st->drv->step(st, s)) == 1)
        if (cb(ctx, vg_store_text(st, s, 0), vg_store_int(st, s, 1),
               vg_store_text(st, s, 2)))
            break;
    vg_store_done(st, s);
    return rc < 0 ? -1 : 0;
}

int vg_store_put_burnin(struct vg_store *st, const char *node, int64_t at, const char *suite, const char *result,
                        const char *tests, const char *source)
{
    int rc = vg_store_run(st, vg_store_prep(st, "INSERT INTO burnin(node, at, suite, result, tests, source) VALUES(?1,?2,?3,?4,?5,?6)",
                          "sissss", node, at, suite, result, tests, source));
    return rc;
}

json_t *vg_store_burnin(struct vg_store *st, const char *node, int64_t since_ms)
{
    struct vg_stmt *s = vg_store_prep(st,
                           "SELECT node, at, suite, result, tests, source FROM burnin WHERE at >= ?1 AND"
                           " (?2 IS NULL OR node = ?2) ORDER BY node, at",
                           "is", since_ms, node);
    json_t *arr = json_array();
    while (s && vg_store_row(st, s)) {
        json_t *tests = json_loads(vg_store_text(st, s, 4), 0, NULL);
        json_array_append_new(arr, json_pack("{s:s, s:I, s:s, s:s, s:o, s:s}", "node",
                                             vg_store_text(st, s, 0), "at_ms",
                                             (json_int_t)vg_store_int(st, s, 1), "suite",
                                             vg_store_text(st, s, 2), "result",
                                             vg_store_text(st, s, 3), "tests",
                                             tests ? tests : json_array(), "source",
                                             vg_store_text(st, s, 5)));
    }
    vg_store_done(st, s);
    return arr;
}

int vg_store_burnin_each(struct vg_store *st, const char *node, int64_t since_ms,
                         int (*cb)(void *ctx, const char *node, int64_t at, const char *suite, const char *result,
                                   const char *tests),
                         void *ctx)
{
    struct vg_stmt *s = vg_store_prep(st,
                           "SELECT node, at, suite, result, tests FROM burnin WHERE at >= ?1 AND"
                           " (?2 IS NULL OR node = ?2) ORDER BY node, at",
                           "is", since_ms, node);
    if (!s) return -1;
    int rc;
    while ((rc = st->drv->step(st, s)) == 1)
        if (cb(ctx, vg_store_text(st, s, 0), vg_store_int(st, s, 1),
               vg_store_text(st, s, 2), vg_store_text(st, s, 3),
               vg_store_text(st, s, 4)))
            break;
    vg_store_done(st, s);
    return rc < 0 ? -1 : 0;
}

int vg_store_burnin_trim(struct vg_store *st, const char *node, int keep)
{
    struct vg_stmt *s = vg_store_prep(st,
                          "DELETE FROM burnin WHERE node = ?1 AND rowid NOT IN"
                          " (SELECT rowid FROM burnin WHERE node = ?1 ORDER BY at DESC, rowid DESC LIMIT ?2)"
                          " RETURNING 1",
                          "si", node, (int64_t)keep);
    if (!s) return -1;
    int n = 0, rc;
    while ((rc = st->drv->step(st, s)) == 1) n++;
    vg_store_done(st, s);
    return rc < 0 ? -1 : n;
}

int vg_store_set_seen(struct vg_store *st, const char *node, const char *state, int64_t at, const char *detail)
{
    int rc = vg_store_run(st, vg_store_prep(st, "INSERT INTO nodes_seen(node, state, at, detail) VALUES(?1,?2,?3,?4) ON CONFLICT(node)"
                                            " DO UPDATE SET state=excluded.state, at=excluded.at, detail=excluded.detail", "ssis",
                          node, state, at, detail));
    return rc;
}

json_t *vg_store_seen(struct vg_store *st)
{
    struct vg_stmt *s = vg_store_prep(st, "SELECT node, state, at, detail FROM nodes_seen ORDER BY node", "");
    json_t *obj = json_object();
    while (s && vg_store_row(st, s)) {
        json_t *j = json_pack("{s:s, s:o}", "state", vg_store_text(st, s, 1), "at",
                              vg_json_time(vg_store_int(st, s, 2)));
        vg_json_set_str(j, "detail", vg_store_text(st, s, 3));
        json_object_set_new(obj, vg_store_text(st, s, 0), j);
    }
    vg_store_done(st, s);
    return obj;
}
