/* election.h — which of the controllers sharing a PostgreSQL store acts: a
 * lease row (one per store) with a term, the fencing token.  The leader
 * renews the lease every renew_ms for lease_ms of the database's clock; it
 * trusts its leadership only until, on its own monotonic clock, the moment
 * it sent the last renewal that succeeded plus lease_ms less margin_ms, so it
 * stops acting before the lease can pass to another (a leader frozen, or cut
 * off from the database, stops at once when it runs again).  A follower takes
 * the lease when it lapses, with the term one higher.  Every decision is
 * committed with the term under a check of the lease (store.h
 * vg_store_fence), so a stale leader's late decision is refused. */
#ifndef VG_ELECTION_H
#define VG_ELECTION_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vg_election_opts {
    const char *target;   /* the PostgreSQL store (its own connection) */
    const char *url;      /* this controller's URL, kept in the lease for the others to name */
    int lease_ms;         /* 0: 3000 */
    int renew_ms;         /* 0: 1000 (a follower looks twice as often) */
    int margin_ms;        /* 0: 1000 */
    /* from the election's thread: this controller became the leader with
     * term, or stopped being it (why) */
    void (*on_lead)(void *ctx, int64_t term);
    void (*on_lost)(void *ctx, int64_t term, const char *why);
    void *ctx;
};

struct vg_election;

/* Connects and starts electing; NULL with err. */
struct vg_election *vg_election_start(const struct vg_election_opts *o, char *err, size_t errlen);
/* Whether this controller leads now (inside its trust window); *term its term. */
bool vg_election_leading(struct vg_election *e, int64_t *term);
/* This controller's identity in the lease (host:pid:random). */
const char *vg_election_holder(const struct vg_election *e);
/* "leader" or "follower", the term, and the leader's URL as last seen ("" none). */
void vg_election_role(struct vg_election *e, char *role, size_t rn, int64_t *term, char *leader_url, size_t un);
/* Stops electing: no more renewals or changes of role (a leader's trust
 * runs out at its end). */
void vg_election_stop(struct vg_election *e);
/* Stops, and a leader still inside its trust window resigns (its lease
 * ends now: a follower takes it at its next look); frees e. */
void vg_election_free(struct vg_election *e);

#endif
