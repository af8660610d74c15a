/* store_sqlite_migrate.c — a SQLite store written by an older release
 * brought up to date when a controller opens it: the incidents' columns added
 * since the first release, and their free-text states split into state and
 * detail (rows kept). */
#include "controller/store_sqlite.h"
#include <stdio.h>

/* The incidents' columns added since the first release. */
static const struct { const char *name, *decl; } added[] = {
    { "detail", "TEXT NOT NULL DEFAULT ''" },      { "plan", "TEXT" },
    { "acted_at", "INTEGER" },                      { "acted_boot", "TEXT" },
    { "acted_boot_ms", "INTEGER" },                 { "rung", "INTEGER" },
    { "rung_done", "INTEGER NOT NULL DEFAULT 0" },  { "jobs_unread", "INTEGER NOT NULL DEFAULT 0" },
    { "attempts", "INTEGER NOT NULL DEFAULT 0" },   { "epoch", "TEXT" },
};

/* The free-text states of older stores ("isolated: domain rule …", "held:
 * breaker …", "failed, retrying …", "health check failed, node stays
 * isolated: …") as state and detail.  In an UPDATE every expression reads the
 * row as it was. */
static const char split_states[] =
    "UPDATE incidents SET detail = CASE"
    "  WHEN state IN ('open', 'closed', 'isolated') THEN ''"
    "  WHEN state LIKE 'isolated: %' THEN substr(state, 11)"
    "  WHEN state LIKE 'held: %' THEN substr(state, 7)"
    "  WHEN state LIKE 'recorded: %' THEN substr(state, 11)"
    "  WHEN state LIKE 'dry run: %' THEN substr(state, 10)"
    "  WHEN state LIKE 'failed, %' THEN substr(state, 9)"
    "  ELSE state END,"
    " state = CASE"
    "  WHEN state IN ('open', 'closed') THEN state"
    "  WHEN state LIKE 'isolated%' THEN 'isolated'"
    "  WHEN state LIKE 'held%' THEN 'held'"
    "  WHEN state LIKE 'recorded%' THEN 'recorded'"
    "  WHEN state LIKE 'dry run%' THEN 'dry-run'"
    "  WHEN state LIKE 'failed%' THEN 'failed'"
    "  WHEN state LIKE 'handed off for RMA%' THEN 'rma'"
    "  ELSE 'unrepaired' END;";

static bool has_column(sqlite3 *db, const char *col)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info('incidents') WHERE name=?1", -1, &s, NULL) != SQLITE_OK)
        return false;
    sqlite3_bind_text(s, 1, col, -1, SQLITE_STATIC);
    bool found = sqlite3_step(s) == SQLITE_ROW;
    sqlite3_finalize(s);
    return found;
}

bool vg_store_sqlite_legacy(sqlite3 *db)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name='incidents'", -1, &s, NULL) !=
        SQLITE_OK)
        return false;
    bool table = sqlite3_step(s) == SQLITE_ROW;
    sqlite3_finalize(s);
    return table && !has_column(db, "detail");
}

int vg_store_sqlite_migrate(sqlite3 *db, char *err, size_t errlen)
{
    size_t missing = 0;
    for (size_t i = 0; i < sizeof added / sizeof *added; i++) missing += !has_column(db, added[i].name);
    if (!missing) return 0;
    bool split = !has_column(db, "detail");
    char *msg = NULL;
    int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &msg);
    for (size_t i = 0; i < sizeof added / sizeof *added && rc == SQLITE_OK; i++) {
        if (has_column(db, added[i].name)) continue;
        char sql[160];
        snprintf(sql, sizeof sql, "ALTER TABLE incidents ADD COLUMN %s %s", added[i].name, added[i].decl);
        rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    }
    if (rc == SQLITE_OK && split) rc = sqlite3_exec(db, split_states, NULL, NULL, &msg);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "COMMIT", NULL, NULL, &msg);
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "adding the incidents' state columns: %s", msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    return 0;
}

