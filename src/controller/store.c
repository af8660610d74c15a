/* store.c — the incident store on SQLite (WAL, synchronous=FULL); see store.h. */
#include "controller/store.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const step_names[VG_STEP_COUNT] = {
    "detected", "isolated", "jobs_requeued", "spare_promoted", "remediated", "returned",
};

const char *vg_step_name(enum vg_step s) { return s < VG_STEP_COUNT ? step_names[s] : "?"; }

struct vg_store {
    sqlite3 *db;
};

static const char schema[] =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=FULL;"
    "PRAGMA busy_timeout=5000;"
    "CREATE TABLE IF NOT EXISTS messages(node TEXT NOT NULL, seq INTEGER NOT NULL, idx INTEGER NOT NULL,"
    "  received INTEGER NOT NULL, incident INTEGER, PRIMARY KEY(node, seq, idx));"
    "CREATE TABLE IF NOT EXISTS incidents(id INTEGER PRIMARY KEY AUTOINCREMENT, node TEXT NOT NULL,"
    "  key TEXT NOT NULL, kind TEXT NOT NULL, code INTEGER, pci TEXT, gpu INTEGER, action TEXT NOT NULL,"
    "  count INTEGER NOT NULL, first INTEGER, last INTEGER, event TEXT NOT NULL, state TEXT NOT NULL,"
    "  open INTEGER NOT NULL DEFAULT 1);"
    "CREATE INDEX IF NOT EXISTS incidents_open ON incidents(node, key, open);"
    "CREATE TABLE IF NOT EXISTS steps(incident INTEGER NOT NULL, step TEXT NOT NULL, at INTEGER NOT NULL,"
    "  detail TEXT, PRIMARY KEY(incident, step));";

int vg_store_open(const char *path, struct vg_store **out, char *err, size_t errlen)
{
    sqlite3 *db;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL) !=
        SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", path, db ? sqlite3_errmsg(db) : "cannot open");
        sqlite3_close(db);
        return -1;
    }
    char *msg = NULL;
    if (sqlite3_exec(db, schema, NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", path, msg ? msg : "schema failed");
        sqlite3_free(msg);
        sqlite3_close(db);
        return -1;
    }
    struct vg_store *st = vg_xcalloc(1, sizeof *st);
    st->db = db;
    *out = st;
    return 0;
}

void vg_store_close(struct vg_store *st)
{
    if (!st) return;
    sqlite3_close(st->db);
    free(st);
}

/* Prepares sql and binds the arguments described by fmt: i = int64, s = text
 * (NULL binds NULL), d = int (-1 binds NULL). */
static sqlite3_stmt *prep(struct vg_store *st, const char *sql, const char *fmt, ...)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK) return NULL;
    va_list ap;
    va_start(ap, fmt);
    for (int i = 0; fmt[i]; i++) {
        if (fmt[i] == 'i') {
            sqlite3_bind_int64(s, i + 1, va_arg(ap, int64_t));
        } else if (fmt[i] == 'd') {
            int v = va_arg(ap, int);
            if (v < 0) sqlite3_bind_null(s, i + 1);
            else sqlite3_bind_int(s, i + 1, v);
        } else {
            const char *v = va_arg(ap, const char *);
            if (v) sqlite3_bind_text(s, i + 1, v, -1, SQLITE_TRANSIENT);
            else sqlite3_bind_null(s, i + 1);
        }
    }
    va_end(ap);
    return s;
}

/* Runs a statement that returns no rows; returns 0 or -1. */
static int run(sqlite3_stmt *s)
{
    if (!s) return -1;
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : -1;
}

