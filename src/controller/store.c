/* store.c — the incident store on SQLite (WAL, synchronous=FULL); see store.h. */
#include "controller/store.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static const char *const step_names[VG_STEP_COUNT] = {
    "detected", "isolated", "jobs_requeued", "spare_promoted", "remediated", "returned",
};

const char *vg_step_name(enum vg_step s) { return s < VG_STEP_COUNT ? step_names[s] : "?"; }

#define VG_STMT_CACHE 24 /* prepared statements kept per connection */

struct vg_store {
    sqlite3 *db;
    struct { const char *sql; sqlite3_stmt *s; bool busy; } cache[VG_STMT_CACHE]; /* keyed by the SQL's address */
    char err[256];   /* SQLite's reason for the last failure (vg_store_error) */
};

/* An event's identity: the agent's node, its spool's life ("" for agents that
 * send none), the message number and the index in the message. */
#define MESSAGES_TABLE(name)                                                                              \
    "CREATE TABLE IF NOT EXISTS " name "(node TEXT NOT NULL, spool TEXT NOT NULL DEFAULT '',"          \
    "  seq INTEGER NOT NULL, idx INTEGER NOT NULL, received INTEGER NOT NULL, incident INTEGER,"         \
    "  PRIMARY KEY(node, spool, seq, idx));"

/* The time of the store's oldest record, one row per table (NULL when empty). */
#define OLDEST_RECORD                                                                                   \
    "SELECT min(received) AS t FROM messages UNION ALL SELECT min(at) FROM steps"                      \
    " UNION ALL SELECT min(at) FROM audits UNION ALL SELECT min(at) FROM burnin"                        \
    " UNION ALL SELECT min(at) FROM nodes_seen"

static const char schema[] =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=FULL;"
    MESSAGES_TABLE("messages")
    "CREATE TABLE IF NOT EXISTS incidents(id INTEGER PRIMARY KEY AUTOINCREMENT, node TEXT NOT NULL,"
    "  key TEXT NOT NULL, kind TEXT NOT NULL, code INTEGER, pci TEXT, gpu INTEGER, action TEXT NOT NULL,"
    "  count INTEGER NOT NULL, first INTEGER, last INTEGER, event TEXT NOT NULL, state TEXT NOT NULL,"
    "  open INTEGER NOT NULL DEFAULT 1);"
    "CREATE INDEX IF NOT EXISTS incidents_open ON incidents(node, key, open);"
    "CREATE TABLE IF NOT EXISTS steps(incident INTEGER NOT NULL, step TEXT NOT NULL, at INTEGER NOT NULL,"
    "  detail TEXT, PRIMARY KEY(incident, step));"
    "CREATE TABLE IF NOT EXISTS audits(node TEXT PRIMARY KEY, at INTEGER NOT NULL, report TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS burnin(node TEXT NOT NULL, at INTEGER NOT NULL, suite TEXT NOT NULL,"
    "  result TEXT NOT NULL, tests TEXT NOT NULL, source TEXT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS burnin_node ON burnin(node, at);"
    "CREATE TABLE IF NOT EXISTS nodes_seen(node TEXT PRIMARY KEY, state TEXT NOT NULL, at INTEGER NOT NULL,"
    "  detail TEXT);"
    /* when the store began (the controller's first record): a store from before
     * this row gets its oldest record's time */
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
    "INSERT OR IGNORE INTO meta(key, value) SELECT 'created', min(t) FROM (" OLDEST_RECORD
    "  UNION ALL SELECT CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));";

/* A store written before messages carried the spool id: rebuild the table
 * with the column (old rows get spool "") and the wider key, in one transaction. */
static const char migrate_spool[] =
    "BEGIN IMMEDIATE;" MESSAGES_TABLE("messages_spool")
    "INSERT INTO messages_spool(node, spool, seq, idx, received, incident)"
    "  SELECT node, '', seq, idx, received, incident FROM messages;"
    "DROP TABLE messages;"
    "ALTER TABLE messages_spool RENAME TO messages;"
    "COMMIT;";

