/* store_pg.c — the store on PostgreSQL (libpq, loaded with dlopen): one
 * database shared by several controllers, each with its own connections.
 * Writers take one advisory lock per transaction, so incidents fold the same
 * way whichever controller an event reaches (one writer at a time, as on
 * SQLite); a connection lost outside a transaction is made again at the next
 * statement, one lost inside fails every statement until the rollback (the
 * caller answers 503 and the agent sends again: nothing acknowledged is
 * lost).  Every request has a deadline (PG_DEADLINE_MS, or the connection's
 * own: vg_store_set_deadline); one unanswered by then drops the connection,
 * whether the server hangs or the network between went silent.  The server
 * ends a session of ours left idle inside a transaction for PG_IDLE_TX_MS (a
 * controller frozen or cut off while holding the writers' lock), so the other
 * controllers' writes go on.  TCP keepalives and timeouts are on unless the
 * target sets them.  See store_int.h for the driver's contract. */
#include "controller/store_int.h"
#include "util/pqso.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INT8_OID 20
#define TEXT_OID 25
#define MAX_PARAMS 16
#define WRITERS_LOCK "764201"   /* the advisory lock of the store's writers */
#define PG_DEADLINE_MS 10000    /* a request unanswered this long: the connection is dropped */
#define PG_IDLE_TX_MS "5000"    /* the server ends a session of ours idle this long in a transaction */

struct pg {
    const struct vg_pq *pq;
    PGconn *c;          /* NULL: dropped, made again at the next statement */
    char *target;
    bool reader;
    int deadline_ms;
    bool late;          /* the last request's deadline passed */
    pthread_mutex_t mu;
    struct { const char *sql; char fmt[MAX_PARAMS + 1]; } *prepared;   /* statement "sN" is prepared[N] */
    size_t nprepared;
    bool tx;       /* inside a transaction (begin to COMMIT/ROLLBACK) */
    bool broken;   /* the connection was lost inside it */
};

struct vg_stmt {
    PGresult *res;
    int row, rows;
};

static const char schema[] =
    "BEGIN;"
    "SELECT pg_advisory_xact_lock(764202);"   /* controllers starting together make it once */
    "CREATE TABLE IF NOT EXISTS messages(node TEXT NOT NULL, spool TEXT NOT NULL DEFAULT '', seq BIGINT NOT NULL,"
    "  idx BIGINT NOT NULL, received BIGINT NOT NULL, incident BIGINT, PRIMARY KEY(node, spool, seq, idx));"
    "CREATE TABLE IF NOT EXISTS incidents(id BIGSERIAL PRIMARY KEY, node TEXT NOT NULL, key TEXT NOT NULL,"
    "  kind TEXT NOT NULL, code BIGINT, pci TEXT, gpu BIGINT, action TEXT NOT NULL, count BIGINT NOT NULL,"
    "  first BIGINT, last BIGINT, event TEXT NOT NULL, state TEXT NOT NULL, open BIGINT NOT NULL DEFAULT 1,"
    "  detail TEXT NOT NULL DEFAULT '', plan TEXT, acted_at BIGINT, acted_boot TEXT, acted_boot_ms BIGINT,"
    "  rung BIGINT, rung_done BIGINT NOT NULL DEFAULT 0, jobs_unread BIGINT NOT NULL DEFAULT 0,"
    "  attempts BIGINT NOT NULL DEFAULT 0, epoch TEXT, term BIGINT);"
    "CREATE INDEX IF NOT EXISTS incidents_open ON incidents(node, key, open);"
    "CREATE TABLE IF NOT EXISTS steps(incident BIGINT NOT NULL, step TEXT NOT NULL, at BIGINT NOT NULL,"
    "  detail TEXT, PRIMARY KEY(incident, step));"
    "CREATE TABLE IF NOT EXISTS audits(node TEXT PRIMARY KEY, at BIGINT NOT NULL, report TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS burnin(rowid BIGSERIAL PRIMARY KEY, node TEXT NOT NULL, at BIGINT NOT NULL,"
    "  suite TEXT NOT NULL, result TEXT NOT NULL, tests TEXT NOT NULL, source TEXT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS burnin_node ON burnin(node, at);"
    "CREATE TABLE IF NOT EXISTS nodes_seen(node TEXT PRIMARY KEY, state TEXT NOT NULL, at BIGINT NOT NULL,"
    "  detail TEXT);"
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "INSERT INTO meta(key, value) VALUES('created', (extract(epoch FROM clock_timestamp()) * 1000)::bigint::text)"
    "  ON CONFLICT DO NOTHING;"
    /* the controllers' lease (election.c) and the beats agents gave a
     * controller that is not the leader (heartbeat sharing) */
    "CREATE TABLE IF NOT EXISTS leader(name TEXT PRIMARY KEY, holder TEXT NOT NULL, url TEXT NOT NULL DEFAULT '',"
    "  term BIGINT NOT NULL, expires_at TIMESTAMPTZ NOT NULL);"
    "CREATE TABLE IF NOT EXISTS beats(node TEXT PRIMARY KEY, at BIGINT NOT NULL, jobs TEXT NOT NULL DEFAULT '');"
    "COMMIT;";