int vg_store_accept(struct vg_store *st, const char *node, int64_t seq, int idx,
                    const struct vg_event *e, int64_t now, int64_t window_ms,
                    int64_t *incident, bool *is_new, bool *duplicate)
{
    *duplicate = false;
    *is_new = false;
    *incident = 0;
    if (sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) return -1;
    sqlite3_stmt *s = prep(st, "SELECT incident FROM messages WHERE node=?1 AND seq=?2 AND idx=?3", "sid",
                           node, seq, idx);
    if (!s) goto fail;
    if (sqlite3_step(s) == SQLITE_ROW) {
        *duplicate = true;
        *incident = sqlite3_column_int64(s, 0);
        sqlite3_finalize(s);
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
        return 0;
    }
    sqlite3_finalize(s);

    char key[128];
    vg_event_key(e, key, sizeof key);
    int64_t when = e->last_ms ? e->last_ms : e->time_ms ? e->time_ms : now;
    /* An event folds into the open incident when it began within the window
     * of the incident's last event: an agent's folded repeats (first = the
     * incident's first event) join it however long the storm went on. */
    int64_t start = e->first_ms && e->first_ms < when ? e->first_ms : when;
    s = prep(st, "SELECT id, last FROM incidents WHERE node=?1 AND key=?2 AND open=1 ORDER BY id DESC LIMIT 1",
             "ss", node, key);
    if (!s) goto fail;
    int64_t id = 0;
    if (sqlite3_step(s) == SQLITE_ROW && start - sqlite3_column_int64(s, 1) <= window_ms)
        id = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);

    if (id) {
        if (run(prep(st, "UPDATE incidents SET count=count+?1, last=max(last, ?2) WHERE id=?3", "iii",
                     (int64_t)e->count, when, id)))
            goto fail;
    } else {
        json_t *j = vg_event_to_json(e);
        json_object_set_new(j, "node", json_string(node));
        char *ev = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        int64_t first = e->first_ms ? e->first_ms : when;
        int rc = run(prep(st,
                          "INSERT INTO incidents(node, key, kind, code, pci, gpu, action, count, first, last,"
                          " event, state) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,'open')",
                          "sssdsdsiiis", node, key, e->kind, e->code, e->pci[0] ? e->pci : NULL, e->gpu,
                          vg_action_name(e->action), (int64_t)e->count, first, when, ev));
        free(ev);
        if (rc) goto fail;
        id = sqlite3_last_insert_rowid(st->db);
        *is_new = true;
        if (run(prep(st, "INSERT INTO steps(incident, step, at, detail) VALUES(?1,'detected',?2,?3)", "iis", id,
                     now, e->source[0] ? e->source : NULL)))
            goto fail;
    }
    if (run(prep(st, "INSERT INTO messages(node, seq, idx, received, incident) VALUES(?1,?2,?3,?4,?5)", "sidii",
                 node, seq, idx, now, id)))
        goto fail;
    if (sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) goto fail;
    *incident = id;
    return 0;
fail:
    sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

int vg_store_step(struct vg_store *st, int64_t incident, enum vg_step step, int64_t at, const char *detail)
{
    if (step >= VG_STEP_COUNT) return -1;
    return run(prep(st, "INSERT OR IGNORE INTO steps(incident, step, at, detail) VALUES(?1,?2,?3,?4)", "isis",
                    incident, step_names[step], at, detail));
}

int vg_store_set_state(struct vg_store *st, int64_t incident, const char *state)
{
    int open = strcmp(state, "closed") != 0;
    return run(prep(st, "UPDATE incidents SET state=?1, open=?2 WHERE id=?3", "sii", state, (int64_t)open,
                    incident));
}

static json_t *incident_row(struct vg_store *st, sqlite3_stmt *s)
{
    int64_t id = sqlite3_column_int64(s, 0);
    json_t *j = json_object();
    json_object_set_new(j, "id", json_integer(id));
    json_object_set_new(j, "node", json_string((const char *)sqlite3_column_text(s, 1)));
    json_object_set_new(j, "kind", json_string((const char *)sqlite3_column_text(s, 2)));
    json_object_set_new(j, "code", sqlite3_column_type(s, 3) == SQLITE_NULL ? json_null()
                                                                          : json_integer(sqlite3_column_int(s, 3)));
    vg_json_set_str(j, "pci", (const char *)sqlite3_column_text(s, 4));
    json_object_set_new(j, "gpu", sqlite3_column_type(s, 5) == SQLITE_NULL ? json_null()
                                                                         : json_integer(sqlite3_column_int(s, 5)));
    json_object_set_new(j, "action", json_string((const char *)sqlite3_column_text(s, 6)));
    json_object_set_new(j, "count", json_integer(sqlite3_column_int64(s, 7)));
    json_object_set_new(j, "first", vg_json_time(sqlite3_column_int64(s, 8)));
    json_object_set_new(j, "last", vg_json_time(sqlite3_column_int64(s, 9)));
    json_object_set_new(j, "state", json_string((const char *)sqlite3_column_text(s, 11)));
    json_t *ev = json_loads((const char *)sqlite3_column_text(s, 10), 0, NULL);
    json_object_set_new(j, "event", ev ? ev : json_null());
    json_t *steps = json_object();
    for (int i = 0; i < VG_STEP_COUNT; i++) json_object_set_new(steps, step_names[i], json_null());
    sqlite3_stmt *q = prep(st, "SELECT step, at, detail FROM steps WHERE incident=?1", "i", id);
    while (q && sqlite3_step(q) == SQLITE_ROW) {
        json_t *step = json_object();
        json_object_set_new(step, "at", vg_json_time(sqlite3_column_int64(q, 1)));
        vg_json_set_str(step, "detail", (const char *)sqlite3_column_text(q, 2));
        json_object_set_new(steps, (const char *)sqlite3_column_text(q, 0), step);
    }
    sqlite3_finalize(q);
    json_object_set_new(j, "steps", steps);
    return j;
}

