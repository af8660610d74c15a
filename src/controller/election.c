/* election.c — the controllers' lease on PostgreSQL; see election.h. */
#include "controller/election.h"
#include "controller/store_int.h"
#include "util/condwait.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

struct vg_election {
    struct vg_election_opts o;
    struct vg_store *db;
    char holder[160], url[256], leader_url[256];
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    bool stopping, stopped;
    int64_t term;            /* this controller's term while it leads, else the last seen */
    int64_t trusted_until;   /* monotonic ms; 0: not leading */
    int64_t hold_off;        /* monotonic ms: one that lost the lease gives way to the others for two leases */
};

/* Takes or renews the lease: this holder keeps its term while its lease is
 * valid; one that lapsed (this holder's or another's) goes with term + 1.
 * No row back: another holds a valid lease. */
static const char claim_sql[] =
    "INSERT INTO leader(name, holder, url, term, expires_at) VALUES('vigil', ?1, ?2, 1,"
    " now() + ?3 * interval '1 millisecond')"
    " ON CONFLICT(name) DO UPDATE SET holder = excluded.holder, url = excluded.url,"
    "  term = CASE WHEN leader.holder = excluded.holder AND leader.expires_at >= now() THEN leader.term"
    "         ELSE leader.term + 1 END,"
    "  expires_at = excluded.expires_at"
    " WHERE leader.holder = excluded.holder OR leader.expires_at < now()"
    " RETURNING term";

static const char seen_sql[] = "SELECT url, term FROM leader WHERE name = 'vigil'";
/* a lease ended, not deleted: the next term is one higher (terms only grow) */
static const char resign_sql[] =
    "UPDATE leader SET expires_at = now() - interval '1 millisecond' WHERE name = 'vigil' AND holder = ?1 AND term = ?2";

/* 1 leads with *term, 0 another leads, -1 the database did not answer. */
static int claim(struct vg_election *e, int64_t *term)
{
    struct vg_stmt *s = vg_store_prep(e->db, claim_sql, "ssi", e->holder, e->url, (int64_t)e->o.lease_ms);
    if (!s) return -1;
    int rc = vg_store_row(e->db, s) ? 1 : 0;
    if (rc) *term = vg_store_int(e->db, s, 0);
    vg_store_done(e->db, s);
    return rc;
}

static void look(struct vg_election *e)
{
    struct vg_stmt *s = vg_store_prep(e->db, seen_sql, "");
    if (vg_store_row(e->db, s)) {
        pthread_mutex_lock(&e->lock);
        vg_strlcpy(e->leader_url, vg_store_text(e->db, s, 0) ? vg_store_text(e->db, s, 0) : "", sizeof e->leader_url);
        e->term = vg_store_int(e->db, s, 1);
        pthread_mutex_unlock(&e->lock);
    }
    vg_store_done(e->db, s);
}

static void lose(struct vg_election *e, const char *why)
{
    pthread_mutex_lock(&e->lock);
    int64_t term = e->term;
    bool was = e->trusted_until != 0;
    e->trusted_until = 0;
    pthread_mutex_unlock(&e->lock);
    if (!was) return;
    e->hold_off = vg_mono_ms() + 2 * e->o.lease_ms;   /* past its own lease: another takes it */
    vg_err("ALERT election: no longer the leader (term %lld): %s", (long long)term, why);
    if (e->o.on_lost) e->o.on_lost(e->o.ctx, term, why);
}

