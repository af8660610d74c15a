/* beat.c — the agent's heartbeat: every interval, POST {"node": NAME} to the
 * controller's /v1/heartbeat, authenticated like a message, with a short
 * timeout and nothing written to disk.  When the node crashes or freezes the
 * beats stop, and the controller's heartbeat monitor takes it from there.
 * While the agent folds repeats of an incident it says so ("folds": N), and
 * the answer says when the node was last returned to service: the folds
 * begun before then are closed (their repeats sent), so the same fault
 * coming back on the returned node is a new incident at once, not a repeat
 * counted into the old one until the fold window ends.  The NVLink domain
 * its GPUs registered in ("domain", from their fabric info) tells the
 * controller which nodes form a rack's domain.  A beat that gets no answer
 * or a 5xx goes to the next controller of the list at once (controllers.c),
 * and the messages follow. */
#include "agent/agent_int.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BEAT_TIMEOUT_MS 300   /* a beat never holds the loop longer per controller tried */

int beat_wait_ms(const struct agent *a)
{
    if (!a->o->controller || a->o->heartbeat_ms <= 0 || !a->auth_ok) return -1;
    int64_t left = a->next_beat - vg_mono_ms();
    return left > 0 ? (int)left : 0;
}

/* The controller's answer names when the node was last returned to service:
 * the folds begun before then are closed and their repeats sent now. */
static void returned(struct agent *a, const char *resp)
{
    json_t *ans = resp ? json_loads(resp, 0, NULL) : NULL;
    int64_t at = vg_json_get_time(ans, "returned");
    json_decref(ans);
    size_t n = at > 0 ? vg_dedup_close_before(a->dd, at) : 0;
    if (!n) return;
    char when[40];
    vg_format_time(at, when);
    vg_info("agent: node returned to service at %s: %zu folded incident%s closed, the same fault again is new",
            when, n, n == 1 ? "" : "s");
    snd_flush(a);
    snd_deliver(a, false);
}

void beat_due(struct agent *a)
{
    if (beat_wait_ms(a) != 0) return;
    a->next_beat = vg_mono_ms() + a->o->heartbeat_ms;
    char body[320], jobs[VG_EVENT_JOBS] = "", folds[32] = "", domain[96] = "";
    agent_jobs(a, jobs, sizeof jobs);
    size_t open = vg_dedup_open_count(a->dd);
    if (open) snprintf(folds, sizeof folds, ",\"folds\":%zu", open);
    if (a->fabric_domain[0]) snprintf(domain, sizeof domain, ",\"domain\":\"%s\"", a->fabric_domain);
    snprintf(body, sizeof body, "{\"node\":\"%s\"%s%s%s%s%s}", a->node, jobs[0] ? ",\"jobs\":\"" : "", jobs,
             jobs[0] ? "\"" : "", folds, domain);
    struct ctl_result r;
    int rc = ctl_post(a, "/v1/heartbeat", body, BEAT_TIMEOUT_MS, &r);
    bool ok = rc == 0 && r.status == 200;
    if (ok && open) returned(a, r.resp);
    a->beats += ok;
    if (!ok && !rc) snprintf(r.err, sizeof r.err, "refused (HTTP %ld: %.180s)", r.status, r.resp ? r.resp : "");
    free(r.resp);
    if (!ok && !a->beat_failing) vg_warn("agent: heartbeat to %s: %s", r.url, r.err);
    else if (ok && a->beat_failing) vg_info("agent: heartbeats reach the controller again");
    a->beat_failing = !ok;
}
