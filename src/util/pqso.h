/* pqso.h — libpq (PostgreSQL's client library), loaded with dlopen when a
 * store names a PostgreSQL database: an agent, or a controller on SQLite,
 * never loads it, and a node needs no PostgreSQL package. */
#ifndef VG_PQSO_H
#define VG_PQSO_H
#include <libpq-fe.h>
#include <stddef.h>

struct vg_pq {
    PGconn *(*connectdbParams)(const char *const *keywords, const char *const *values, int expand_dbname);
    ConnStatusType (*status)(const PGconn *);
    char *(*errorMessage)(const PGconn *);
    void (*finish)(PGconn *);
    PGresult *(*exec)(PGconn *, const char *query);   /* the tests' set-up */
    ExecStatusType (*resultStatus)(const PGresult *);
    char *(*resultErrorMessage)(const PGresult *);
    char *(*resultErrorField)(const PGresult *, int fieldcode);
    char *(*cmdStatus)(PGresult *);
    void (*clear)(PGresult *);
    int (*ntuples)(const PGresult *);
    char *(*getvalue)(const PGresult *, int row, int col);
    int (*getisnull)(const PGresult *, int row, int col);
    PGTransactionStatusType (*transactionStatus)(const PGconn *);
    PQnoticeProcessor (*setNoticeProcessor)(PGconn *, PQnoticeProcessor, void *);
    /* a request is sent, then its results awaited with a deadline */
    int (*sendQuery)(PGconn *, const char *query);
    int (*sendPrepare)(PGconn *, const char *name, const char *query, int nparams, const Oid *types);
    int (*sendQueryPrepared)(PGconn *, const char *name, int nparams, const char *const *values,
                             const int *lengths, const int *formats, int result_format);
    PGresult *(*getResult)(PGconn *);
    int (*consumeInput)(PGconn *);
    int (*isBusy)(PGconn *);
    int (*socket)(const PGconn *);
};

/* libpq's functions, loaded once (thread-safe); NULL with err set when
 * libpq.so.5 cannot be loaded. */
const struct vg_pq *vg_pq_load(char *err, size_t errlen);

#endif