static bool pg_claims(const char *t)
{
    if (vg_startswith(t, "postgresql://") || vg_startswith(t, "postgres://")) return true;
    /* a libpq conninfo: keyword=value ... */
    size_t k = 0;
    while (islower((unsigned char)t[k]) || t[k] == '_') k++;
    return k > 0 && t[k] == '=';
}

static void quiet(void *arg, const char *msg)
{
    (void)arg;
    (void)msg;   /* NOTICEs ("relation already exists, skipping") are not the operator's business */
}

/* The first line of libpq's message, without its severity. */
static void note_text(struct vg_store *st, const char *msg)
{
    char line[256];
    if (!msg || !*msg) msg = "PostgreSQL failed";
    if (!strncmp(msg, "ERROR:  ", 8)) msg += 8;
    vg_strlcpy(line, msg, sizeof line);
    line[strcspn(line, "\n")] = 0;
    vg_store_fail(st, line, false);
}

static PGresult *await(struct pg *p, int sent);

static bool ok_result(const struct vg_pq *pq, PGresult *r)
{
    ExecStatusType s = r ? pq->resultStatus(r) : PGRES_FATAL_ERROR;
    return s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK;
}

/* Why the last request failed (r: its result, or NULL), libpq's words. */
static const char *why(const struct pg *p, PGresult *r)
{
    if (r) return p->pq->resultErrorMessage(r);
    if (p->late) return "PostgreSQL did not answer in time: connection dropped";
    return p->c ? p->pq->errorMessage(p->c) : "no connection to PostgreSQL";
}

static int run_plain(struct pg *p, const char *sql, char *err, size_t errlen)
{
    PGresult *r = await(p, p->pq->sendQuery(p->c, sql));
    int rc = ok_result(p->pq, r) ? 0 : -1;
    if (rc) {
        snprintf(err, errlen, "PostgreSQL: %s", why(p, r));
        err[strcspn(err, "\n")] = 0;
    }
    p->pq->clear(r);
    return rc;
}

/* A connection to the target, with the session's settings; 0, or -1 (err
 * set, p->c NULL). */
static int connect_to(struct pg *p, char *err, size_t errlen)
{
    /* ours first: what the target says overrides them; connecting within
     * the deadline where libpq allows (its least is 2 s) */
    char timeout[16];
    snprintf(timeout, sizeof timeout, "%d", p->deadline_ms / 2000 > 2 ? p->deadline_ms / 2000 : 2);
    const char *keys[] = { "connect_timeout", "keepalives", "keepalives_idle", "keepalives_interval",
                           "keepalives_count", "tcp_user_timeout", "application_name", "dbname", NULL };
    const char *vals[] = { timeout, "1", "5", "2", "3", "10000", "vigil", p->target, NULL };
    p->c = p->pq->connectdbParams(keys, vals, 1);
    if (!p->c || p->pq->status(p->c) != CONNECTION_OK) {
        snprintf(err, errlen, "PostgreSQL: %s", p->c ? p->pq->errorMessage(p->c) : "out of memory");
        err[strcspn(err, "\n")] = 0;
        if (p->c) p->pq->finish(p->c);
        p->c = NULL;
        return -1;
    }
    p->pq->setNoticeProcessor(p->c, quiet, NULL);
    if (run_plain(p, p->reader ? "SET idle_in_transaction_session_timeout = " PG_IDLE_TX_MS ";"
                                 "SET default_transaction_read_only = on"
                               : "SET idle_in_transaction_session_timeout = " PG_IDLE_TX_MS,
                  err, errlen)) {
        if (p->c) p->pq->finish(p->c);
        p->c = NULL;
        return -1;
    }
    return 0;
}

