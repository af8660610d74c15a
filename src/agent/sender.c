/* sender.c — delivery to the controller: the events of one loop turn become
 * one message {"node", "seq", "events"}, spooled (fsync'd) before the POST;
 * 202 removes it, 400 drops it (malformed is not retryable), 401 and failures
 * retry it later — in order, with backoff, 401 slowly. */
#include "agent/agent_int.h"
#include "wire/client.h"
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

int snd_init(struct agent *a, char *err, size_t errlen)
{
    a->batch = json_array();
    if (!a->o->controller) return 0;
    const char *c = a->o->controller;
    if (!vg_startswith(c, "http://") && !vg_startswith(c, "https://"))
        return snprintf(err, errlen, "--controller '%s': expected http://HOST:PORT", c), -1;
    size_t l = strlen(c);
    while (l && c[l - 1] == '/') l--;
    if (l >= 10 && !strncmp(c + l - 10, "/v1/events", 10)) snprintf(a->url, sizeof a->url, "%.*s", (int)l, c);
    else snprintf(a->url, sizeof a->url, "%.*s/v1/events", (int)l, c);
    if (vg_auth_init(&a->auth, a->o->auth_mode, a->o->token_file, a->o->munge_socket, err, errlen)) return -1;
    a->auth_ok = true;
    a->spool = vg_spool_open(a->o->spool, err, errlen);
    if (!a->spool) return -1;
    if (vg_spool_pending(a->spool))
        vg_info("agent: %zu undelivered messages in %s", vg_spool_pending(a->spool), a->o->spool);
    return 0;
}

void snd_queue(struct agent *a, const struct vg_event *e)
{
    json_array_append_new(a->batch, vg_event_to_json(e));
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
    int64_t seq = vg_spool_next_seq(a->spool);
    json_t *msg = json_pack("{s:s, s:I, s:o}", "node", a->node, "seq", (json_int_t)seq, "events", events);
    char *text = json_dumps(msg, JSON_COMPACT);
    if (vg_spool_append(a->spool, seq, text))
        vg_err("agent: %s (message %" PRId64 " is kept in memory only)", vg_spool_error(a->spool), seq);
    if (a->o->json) vg_json_print(stdout, msg, 1);
    else json_decref(msg);
    fflush(stdout);
    free(text);
}

static void later(struct agent *a, int ms)
{
    a->retry_at = vg_mono_ms() + ms;
}

void snd_deliver(struct agent *a, bool once)
{
    if (!a->spool) return;
    if (a->retry_at && vg_mono_ms() < a->retry_at && !once) return;
    a->retry_at = 0;
    const struct vg_spool_msg *m;
    while ((m = vg_spool_head(a->spool))) {
        long status = 0;
        char *resp = NULL, err[256] = "";
        int64_t t0 = vg_mono_ms();
        int rc = vg_client_post(a->url, &a->auth, m->json, POST_TIMEOUT_MS, &status, &resp, err, sizeof err);
        int64_t seq = m->seq;
        if (rc == 0 && status == 202) {
            vg_info("agent: message %" PRId64 " delivered in %lld ms", seq, (long long)(vg_mono_ms() - t0));
            a->sent++;
            a->backoff_ms = 0;
            if (vg_spool_ack_head(a->spool)) vg_err("agent: %s", vg_spool_error(a->spool));
        } else if (rc == 0 && status == 400) {
            vg_err("agent: the controller rejected message %" PRId64 " as malformed (dropped): %s", seq,
                   resp ? resp : "");
            a->dropped++;
            if (vg_spool_ack_head(a->spool)) vg_err("agent: %s", vg_spool_error(a->spool));
        } else if (rc == 0 && status == 401) {
            vg_err("agent: AUTHENTICATION REJECTED by %s (HTTP 401) for message %" PRId64
                   ": check --auth and the key/token; retrying in %d s",
                   a->url, seq, RETRY_401_MS / 1000);
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
