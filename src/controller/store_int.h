/* store_int.h — what the store's files share.  The store's logic (store.c:
 * the intake and the reads; store_state.c: the incidents' states and what the
 * executor keeps to resume) is SQL that runs on every database; a driver
 * (store_sqlite.c, store_pg.c) is the database under it: one struct of
 * function pointers per engine, chosen by the store's target. */
#ifndef VG_STORE_INT_H
#define VG_STORE_INT_H
#include "controller/store.h"
#include <stdarg.h>

/* The time of the store's oldest record, one row per table (NULL when empty). */
#define VG_STORE_OLDEST_RECORD                                                                          \
    "SELECT min(received) AS t FROM messages UNION ALL SELECT min(at) FROM steps"                      \
    " UNION ALL SELECT min(at) FROM audits UNION ALL SELECT min(at) FROM burnin"                        \
    " UNION ALL SELECT min(at) FROM nodes_seen"

/* A statement being run: each driver's own. */
struct vg_stmt;

struct vg_store_driver {
    const char *name;
    /* Whether target names a database of this engine. */
    bool (*claims)(const char *target);
    /* Opens st->h on target (creating the schema unless reader); 0, or -1
     * with the reason in err. */
    int (*open)(struct vg_store *st, const char *target, bool reader, char *err, size_t errlen);
    void (*close)(struct vg_store *st);
    /* Prepares sql (once per connection, cached by its address) with the
     * arguments fmt describes (i = int64, s = text or NULL, d = int, -1 NULL);
     * NULL when it failed (the reason noted).  SQL placeholders are ?N. */
    struct vg_stmt *(*prep)(struct vg_store *st, const char *sql, const char *fmt, va_list ap);
    /* 1 a row, 0 no more rows, -1 failed (the reason noted). */
    int (*step)(struct vg_store *st, struct vg_stmt *s);
    int64_t (*col_int)(struct vg_stmt *s, int i);   /* a boolean reads 0 or 1 */
    const char *(*col_text)(struct vg_stmt *s, int i);   /* NULL for NULL */
    bool (*col_null)(struct vg_stmt *s, int i);
    void (*done)(struct vg_store *st, struct vg_stmt *s);
    /* Runs statements without arguments or rows; 0, or -1 (noted). */
    int (*exec)(struct vg_store *st, const char *sql);
    /* Whether the connection is inside a transaction. */
    bool (*in_tx)(struct vg_store *st);
    /* Starts a write transaction: one writer at a time on the database. */
    int (*begin)(struct vg_store *st);
    int64_t (*bytes)(struct vg_store *st);
    /* How long a request may go unanswered before the connection is dropped
     * (NULL: the engine has no such wait). */
    void (*deadline)(struct vg_store *st, int ms);
};

extern const struct vg_store_driver vg_store_sqlite, vg_store_pg;

struct vg_store {
    const struct vg_store_driver *drv;
    void *h;         /* the driver's connection */
    char err[256];   /* the reason for the last failure (vg_store_error) */
    bool corrupt;    /* it was the database found corrupt (vg_store_corrupt) */
    char own_tx[32]; /* the savepoint that opened a transaction of its own (ended with it) */
    char fence_holder[160];   /* vg_store_fence: plans are committed only under this lease */
    int64_t fence_term;
    bool fenced;     /* the last plan was refused by the fence */
    void (*on_corrupt)(void *ctx, const char *why);   /* vg_store_watch_corrupt */
    void *corrupt_ctx;
};

/* Prepares sql with its arguments (see prep above); NULL when it failed. */
struct vg_stmt *vg_store_prep(struct vg_store *st, const char *sql, const char *fmt, ...);
/* Whether the statement gave a row (false at its end or when it failed). */
bool vg_store_row(struct vg_store *st, struct vg_stmt *s);
int64_t vg_store_int(struct vg_store *st, struct vg_stmt *s, int i);
const char *vg_store_text(struct vg_store *st, struct vg_stmt *s, int i);
bool vg_store_null(struct vg_store *st, struct vg_stmt *s, int i);
/* Ends the use of a statement from vg_store_prep (NULL: nothing). */
void vg_store_done(struct vg_store *st, struct vg_stmt *s);
/* Runs a statement that returns no rows and ends its use; 0, or -1 with the
 * reason noted. */
int vg_store_run(struct vg_store *st, struct vg_stmt *s);
/* A request of this connection unanswered for ms is given up and the
 * connection dropped (PostgreSQL; made again at the next statement). */
void vg_store_set_deadline(struct vg_store *st, int ms);
/* Notes why the last call failed (corrupt: the database is); the store's
 * watch hears of a corrupt one. */
void vg_store_fail(struct vg_store *st, const char *why, bool corrupt);

#endif
