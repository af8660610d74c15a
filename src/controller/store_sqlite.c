/* store_sqlite.c — the store's embedded database: SQLite in WAL mode with
 * synchronous=FULL, so an event acknowledged is on disk before the agent hears
 * back and survives kill -9 of the controller.  One file (and its -wal), one
 * writer at a time (BEGIN IMMEDIATE), reads never waiting for it; see
 * store_int.h for the driver's contract. */
#include "controller/store_int.h"
#include "controller/store_sqlite.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define STMT_CACHE 48 /* prepared statements kept per connection */

struct sq {
    sqlite3 *db;
    struct { const char *sql; sqlite3_stmt *s; bool busy; } cache[STMT_CACHE]; /* keyed by the SQL's address */
};

#define DB(st) (((struct sq *)(st)->h)->db)

/* An event's identity: the agent's node, its spool's life ("" for agents that
 * send none), the message number and the index in the message. */
#define MESSAGES_TABLE(name)                                                                              \
    "CREATE TABLE IF NOT EXISTS " name "(node TEXT NOT NULL, spool TEXT NOT NULL DEFAULT '',"          \
    "  seq INTEGER NOT NULL, idx INTEGER NOT NULL, received INTEGER NOT NULL, incident INTEGER,"         \
    "  PRIMARY KEY(node, spool, seq, idx));"

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
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value NOT NULL);";

/* The store's creation time, once (a store from before the row: its oldest
 * record's); later opens do not scan the tables for it. */
static const char created[] =
    "INSERT INTO meta(key, value) SELECT 'created', min(t) FROM (" VG_STORE_OLDEST_RECORD
    "  UNION ALL SELECT CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));";

static bool has_created(sqlite3 *db)
{
    sqlite3_stmt *s = NULL;
    bool yes = sqlite3_prepare_v2(db, "SELECT 1 FROM meta WHERE key = 'created'", -1, &s, NULL) == SQLITE_OK &&
               sqlite3_step(s) == SQLITE_ROW;
    sqlite3_finalize(s);
    return yes;
}

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
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info('messages') WHERE name='spool'", -1, &s, NULL) !=
        SQLITE_OK)
        return false;
    bool found = sqlite3_step(s) == SQLITE_ROW;
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

/* The file a target names: PATH or sqlite:PATH. */
static const char *file_of(const char *target)
{
    return vg_startswith(target, "sqlite:") ? target + 7 : target;
}

static bool sq_claims(const char *target)
{
    (void)target;
    return true;   /* what no other engine claims is a file */
}

static int setup_writer(sqlite3 *db, const char *path, char *err, size_t errlen)
{
    char *msg = NULL;
    if (sqlite3_exec(db, schema, NULL, NULL, &msg) != SQLITE_OK ||
        (!has_spool_column(db) && sqlite3_exec(db, migrate_spool, NULL, NULL, &msg) != SQLITE_OK) ||
        (!has_created(db) && sqlite3_exec(db, created, NULL, NULL, &msg) != SQLITE_OK)) {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        snprintf(err, errlen, "%s: %s", path, msg ? msg : "schema failed");
        sqlite3_free(msg);
        return -1;
    }
    char why[256];
    if (vg_store_sqlite_migrate(db, why, sizeof why)) {
        snprintf(err, errlen, "%s: %s", path, why);
        return -1;
    }
    return 0;
}

static int setup_reader(sqlite3 *db, const char *path, char *err, size_t errlen)
{
    /* a store no controller has opened since the state became a word (read by
     * `vigil report`): its incidents read with an empty detail, the file untouched */
    if ((vg_store_sqlite_legacy(db) &&
         sqlite3_exec(db, "CREATE TEMP VIEW incidents AS SELECT *, '' AS detail FROM main.incidents", NULL, NULL,
                      NULL) != SQLITE_OK) ||
        sqlite3_exec(db, "PRAGMA query_only=1;", NULL, NULL, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(db));
        return -1;
    }
    return 0;
}

static int sq_open(struct vg_store *st, const char *target, bool reader, char *err, size_t errlen)
{
    const char *path = file_of(target);
    sqlite3 *db;
    if (open_db(path, reader ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &db, err, errlen))
        return -1;
    if (reader ? setup_reader(db, path, err, errlen) : setup_writer(db, path, err, errlen)) {
        sqlite3_close(db);
        return -1;
    }
    struct sq *q = vg_xcalloc(1, sizeof *q);
    q->db = db;
    st->h = q;
    return 0;
}

static void sq_close(struct vg_store *st)
{
    struct sq *q = st->h;
    for (int i = 0; i < STMT_CACHE; i++) sqlite3_finalize(q->cache[i].s);
    sqlite3_close(q->db);
    free(q);
}

static void note(struct vg_store *st)
{
    int c = sqlite3_extended_errcode(DB(st)) & 0xff;
    vg_store_fail(st, sqlite3_errmsg(DB(st)), c == SQLITE_CORRUPT || c == SQLITE_NOTADB);
}