static void *elect_main(void *arg)
{
    struct vg_election *e = arg;
    pthread_mutex_lock(&e->lock);
    while (!e->stopping) {
        pthread_mutex_unlock(&e->lock);
        int64_t sent = vg_mono_ms(), term = 0;
        int rc = sent < e->hold_off ? 0 : claim(e, &term);
        pthread_mutex_lock(&e->lock);
        bool leading = e->trusted_until != 0, late = leading && vg_mono_ms() >= e->trusted_until;
        int64_t had = e->term;
        pthread_mutex_unlock(&e->lock);
        if (rc == 1 && (!leading || term == had) && !late) {
            pthread_mutex_lock(&e->lock);
            e->term = term;
            e->trusted_until = sent + e->o.lease_ms - e->o.margin_ms;
            vg_strlcpy(e->leader_url, e->url, sizeof e->leader_url);
            pthread_mutex_unlock(&e->lock);
            if (!leading) {
                vg_notice("election: this controller leads (term %lld)", (long long)term);
                if (e->o.on_lead) e->o.on_lead(e->o.ctx, term);
            }
        } else if (rc == 1) {
            /* the lease lapsed while this one led (frozen, or the renewals
             * late): what it started under the old term is not its to finish */
            lose(e, late ? "its trust window ended before the lease was renewed" : "its term changed");
        } else if (rc == 0) {
            if (leading) lose(e, "another controller holds the lease");
            look(e);
        } else if (leading && vg_mono_ms() >= e->trusted_until) {
            lose(e, vg_store_error(e->db));
        }
        pthread_mutex_lock(&e->lock);
        if (e->stopping) break;
        int64_t wait = e->trusted_until ? e->o.renew_ms : e->o.renew_ms / 2;
        vg_cond_wait_ms(&e->wake, &e->lock, wait - (vg_mono_ms() - sent));
    }
    pthread_mutex_unlock(&e->lock);
    return NULL;
}

struct vg_election *vg_election_start(const struct vg_election_opts *o, char *err, size_t errlen)
{
    struct vg_election *e = vg_xcalloc(1, sizeof *e);
    e->o = *o;
    if (!e->o.lease_ms) e->o.lease_ms = 3000;
    if (!e->o.renew_ms) e->o.renew_ms = 1000;
    if (!e->o.margin_ms) e->o.margin_ms = 1000;
    if (e->o.renew_ms + e->o.margin_ms >= e->o.lease_ms) {
        snprintf(err, errlen, "election: the lease (%d ms) must be longer than a renewal and the margin (%d + %d ms)",
                 e->o.lease_ms, e->o.renew_ms, e->o.margin_ms);
        free(e);
        return NULL;
    }
    if (vg_store_open(o->target, &e->db, err, errlen)) {
        free(e);
        return NULL;
    }
    /* a renewal unanswered past the trust window is given up: the leader
     * learns it lost its lease even when the database went silent */
    vg_store_set_deadline(e->db, e->o.lease_ms - e->o.margin_ms);
    char host[64] = "?";
    unsigned char r[4] = { 0 };
    gethostname(host, sizeof host - 1);
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) memset(r, 0, sizeof r);
    snprintf(e->holder, sizeof e->holder, "%s:%ld:%02x%02x%02x%02x", host, (long)getpid(), r[0], r[1], r[2], r[3]);
    vg_strlcpy(e->url, o->url ? o->url : "", sizeof e->url);
    pthread_mutex_init(&e->lock, NULL);
    vg_cond_init_mono(&e->wake);
    pthread_create(&e->thread, NULL, elect_main, e);
    return e;
}

bool vg_election_leading(struct vg_election *e, int64_t *term)
{
    pthread_mutex_lock(&e->lock);
    bool yes = e->trusted_until && vg_mono_ms() < e->trusted_until;
    if (term) *term = e->term;
    pthread_mutex_unlock(&e->lock);
    return yes;
}

const char *vg_election_holder(const struct vg_election *e) { return e->holder; }

void vg_election_role(struct vg_election *e, char *role, size_t rn, int64_t *term, char *leader_url, size_t un)
{
    bool leading = vg_election_leading(e, NULL);
    pthread_mutex_lock(&e->lock);
    vg_strlcpy(role, leading ? "leader" : "follower", rn);
    *term = e->term;
    vg_strlcpy(leader_url, e->leader_url, un);
    pthread_mutex_unlock(&e->lock);
}

void vg_election_stop(struct vg_election *e)
{
    if (!e || e->stopped) return;
    pthread_mutex_lock(&e->lock);
    e->stopping = true;
    pthread_cond_signal(&e->wake);
    pthread_mutex_unlock(&e->lock);
    pthread_join(e->thread, NULL);
    e->stopped = true;
}

void vg_election_free(struct vg_election *e)
{
    if (!e) return;
    vg_election_stop(e);
    int64_t term;
    if (vg_election_leading(e, &term) &&
        !vg_store_run(e->db, vg_store_prep(e->db, resign_sql, "si", e->holder, term)))
        vg_notice("election: resigned (term %lld)", (long long)term);
    vg_store_close(e->db);
    pthread_cond_destroy(&e->wake);
    pthread_mutex_destroy(&e->lock);
    free(e);
}
