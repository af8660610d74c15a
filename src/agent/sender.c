/* sender.c — delivery to the controller: the events of one loop turn become
 * messages {"node", "spool", "seq", "events"} of at most VG_WIRE_SEND_EVENTS
 * events and VG_WIRE_SEND_BYTES bytes each (wire/limits.h), every one spooled
 * (fsync'd) before the POST.  202 removes it; 413, or 400 naming a limit,
 * splits it and sends the parts; any other 400 drops it (malformed is not
 * retryable); 401, 403 (this node's name refused: not the credential's, or
 * not the scheduler's) and failures retry it later — in order, with backoff,
 * 401 and 403 slowly: never dropped.  A 202 with every event a duplicate on
 * the first sending of a message this life spooled means the spool was
 * rewound: a new life, and the message sent again.  A spool that cannot be
 * written turns delivery memory-only: said loudly on stderr and in the
 * --json status line, and detection goes on.  Which controller a message
 * goes to is controllers.c's: a failed one is followed at once by the next
 * of the list; the backoff starts when none of them took it. */
#include "agent/agent_int.h"
#include "wire/client.h"
#include "wire/limits.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POST_TIMEOUT_MS 3000
#define BACKOFF_FIRST_MS 100
#define RETRY_401_MS 30000
#define SEQ_MAX_DIGITS 18   /* the spool's seq numbers have at most 18 digits */

void snd_status(struct agent *a, const char *event)
{
    if (!a->o->json || !a->spool) return;
    char url[600];
    ctl_url(a, "/v1/events", url, sizeof url);
    bool mem = vg_spool_memory_only(a->spool);
    json_t *st = json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:s?, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "event", event,
                           "node", a->node, "controller", url, "spool", mem ? "memory-only" : "file", "spool_id",
                           vg_spool_id(a->spool), "spool_memory_only", mem, "spool_error",
                           mem ? vg_spool_error(a->spool) : NULL, "pending", (json_int_t)vg_spool_pending(a->spool),
                           "spool_bytes", (json_int_t)vg_spool_bytes(a->spool), "incidents", (json_int_t)a->incidents,
                           "sent", (json_int_t)a->sent, "dropped", (json_int_t)a->dropped, "spool_dropped",
                           (json_int_t)a->spool_dropped, "failed_posts", (json_int_t)a->failed_posts);
    vg_json_print(stdout, json_pack("{s:o}", "status", st), 1);
    fflush(stdout);
}

/* The spool file failed (at start or since): delivery goes on from memory. */
void snd_spool_lost(struct agent *a)
{
    vg_err("agent: SPOOL NOT WRITABLE (%s): delivering from memory only under spool id %s; messages not yet "
           "acknowledged are lost if the agent stops",
           vg_spool_error(a->spool), vg_spool_id(a->spool));
    snd_status(a, "spool-memory-only");
}

int snd_init(struct agent *a, char *err, size_t errlen)
{
    a->batch = json_array();
    if (!a->o->controller) return 0;
    if (ctl_init(a, a->o->controller, err, errlen)) return -1;
    struct vg_auth_conf ac = { .mode = a->o->auth_mode, .node = a->node, .token_file = a->o->token_file,
                               .munge_socket = a->o->munge_socket };
    if (vg_auth_init(&a->auth, &ac, err, errlen)) return -1;
    vg_client_set_ca(a->o->ca_file);
    a->auth_ok = true;
    char why[256];
    a->spool = vg_spool_open(a->o->spool, why, sizeof why);
    if (vg_spool_memory_only(a->spool)) snd_spool_lost(a);
    if (vg_spool_pending(a->spool))
        vg_info("agent: %zu undelivered messages in %s", vg_spool_pending(a->spool), a->o->spool);
    return 0;
}

void snd_queue(struct agent *a, const struct vg_event *e)
{
    struct vg_event with = *e;
    if (!with.jobs[0]) agent_jobs(a, with.jobs, sizeof with.jobs);
    json_array_append_new(a->batch, vg_event_to_json(&with));
}

/* A message; dropped: record-only events the spool's cap dropped that no
 * message told the controller of yet (0: the field is left out). */