static struct vg_stmt *sq_prep(struct vg_store *st, const char *sql, const char *fmt, va_list ap)
{
    /* A statement is prepared once per connection and reused (done() resets
     * it): preparing costs more than running these.  One in use by another
     * thread is not shared: that caller gets a statement of its own. */
    struct sq *q = st->h;
    sqlite3_stmt *s = NULL;
    sqlite3_mutex_enter(sqlite3_db_mutex(q->db));
    int slot = -1;
    for (int i = 0; i < STMT_CACHE && !s; i++) {
        if (q->cache[i].sql == sql && !q->cache[i].busy) s = q->cache[i].s, q->cache[i].busy = true;
        else if (!q->cache[i].sql && slot < 0) slot = i;
    }
    if (!s) {
        if (sqlite3_prepare_v3(q->db, sql, -1, slot >= 0 ? SQLITE_PREPARE_PERSISTENT : 0, &s, NULL) != SQLITE_OK) {
            note(st);
            sqlite3_mutex_leave(sqlite3_db_mutex(q->db));
            return NULL;
        }
        if (slot >= 0) q->cache[slot].sql = sql, q->cache[slot].s = s, q->cache[slot].busy = true;
    }
    sqlite3_mutex_leave(sqlite3_db_mutex(q->db));
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
    return (struct vg_stmt *)s;
}

static int sq_step(struct vg_store *st, struct vg_stmt *s)
{
    int rc = sqlite3_step((sqlite3_stmt *)s);
    if (rc == SQLITE_ROW) return 1;
    if (rc == SQLITE_DONE) return 0;
    note(st);
    return -1;
}

static int64_t sq_int(struct vg_stmt *s, int i) { return sqlite3_column_int64((sqlite3_stmt *)s, i); }
static const char *sq_text(struct vg_stmt *s, int i) { return (const char *)sqlite3_column_text((sqlite3_stmt *)s, i); }
static bool sq_null(struct vg_stmt *s, int i) { return sqlite3_column_type((sqlite3_stmt *)s, i) == SQLITE_NULL; }

/* Back to the cache (reset), or finalized. */
static void sq_done(struct vg_store *st, struct vg_stmt *stmt)
{
    struct sq *q = st->h;
    sqlite3_stmt *s = (sqlite3_stmt *)stmt;
    int rc = SQLITE_OK;
    bool cached = false;
    sqlite3_mutex_enter(sqlite3_db_mutex(q->db));
    for (int i = 0; i < STMT_CACHE && !cached; i++)
        if (q->cache[i].s == s) {
            rc = sqlite3_reset(s);   /* the last step's result: a read that met a corrupt page says so here */
            sqlite3_clear_bindings(s);
            q->cache[i].busy = false;
            cached = true;
        }
    if (!cached) rc = sqlite3_finalize(s);
    int primary = rc & 0xff;
    if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) note(st);
    sqlite3_mutex_leave(sqlite3_db_mutex(q->db));
}

static int sq_exec(struct vg_store *st, const char *sql)
{
    if (sqlite3_exec(DB(st), sql, NULL, NULL, NULL) == SQLITE_OK) return 0;
    note(st);
    return -1;
}

static bool sq_in_tx(struct vg_store *st) { return !sqlite3_get_autocommit(DB(st)); }

static int sq_begin(struct vg_store *st) { return sq_exec(st, "BEGIN IMMEDIATE"); }

static int64_t sq_bytes(struct vg_store *st)
{
    const char *path = sqlite3_db_filename(DB(st), "main");
    if (!path || !*path) return -1;
    struct stat a, w;
    char wal[4200];
    if (stat(path, &a)) return -1;
    snprintf(wal, sizeof wal, "%s-wal", path);
    return (int64_t)a.st_size + (stat(wal, &w) ? 0 : (int64_t)w.st_size);
}

const struct vg_store_driver vg_store_sqlite = {
    .name = "sqlite", .claims = sq_claims, .open = sq_open, .close = sq_close, .prep = sq_prep, .step = sq_step,
    .col_int = sq_int, .col_text = sq_text, .col_null = sq_null, .done = sq_done, .exec = sq_exec,
    .in_tx = sq_in_tx, .begin = sq_begin, .bytes = sq_bytes,
};

int vg_store_verify(const char *target, char *why, size_t n)
{
    const char *path = file_of(target);
    sqlite3 *db;
    if (access(path, F_OK)) return 0;   /* a new store */
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        snprintf(why, n, "%s", db ? sqlite3_errmsg(db) : "cannot open");
        sqlite3_close(db);
        return -1;
    }
    sqlite3_busy_handler(db, busy_wait, NULL);
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &s, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_step(s);
    int verdict;
    if (rc == SQLITE_ROW) {
        const char *res = (const char *)sqlite3_column_text(s, 0);
        verdict = res && !strcmp(res, "ok") ? 0 : 1;
        if (verdict) snprintf(why, n, "%s", res ? res : "quick_check failed");
    } else {
        int c = sqlite3_errcode(db);
        verdict = c == SQLITE_CORRUPT || c == SQLITE_NOTADB ? 1 : -1;
        snprintf(why, n, "%s", sqlite3_errmsg(db));
    }
    sqlite3_finalize(s);
    sqlite3_close(db);
    for (char *c = why; *c; c++)   /* quick_check's report spans lines: the caller's message is one */
        if (*c == '\n') *c = ' ';
    return verdict;
}