/* The connection closed (its prepared statements go with it); inside a
 * transaction, every statement fails until the rollback. */
static void drop(struct pg *p)
{
    if (p->c) p->pq->finish(p->c);
    p->c = NULL;
    p->nprepared = 0;
    if (p->tx) p->broken = true;
}

/* The results of the request just sent (sent: what its PQsend* call
 * answered): the last, or the first that failed; NULL when it could not be
 * sent or its deadline passed (the connection is then dropped). */
static PGresult *await(struct pg *p, int sent)
{
    p->late = false;
    if (!sent) return NULL;
    int64_t until = vg_mono_ms() + p->deadline_ms;
    PGresult *keep = NULL, *r;
    for (;;) {
        while (p->pq->isBusy(p->c)) {
            int64_t left = until - vg_mono_ms();
            struct pollfd pfd = { .fd = p->pq->socket(p->c), .events = POLLIN };
            int n = left > 0 ? poll(&pfd, 1, (int)left) : 0;
            if (n < 0 && errno == EINTR) continue;
            if (n == 0) {
                p->pq->clear(keep);
                drop(p);
                p->late = true;
                return NULL;
            }
            if (n < 0 || !p->pq->consumeInput(p->c)) break;   /* the connection failed: its error result comes */
        }
        if (!(r = p->pq->getResult(p->c))) break;
        if (!keep || ok_result(p->pq, keep)) {
            p->pq->clear(keep);
            keep = r;
        } else {
            p->pq->clear(r);
        }
    }
    return keep;
}

/* A connection to send on: the one there is, or a new one outside a
 * transaction (one dropped inside it fails the transaction). */
static bool ready(struct vg_store *st)
{
    struct pg *p = st->h;
    if (p->c) return true;
    char err[256];
    if (p->tx) {
        p->broken = true;
        vg_store_fail(st, "the connection to PostgreSQL was lost in the transaction", false);
        return false;
    }
    if (connect_to(p, err, sizeof err)) {
        vg_store_fail(st, err, false);
        return false;
    }
    return true;
}

static int pg_open(struct vg_store *st, const char *target, bool reader, char *err, size_t errlen)
{
    struct pg *p = vg_xcalloc(1, sizeof *p);
    p->pq = vg_pq_load(err, errlen);
    p->target = vg_xstrdup(target);
    p->reader = reader;
    p->deadline_ms = PG_DEADLINE_MS;
    if (!p->pq || connect_to(p, err, errlen) || (!reader && run_plain(p, schema, err, errlen))) {
        if (p->c) p->pq->finish(p->c);
        free(p->target);
        free(p);
        return -1;
    }
    pthread_mutex_init(&p->mu, NULL);
    st->h = p;
    return 0;
}

static void pg_deadline(struct vg_store *st, int ms)
{
    struct pg *p = st->h;
    pthread_mutex_lock(&p->mu);
    p->deadline_ms = ms;
    pthread_mutex_unlock(&p->mu);
}

static void pg_close(struct vg_store *st)
{
    struct pg *p = st->h;
    if (p->c) p->pq->finish(p->c);
    pthread_mutex_destroy(&p->mu);
    free(p->prepared);
    free(p->target);
    free(p);
}

/* sql with ?N as $N (bare ? numbered in order), outside quotes. */
static char *dollars(const char *sql)
{
    struct sbuf b = SBUF_INIT;
    bool quoted = false;
    int next = 1;
    for (const char *c = sql; *c; c++) {
        if (*c == '\'') quoted = !quoted;
        if (*c != '?' || quoted) {
            sbuf_putc(&b, *c);
        } else if (isdigit((unsigned char)c[1])) {
            sbuf_putc(&b, '$');
        } else {
            sbuf_printf(&b, "$%d", next++);
        }
    }
    return sbuf_take(&b);
}