static json_t *envelope(const char *node, const char *spool, int64_t seq, json_t *events, uint64_t dropped)
{
    json_t *m = json_pack("{s:s, s:s, s:I, s:O}", "node", node, "spool", spool, "seq", (json_int_t)seq, "events", events);
    if (dropped) json_object_set_new(m, "dropped", json_integer((json_int_t)dropped));
    return m;
}

/* The bytes an events array may take in one message from node. */
static size_t events_budget(struct agent *a, const char *node)
{
    json_t *empty = json_array(), *m = envelope(node, vg_spool_id(a->spool), 999999999999999999, empty, UINT32_MAX);
    size_t env = json_dumpb(m, NULL, 0, JSON_COMPACT) - 2;   /* less the "[]" msg_split counts */
    json_decref(m);
    json_decref(empty);
    _Static_assert(SEQ_MAX_DIGITS == sizeof "999999999999999999" - 1, "the widest seq");
    return env < VG_WIRE_SEND_BYTES ? VG_WIRE_SEND_BYTES - env : 0;
}

static json_t *slice(const json_t *events, size_t from, size_t to)
{
    json_t *part = json_array();
    for (size_t i = from; i < to; i++) json_array_append(part, json_array_get(events, i));
    return part;
}

/* Spools one message holding events (borrowed), within the spool's cap;
 * with --json it is printed. */
static void spool_message(struct agent *a, const char *node, json_t *events)
{
    for (int attempt = 0; attempt < 2; attempt++) {   /* the second one is in memory: it cannot fail */
        int64_t seq = vg_spool_next_seq(a->spool);
        json_t *msg = envelope(node, vg_spool_id(a->spool), seq, events, 0);
        char *text = json_dumps(msg, JSON_COMPACT);
        cap_make_room(a, text ? strlen(text) + 48 : 0);
        if (a->untold) {   /* what the cap dropped, before or just now: told with this message */
            json_object_set_new(msg, "dropped", json_integer((json_int_t)a->untold));
            free(text);
            text = json_dumps(msg, JSON_COMPACT);
        }
        int rc = vg_spool_append(a->spool, seq, text);
        free(text);
        if (rc == 0) {
            a->untold = 0;
            if (a->o->json) vg_json_print(stdout, msg, 1);
            else json_decref(msg);
            return;
        }
        json_decref(msg);
        snd_spool_lost(a);
    }
}

void snd_flush(struct agent *a)
{
    if (!json_array_size(a->batch)) return;
    json_t *events = a->batch;
    a->batch = json_array();
    if (!a->spool) {   /* standalone: only shown */
        if (a->o->json) vg_json_print(stdout, json_pack("{s:s, s:o}", "node", a->node, "events", events), 1);
        else json_decref(events);
        fflush(stdout);
        return;
    }
    size_t *ends, k = msg_split(events, VG_WIRE_SEND_EVENTS, events_budget(a, a->node), &ends);
    for (size_t i = 0, from = 0; i < k; from = ends[i++]) {
        json_t *part = slice(events, from, ends[i]);
        spool_message(a, a->node, part);
        json_decref(part);
    }
    free(ends);
    json_decref(events);
    fflush(stdout);
}

/* Replaces the spool's head message (msg, parsed) by k messages of its
 * events cut at ends[], each under this life's id and a new seq; the first
 * keeps the count of dropped events the head carried. */
static void respool_head(struct agent *a, json_t *msg, const size_t *ends, size_t k)
{
    json_t *events = json_object_get(msg, "events");
    const char *node = json_string_value(json_object_get(msg, "node"));
    uint64_t told = (uint64_t)json_integer_value(json_object_get(msg, "dropped"));
    int64_t *seqs = vg_xmalloc(k * sizeof *seqs);
    char **texts = vg_xmalloc(k * sizeof *texts);
    for (int attempt = 0; attempt < 2; attempt++) {   /* the second one is in memory: it cannot fail */
        for (size_t i = 0, from = 0; i < k; from = ends[i++]) {
            json_t *part = slice(events, from, ends[i]);
            seqs[i] = vg_spool_next_seq(a->spool);
            json_t *m = envelope(node, vg_spool_id(a->spool), seqs[i], part, i ? 0 : told);
            texts[i] = json_dumps(m, JSON_COMPACT);
            json_decref(m);
            json_decref(part);
        }
        int rc = vg_spool_replace_head(a->spool, seqs, texts, k);
        for (size_t i = 0; i < k; i++) free(texts[i]);
        if (rc == 0) break;
        snd_spool_lost(a);
    }
    free(seqs);
    free(texts);
}

