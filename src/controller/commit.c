/* commit.c — the group-commit writer; see commit.h. */
#include "controller/commit.h"
#include "controller/storeguard.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define VG_COMMIT_BATCH 256          /* messages at most in one transaction */
#define VG_COMMIT_LOG_EVERY_MS 10000 /* storage failures: one log line per this */

struct vg_committer {
    struct vg_ingest *in;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake, idle;   /* idle: nothing queued and no batch running */
    struct vg_commit_req *head, *tail;
    bool stopping, running;
    unsigned long messages, commits, failures;
};

/* Storage failures: at most one line per VG_COMMIT_LOG_EVERY_MS. */
static struct vg_lograte failures_log = VG_LOGRATE("storage: cannot record", VG_COMMIT_LOG_EVERY_MS, 1);

/* Stores the batch's messages in one transaction: codes[n] 202 each, or the
 * failure of the messages that failed; whether it was committed.  A message
 * that fails leaves the transaction partly written (no savepoint per message:
 * two statements fewer each on a server): it is rolled back and the others
 * stored again in a new one — every failure takes a message out, so this
 * ends; a transaction that cannot begin fails them all. */
static bool store_batch(struct vg_committer *c, struct vg_commit_req *batch, int *codes, json_t **resp,
                        const char **lost)
{
    struct vg_store *st = c->in->store;
    size_t n = 0;
    for (struct vg_commit_req *r = batch; r; r = r->next, n++) {
        codes[n] = 0;
        resp[n] = NULL;
    }
    for (;;) {
        if ((*lost = vg_storeguard_check(c->in->guard)) || vg_store_begin(st)) {
            n = 0;
            for (struct vg_commit_req *r = batch; r; r = r->next, n++) codes[n] = 500;
            return false;
        }
        bool failed = false;
        n = 0;
        for (struct vg_commit_req *r = batch; r && !failed; r = r->next, n++) {
            if (codes[n] && codes[n] != 202) continue;   /* taken out */
            json_decref(resp[n]);
            resp[n] = NULL;
            codes[n] = vg_ingest_store(c->in, &r->msg, r->now, &resp[n]);
            failed = codes[n] != 202;
        }
        if (!failed) return vg_store_commit(st) == 0 && !(*lost = vg_storeguard_check(c->in->guard));
        vg_store_rollback(st);
    }
}

static void run_batch(struct vg_committer *c, struct vg_commit_req *batch)
{
    struct vg_store *st = c->in->store;
    int codes[VG_COMMIT_BATCH];
    json_t *resp[VG_COMMIT_BATCH];
    /* a store deleted, replaced or corrupt is never written to, and a commit
     * into a file that went away meanwhile is not acknowledged: the agents
     * keep their messages */
    const char *lost = NULL;
    bool committed = store_batch(c, batch, codes, resp, &lost);
    pthread_mutex_lock(&c->lock);
    c->commits += committed;
    pthread_mutex_unlock(&c->lock);
    size_t n = 0;
    for (struct vg_commit_req *r = batch, *next; r; r = next, n++) {
        next = r->next;
        if (codes[n] == 202 && committed) {
            vg_ingest_notify(c->in, &r->msg, resp[n]);
        } else {
            json_decref(resp[n]);
            char why[400];
            if (lost) snprintf(why, sizeof why, "storage: the store is lost: %s", lost);
            else snprintf(why, sizeof why, "storage: %s", vg_store_error(st));
            resp[n] = json_pack("{s:s}", "error", why);
            codes[n] = 503;
        }
        pthread_mutex_lock(&c->lock);
        if (codes[n] == 202) c->messages++;
        else c->failures++;
        pthread_mutex_unlock(&c->lock);
        if (codes[n] != 202)
            vg_err_limited(&failures_log, "storage: cannot record a message from %s: %s", r->msg.node,
                           lost ? lost : vg_store_error(st));
        vg_message_free(&r->msg);
        r->done(r->arg, codes[n], resp[n]);
    }
}

static void *writer(void *arg)
{
    struct vg_committer *c = arg;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        while (!c->head && !c->stopping) pthread_cond_wait(&c->wake, &c->lock);
        if (!c->head && c->stopping) break;
        /* Take up to a batch: everything that arrived while the last commit ran. */
        struct vg_commit_req *batch = c->head, *last = batch;
        for (int k = 1; k < VG_COMMIT_BATCH && last->next; k++) last = last->next;
        c->head = last->next;
        if (!c->head) c->tail = NULL;
        last->next = NULL;
        c->running = true;
        pthread_mutex_unlock(&c->lock);
        run_batch(c, batch);
        pthread_mutex_lock(&c->lock);
        c->running = false;
        if (!c->head) pthread_cond_broadcast(&c->idle);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

struct vg_committer *vg_committer_start(struct vg_ingest *in)
{
    struct vg_committer *c = vg_xcalloc(1, sizeof *c);
    c->in = in;
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->wake, NULL);
    pthread_cond_init(&c->idle, NULL);
    if (pthread_create(&c->thread, NULL, writer, c)) {
        pthread_cond_destroy(&c->idle);
        pthread_cond_destroy(&c->wake);
        pthread_mutex_destroy(&c->lock);
        free(c);
        return NULL;
    }
    return c;
}

void vg_committer_submit(struct vg_committer *c, struct vg_commit_req *r)
{
    r->next = NULL;
    pthread_mutex_lock(&c->lock);
    if (c->tail) c->tail->next = r;
    else c->head = r;
    c->tail = r;
    pthread_cond_signal(&c->wake);
    pthread_mutex_unlock(&c->lock);
}

void vg_committer_flush(struct vg_committer *c)
{
    pthread_mutex_lock(&c->lock);
    while (c->head || c->running) pthread_cond_wait(&c->idle, &c->lock);
    pthread_mutex_unlock(&c->lock);
}

void vg_committer_counts(struct vg_committer *c, unsigned long *messages, unsigned long *commits,
                         unsigned long *failures)
{
    pthread_mutex_lock(&c->lock);
    *messages = c->messages;
    *commits = c->commits;
    *failures = c->failures;
    pthread_mutex_unlock(&c->lock);
}

void vg_committer_stop(struct vg_committer *c)
{
    if (!c) return;
    pthread_mutex_lock(&c->lock);
    c->stopping = true;
    pthread_cond_signal(&c->wake);
    pthread_mutex_unlock(&c->lock);
    pthread_join(c->thread, NULL);
    pthread_cond_destroy(&c->idle);
    pthread_cond_destroy(&c->wake);
    pthread_mutex_destroy(&c->lock);
    free(c);
}
