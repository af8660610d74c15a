/* ingest.c — agent message → validated events → incidents; see ingest.h. */
#include "controller/ingest.h"
#include "util/log.h"
#include "util/strutil.h"
#include "wire/limits.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int reject(json_t **response, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    *response = json_pack("{s:s}", "error", why);
    return 400;
}

bool vg_ingest_node_ok(const char *name)
{
    size_t n = strlen(name);
    /* never read as an option or a relative path by a command that takes it */
    if (n == 0 || n > 63 || name[0] == '-' || name[0] == '.') return false;
    for (const char *p = name; *p; p++)
        if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') && !(*p >= '0' && *p <= '9') && *p != '.' &&
            *p != '-' && *p != '_')
            return false;
    return true;
}

static bool spool_ok(const char *s)
{
    if (strlen(s) != 32) return false;
    for (; *s; s++)
        if (!(*s >= '0' && *s <= '9') && !(*s >= 'a' && *s <= 'f')) return false;
    return true;
}

/* The event's string fields and the room the event record has for each. */
static const struct { const char *name; size_t room; } string_fields[] = {
    { "node", sizeof ((struct vg_event *)0)->node },   { "source", sizeof ((struct vg_event *)0)->source },
    { "kind", sizeof ((struct vg_event *)0)->kind },   { "pci", sizeof ((struct vg_event *)0)->pci },
    { "cause", sizeof ((struct vg_event *)0)->cause }, { "raw", sizeof ((struct vg_event *)0)->raw },
    { "action", 16 },                                   { "time", 40 },
    { "seen", 40 },                                     { "first", 40 },
    { "last", 40 },                                     { "jobs", sizeof ((struct vg_event *)0)->jobs },
};

/* Whether an event may have kind (the catalog's vocabulary; any without one). */
static bool kind_known(const struct vg_ingest *in, const char *kind)
{
    if (!in->kinds) return true;
    for (size_t k = 0; k < in->nkinds; k++)
        if (!strcmp(in->kinds[k], kind)) return true;
    return false;
}

/* Checks event i's strings: printable UTF-8, within the room, known kind. */
static int check_strings(const struct vg_ingest *in, const json_t *ev, size_t i, json_t **response)
{
    for (size_t f = 0; f < sizeof string_fields / sizeof string_fields[0]; f++) {
        const json_t *v = json_object_get(ev, string_fields[f].name);
        if (!json_is_string(v)) continue; /* type errors are vg_event_from_json's */
        const char *s = json_string_value(v);
        size_t len = json_string_length(v);
        if (len >= string_fields[f].room)
            return reject(response, "message: events[%zu]: field '%s': %zu bytes is over the limit of %zu", i,
                          string_fields[f].name, len, string_fields[f].room - 1);
        if (strlen(s) != len || !vg_utf8_printable(s))
            return reject(response, "message: events[%zu]: field '%s': not printable UTF-8", i,
                          string_fields[f].name);
    }
    const char *node = json_string_value(json_object_get(ev, "node"));
    if (node && !vg_ingest_node_ok(node))
        return reject(response, "message: events[%zu]: field 'node': not a node name", i);
    const char *kind = json_string_value(json_object_get(ev, "kind"));
    if (kind && !kind_known(in, kind))
        return reject(response, "message: events[%zu]: field 'kind': '%s' is not a kind the catalog knows", i, kind);
    return 0;
}

int vg_ingest_check_event(const struct vg_ingest *in, const struct vg_event *e, char *err, size_t errlen)
{
    const struct { const char *name, *s; } strs[] = {
        { "source", e->source }, { "kind", e->kind }, { "pci", e->pci },
        { "cause", e->cause },   { "raw", e->raw },   { "jobs", e->jobs },
    };
    const char *why = NULL, *field = NULL;
    for (size_t f = 0; f < sizeof strs / sizeof *strs && !why; f++)
        if (!vg_utf8_printable(strs[f].s)) why = "not printable UTF-8", field = strs[f].name;
    if (!why && !vg_ingest_node_ok(e->node)) why = "not a node name", field = "node";
    if (!why && !kind_known(in, e->kind)) why = "not a kind the catalog knows", field = "kind";
    if (!why && !vg_event_jobs_ok(e->jobs)) why = "not job ids separated by commas", field = "jobs";
    if (why) snprintf(err, errlen, "event for %s: field '%s': %s", e->node, field, why);
    return why ? -1 : 0;
}

void vg_message_free(struct vg_message *m)
{
    free(m->events);
    free(m->fresh);
    memset(m, 0, sizeof *m);
}

