/* spoolcap.c — the spool's cap (--spool-max): when the next message would
 * take the spool past it (a controller out of reach for long, a storm of
 * events), the oldest record-only events (verdict "ignore") are dropped
 * first, down to three quarters of the cap, so this happens once per quarter
 * of the cap and not at every message.  A fault (any other verdict) is never
 * dropped: a message losing its record-only events keeps its faults (sent
 * again under this life's id and a new seq), and a spool holding faults only
 * stays over its cap, said once.  Every drop is counted in the agent's
 * status and told to the controller: the next message carries "dropped": N
 * (and a message dropped whole hands on the count it carried). */
#include "agent/agent_int.h"
#include "util/log.h"
#include "util/strutil.h"
#include <stdlib.h>
#include <string.h>

static struct vg_lograte cap_log = VG_LOGRATE("spool at its cap", 60000, 2);

/* The events of message json that are not record-only, in *keep (new
 * reference); the number that are.  -1: not a message (left alone). */
static long split(const char *json, json_t **msg, json_t **keep)
{
    *msg = json_loads(json, 0, NULL);
    json_t *events = json_object_get(*msg, "events");
    if (!json_is_array(events)) {
        json_decref(*msg);
        return -1;
    }
    *keep = json_array();
    long drop = 0;
    size_t i;
    json_t *e;
    json_array_foreach(events, i, e) {
        const char *act = json_string_value(json_object_get(e, "action"));
        if (act && !strcmp(act, "ignore")) drop++;
        else json_array_append(*keep, e);
    }
    return drop;
}

void cap_make_room(struct agent *a, size_t incoming)
{
    size_t cap = a->o->spool_max, bytes = vg_spool_bytes(a->spool);
    if (!cap || bytes + incoming <= cap) {
        a->cap_warned = false;
        return;
    }
    size_t target = cap / 4 * 3, freed = 0, dropped = 0, handed = 0, n = 0, room = 16;
    size_t *idx = vg_xmalloc(room * sizeof *idx);
    int64_t *seqs = vg_xmalloc(room * sizeof *seqs);
    char **jsons = vg_xmalloc(room * sizeof *jsons);
    for (size_t i = 0; bytes - freed + incoming > target; i++) {
        const struct vg_spool_msg *m = vg_spool_at(a->spool, i);
        if (!m) break;
        size_t len = strlen(m->json);
        json_t *msg, *keep;
        long drop = split(m->json, &msg, &keep);
        if (drop <= 0) {
            if (drop == 0) json_decref(msg), json_decref(keep);
            continue;
        }
        if (n == room) {
            room *= 2;
            idx = vg_xrealloc(idx, room * sizeof *idx);
            seqs = vg_xrealloc(seqs, room * sizeof *seqs);
            jsons = vg_xrealloc(jsons, room * sizeof *jsons);
        }
        idx[n] = i;
        seqs[n] = 0;
        jsons[n] = NULL;
        if (json_array_size(keep)) {   /* its faults stay: a new message under this life's id */
            seqs[n] = vg_spool_next_seq(a->spool);
            json_object_set(msg, "events", keep);
            json_object_set_new(msg, "spool", json_string(vg_spool_id(a->spool)));
            json_object_set_new(msg, "seq", json_integer(seqs[n]));
            jsons[n] = json_dumps(msg, JSON_COMPACT);
        }
        json_decref(keep);
        if (seqs[n] && !jsons[n]) {   /* not rewritten: left as it is, faults and all */
            json_decref(msg);
            continue;
        }
        /* gone, or rewritten; a message dropped whole hands on the count it carried */
        freed += len - (jsons[n] ? strlen(jsons[n]) : 0);
        dropped += (size_t)drop;
        if (!jsons[n]) handed += (size_t)json_integer_value(json_object_get(msg, "dropped"));
        json_decref(msg);
        n++;
    }
    if (n && vg_spool_edit(a->spool, idx, seqs, jsons, n)) snd_spool_lost(a);
    for (size_t k = 0; k < n; k++) free(jsons[k]);
    free(idx);
    free(seqs);
    free(jsons);
    a->spool_dropped += dropped;
    a->untold += dropped + handed;
    if (dropped)
        vg_warn_limited(&cap_log, "agent: spool at its cap of %zu bytes: dropped the oldest %zu record-only events "
                                  "(%llu so far); faults are kept", cap, dropped,
                        (unsigned long long)a->spool_dropped);
    if (vg_spool_bytes(a->spool) + incoming > cap && !a->cap_warned) {
        vg_warn("agent: spool over its cap of %zu bytes with faults only: nothing more is dropped", cap);
        a->cap_warned = true;
    }
}
