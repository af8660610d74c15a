/* store_state.c — the incidents' states (an enum and a free-text detail) and
 * what the executor keeps in the store so that a restarted controller resumes
 * every incident from what the store says: the committed plan (the decision
 * and its spare claims), the repair ladder's position, a jobs read still to
 * do, the scheduler's epoch, the breaker's window; the controller's id; the
 * columns added to stores written before these; see store.h. */
#include "controller/store_int.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

static const char *const state_names[VG_INC_COUNT] = {
    "open", "acting", "failed", "held", "recorded", "dry-run", "isolated", "repairing", "unrepaired", "rma", "closed",
};

const char *vg_inc_state_name(enum vg_inc_state s) { return s < VG_INC_COUNT ? state_names[s] : "?"; }

int vg_inc_state_parse(const char *s)
{
    for (int i = 0; i < VG_INC_COUNT; i++)
        if (!strcmp(state_names[i], s)) return i;
    return -1;
}

/* ---- states ---------------------------------------------------------------- */

int vg_store_set_state(struct vg_store *st, int64_t incident, enum vg_inc_state state, const char *detail)
{
    if (state >= VG_INC_COUNT) return -1;
    return vg_store_run(st, vg_store_prep(st, "UPDATE incidents SET state=?1, detail=?2, open=?3 WHERE id=?4", "ssii",
                                          state_names[state], detail ? detail : "",
                                          (int64_t)(state != VG_INC_CLOSED), incident));
}

int vg_store_set_states(struct vg_store *st, const int64_t *ids, const enum vg_inc_state *states,
                        const char *const *details, size_t n)
{
    /* one transaction when the connection has none open (else each joins it) */
    bool tx = !vg_store_in_tx(st) && vg_store_begin(st) == 0;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) rc = vg_store_set_state(st, ids[i], states[i], details[i]);
    if (tx && !rc) rc = vg_store_commit(st);
    else if (tx) vg_store_rollback(st);
    return rc;
}

json_t *vg_store_open_states(struct vg_store *st)
{
    struct vg_stmt *s = vg_store_prep(st, "SELECT id, node, state, detail FROM incidents WHERE open=1 ORDER BY id", "");
    json_t *arr = json_array();
    while (s && vg_store_row(st, s))
        json_array_append_new(arr, json_pack("{s:I, s:s, s:s, s:s}", "id", (json_int_t)vg_store_int(st, s, 0),
                                             "node", vg_store_text(st, s, 1), "state",
                                             vg_store_text(st, s, 2), "detail",
                                             vg_store_text(st, s, 3)));
    vg_store_done(st, s);
    return arr;
}

/* ---- the executor's durable state ----------------------------------------- */

void vg_store_fence(struct vg_store *st, const char *holder, int64_t term)
{
    vg_strlcpy(st->fence_holder, holder, sizeof st->fence_holder);
    st->fence_term = term;
}

bool vg_store_fenced(const struct vg_store *st) { return st->fenced; }

int vg_store_set_plan(struct vg_store *st, int64_t incident, const char *plan, int64_t at, const char *boot,
                      int64_t boot_ms, const char *epoch)
{
    st->fenced = false;
    if (st->fence_term) {
        struct vg_stmt *s = vg_store_prep(st,
                                          "UPDATE incidents SET state='acting', detail='', open=1, plan=?1, acted_at=?2,"
                                          " acted_boot=?3, acted_boot_ms=?4, epoch=?5, term=?7 WHERE id=?6 AND EXISTS"
                                          " (SELECT 1 FROM leader WHERE name='vigil' AND holder=?8 AND term=?7"
                                          " AND expires_at > now()) RETURNING id",
                                          "sisisiis", plan, at, boot, boot_ms, epoch, incident, st->fence_term,
                                          st->fence_holder);
        if (!s) return -1;
        bool done = vg_store_row(st, s);
        vg_store_done(st, s);
        if (done) return 0;
        st->fenced = true;
        vg_store_fail(st, "fenced: this controller does not hold the lease with its term any more", false);
        return -1;
    }
    return vg_store_run(st, vg_store_prep(st,
                                          "UPDATE incidents SET state='acting', detail='', open=1, plan=?1, acted_at=?2,"
                                          " acted_boot=?3, acted_boot_ms=?4, epoch=?5 WHERE id=?6",
                                          "sisisi", plan, at, boot, boot_ms, epoch, incident));
}

int vg_store_set_failed(struct vg_store *st, int64_t incident, const char *detail, int attempts)
{
    return vg_store_run(st, vg_store_prep(st,
                                          "UPDATE incidents SET state='failed', detail=?1, open=1, plan=NULL,"
                                          " acted_at=NULL, attempts=?2 WHERE id=?3",
                                          "sii", detail, (int64_t)attempts, incident));
}

int vg_store_set_rung(struct vg_store *st, int64_t incident, int rung, bool done, const char *detail)
{
    return vg_store_run(st, vg_store_prep(st,
                                          "UPDATE incidents SET state='repairing', detail=?1, open=1, rung=?2,"
                                          " rung_done=?3 WHERE id=?4",
                                          "siii", detail, (int64_t)rung, (int64_t)done, incident));
}

int vg_store_set_jobs_unread(struct vg_store *st, int64_t incident, int64_t out_ms)
{
    return vg_store_run(st, vg_store_prep(st, "UPDATE incidents SET jobs_unread=?1 WHERE id=?2", "ii", out_ms,
                                          incident));
}

