/* pqso.c — loads libpq with dlopen on first use; see pqso.h. */
#include "util/pqso.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static struct vg_pq pq;
static pthread_once_t pq_once = PTHREAD_ONCE_INIT;
static const char *pq_error;

#define PQ_SYM(field, name) \
    if (!(*(void **)&pq.field = dlsym(lib, name))) { pq_error = "libpq.so.5 lacks " name; return; }

static void pq_init(void)
{
    void *lib = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        pq_error = "cannot load libpq.so.5 (Debian package libpq5)";
        return;
    }
    PQ_SYM(connectdbParams, "PQconnectdbParams")
    PQ_SYM(status, "PQstatus")
    PQ_SYM(errorMessage, "PQerrorMessage")
    PQ_SYM(finish, "PQfinish")
    PQ_SYM(exec, "PQexec")
    PQ_SYM(resultStatus, "PQresultStatus")
    PQ_SYM(resultErrorMessage, "PQresultErrorMessage")
    PQ_SYM(resultErrorField, "PQresultErrorField")
    PQ_SYM(cmdStatus, "PQcmdStatus")
    PQ_SYM(clear, "PQclear")
    PQ_SYM(ntuples, "PQntuples")
    PQ_SYM(getvalue, "PQgetvalue")
    PQ_SYM(getisnull, "PQgetisnull")
    PQ_SYM(transactionStatus, "PQtransactionStatus")
    PQ_SYM(setNoticeProcessor, "PQsetNoticeProcessor")
    PQ_SYM(sendQuery, "PQsendQuery")
    PQ_SYM(sendPrepare, "PQsendPrepare")
    PQ_SYM(sendQueryPrepared, "PQsendQueryPrepared")
    PQ_SYM(getResult, "PQgetResult")
    PQ_SYM(consumeInput, "PQconsumeInput")
    PQ_SYM(isBusy, "PQisBusy")
    PQ_SYM(socket, "PQsocket")
}

const struct vg_pq *vg_pq_load(char *err, size_t errlen)
{
    pthread_once(&pq_once, pq_init);
    if (pq_error) {
        snprintf(err, errlen, "%s", pq_error);
        return NULL;
    }
    return &pq;
}