#define INCIDENT_COLS "id, node, kind, code, pci, gpu, action, count, first, last, event, state"

json_t *vg_store_incidents(struct vg_store *st, const char *node, bool open_only, int limit)
{
    sqlite3_stmt *s = prep(st,
                           "SELECT " INCIDENT_COLS " FROM incidents WHERE (?1 IS NULL OR node=?1)"
                           " AND (?2=0 OR open=1) ORDER BY id DESC LIMIT ?3",
                           "sii", node, (int64_t)open_only, (int64_t)(limit > 0 ? limit : -1));
    json_t *arr = json_array();
    while (s && sqlite3_step(s) == SQLITE_ROW) json_array_append_new(arr, incident_row(st, s));
    sqlite3_finalize(s);
    return arr;
}

json_t *vg_store_incident(struct vg_store *st, int64_t id)
{
    sqlite3_stmt *s = prep(st, "SELECT " INCIDENT_COLS " FROM incidents WHERE id=?1", "i", id);
    json_t *j = s && sqlite3_step(s) == SQLITE_ROW ? incident_row(st, s) : NULL;
    sqlite3_finalize(s);
    return j;
}

json_t *vg_store_nodes(struct vg_store *st)
{
    sqlite3_stmt *s = prep(st,
                           "SELECT node, sum(open), count(*), max(last),"
                           " max(CASE WHEN open=1 THEN CASE action WHEN 'drain-rma' THEN 4 WHEN 'reboot' THEN 3"
                           " WHEN 'reset-gpu' THEN 2 WHEN 'restart-app' THEN 1 ELSE 0 END END)"
                           " FROM incidents GROUP BY node ORDER BY node",
                           "");
    json_t *arr = json_array();
    while (s && sqlite3_step(s) == SQLITE_ROW) {
        json_t *j = json_object();
        json_object_set_new(j, "node", json_string((const char *)sqlite3_column_text(s, 0)));
        json_object_set_new(j, "open_incidents", json_integer(sqlite3_column_int64(s, 1)));
        json_object_set_new(j, "incidents", json_integer(sqlite3_column_int64(s, 2)));
        json_object_set_new(j, "last_event", vg_json_time(sqlite3_column_int64(s, 3)));
        json_object_set_new(j, "worst_open_action",
                            sqlite3_column_type(s, 4) == SQLITE_NULL
                                ? json_null()
                                : json_string(vg_action_name((enum vg_action)sqlite3_column_int(s, 4))));
        json_array_append_new(arr, j);
    }
    sqlite3_finalize(s);
    return arr;
}

int vg_store_counts(struct vg_store *st, int64_t *incidents, int64_t *open, int64_t *messages)
{
    sqlite3_stmt *s = prep(st,
                           "SELECT (SELECT count(*) FROM incidents), (SELECT count(*) FROM incidents WHERE open=1),"
                           " (SELECT count(*) FROM messages)",
                           "");
    if (!s || sqlite3_step(s) != SQLITE_ROW) {
        sqlite3_finalize(s);
        return -1;
    }
    *incidents = sqlite3_column_int64(s, 0);
    *open = sqlite3_column_int64(s, 1);
    *messages = sqlite3_column_int64(s, 2);
    sqlite3_finalize(s);
    return 0;
}
