/* store_conn.c — a store's connection: the driver its target names (a file or
 * sqlite:PATH for SQLite, a postgresql:// URI or a libpq conninfo for
 * PostgreSQL), transactions and savepoints, and the statement calls the
 * store's SQL goes through; see store_int.h. */
#include "controller/store_int.h"
#include "util/strutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The engines, the first that claims a target opening it (SQLite, which
 * claims any path, last). */
static const struct vg_store_driver *const drivers[] = { &vg_store_pg, &vg_store_sqlite };

static const struct vg_store_driver *driver_of(const char *target)
{
    for (size_t i = 0; i < sizeof drivers / sizeof *drivers; i++)
        if (drivers[i]->claims(target)) return drivers[i];
    return &vg_store_sqlite;
}

const char *vg_store_engine(const char *target) { return driver_of(target)->name; }

static int open_as(const char *target, bool reader, struct vg_store **out, char *err, size_t errlen)
{
    struct vg_store *st = vg_xcalloc(1, sizeof *st);
    st->drv = driver_of(target);
    if (st->drv->open(st, target, reader, err, errlen)) {
        free(st);
        return -1;
    }
    *out = st;
    return 0;
}

int vg_store_open(const char *target, struct vg_store **st, char *err, size_t errlen)
{
    return open_as(target, false, st, err, errlen);
}

int vg_store_open_reader(const char *target, struct vg_store **st, char *err, size_t errlen)
{
    return open_as(target, true, st, err, errlen);
}

void vg_store_close(struct vg_store *st)
{
    if (!st) return;
    st->drv->close(st);
    free(st);
}

void vg_store_set_deadline(struct vg_store *st, int ms)
{
    if (st->drv->deadline) st->drv->deadline(st, ms);
}

void vg_store_fail(struct vg_store *st, const char *why, bool corrupt)
{
    snprintf(st->err, sizeof st->err, "%s", why && *why ? why : "unknown error");
    st->corrupt = corrupt;
    if (corrupt && st->on_corrupt) st->on_corrupt(st->corrupt_ctx, st->err);
}

const char *vg_store_error(const struct vg_store *st) { return st->err[0] ? st->err : "unknown error"; }

bool vg_store_corrupt(const struct vg_store *st) { return st->corrupt; }

void vg_store_watch_corrupt(struct vg_store *st, void (*on_corrupt)(void *ctx, const char *why), void *ctx)
{
    st->corrupt_ctx = ctx;
    st->on_corrupt = on_corrupt;
}

int64_t vg_store_bytes(struct vg_store *st) { return st->drv->bytes(st); }

int vg_store_begin(struct vg_store *st) { return st->drv->begin(st); }

int vg_store_commit(struct vg_store *st)
{
    if (!st->drv->exec(st, "COMMIT")) return 0;
    vg_store_rollback(st);
    return -1;
}

void vg_store_rollback(struct vg_store *st)
{
    char keep[sizeof st->err];
    memcpy(keep, st->err, sizeof keep);   /* the failure that led here is the one to tell */
    st->drv->exec(st, "ROLLBACK");
    memcpy(st->err, keep, sizeof keep);
}

bool vg_store_in_tx(struct vg_store *st) { return st->drv->in_tx(st); }

int vg_store_savepoint(struct vg_store *st, const char *name, int what)
{
    /* outside a transaction, one of its own (PostgreSQL has savepoints only
     * inside one): opened by the savepoint, ended by its release or rollback */
    if (what == 0 && !st->drv->in_tx(st)) {
        if (vg_store_begin(st)) return -1;
        vg_strlcpy(st->own_tx, name, sizeof st->own_tx);
    } else if (what != 0 && st->own_tx[0] && !strcmp(st->own_tx, name)) {
        st->own_tx[0] = 0;
        if (what > 0) return vg_store_commit(st);
        vg_store_rollback(st);
        return 0;
    }
    char sql[160];
    if (what == 0) snprintf(sql, sizeof sql, "SAVEPOINT \"%s\"", name);
    else if (what > 0) snprintf(sql, sizeof sql, "RELEASE \"%s\"", name);
    else snprintf(sql, sizeof sql, "ROLLBACK TO \"%s\"; RELEASE \"%s\"", name, name);
    return st->drv->exec(st, sql);
}

struct vg_stmt *vg_store_prep(struct vg_store *st, const char *sql, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    struct vg_stmt *s = st->drv->prep(st, sql, fmt, ap);
    va_end(ap);
    return s;
}

bool vg_store_row(struct vg_store *st, struct vg_stmt *s) { return s && st->drv->step(st, s) == 1; }
int64_t vg_store_int(struct vg_store *st, struct vg_stmt *s, int i) { return st->drv->col_int(s, i); }
const char *vg_store_text(struct vg_store *st, struct vg_stmt *s, int i) { return st->drv->col_text(s, i); }
bool vg_store_null(struct vg_store *st, struct vg_stmt *s, int i) { return st->drv->col_null(s, i); }

void vg_store_done(struct vg_store *st, struct vg_stmt *s)
{
    if (s) st->drv->done(st, s);
}

int vg_store_run(struct vg_store *st, struct vg_stmt *s)
{
    if (!s) return -1;   /* the reason is noted */
    int rc = st->drv->step(st, s);
    vg_store_done(st, s);
    return rc == 0 ? 0 : -1;
}
