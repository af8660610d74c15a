/* ingest.c — agent message → incidents; see ingest.h. */
#include "controller/ingest.h"
#include "util/log.h"
#include <stdio.h>
#include <string.h>

static int reject(json_t **response, int code, const char *msg)
{
    *response = json_pack("{s:s}", "error", msg);
    return code;
}

int vg_ingest_message(struct vg_ingest *in, const char *json, int64_t now, json_t **response)
{
    json_error_t jerr;
    json_t *msg = json_loads(json, JSON_REJECT_DUPLICATES, &jerr);
    char why[320];
    if (!msg) {
        snprintf(why, sizeof why, "message: invalid JSON at line %d: %s", jerr.line, jerr.text);
        return reject(response, 400, why);
    }
    const char *node = json_string_value(json_object_get(msg, "node"));
    json_t *seqv = json_object_get(msg, "seq");
    json_t *events = json_object_get(msg, "events");
    int code = 400;
    if (!node || !*node || strlen(node) >= 64) {
        code = reject(response, 400, "message: field 'node' missing or invalid");
        goto out;
    }
    if (!json_is_integer(seqv) || json_integer_value(seqv) < 0) {
        code = reject(response, 400, "message: field 'seq' must be a non-negative integer");
        goto out;
    }
    if (!json_is_array(events) || json_array_size(events) == 0 || json_array_size(events) > 10000) {
        code = reject(response, 400, "message: field 'events' must be a non-empty array");
        goto out;
    }
    /* Validate every event before storing any, so a message is all or nothing. */
    size_t n = json_array_size(events);
    struct vg_event *evs = calloc(n, sizeof *evs);
    if (!evs) { code = 500; goto out; }
    for (size_t i = 0; i < n; i++) {
        char err[200];
        if (vg_event_from_json(json_array_get(events, i), &evs[i], err, sizeof err)) {
            free(evs);
            snprintf(why, sizeof why, "message: events[%zu]: %s", i, err);
            code = reject(response, 400, why);
            goto out;
        }
        snprintf(evs[i].node, sizeof evs[i].node, "%s", node);
        if (!evs[i].seen_ms) evs[i].seen_ms = now;
    }
    json_t *ids = json_array(), *fresh = json_array();
    int dups = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t id;
        bool is_new, dup;
        if (vg_store_accept(in->store, node, json_integer_value(seqv), (int)i, &evs[i], now, in->window_ms, &id,
                            &is_new, &dup)) {
            vg_err("store: cannot record an event from %s (seq %lld)", node, (long long)json_integer_value(seqv));
            json_decref(ids);
            json_decref(fresh);
            free(evs);
            code = reject(response, 500, "store failure");
            goto out;
        }
        json_array_append_new(ids, json_integer(id));
        if (dup) dups++;
        if (is_new) {
            json_array_append_new(fresh, json_integer(id));
            if (in->on_new_incident) in->on_new_incident(in->ctx, id, &evs[i]);
        }
    }
    free(evs);
    *response = json_pack("{s:o, s:o, s:i}", "incidents", ids, "new", fresh, "duplicates", dups);
    code = 202;
out:
    json_decref(msg);
    return code;
}