/* Whether a failure (r: its result, or NULL) is the connection's: lost, late,
 * or the server shutting down or starting (SQLSTATE classes 08 and 57P); the
 * connection is then dropped, to be made again at the next statement outside
 * a transaction. */
static bool lost(struct pg *p, const PGresult *r)
{
    const char *state = r ? p->pq->resultErrorField((PGresult *)r, PG_DIAG_SQLSTATE) : NULL;
    bool trouble = !r || !p->c || p->pq->status(p->c) != CONNECTION_OK || !state || !strncmp(state, "08", 2) ||
                   !strncmp(state, "57P", 3);
    if (trouble) drop(p);
    return trouble;
}

/* The statement's name, prepared on this connection if it was not; -1
 * failed, -2 failed with the connection (made again when that was safe). */
static int prepared(struct vg_store *st, const char *sql, const char *fmt)
{
    struct pg *p = st->h;
    for (size_t i = 0; i < p->nprepared; i++)
        if (p->prepared[i].sql == sql && !strcmp(p->prepared[i].fmt, fmt)) return (int)i;
    Oid types[MAX_PARAMS];
    int n = (int)strlen(fmt);
    for (int i = 0; i < n; i++) types[i] = fmt[i] == 's' ? TEXT_OID : INT8_OID;
    char name[24], *text = dollars(sql);
    snprintf(name, sizeof name, "s%zu", p->nprepared);
    PGresult *r = await(p, p->pq->sendPrepare(p->c, name, text, n, types));
    free(text);
    if (!ok_result(p->pq, r)) {
        note_text(st, why(p, r));
        int rc = lost(p, r) ? -2 : -1;
        p->pq->clear(r);
        return rc;
    }
    p->pq->clear(r);
    p->prepared = vg_xrealloc(p->prepared, (p->nprepared + 1) * sizeof *p->prepared);
    p->prepared[p->nprepared].sql = sql;
    vg_strlcpy(p->prepared[p->nprepared].fmt, fmt, sizeof p->prepared[p->nprepared].fmt);
    return (int)p->nprepared++;
}

static struct vg_stmt *pg_prep(struct vg_store *st, const char *sql, const char *fmt, va_list ap)
{
    struct pg *p = st->h;
    int n = (int)strlen(fmt);
    if (n > MAX_PARAMS) {
        vg_store_fail(st, "too many parameters", false);
        return NULL;
    }
    char nums[MAX_PARAMS][24];
    const char *vals[MAX_PARAMS];
    for (int i = 0; i < n; i++) {
        if (fmt[i] == 'i') {
            snprintf(nums[i], sizeof nums[i], "%" PRId64, va_arg(ap, int64_t));
            vals[i] = nums[i];
        } else if (fmt[i] == 'd') {
            int v = va_arg(ap, int);
            snprintf(nums[i], sizeof nums[i], "%d", v);
            vals[i] = v < 0 ? NULL : nums[i];
        } else {
            vals[i] = va_arg(ap, const char *);
        }
    }
    pthread_mutex_lock(&p->mu);
    PGresult *r = NULL;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (p->broken) {
            pthread_mutex_unlock(&p->mu);
            vg_store_fail(st, "the connection to PostgreSQL was lost in the transaction", false);
            return NULL;
        }
        if (!ready(st)) break;
        int k = prepared(st, sql, fmt);
        if (k == -1) break;
        bool again = !p->broken && !p->late;   /* a deadline is the request's whole time */
        if (k >= 0) {
            char name[24];
            snprintf(name, sizeof name, "s%d", k);
            r = await(p, p->pq->sendQueryPrepared(p->c, name, n, vals, NULL, NULL, 0));
            if (ok_result(p->pq, r)) break;
            note_text(st, why(p, r));
            again = lost(p, r) && !p->broken && !p->late;
        }
        if (r) p->pq->clear(r);
        r = NULL;
        if (!again) break;
    }
    pthread_mutex_unlock(&p->mu);
    if (!r) return NULL;
    struct vg_stmt *s = vg_xcalloc(1, sizeof *s);
    s->res = r;
    s->row = -1;
    s->rows = p->pq->ntuples(r);
    return s;
}