/* Replaces the spool's head message by parts that fit: by the caps, or in
 * halves when it fits them already (halve: the controller refused it as too
 * large all the same).  Returns -1 when it cannot be split: one event, or not
 * a message at all. */
static int split_head(struct agent *a, bool halve)
{
    json_t *msg = json_loads(vg_spool_head(a->spool)->json, 0, NULL);
    json_t *events = json_object_get(msg, "events");
    const char *node = json_string_value(json_object_get(msg, "node"));
    size_t n = json_array_size(events), *ends = NULL, k = 0;
    if (node && n >= 2) k = msg_split(events, VG_WIRE_SEND_EVENTS, events_budget(a, node), &ends);
    if (k == 1 && halve) ends[0] = n / 2, ends[1] = n, k = 2;
    if (k < 2) {
        free(ends);
        json_decref(msg);
        return -1;
    }
    respool_head(a, msg, ends, k);
    vg_info("agent: message of %zu events split into %zu messages (%s)", n, k,
            halve ? "the controller refused it as too large" : "above the agent's message caps");
    free(ends);
    json_decref(msg);
    return 0;
}

/* A message this life spooled, acknowledged on its first sending with every
 * event a duplicate: the controller had its (spool, seq) already, with other
 * events — this agent's memory was restored (a snapshot of the running
 * machine) and its seqs reused.  The spool starts a new life and the message
 * goes again as new data.  True when that was done. */
static bool rewound(struct agent *a, const char *json, const char *resp)
{
    json_t *msg = json_loads(json, 0, NULL), *r = resp ? json_loads(resp, 0, NULL) : NULL;
    size_t n = json_array_size(json_object_get(msg, "events"));
    const char *spool = json_string_value(json_object_get(msg, "spool"));
    /* (never twice for a life a rewind started: its ids are new by construction) */
    bool all = n && json_integer_value(json_object_get(r, "duplicates")) == (json_int_t)n && spool &&
               strcmp(spool, a->rewind_id);
    json_decref(r);
    if (all) {
        vg_warn("agent: the controller already holds message %lld of spool %s, which this agent had never sent: "
                "its state was restored from a snapshot; sent again as new under a new spool id",
                (long long)json_integer_value(json_object_get(msg, "seq")), spool);
        if (!strcmp(spool, vg_spool_id(a->spool))) {
            vg_spool_new_life(a->spool);
            vg_strlcpy(a->rewind_id, vg_spool_id(a->spool), sizeof a->rewind_id);
        }
        respool_head(a, msg, &n, 1);
    }
    json_decref(msg);
    return all;
}

/* Above the caps of wire/limits.h?  Only a spool written by an older agent
 * holds such a message.  An event's JSON takes well over 64 bytes (13 keys),
 * so only a message that long can hold too many of them. */
static bool over_caps(const char *json)
{
    size_t len = strlen(json);
    if (len > VG_WIRE_SEND_BYTES) return true;
    if (len <= (size_t)VG_WIRE_SEND_EVENTS * 64) return false;
    json_t *m = json_loads(json, 0, NULL);
    bool over = json_array_size(json_object_get(m, "events")) > VG_WIRE_SEND_EVENTS;
    json_decref(m);
    return over;
}

/* A 400 whose error names a limit is a size refusal, not a malformed message. */
static bool names_limit(const char *resp)
{
    return resp && (strstr(resp, "limit") || strstr(resp, "too large") || strstr(resp, "too many"));
}

static void later(struct agent *a, int ms)
{
    a->retry_at = vg_mono_ms() + ms;
}