static bool has_spool_column(sqlite3 *db)
{
    sqlite3_stmt *s;
    bool found = false;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info('messages') WHERE name='spool'", -1, &s, NULL) !=
        SQLITE_OK)
        return false;
    found = sqlite3_step(s) == SQLITE_ROW;
    sqlite3_finalize(s);
    return found;
}

/* Waits for another connection's write transaction in 1 ms steps, for up to
 * 5 s (SQLite's own busy_timeout sleeps up to 100 ms at a time, which shows
 * in the intake's latency when the executor and the intake both write). */
static int busy_wait(void *arg, int tries)
{
    (void)arg;
    if (tries >= 5000) return 0;
    struct timespec ts = { 0, 1000000 };
    nanosleep(&ts, NULL);
    return 1;
}

static int open_db(const char *path, int flags, sqlite3 **out, char *err, size_t errlen)
{
    sqlite3 *db;
    if (sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", path, db ? sqlite3_errmsg(db) : "cannot open");
        sqlite3_close(db);
        return -1;
    }
    sqlite3_busy_handler(db, busy_wait, NULL);
    *out = db;
    return 0;
}

int vg_store_open(const char *path, struct vg_store **out, char *err, size_t errlen)
{
    sqlite3 *db;
    if (open_db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &db, err, errlen)) return -1;
    char *msg = NULL;
    if (sqlite3_exec(db, schema, NULL, NULL, &msg) != SQLITE_OK ||
        (!has_spool_column(db) && sqlite3_exec(db, migrate_spool, NULL, NULL, &msg) != SQLITE_OK)) {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
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

int vg_store_open_reader(const char *path, struct vg_store **out, char *err, size_t errlen)
{
    sqlite3 *db;
    if (open_db(path, SQLITE_OPEN_READONLY, &db, err, errlen)) return -1;
    if (sqlite3_exec(db, "PRAGMA query_only=1;", NULL, NULL, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(db));
        sqlite3_close(db);
        return -1;
    }
    struct vg_store *st = vg_xcalloc(1, sizeof *st);
    st->db = db;
    *out = st;
    return 0;
}

int vg_store_begin(struct vg_store *st)
{
    if (sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK) return 0;
    snprintf(st->err, sizeof st->err, "%s", sqlite3_errmsg(st->db));
    return -1;
}

int vg_store_commit(struct vg_store *st)
{
    if (sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK) return 0;
    snprintf(st->err, sizeof st->err, "%s", sqlite3_errmsg(st->db));
    sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

void vg_store_rollback(struct vg_store *st) { sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL); }

const char *vg_store_error(const struct vg_store *st) { return st->err[0] ? st->err : "unknown error"; }

void vg_store_close(struct vg_store *st)
{
    if (!st) return;
    for (int i = 0; i < VG_STMT_CACHE; i++) sqlite3_finalize(st->cache[i].s);
    sqlite3_close(st->db);
    free(st);
}

/* Prepares sql and binds the arguments described by fmt: i = int64, s = text
 * (NULL binds NULL), d = int (-1 binds NULL). */
static sqlite3_stmt *prep(struct vg_store *st, const char *sql, const char *fmt, ...)
{
    /* A statement is prepared once per connection and reused (done() resets
     * it): preparing costs more than running these.  One in use by another
     * thread is not shared: that caller gets a statement of its own. */
    sqlite3_stmt *s = NULL;
    sqlite3_mutex_enter(sqlite3_db_mutex(st->db));
    int slot = -1;
    for (int i = 0; i < VG_STMT_CACHE && !s; i++) {
        if (st->cache[i].sql == sql && !st->cache[i].busy) s = st->cache[i].s, st->cache[i].busy = true;
        else if (!st->cache[i].sql && slot < 0) slot = i;
    }
    if (!s) {
        if (sqlite3_prepare_v3(st->db, sql, -1, slot >= 0 ? SQLITE_PREPARE_PERSISTENT : 0, &s, NULL) != SQLITE_OK) {
            sqlite3_mutex_leave(sqlite3_db_mutex(st->db));
            return NULL;
        }
        if (slot >= 0) st->cache[slot].sql = sql, st->cache[slot].s = s, st->cache[slot].busy = true;
    }
    sqlite3_mutex_leave(sqlite3_db_mutex(st->db));
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

/* Ends the use of a statement from prep(): back to the cache, or finalized. */
static void done(struct vg_store *st, sqlite3_stmt *s)
{
    if (!s) return;
    sqlite3_mutex_enter(sqlite3_db_mutex(st->db));
    for (int i = 0; i < VG_STMT_CACHE; i++)
        if (st->cache[i].s == s) {
            sqlite3_reset(s);
            sqlite3_clear_bindings(s);
            st->cache[i].busy = false;
            sqlite3_mutex_leave(sqlite3_db_mutex(st->db));
            return;
        }
    sqlite3_mutex_leave(sqlite3_db_mutex(st->db));
    sqlite3_finalize(s);
}

/* Runs a statement that returns no rows; returns 0 or -1. */
static int run(struct vg_store *st, sqlite3_stmt *s)
{
    if (!s) return -1;
    int rc = sqlite3_step(s);
    done(st, s);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* The savepoints the intake uses, as statements prepared once (run for every
 * event); another name is run through sqlite3_exec. */
static const char *const savepoint_sql[][4] = {
    { "accept", "SAVEPOINT accept", "RELEASE accept", "ROLLBACK TO accept" },
    { "message", "SAVEPOINT message", "RELEASE message", "ROLLBACK TO message" },
};

int vg_store_savepoint(struct vg_store *st, const char *name, int what)
{
    int rc = -1;
    for (size_t i = 0; i < sizeof savepoint_sql / sizeof savepoint_sql[0]; i++) {
        if (strcmp(savepoint_sql[i][0], name)) continue;
        if (what == 0) rc = run(st, prep(st, savepoint_sql[i][1], ""));
        else if (what > 0) rc = run(st, prep(st, savepoint_sql[i][2], ""));
        else rc = run(st, prep(st, savepoint_sql[i][3], "")) || run(st, prep(st, savepoint_sql[i][2], "")) ? -1 : 0;
        goto out;
    }
    char sql[96];
    if (what == 0) snprintf(sql, sizeof sql, "SAVEPOINT \"%s\"", name);
    else if (what > 0) snprintf(sql, sizeof sql, "RELEASE \"%s\"", name);
    else snprintf(sql, sizeof sql, "ROLLBACK TO \"%s\"; RELEASE \"%s\"", name, name);
    rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
out:
    if (rc) {
        snprintf(st->err, sizeof st->err, "%s", sqlite3_errmsg(st->db));
    }
    return rc;
}

/* How long before its `returned` step a node may already have been back: a
 * resume by someone else is seen at the executor's next look (every 2 s
 * while a node vigil isolated is out), so the step can be that late. */
#define RETURN_UNSEEN_MS 3000

/* The incident an event belongs to though it is closed: repeats that all
 * happened before the node was returned to service (an agent's folded
 * repeats, sent when it learns of the return or when its window closes) join
 * the incident that was open then, the newest of that node and key, instead
 * of opening a new one on a node just back in service.  A repeat in the last
 * RETURN_UNSEEN_MS before the step may have come after an unseen resume: it
 * opens an incident (a fault is never dropped on a guess).  *id 0: none. */
static int returned_before(struct vg_store *st, const char *node, const char *key, int64_t start, int64_t when,
                           int64_t window_ms, int64_t *id)
{
    sqlite3_stmt *s = prep(st,
                           "SELECT i.id, i.last, r.at FROM incidents i JOIN steps r ON r.incident = i.id"
                           " AND r.step = 'returned' WHERE i.node=?1 AND i.key=?2 AND i.open=0"
                           " ORDER BY i.id DESC LIMIT 1",
                           "ss", node, key);
    if (!s) return -1;
    *id = 0;
    if (sqlite3_step(s) == SQLITE_ROW && when + RETURN_UNSEEN_MS <= sqlite3_column_int64(s, 2) &&
        start - sqlite3_column_int64(s, 1) <= window_ms)
        *id = sqlite3_column_int64(s, 0);
    done(st, s);
    return 0;
}

int64_t vg_store_first_record(struct vg_store *st)
{
    /* a store only ever opened read-only since it was written has no meta row */
    sqlite3_stmt *s = prep(st, "SELECT value FROM meta WHERE key = 'created'", "");
    int64_t at = s && sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
    done(st, s);
    if (at) return at;
    s = prep(st, "SELECT min(t) FROM (" OLDEST_RECORD ")", "");
    at = s && sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
    done(st, s);
    return at;
}

int64_t vg_store_last_return(struct vg_store *st, const char *node)
{
    sqlite3_stmt *s = prep(st,
                           "SELECT max(r.at) FROM incidents i JOIN steps r ON r.incident = i.id"
                           " AND r.step = 'returned' WHERE i.node=?1",
                           "s", node);
    int64_t at = s && sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
    done(st, s);
    return at;
}

int vg_store_accept(struct vg_store *st, const char *node, const char *spool, int64_t seq, int idx,
                    const struct vg_event *e, int64_t now, int64_t window_ms,
                    int64_t *incident, bool *is_new, bool *duplicate)
{
    *duplicate = false;
    *is_new = false;
    *incident = 0;
    if (vg_store_savepoint(st, "accept", 0)) return -1;
    sqlite3_stmt *s = prep(st, "SELECT incident FROM messages WHERE node=?1 AND spool=?2 AND seq=?3 AND idx=?4",
                           "ssid", node, spool, seq, idx);
    if (!s) goto fail;
    if (sqlite3_step(s) == SQLITE_ROW) {
        *duplicate = true;
        *incident = sqlite3_column_int64(s, 0);
        done(st, s);
        vg_store_savepoint(st, "accept", -1);
        return 0;
    }
    done(st, s);

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
    done(st, s);
    if (!id && returned_before(st, node, key, start, when, window_ms, &id)) goto fail;

    if (id) {
        if (run(st, prep(st, "UPDATE incidents SET count=count+?1, last=max(last, ?2) WHERE id=?3", "iii",
                     (int64_t)e->count, when, id)))
            goto fail;
    } else {
        json_t *j = vg_event_to_json(e);
        json_object_set_new(j, "node", json_string(node));
        char *ev = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        int64_t first = e->first_ms ? e->first_ms : when;
        int rc = run(st, prep(st,
                          "INSERT INTO incidents(node, key, kind, code, pci, gpu, action, count, first, last,"
                          " event, state) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,'open')",
                          "sssdsdsiiis", node, key, e->kind, e->code, e->pci[0] ? e->pci : NULL, e->gpu,
                          vg_action_name(e->action), (int64_t)e->count, first, when, ev));
        free(ev);
        if (rc) goto fail;
        id = sqlite3_last_insert_rowid(st->db);
        *is_new = true;
        if (run(st, prep(st, "INSERT INTO steps(incident, step, at, detail) VALUES(?1,'detected',?2,?3)", "iis", id,
                     now, e->source[0] ? e->source : NULL)))
            goto fail;
    }
    if (run(st, prep(st, "INSERT INTO messages(node, spool, seq, idx, received, incident) VALUES(?1,?2,?3,?4,?5,?6)",
                 "ssidii", node, spool, seq, idx, now, id)))
        goto fail;
    if (vg_store_savepoint(st, "accept", 1)) goto fail;
    *incident = id;
    return 0;
fail:
    snprintf(st->err, sizeof st->err, "%s", sqlite3_errmsg(st->db));
    vg_store_savepoint(st, "accept", -1);
    return -1;
}

int vg_store_step(struct vg_store *st, int64_t incident, enum vg_step step, int64_t at, const char *detail)
{
    if (step >= VG_STEP_COUNT) return -1;
    return vg_store_step_named(st, incident, step_names[step], at, detail);
}

int vg_store_step_named(struct vg_store *st, int64_t incident, const char *step, int64_t at, const char *detail)
{
    return run(st, prep(st, "INSERT OR IGNORE INTO steps(incident, step, at, detail) VALUES(?1,?2,?3,?4)", "isis",
                    incident, step, at, detail));
}

int vg_store_repeats(struct vg_store *st, const char *node, const struct vg_event *e, int64_t since_ms,
                     int64_t before_id)
{
    sqlite3_stmt *q = prep(st,
                           "SELECT COUNT(*) FROM incidents i JOIN steps s ON s.incident = i.id AND s.step = 'detected'"
                           " WHERE i.node = ?1 AND i.kind = ?2 AND i.code IS ?3 AND i.gpu IS ?4 AND s.at >= ?5 AND i.id < ?6",
                           "ssddii", node, e->kind, e->code, e->gpu, since_ms, before_id);
    int n = q && sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_int(q, 0) : 0;
    done(st, q);
    return n;
}

int vg_store_set_state(struct vg_store *st, int64_t incident, const char *state)
{
    int open = strcmp(state, "closed") != 0;
    return run(st, prep(st, "UPDATE incidents SET state=?1, open=?2 WHERE id=?3", "sii", state, (int64_t)open,
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
    done(st, q);
    json_object_set_new(j, "steps", steps);
    return j;
}

#define INCIDENT_COLS "id, node, kind, code, pci, gpu, action, count, first, last, event, state"

json_t *vg_store_incidents(struct vg_store *st, const char *node, bool open_only, int limit)
{
    return vg_store_incidents_page(st, node, open_only, 0, limit);
}

json_t *vg_store_incidents_page(struct vg_store *st, const char *node, bool open_only, int64_t before, int limit)
{
    sqlite3_stmt *s = prep(st,
                           "SELECT " INCIDENT_COLS " FROM incidents WHERE (?1 IS NULL OR node=?1)"
                           " AND (?2=0 OR open=1) AND (?3<=0 OR id<?3) ORDER BY id DESC LIMIT ?4",
                           "siii", node, (int64_t)open_only, before, (int64_t)(limit > 0 ? limit : -1));
    json_t *arr = json_array();
    while (s && sqlite3_step(s) == SQLITE_ROW) json_array_append_new(arr, incident_row(st, s));
    done(st, s);
    return arr;
}

json_t *vg_store_incident(struct vg_store *st, int64_t id)
{
    sqlite3_stmt *s = prep(st, "SELECT " INCIDENT_COLS " FROM incidents WHERE id=?1", "i", id);
    json_t *j = s && sqlite3_step(s) == SQLITE_ROW ? incident_row(st, s) : NULL;
    done(st, s);
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
    done(st, s);
    return arr;
}

json_t *vg_store_open_states(struct vg_store *st)
{
    sqlite3_stmt *s = prep(st, "SELECT id, node, state FROM incidents WHERE open=1 ORDER BY id", "");
    json_t *arr = json_array();
    while (s && sqlite3_step(s) == SQLITE_ROW)
        json_array_append_new(arr, json_pack("{s:I, s:s, s:s}", "id", (json_int_t)sqlite3_column_int64(s, 0), "node",
                                             (const char *)sqlite3_column_text(s, 1), "state",
                                             (const char *)sqlite3_column_text(s, 2)));
    done(st, s);
    return arr;
}

json_t *vg_store_returns(struct vg_store *st, int64_t since_ms)
{
    sqlite3_stmt *s = prep(st,
                           "SELECT i.node, i.id, s.at, s.detail FROM incidents i JOIN steps s ON s.incident = i.id"
                           " AND s.step = 'returned' WHERE i.open = 0 AND s.at >= ?1"
                           " AND i.id = (SELECT max(id) FROM incidents j WHERE j.node = i.node) ORDER BY i.node",
                           "i", since_ms);
    json_t *arr = json_array();
    while (s && sqlite3_step(s) == SQLITE_ROW) {
        json_t *j = json_pack("{s:s, s:I, s:o}", "node", (const char *)sqlite3_column_text(s, 0), "incident",
                              (json_int_t)sqlite3_column_int64(s, 1), "at", vg_json_time(sqlite3_column_int64(s, 2)));
        vg_json_set_str(j, "detail", (const char *)sqlite3_column_text(s, 3));
        json_array_append_new(arr, j);
    }
    done(st, s);
    return arr;
}

json_t *vg_store_incidents_since(struct vg_store *st, int64_t since_ms)
{
    sqlite3_stmt *s = prep(st,
                           "SELECT " INCIDENT_COLS " FROM incidents WHERE open=1"
                           " OR id IN (SELECT incident FROM steps WHERE at >= ?1) ORDER BY id DESC",
                           "i", since_ms);
    json_t *arr = json_array();
    while (s && sqlite3_step(s) == SQLITE_ROW) json_array_append_new(arr, incident_row(st, s));
    done(st, s);
    return arr;
}

int vg_store_counts(struct vg_store *st, int64_t *incidents, int64_t *open, int64_t *messages)
{
    sqlite3_stmt *s = prep(st,
                           "SELECT (SELECT count(*) FROM incidents), (SELECT count(*) FROM incidents WHERE open=1),"
                           " (SELECT count(*) FROM messages)",
                           "");
    if (!s || sqlite3_step(s) != SQLITE_ROW) {
        done(st, s);
        return -1;
    }
    *incidents = sqlite3_column_int64(s, 0);
    *open = sqlite3_column_int64(s, 1);
    *messages = sqlite3_column_int64(s, 2);
    done(st, s);
    return 0;
}

int vg_store_set_states(struct vg_store *st, const int64_t *ids, const char *const *states, size_t n)
{
    /* one transaction when the connection has none open (else each joins it) */
    bool tx = vg_store_begin(st) == 0;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) rc = vg_store_set_state(st, ids[i], states[i] ? states[i] : "recorded");
    if (tx && !rc) rc = vg_store_commit(st);
    else if (tx) sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

int vg_store_put_audit(struct vg_store *st, const char *node, int64_t at, const char *report)
{
    int rc = run(st, prep(st, "INSERT OR REPLACE INTO audits(node, at, report) VALUES(?1,?2,?3)", "sis", node, at,
                          report));
    if (rc) snprintf(st->err, sizeof st->err, "%s", sqlite3_errmsg(st->db));
    return rc;
}

int vg_store_audits_each(struct vg_store *st, const char *after, int limit,
                         int (*cb)(void *ctx, const char *node, int64_t at, const char *report), void *ctx)
{
    sqlite3_stmt *s = prep(st, "SELECT node, at, report FROM audits WHERE ?1 IS NULL OR node > ?1 ORDER BY node"
                               " LIMIT ?2", "si", after, (int64_t)(limit > 0 ? limit : -1));
    if (!s) return -1;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW)
        if (cb(ctx, (const char *)sqlite3_column_text(s, 0), sqlite3_column_int64(s, 1),
               (const char *)sqlite3_column_text(s, 2)))
            break;
    done(st, s);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

int vg_store_put_burnin(struct vg_store *st, const char *node, int64_t at, const char *suite, const char *result,
                        const char *tests, const char *source)
{
    int rc = run(st, prep(st, "INSERT INTO burnin(node, at, suite, result, tests, source) VALUES(?1,?2,?3,?4,?5,?6)",
                          "sissss", node, at, suite, result, tests, source));
    if (rc) snprintf(st->err, sizeof st->err, "%s", sqlite3_errmsg(st->db));
    return rc;
}

json_t *vg_store_burnin(struct vg_store *st, const char *node, int64_t since_ms)
{
    sqlite3_stmt *s = prep(st,
                           "SELECT node, at, suite, result, tests, source FROM burnin WHERE at >= ?1 AND"
                           " (?2 IS NULL OR node = ?2) ORDER BY node, at",
                           "is", since_ms, node);
    json_t *arr = json_array();
    while (s && sqlite3_step(s) == SQLITE_ROW) {
        json_t *tests = json_loads((const char *)sqlite3_column_text(s, 4), 0, NULL);
        json_array_append_new(arr, json_pack("{s:s, s:I, s:s, s:s, s:o, s:s}", "node",
                                             (const char *)sqlite3_column_text(s, 0), "at_ms",
                                             (json_int_t)sqlite3_column_int64(s, 1), "suite",
                                             (const char *)sqlite3_column_text(s, 2), "result",
                                             (const char *)sqlite3_column_text(s, 3), "tests",
                                             tests ? tests : json_array(), "source",
                                             (const char *)sqlite3_column_text(s, 5)));
    }
    done(st, s);
    return arr;
}

int vg_store_burnin_each(struct vg_store *st, const char *node, int64_t since_ms,
                         int (*cb)(void *ctx, const char *node, int64_t at, const char *suite, const char *result,
                                   const char *tests),
                         void *ctx)
{
    sqlite3_stmt *s = prep(st,
                           "SELECT node, at, suite, result, tests FROM burnin WHERE at >= ?1 AND"
                           " (?2 IS NULL OR node = ?2) ORDER BY node, at",
                           "is", since_ms, node);
    if (!s) return -1;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW)
        if (cb(ctx, (const char *)sqlite3_column_text(s, 0), sqlite3_column_int64(s, 1),
               (const char *)sqlite3_column_text(s, 2), (const char *)sqlite3_column_text(s, 3),
               (const char *)sqlite3_column_text(s, 4)))
            break;
    done(st, s);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

int vg_store_burnin_trim(struct vg_store *st, const char *node, int keep)
{
    int rc = run(st, prep(st,
                          "DELETE FROM burnin WHERE node = ?1 AND rowid NOT IN"
                          " (SELECT rowid FROM burnin WHERE node = ?1 ORDER BY at DESC, rowid DESC LIMIT ?2)",
                          "si", node, (int64_t)keep));
    if (rc) snprintf(st->err, sizeof st->err, "%s", sqlite3_errmsg(st->db));
    return rc ? -1 : sqlite3_changes(st->db);
}

int64_t vg_store_bytes(struct vg_store *st)
{
    const char *path = sqlite3_db_filename(st->db, "main");
    if (!path || !*path) return -1;
    struct stat a, w;
    char wal[4200];
    if (stat(path, &a)) return -1;
    snprintf(wal, sizeof wal, "%s-wal", path);
    return (int64_t)a.st_size + (stat(wal, &w) ? 0 : (int64_t)w.st_size);
}

int vg_store_set_seen(struct vg_store *st, const char *node, const char *state, int64_t at, const char *detail)
{
    int rc = run(st, prep(st, "INSERT OR REPLACE INTO nodes_seen(node, state, at, detail) VALUES(?1,?2,?3,?4)", "ssis",
                          node, state, at, detail));
    if (rc) snprintf(st->err, sizeof st->err, "%s", sqlite3_errmsg(st->db));
    return rc;
}

json_t *vg_store_seen(struct vg_store *st)
{
    sqlite3_stmt *s = prep(st, "SELECT node, state, at, detail FROM nodes_seen ORDER BY node", "");
    json_t *obj = json_object();
    while (s && sqlite3_step(s) == SQLITE_ROW) {
        json_t *j = json_pack("{s:s, s:o}", "state", (const char *)sqlite3_column_text(s, 1), "at",
                              vg_json_time(sqlite3_column_int64(s, 2)));
        vg_json_set_str(j, "detail", (const char *)sqlite3_column_text(s, 3));
        json_object_set_new(obj, (const char *)sqlite3_column_text(s, 0), j);
    }
    done(st, s);
    return obj;
}
