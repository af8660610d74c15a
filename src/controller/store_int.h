/* store_int.h — what the store's files share (store.c: the connection,
 * statements, the intake and the reads; store_state.c: the incidents' states
 * and what the executor keeps there to resume after a restart). */
#ifndef VG_STORE_INT_H
#define VG_STORE_INT_H
#include "controller/store.h"
#include <sqlite3.h>

#define VG_STMT_CACHE 48 /* prepared statements kept per connection */

struct vg_store {
    sqlite3 *db;
    struct { const char *sql; sqlite3_stmt *s; bool busy; } cache[VG_STMT_CACHE]; /* keyed by the SQL's address */
    char err[256];   /* SQLite's reason for the last failure (vg_store_error) */
    int code;        /* and its result code (vg_store_corrupt) */
    void (*on_corrupt)(void *ctx, const char *why);   /* vg_store_watch_corrupt */
    void *corrupt_ctx;
};

/* Prepares sql (once per connection, cached by its address) and binds the
 * arguments fmt describes: i = int64, s = text (NULL binds NULL), d = int
 * (-1 binds NULL).  NULL when it cannot be prepared (the reason noted). */
sqlite3_stmt *vg_store_prep(struct vg_store *st, const char *sql, const char *fmt, ...);
/* Ends the use of a statement from vg_store_prep. */
void vg_store_done(struct vg_store *st, sqlite3_stmt *s);
/* Runs a statement that returns no rows and ends its use; 0, or -1 with the
 * reason noted. */
int vg_store_run(struct vg_store *st, sqlite3_stmt *s);
/* Notes SQLite's reason and code for the connection's last failure. */
void vg_store_note(struct vg_store *st);
/* The columns and tables added since the first release, and the incidents'
 * free-text states of stores written before the state was an enum (store_state.c). */
int vg_store_migrate(sqlite3 *db, char *err, size_t errlen);
/* Whether db holds incidents written before they had a detail (not migrated yet). */
bool vg_store_legacy(sqlite3 *db);

#endif
