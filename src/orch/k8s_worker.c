/* k8s_worker.c — node writes on a worker per node (see k8s.h): the
 * controller calls the orchestrator one call at a time, so a PATCH that
 * hangs in the API server (a stuck admission webhook holds it until the
 * request times out, and it is retried) would hold every other node's
 * isolation behind it.  Each write runs on a thread of its own instead; the
 * caller waits for it until a deadline, and a write still under way then is
 * left to finish on its own: the caller is told so, and asking again for the
 * same write takes its result instead of starting another. */
#include "orch/k8s.h"
#include "util/condwait.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { RUNNING, DONE };

struct vg_k8s_task {
    struct vg_k8s_write req;
    int state, rc;
    unsigned calls;
    char err[256];
    struct vg_k8s_workers *w;
    struct vg_k8s_task *next;
};

void vg_k8s_workers_init(struct vg_k8s_workers *w, const struct vg_orch_ops *ops, void *priv, int timeout_ms,
                         int (*job)(struct vg_orch *o, const struct vg_k8s_write *w), void (*hold)(void *),
                         void (*release)(void *))
{
    memset(w, 0, sizeof *w);
    pthread_mutex_init(&w->lock, NULL);
    vg_cond_init_mono(&w->cond);   /* deadlines are monotonic */
    w->ops = ops, w->priv = priv, w->timeout_ms = timeout_ms;
    w->job = job, w->hold = hold, w->release = release;
}

static bool same(const struct vg_k8s_write *a, const struct vg_k8s_write *b)
{
    return a->op == b->op && a->how == b->how && !strcmp(a->node, b->node) && !strcmp(a->reason, b->reason);
}

/* The node's task; the caller holds w->lock. */
static struct vg_k8s_task **slot(struct vg_k8s_workers *w, const char *node)
{
    struct vg_k8s_task **p = &w->tasks;
    while (*p && strcmp((*p)->req.node, node)) p = &(*p)->next;
    return p;
}

static void *run(void *arg)
{
    struct vg_k8s_task *t = arg;
    struct vg_k8s_workers *w = t->w;
    struct vg_orch o = { .ops = w->ops, .priv = w->priv, .timeout_ms = w->timeout_ms };
    int rc = w->job(&o, &t->req);
    pthread_mutex_lock(&w->lock);
    t->rc = rc;
    t->calls = o.calls;
    vg_strlcpy(t->err, o.err, sizeof t->err);
    t->state = DONE;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
    w->release(w->priv);
    return NULL;
}

bool vg_k8s_write_start(struct vg_k8s_workers *w, const struct vg_k8s_write *req)
{
    pthread_mutex_lock(&w->lock);
    struct vg_k8s_task **p = slot(w, req->node), *t = *p;
    if (t && (t->state == RUNNING || same(&t->req, req))) {
        pthread_mutex_unlock(&w->lock);
        return false;
    }
    if (!t) {
        t = vg_xcalloc(1, sizeof *t);
        *p = t;
    }
    t->req = *req;
    t->state = RUNNING, t->rc = 0, t->calls = 0, t->err[0] = 0;
    t->w = w;
    w->hold(w->priv);
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_t th;
    int e = pthread_create(&th, &a, run, t);
    pthread_attr_destroy(&a);
    if (e) {   /* no thread: the write fails now, said as any failure */
        t->state = DONE, t->rc = -1;
        snprintf(t->err, sizeof t->err, "writing node %s: cannot start a worker: %s", req->node, strerror(e));
        w->release(w->priv);
    }
    pthread_mutex_unlock(&w->lock);
    return !e;
}

int vg_k8s_write_wait(struct vg_k8s_workers *w, const struct vg_k8s_write *req, int64_t deadline, unsigned *calls,
                      char *err, size_t n)
{
    *calls = 0;
    struct timespec until = { .tv_sec = (time_t)(deadline / 1000), .tv_nsec = (long)(deadline % 1000) * 1000000L };
    pthread_mutex_lock(&w->lock);
    struct vg_k8s_task **p = slot(w, req->node), *t = *p;
    while (t && t->state == RUNNING && same(&t->req, req) &&
           pthread_cond_timedwait(&w->cond, &w->lock, &until) != ETIMEDOUT)
        t = *slot(w, req->node);
    int rc;
    if (!t) rc = -1, snprintf(err, n, "writing node %s: no such write under way", req->node);
    else if (t->state == RUNNING)
        rc = 1, snprintf(err, n, "node %s: %s is still waiting for the API server (it goes on in the background)",
                         req->node, same(&t->req, req) ? "the write" : "an earlier write");
    else if (!same(&t->req, req)) rc = -1, snprintf(err, n, "writing node %s: another write took its place", req->node);
    else {   /* taken */
        rc = t->rc ? -1 : 0;
        *calls = t->calls;
        if (rc) vg_strlcpy(err, t->err, n);
        *p = t->next;
        free(t);
    }
    pthread_mutex_unlock(&w->lock);
    return rc;
}

void vg_k8s_workers_fini(struct vg_k8s_workers *w)
{
    while (w->tasks) {
        struct vg_k8s_task *t = w->tasks;
        w->tasks = t->next;
        free(t);
    }
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
}
