/* intake.c — the controller's own events into the intake: an event it
 * raised itself (a node the heartbeat monitor confirmed down) goes into the
 * same group commit as an agent's message (commit.h), checked and given its
 * verdict by the same rules, without being written as a message and read
 * back.  See ingest.h. */
#include "controller/commit.h"
#include "controller/clock.h"
#include "util/log.h"
#include "util/strutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The spool id of the controller's own messages: one no agent has (an
 * agent's is random, never all zeros). */
#define VG_INTAKE_OWN_SPOOL "00000000000000000000000000000000"

/* Its end: logged when it failed, freed. */
static void own_done(void *arg, int code, json_t *resp)
{
    struct vg_commit_req *r = arg;
    if (code != 202) {
        const char *why = json_string_value(json_object_get(resp, "error"));
        vg_err("controller's own event for %s not stored: %s", r->msg.node, why ? why : "store failure");
    }
    json_decref(resp);
    vg_message_free(&r->msg);
    free(r);
}

int vg_intake_event(struct vg_ingest *in, const struct vg_event *e, char *err, size_t errlen)
{
    if (vg_ingest_check_event(in, e, err, errlen)) return -1;
    struct vg_commit_req *r = vg_xcalloc(1, sizeof *r);
    r->now = vg_clock_ms();   /* the detected stamp: never before an earlier one */
    r->msg.events = vg_xcalloc(1, sizeof *r->msg.events);
    r->msg.events[0] = *e;
    r->msg.n = 1;
    if (!r->msg.events[0].seen_ms) r->msg.events[0].seen_ms = r->now;
    if (in->cat) vg_catalog_classify(in->cat, &r->msg.events[0]);
    vg_strlcpy(r->msg.node, e->node, sizeof r->msg.node);
    vg_strlcpy(r->msg.spool, VG_INTAKE_OWN_SPOOL, sizeof r->msg.spool);
    r->msg.seq = r->msg.events[0].seen_ms;   /* one message per event: (node, spool, seq) is its delivery */
    r->done = own_done;
    r->arg = r;
    vg_committer_submit(in->committer, r);
    return 0;
}
