/* ingest.h — the controller's intake: one agent message (already
 * authenticated) → events validated → incidents in the store.  Kept apart from
 * the HTTP server so tests and the drill can drive it directly.
 * Message: {"node": "n1", "seq": 42, "events": [ <event>, … ]}
 * (seq: the agent's message number, increasing; (node, seq, index) makes
 * each delivery idempotent). */
#ifndef VG_INGEST_H
#define VG_INGEST_H
#include "controller/store.h"
#include "util/sbuf.h"
#include <jansson.h>
#include <stdint.h>

struct vg_ingest {
    struct vg_store *store;
    int64_t window_ms;   /* fold identical events into one incident within this window */
    /* Called for every incident a message opened (after it is committed). */
    void (*on_new_incident)(void *ctx, int64_t incident, const struct vg_event *e);
    /* Adds Prometheus lines to GET /metrics (may be NULL). */
    void (*metrics)(void *ctx, struct sbuf *out);
    void *ctx;
};

/* Returns an HTTP status: 202 accepted (response: {"incidents":[ids],
 * "new":[ids], "duplicates":N}), 400 malformed (response: {"error": "..."}
 * naming the field), 500 store failure. */
int vg_ingest_message(struct vg_ingest *in, const char *json, int64_t now, json_t **response);

#endif