int vg_ingest_parse(const struct vg_ingest *in, const char *json, int64_t now, struct vg_message *m,
                    json_t **response)
{
    memset(m, 0, sizeof *m);
    json_error_t jerr;
    json_t *msg = json_loads(json, JSON_REJECT_DUPLICATES, &jerr);
    if (!msg) return reject(response, "message: invalid JSON at line %d: %s", jerr.line, jerr.text);
    int code = 400;
    json_t *nodev = json_object_get(msg, "node"), *spoolv = json_object_get(msg, "spool");
    json_t *seqv = json_object_get(msg, "seq"), *events = json_object_get(msg, "events");
    const char *node = json_string_value(nodev);
    if (!node || strlen(node) != json_string_length(nodev) || !vg_ingest_node_ok(node)) {
        code = reject(response, "message: field 'node' missing or not a node name (letters, digits, '.', '-', "
                                "'_', not starting with '-' or '.', at most 63 bytes)");
        goto out;
    }
    if (spoolv && (!json_is_string(spoolv) || !spool_ok(json_string_value(spoolv)))) {
        code = reject(response, "message: field 'spool' must be 32 lowercase hex characters");
        goto out;
    }
    if (!json_is_integer(seqv) || json_integer_value(seqv) < 0) {
        code = reject(response, "message: field 'seq' must be a non-negative integer");
        goto out;
    }
    json_t *droppedv = json_object_get(msg, "dropped");
    if (droppedv && (!json_is_integer(droppedv) || json_integer_value(droppedv) < 0)) {
        code = reject(response, "message: field 'dropped' must be a non-negative integer");
        goto out;
    }
    if (!json_is_array(events) || json_array_size(events) == 0) {
        code = reject(response, "message: field 'events' must be a non-empty array");
        goto out;
    }
    size_t n = json_array_size(events);
    if (n > VG_WIRE_MAX_EVENTS) {
        code = reject(response, "events: %zu is over the limit of %d", n, VG_WIRE_MAX_EVENTS);
        goto out;
    }
    /* Validate every event before storing any, so a message is all or nothing. */
    m->events = vg_xcalloc(n, sizeof *m->events);
    for (size_t i = 0; i < n; i++) {
        char err[200];
        json_t *ev = json_array_get(events, i);
        if (json_is_object(ev) && check_strings(in, ev, i, response) == 400) {
            vg_message_free(m);
            goto out;
        }
        if (vg_event_from_json(ev, &m->events[i], err, sizeof err)) {
            vg_message_free(m);
            code = reject(response, "message: events[%zu]: %s", i, err);
            goto out;
        }
        vg_strlcpy(m->events[i].node, node, sizeof m->events[i].node);
        if (!m->events[i].seen_ms) m->events[i].seen_ms = now;
        if (in->cat) vg_catalog_classify(in->cat, &m->events[i]);
    }
    vg_strlcpy(m->node, node, sizeof m->node);
    vg_strlcpy(m->spool, spoolv ? json_string_value(spoolv) : "", sizeof m->spool);
    m->seq = json_integer_value(seqv);
    m->dropped = droppedv ? json_integer_value(droppedv) : 0;
    m->n = n;
    code = 0;
out:
    json_decref(msg);
    return code;
}

/* What a message tells of its agent's spool dropping events at its cap:
 * counted and logged (a redelivery, all duplicates, is not counted again). */
static void spool_drops(struct vg_ingest *in, const struct vg_message *m)
{
    static struct vg_lograte log = VG_LOGRATE("spool drops", 60000, 5);
    if (!m->dropped) return;
    __atomic_add_fetch(&in->spool_dropped, (unsigned long)m->dropped, __ATOMIC_RELAXED);
    vg_warn_limited(&log, "node %s: its agent's spool dropped %lld record-only events at its cap (no fault)", m->node,
                    (long long)m->dropped);
}

int vg_ingest_store(struct vg_ingest *in, struct vg_message *m, int64_t now, json_t **response)
{
    struct vg_accepted *got = vg_xcalloc(m->n, sizeof *got);
    free(m->fresh);
    m->fresh = vg_xcalloc(m->n, sizeof *m->fresh);
    m->nfresh = 0;
    if (vg_store_accept_message(in->store, m->node, m->spool, m->seq, m->events, m->n, now, in->window_ms, got))
        goto fail;
    json_t *ids = json_array(), *fresh = json_array();
    int dups = 0;
    for (size_t i = 0; i < m->n; i++) {
        json_array_append_new(ids, json_integer(got[i].incident));
        dups += got[i].duplicate;
        if (got[i].is_new) {
            json_array_append_new(fresh, json_integer(got[i].incident));
            m->fresh[m->nfresh++] = i;
        }
    }
    free(got);
    *response = json_pack("{s:o, s:o, s:i}", "incidents", ids, "new", fresh, "duplicates", dups);
    return 202;
fail:
    free(got);
    *response = json_pack("{s:s}", "error", "storage: the event could not be recorded");
    return 500;
}

void vg_ingest_notify(struct vg_ingest *in, const struct vg_message *m, const json_t *response)
{
    if (json_integer_value(json_object_get(response, "duplicates")) == 0) spool_drops(in, m);
    const json_t *ids = json_object_get(response, "incidents");
    for (size_t k = 0; k < m->nfresh && in->on_new_incident; k++)
        in->on_new_incident(in->ctx, json_integer_value(json_array_get(ids, m->fresh[k])), &m->events[m->fresh[k]]);
}

int vg_ingest_message(struct vg_ingest *in, const char *json, int64_t now, json_t **response)
{
    struct vg_message m;
    int code = vg_ingest_parse(in, json, now, &m, response);
    if (code) return code;
    if (vg_store_begin(in->store)) {
        *response = json_pack("{s:s}", "error", "storage: the event could not be recorded");
        code = 500;
    } else if ((code = vg_ingest_store(in, &m, now, response)) != 202) {
        vg_store_rollback(in->store);   /* written in part */
    } else if (vg_store_commit(in->store)) {
        json_decref(*response);
        *response = json_pack("{s:s}", "error", "storage: the event could not be recorded");
        code = 500;
    }
    if (code == 202) vg_ingest_notify(in, &m, *response);
    vg_message_free(&m);
    return code;
}
