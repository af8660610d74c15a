/* commit.h — group commit of agent messages: the HTTP threads hand over
 * validated messages; one writer thread stores everything waiting in one
 * transaction (one fsync for many messages), commits, and only then answers
 * each (done callback), so every acknowledgement is durable before it is sent.
 * A storage failure (full disk, I/O error) is logged with SQLite's reason, at
 * most one line per 10 s with a count of what it left out. */
#ifndef VG_COMMIT_H
#define VG_COMMIT_H
#include "controller/ingest.h"

struct vg_commit_req {
    struct vg_message msg;
    int64_t now;
    /* Called on the writer thread after the commit: code 202 or 500/503, response owned by the callee. */
    void (*done)(void *arg, int code, json_t *response);
    void *arg;
    struct vg_commit_req *next;
};

struct vg_committer;

struct vg_committer *vg_committer_start(struct vg_ingest *in);
/* Queues r (the committer owns r->msg until done runs; r itself stays the caller's). */
void vg_committer_submit(struct vg_committer *c, struct vg_commit_req *r);
/* Returns once everything queued before the call is stored and answered. */
void vg_committer_flush(struct vg_committer *c);
/* Messages stored and transactions committed so far; storage failures. */
void vg_committer_counts(struct vg_committer *c, unsigned long *messages, unsigned long *commits,
                         unsigned long *failures);
/* Stores and answers what is queued, then stops the thread. */
void vg_committer_stop(struct vg_committer *c);

#endif