/* The head message is gone (acknowledged or dropped). */
static void pop(struct agent *a)
{
    if (vg_spool_ack_head(a->spool)) vg_err("agent: %s", vg_spool_error(a->spool));
}

void snd_deliver(struct agent *a, bool once)
{
    if (!a->spool) return;
    if (a->retry_at && vg_mono_ms() < a->retry_at && !once) return;
    a->retry_at = 0;
    const struct vg_spool_msg *m;
    while ((m = vg_spool_head(a->spool))) {
        if (over_caps(m->json) && split_head(a, false) == 0) continue;
        int64_t t0 = vg_mono_ms(), seq = m->seq;
        bool first = m->fresh && m->attempts == 0;   /* this life spooled it and never sent it */
        vg_spool_head_tried(a->spool);
        struct ctl_result r;
        int timeout = a->o->post_timeout_ms ? a->o->post_timeout_ms : POST_TIMEOUT_MS;
        int rc = ctl_post(a, "/v1/events", m->json, timeout, &r);
        long status = r.status;
        char *resp = r.resp, *err = r.err;
        a->failed_posts += (uint64_t)(r.tries - 1);
        /* a controller that did not answer may have stored it: a duplicate is then no sign of a rewind */
        first = first && !r.unanswered;
        if (rc == 0 && status == 202 && first && rewound(a, m->json, resp)) {
            free(resp);
            continue;
        }
        if (rc == 0 && status == 202) {
            vg_info("agent: message %" PRId64 " delivered in %lld ms", seq, (long long)(vg_mono_ms() - t0));
            a->sent++;
            a->backoff_ms = 0;
            pop(a);
        } else if (rc == 0 && (status == 413 || (status == 400 && names_limit(resp)))) {
            vg_warn("agent: the controller refused message %" PRId64 " as too large (HTTP %ld: %s); splitting it", seq,
                    status, resp ? resp : "");
            if (split_head(a, true)) {
                /* one event cannot exceed any sane limit (fixed-size fields):
                 * a controller that refuses it would jam delivery for good */
                vg_err("agent: message %" PRId64 " cannot be split (a single event): dropped", seq);
                a->dropped++;
                pop(a);
            }
        } else if (rc == 0 && status == 400) {
            vg_err("agent: the controller rejected message %" PRId64 " as malformed (dropped): %s", seq,
                   resp ? resp : "");
            a->dropped++;
            pop(a);
        } else if (rc == 0 && (status == 401 || status == 403)) {
            vg_err("agent: %s by %s (HTTP %ld) for message %" PRId64 ": %s; %s; retrying in %d s",
                   status == 401 ? "AUTHENTICATION REJECTED" : "REFUSED AS NOT THIS NODE'S", r.url, status, seq,
                   resp ? resp : "",
                   status == 401 ? "check --auth and the key/token"
                                 : "check --node and that the scheduler lists this node at this address",
                   RETRY_401_MS / 1000);
            a->failed_posts++;
            later(a, RETRY_401_MS);
        } else {
            a->failed_posts++;
            a->backoff_ms = a->backoff_ms ? a->backoff_ms * 2 : BACKOFF_FIRST_MS;
            if (a->backoff_ms > a->o->retry_max_ms) a->backoff_ms = a->o->retry_max_ms;
            if (rc) vg_warn("agent: controller unreachable (%s); %zu messages spooled, retry in %d ms", err,
                            vg_spool_pending(a->spool), a->backoff_ms);
            else vg_warn("agent: controller answered HTTP %ld to message %" PRId64 "; retry in %d ms", status, seq,
                         a->backoff_ms);
            later(a, a->backoff_ms);
        }
        free(resp);
        if (a->retry_at) break;
    }
}

int snd_wait_ms(const struct agent *a)
{
    if (!a->spool || !vg_spool_head(a->spool)) return -1;
    int64_t left = a->retry_at - vg_mono_ms();
    return left > 0 ? (int)left : 0;
}

void snd_close(struct agent *a)
{
    json_decref(a->batch);
    a->batch = NULL;
    vg_spool_close(a->spool);
    a->spool = NULL;
    if (a->auth_ok) vg_auth_free(&a->auth);
}
