/* ingest.h — the controller's intake: one agent message (already
 * authenticated) → fields validated → events → incidents in the store.  Kept
 * apart from the HTTP server so tests and the drill can drive it directly.
 * Message: {"node": "n1", "spool": "<32 lowercase hex>", "seq": 42, "events": [ <event>, … ],
 *            "dropped": N}
 * (seq: the agent's message number, increasing within one life of its spool;
 * spool: that life's id, "" when absent (older agents); (node, spool, seq,
 * index) makes each delivery idempotent; dropped, optional: record-only
 * events the agent's spool dropped at its cap since its last message —
 * counted and logged, once per message however often it is delivered).
 * Validation names the field at fault: node names (letters, digits, '.',
 * '-', '_', not starting with '-' or '.': never an option to a command, at
 * most 63 bytes), kinds
 * from the catalog's vocabulary, every string printable UTF-8 within its
 * length (never truncated), at most VG_WIRE_MAX_EVENTS events.  Each event's
 * action is then decided again from the controller's catalog and site policy
 * (an agent's verdict, or its missing one, decides nothing). */
#ifndef VG_INGEST_H
#define VG_INGEST_H
#include "catalog/catalog.h"
#include "controller/store.h"
#include "util/sbuf.h"
#include <jansson.h>
#include <stdint.h>

struct vg_storeguard;
struct vg_committer;

struct vg_ingest {
    struct vg_store *store;
    struct vg_storeguard *guard;   /* the store file's (storeguard.h); NULL: none.  Once it says the store is
                                    * lost, nothing is acknowledged (503) */
    int64_t window_ms;   /* fold identical events into one incident within this window */
    /* The controller's own verdicts: every event's action is the catalog's
     * (with the site policy), whatever the agent sent; NULL: the agent's. */
    const struct vg_catalog *cat;
    const char *const *kinds; /* the kinds an event may have (the catalog's); NULL: any */
    size_t nkinds;
    /* Called for every incident a message opened (after it is committed). */
    void (*on_new_incident)(void *ctx, int64_t incident, const struct vg_event *e);
    /* Adds Prometheus lines to GET /metrics (may be NULL). */
    void (*metrics)(void *ctx, struct sbuf *out);
    void *ctx;
    /* The group commit (commit.h) agents' messages and the controller's own
     * events share; NULL: vg_http_start starts one of its own (and stops it). */
    struct vg_committer *committer;
    unsigned long spool_dropped;   /* events agents' spools dropped at their cap, as told (atomic) */
};

/* A validated message. */
struct vg_message {
    char node[64];
    char spool[33];
    int64_t seq;
    int64_t dropped;         /* record-only events the agent's spool dropped, told with this message */
    size_t n;
    struct vg_event *events;
    size_t *fresh, nfresh;   /* indexes of the events that opened an incident (vg_ingest_store) */
};

/* True when name is a valid node name. */
bool vg_ingest_node_ok(const char *name);
/* Validates json into m.  Returns 0, or 400 with *response {"error": "..."}
 * naming the field (m is then empty). */
int vg_ingest_parse(const struct vg_ingest *in, const char *json, int64_t now, struct vg_message *m,
                    json_t **response);
/* Stores m inside the caller's transaction (vg_store_begin).  Returns 202
 * with *response {"incidents":[ids], "new":[ids], "duplicates":N}, or 500
 * with {"error"} (vg_store_error says why) having written part of m: the
 * caller rolls the transaction back (a message is all or nothing). */
int vg_ingest_store(struct vg_ingest *in, struct vg_message *m, int64_t now, json_t **response);
/* After the commit: on_new_incident for each incident m opened. */
void vg_ingest_notify(struct vg_ingest *in, const struct vg_message *m, const json_t *response);
void vg_message_free(struct vg_message *m);

/* Checks an event the controller raised itself by the rules an agent's
 * meets (printable strings, a node name, a kind the catalog knows, job ids).
 * 0, or -1 with err naming the field. */
int vg_ingest_check_event(const struct vg_ingest *in, const struct vg_event *e, char *err, size_t errlen);
/* intake.c: the controller's own event e (a node the heartbeat monitor
 * confirmed down) into in->committer, as one message of its node under a
 * spool id no agent has, its verdict the catalog's; stored (or its failure
 * logged) by the writer thread.  0, or -1 with err naming the field at fault. */
int vg_intake_event(struct vg_ingest *in, const struct vg_event *e, char *err, size_t errlen);

/* All of the above for one message in its own transaction.  Returns an HTTP
 * status: 202, 400 malformed, 500 store failure. */
int vg_ingest_message(struct vg_ingest *in, const char *json, int64_t now, json_t **response);

#endif