int vg_store_set_epoch(struct vg_store *st, int64_t incident, const char *epoch)
{
    return vg_store_run(st, vg_store_prep(st, "UPDATE incidents SET epoch=?1 WHERE id=?2", "si", epoch, incident));
}

json_t *vg_store_undecided(struct vg_store *st)
{
    struct vg_stmt *s = vg_store_prep(st, "SELECT id, node, event FROM incidents WHERE open=1 AND state IN ('open', 'failed')"
                                      " ORDER BY id", "");
    json_t *arr = json_array();
    while (vg_store_row(st, s)) {
        json_t *ev = json_loads(vg_store_text(st, s, 2), 0, NULL);
        json_array_append_new(arr, json_pack("{s:I, s:s, s:o}", "id", (json_int_t)vg_store_int(st, s, 0), "node",
                                             vg_store_text(st, s, 1), "event", ev ? ev : json_null()));
    }
    vg_store_done(st, s);
    return arr;
}

json_t *vg_store_work(struct vg_store *st)
{
    struct vg_stmt *s = vg_store_prep(st,
                                    "SELECT id, node, state, detail, event, plan, rung, rung_done, jobs_unread,"
                                    " attempts, epoch, EXISTS(SELECT 1 FROM steps WHERE incident=id AND step='isolated')"
                                    " FROM incidents WHERE open=1 AND state IN ('open', 'acting', 'failed',"
                                    " 'isolated', 'repairing', 'unrepaired', 'rma') ORDER BY id",
                                    "");
    json_t *arr = json_array();
    while (s && vg_store_row(st, s)) {
        json_t *ev = json_loads(vg_store_text(st, s, 4), 0, NULL);
        json_t *plan = vg_store_null(st, s, 5)
                           ? NULL : json_loads(vg_store_text(st, s, 5), 0, NULL);
        json_t *j = json_pack("{s:I, s:s, s:s, s:s, s:o, s:o, s:I, s:b, s:I, s:i, s:b}", "id",
                              (json_int_t)vg_store_int(st, s, 0), "node", vg_store_text(st, s, 1),
                              "state", vg_store_text(st, s, 2), "detail",
                              vg_store_text(st, s, 3), "event", ev ? ev : json_null(), "plan",
                              plan ? plan : json_null(), "rung",
                              (json_int_t)(vg_store_null(st, s, 6) ? -1 : vg_store_int(st, s, 6)),
                              "rung_done", (int)vg_store_int(st, s, 7) != 0, "jobs_unread",
                              (json_int_t)vg_store_int(st, s, 8), "attempts", (int)vg_store_int(st, s, 9),
                              "took_out", (int)vg_store_int(st, s, 11) != 0);
        vg_json_set_str(j, "epoch", vg_store_text(st, s, 10));
        json_array_append_new(arr, j);
    }
    vg_store_done(st, s);
    return arr;
}

json_t *vg_store_isolations_since(struct vg_store *st, int64_t since_ms)
{
    /* a committed plan names the nodes it takes out (a domain, its spares
     * claimed); an incident of a store written before plans: its node, from
     * its isolated step */
    struct vg_stmt *s = vg_store_prep(st,
                                    "SELECT i.node, i.plan, coalesce(i.acted_at, t.at), i.acted_boot, i.acted_boot_ms"
                                    " FROM incidents i LEFT JOIN steps t ON t.incident = i.id AND t.step = 'isolated'"
                                    " WHERE (i.plan IS NOT NULL AND i.acted_at >= ?1) OR (i.plan IS NULL AND t.at >= ?1)"
                                    " ORDER BY 3",
                                    "i", since_ms);
    json_t *arr = json_array();
    while (s && vg_store_row(st, s)) {
        json_t *plan = vg_store_null(st, s, 1)
                           ? NULL : json_loads(vg_store_text(st, s, 1), 0, NULL);
        json_t *nodes = json_object_get(plan, "isolate");
        json_t *one = json_pack("[s]", vg_store_text(st, s, 0));
        size_t i;
        json_t *n;
        json_array_foreach(json_is_array(nodes) ? nodes : one, i, n) {
            json_t *j = json_pack("{s:O, s:I, s:I}", "node", n, "at", (json_int_t)vg_store_int(st, s, 2), "boot_ms",
                                  (json_int_t)vg_store_int(st, s, 4));
            vg_json_set_str(j, "boot", vg_store_text(st, s, 3));
            json_array_append_new(arr, j);
        }
        json_decref(one);
        json_decref(plan);
    }
    vg_store_done(st, s);
    return arr;
}

int vg_store_controller_id(struct vg_store *st, char *buf, size_t n)
{
    unsigned char r[4] = { 0 };
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) return -1;
    char id[16];
    snprintf(id, sizeof id, "%02x%02x%02x%02x", r[0], r[1], r[2], r[3]);
    if (vg_store_run(st, vg_store_prep(st, "INSERT INTO meta(key, value) VALUES('controller_id', ?1) ON CONFLICT DO NOTHING", "s",
                                       id)))
        return -1;
    struct vg_stmt *s = vg_store_prep(st, "SELECT value FROM meta WHERE key='controller_id'", "");
    int rc = s && vg_store_row(st, s) ? 0 : -1;
    if (!rc) vg_strlcpy(buf, vg_store_text(st, s, 0), n);
    vg_store_done(st, s);
    return rc;
}
