/* httpapi.h — the controller's HTTP API on libmicrohttpd:
 *   POST /v1/events     an agent message (auth.h) → 202 / 400 / 401 / 413 / 503
 *   POST /v1/heartbeat  {"node": NAME, "jobs"?, "folds"?}, authenticated the
 *                       same way → 200 {"ok": true}, with "returned" (when the
 *                       node was last returned to service) when folds > 0;
 *                       kept in memory only (heartbeat.h), nothing stored
 *   GET  /v1/incidents  ?node=N&open=1&limit=K&before=ID → JSON array, newest
 *                       first; limit 1..1000 (default 100); a full page has a
 *                       Link: <…before=ID>; rel="next" header (the cursor)
 *   GET  /v1/incidents/ID                        → one incident
 *   GET  /v1/nodes      every node known, with its domain and state
 *                       (fleetview.h); without a view: per-node incident counts
 *   GET  /v1/summary    the dashboard's data (fleetview.h); 404 without a view
 *   POST /v1/inventory  {"node", "report": <vigil audit --json>} from an agent,
 *                       authenticated like a message → 200; the latest per node
 *                       kept (nodereport.h: checked, bound to the sender, retained)
 *   GET  /v1/audit      the fleet's audit merged (version skew, findings with
 *                       node counts, when each node reported, stale reports,
 *                       known nodes not reporting); ?raw=1: [{node, at, report}]
 *   POST /v1/burnin     a `vigil burnin --json` document, authenticated like a
 *                       message → 200 {recorded: N} / 400 naming the field /
 *                       403 a node not the sender's (nodereport.h)
 *   GET  /v1/burnin     ?node=N&days=D (default 7): each node's burn-in history
 *                       and the cadence (burnin_hist.h; `vigil score` evidence)
 *   GET  /metrics                                → Prometheus text format
 *   GET  /                                       → the live dashboard (dashboard.h)
 *   GET  /healthz                                → "ok" (no credentials)
 * Reads need the read token (Authorization: Bearer, or the HttpOnly cookie
 * `/?token=` sets; Secure too under TLS); the agents' credentials do not
 * grant them.
 * A node speaks only for itself: every POST's credential (wire/auth.h) is
 * checked from its headers, before any body byte is read or reserved; the
 * node it speaks for must be one the scheduler lists (nodeset.h) and, with
 * MUNGE, the credential must come from that node's address; every node a
 * body names (a message's, a heartbeat's, an audit report's, each of a
 * burn-in document's) must be that node (vg_nodeset_may_name).  Refused: 401 (credential), 403 (another
 * node's, or a node the scheduler does not list), 503 while the scheduler's
 * list was never read; each counted in vigil_rejected_total by reason and
 * logged at a bounded rate (a "suppressed N" line for the rest).
 * Other defences: bodies over VG_WIRE_MAX_BODY refused (413, with the
 * figure); a budget on body bytes buffered at once, in all and per client
 * (budget.h; 503); token nonces in per-node windows (wire/replay.h); at most
 * max_per_client connections per client address and max_connections in all;
 * a deadline per request that bytes arriving slowly do not extend.  Each
 * message is committed (group commit, commit.h) before its 202 is sent, and
 * reads go through their own SQLite connection, never waiting for the writer.
 * With a certificate and key the server speaks only HTTPS (GnuTLS, through
 * libmicrohttpd). */
#ifndef VG_HTTPAPI_H
#define VG_HTTPAPI_H
#include "wire/auth.h"
#include "controller/ingest.h"
#include <stddef.h>

struct vg_fleetview;
struct vg_nodereports;
struct vg_nodeset;

struct vg_http_opts {
    const char *listen;           /* "ADDR:PORT" (PORT 0 picks a free one) */
    const char *read_token;       /* NULL: reads are open only with auth none */
    struct vg_store *reader;      /* connection for reads; NULL: the ingest's store */
    unsigned max_connections;     /* 0: 1024 */
    unsigned max_per_client;      /* 0: 32 */
    unsigned deadline_ms;         /* a request's headers and body within this; 0: 10000 */
    size_t body_budget;           /* body bytes buffered at once, all requests; 0: 32 MiB */
    size_t client_budget;         /* … by one client (node, or address); 0: twice VG_WIRE_MAX_BODY */
    struct vg_nodeset *nodes;     /* the nodes the scheduler lists; NULL: no scheduler (tests of the
                                   * transport alone): every name is taken, no MUNGE origin checked */
    const char *tls_cert, *tls_key; /* PEM text: serve HTTPS only; NULL: plain HTTP */
    /* heartbeats (jobs: the node's, or ""; domain: the NVLink domain its GPUs
     * registered in, or NULL): 0 noted, else the answer's status with err (403
     * a node the scheduler does not list, 503 retry); NULL: 404 */
    int (*on_beat)(void *ctx, const char *node, const char *jobs, const char *domain, char *err, size_t errlen);
    void *beat_ctx;
    struct vg_nodereports *reports;   /* POST /v1/inventory and /v1/burnin (nodereport.h); NULL: 404 */
    /* GET /v1/audit: the stored reports (read one at a time from reader) merged
     * with the nodes ctx knows */
    json_t *(*fleet)(void *ctx, struct vg_store *reader);
    void *fleet_ctx;
    struct vg_fleetview *view;    /* nodes and the summary (fleetview.h); NULL: none */
    /* /healthz's lines after "ok" (several controllers: the role, the term, the leader) */
    void (*health)(void *ctx, struct sbuf *out);
    void *health_ctx;
};



struct vg_http;

/* Returns NULL with err set. */
struct vg_http *vg_http_start(const struct vg_http_opts *o, struct vg_auth *auth, struct vg_ingest *ingest,
                              char *err, size_t errlen);
unsigned vg_http_port(const struct vg_http *h);
/* Stops accepting connections, answers every message already taken, then
 * closes the rest and stops. */
void vg_http_stop(struct vg_http *h);

#endif
