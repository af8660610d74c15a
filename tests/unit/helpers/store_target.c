/* store_target.c — the database a store test runs on; see store_target.h. */
#include "helpers/store_target.h"
#include "util/pqso.h"
#include <stdio.h>
#include <stdlib.h>

bool store_on_pg;

const char *store_target(const char *dir, char *buf, size_t n)
{
    if (store_on_pg) snprintf(buf, n, "%s", getenv("VIGIL_TEST_PG") ? getenv("VIGIL_TEST_PG") : "");
    else snprintf(buf, n, "%s/incidents.db", dir);
    return buf;
}

int store_target_reset(void)
{
    if (!store_on_pg) return 0;
    const char *conninfo = getenv("VIGIL_TEST_PG");
    char err[256];
    const struct vg_pq *pq = vg_pq_load(err, sizeof err);
    if (!conninfo || !*conninfo || !pq) {
        fprintf(stderr, "store tests on PostgreSQL: %s\n", pq ? "$VIGIL_TEST_PG is not set (tests/run starts a server)" : err);
        return -1;
    }
    const char *keys[] = { "dbname", NULL }, *vals[] = { conninfo, NULL };
    PGconn *c = pq->connectdbParams(keys, vals, 1);
    PGresult *r = c && pq->status(c) == CONNECTION_OK
                      ? pq->exec(c, "SET client_min_messages = warning; DROP SCHEMA public CASCADE; CREATE SCHEMA public")
                      : NULL;
    int rc = r && pq->resultStatus(r) == PGRES_COMMAND_OK ? 0 : -1;
    if (rc) fprintf(stderr, "store tests on PostgreSQL: %s\n", c ? pq->errorMessage(c) : "cannot connect");
    if (r) pq->clear(r);
    if (c) pq->finish(c);
    return rc;
}