static const struct vg_pq *pq_of(void)
{
    char err[8];
    return vg_pq_load(err, sizeof err);   /* loaded: a store is open */
}

static int pg_step(struct vg_store *st, struct vg_stmt *s)
{
    (void)st;
    return ++s->row < s->rows ? 1 : 0;
}

static const char *pg_text(struct vg_stmt *s, int i)
{
    const struct vg_pq *pq = pq_of();
    return pq->getisnull(s->res, s->row, i) ? NULL : pq->getvalue(s->res, s->row, i);
}

static int64_t pg_int(struct vg_stmt *s, int i)
{
    const char *v = pg_text(s, i);
    if (!v) return 0;
    if (!strcmp(v, "t")) return 1;   /* a boolean */
    return strtoll(v, NULL, 10);
}

static bool pg_null(struct vg_stmt *s, int i) { return pq_of()->getisnull(s->res, s->row, i) != 0; }

static void pg_done(struct vg_store *st, struct vg_stmt *s)
{
    struct pg *p = st->h;
    p->pq->clear(s->res);
    free(s);
}

static int pg_exec(struct vg_store *st, const char *sql)
{
    struct pg *p = st->h;
    bool ends = !strcmp(sql, "COMMIT") || !strcmp(sql, "ROLLBACK");
    pthread_mutex_lock(&p->mu);
    int rc = -1;
    if (p->broken && ends) {
        /* the transaction went with the connection: made again, nothing to end */
        p->tx = p->broken = false;
        lost(p, NULL);
        pthread_mutex_unlock(&p->mu);
        if (!strcmp(sql, "ROLLBACK")) return 0;
        vg_store_fail(st, "the connection to PostgreSQL was lost in the transaction", false);
        return -1;
    }
    PGresult *r = ready(st) ? await(p, p->pq->sendQuery(p->c, sql)) : NULL;
    if (!ok_result(p->pq, r) && !p->tx && !p->late && lost(p, r) && ready(st)) {   /* made again: once more */
        p->pq->clear(r);
        r = await(p, p->pq->sendQuery(p->c, sql));
    }
    if (ok_result(p->pq, r)) rc = 0;
    if (rc) note_text(st, why(p, r));
    /* COMMIT of a transaction a statement failed in answers ROLLBACK, no error */
    if (!rc && !strcmp(sql, "COMMIT") && !strcmp(p->pq->cmdStatus(r), "ROLLBACK")) {
        vg_store_fail(st, "the transaction was rolled back", false);
        rc = -1;
    }
    p->pq->clear(r);
    if (ends) p->tx = false;
    if (rc) lost(p, NULL);
    pthread_mutex_unlock(&p->mu);
    return rc;
}

static bool pg_in_tx(struct vg_store *st) { return ((struct pg *)st->h)->tx; }

static int pg_begin(struct vg_store *st)
{
    struct pg *p = st->h;
    if (pg_exec(st, "BEGIN; SELECT pg_advisory_xact_lock(" WRITERS_LOCK ")")) return -1;
    p->tx = true;
    return 0;
}

static int64_t pg_bytes(struct vg_store *st)
{
    struct vg_stmt *s = vg_store_prep(st, "SELECT pg_database_size(current_database())", "");
    int64_t n = vg_store_row(st, s) ? vg_store_int(st, s, 0) : -1;
    vg_store_done(st, s);
    return n;
}

const struct vg_store_driver vg_store_pg = {
    .name = "postgresql", .claims = pg_claims, .open = pg_open, .close = pg_close, .prep = pg_prep,
    .step = pg_step, .col_int = pg_int, .col_text = pg_text, .col_null = pg_null, .done = pg_done,
    .exec = pg_exec, .in_tx = pg_in_tx, .begin = pg_begin, .bytes = pg_bytes, .deadline = pg_deadline,
};
