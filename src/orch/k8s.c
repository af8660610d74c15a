/* k8s.c — Kubernetes as an orchestrator (orch.h), on the REST API (no
 * kubectl).  Isolation: cordon (spec.unschedulable), the taint
 * vigil.dev/fault=<what> (NoSchedule to drain, NoExecute to down, and at
 * DOWN the node's pods evicted through policy/v1 Eviction), an annotation
 * recording what vigil did (so resume undoes only vigil's, and a node an
 * administrator cordoned is never vigil's), and the node condition
 * VigilHealthy=False that `kubectl describe node` shows, with an Event
 * (k8s_event.c) on the node when vigil isolates or returns it.  Isolation
 * and return run on a worker per node (k8s_worker.c): a write the API server
 * holds delays no other node's.  Jobs are the workloads (Job, JobSet) of the
 * pods on a node; requeue deletes a workload's pods so its controller
 * recreates the whole gang.  The spare pool: nodes labelled
 * vigil.dev/spare=true; in the pool while they carry the taint
 * vigil.dev/spare:NoSchedule; promotion removes it (one PATCH).  Node writes
 * are strategic merge patches carrying the resourceVersion read last: a 409
 * re-reads the node and tries again.  Nodes are listed in pages and kept
 * trimmed; a node read before that a list leaves out is read by name before
 * it counts as gone. */
#include "orch/k8s_int.h"
#include "util/log.h"
#include "util/tcpprobe.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SMP "application/strategic-merge-patch+json"
#define CONFLICT_TRIES 5
#define RECENT_MS 5000
/* How long isolate and resume wait for a node's write before they report it
 * still under way (it goes on; the caller's retry takes its result). */
#define WRITE_WAIT_MS 2000

static struct k8s *P(struct vg_orch *o) { return o->priv; }

static void now_rfc3339(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void vg_k8s_qenc(struct sbuf *b, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("-_.~", c))
            sbuf_putc(b, (char)c);
        else sbuf_printf(b, "%%%02X", c);
    }
}

/* ---- the handle: shared with the node writes still running ------------------- */

static void hold(void *priv) { __atomic_add_fetch(&((struct k8s *)priv)->refs, 1, __ATOMIC_SEQ_CST); }

static void release(void *priv)
{
    struct k8s *k = priv;
    if (__atomic_sub_fetch(&k->refs, 1, __ATOMIC_SEQ_CST)) return;
    vg_k8s_workers_fini(&k->workers);
    pthread_mutex_destroy(&k->lock);
    json_decref(k->cache);
    json_decref(k->attempts);
    free(k->recent.pods);
    vg_k8s_conf_free(&k->h.conf);
    free(k);
}

static int node_write(struct vg_orch *o, const struct vg_k8s_write *w);

static int k8s_open(struct vg_orch *o, const struct vg_orch_conf *c)
{
    struct k8s *k = vg_xcalloc(1, sizeof *k);
    char err[600];
    if (vg_k8s_conf_load(c->config, &k->h.conf, err, sizeof err)) {
        vg_k8s_conf_free(&k->h.conf);
        free(k);
        return vg_orch_fail(o, "%s", err);
    }
    if (vg_k8s_plain_http(k->h.conf.server) && !c->insecure_http) {
        vg_orch_fail(o, "%.200s: server %.200s is plain HTTP, where credentials would travel in clear: use https, or "
                        "--insecure-http (then, as kubectl, vigil sends none)", k->h.conf.source, k->h.conf.server);
        vg_k8s_conf_free(&k->h.conf);
        free(k);
        return -1;
    }
    k->h.timeout_ms = o->timeout_ms;
    k->h.retries = 4;
    k->h.backoff_ms = 200;
    k->cache = json_object();
    k->attempts = json_object();
    k->refs = 1;
    pthread_mutex_init(&k->lock, NULL);
    vg_k8s_workers_init(&k->workers, o->ops, k, o->timeout_ms, node_write, hold, release);
    const char *ns = getenv("VIGIL_K8S_NAMESPACE");
    vg_strlcpy(k->ns, ns && *ns ? ns : "default", sizeof k->ns);
    o->priv = k;
    return 0;
}

/* A node write still running keeps the handle until it ends. */
static void k8s_close(struct vg_orch *o)
{
    if (P(o)) release(P(o));
}

int vg_k8s_call(struct vg_orch *o, const char *method, const char *path, const char *ctype, const char *body,
                json_t **out, long *status)
{
    json_t *ans;
    long st = vg_k8s_request(o, &P(o)->h, method, path, ctype, body, &ans);
    if (status) *status = st;
    if (st >= 200 && st < 300) {
        if (out) *out = ans;
        else json_decref(ans);
        return 0;
    }
    if (out) *out = NULL;
    if (st != 409 || !status) vg_k8s_fail(o, st, ans, method, path);
    json_decref(ans);
    return -1;
}

/* ---- the node cache ---------------------------------------------------------- */

static void remember(struct vg_orch *o, const json_t *node)
{
    json_t *t = vg_k8s_node_trim(node);
    if (!t) return;
    const char *name = json_string_value(json_object_get(json_object_get(t, "metadata"), "name"));
    pthread_mutex_lock(&P(o)->lock);
    json_object_set_new(P(o)->cache, name, t);
    pthread_mutex_unlock(&P(o)->lock);
}

/* The node as last read (a reference), or NULL. */
static json_t *cached(struct vg_orch *o, const char *name)
{
    pthread_mutex_lock(&P(o)->lock);
    json_t *n = json_incref(json_object_get(P(o)->cache, name));
    pthread_mutex_unlock(&P(o)->lock);
    return n;
}

/* GET one node into the cache; a reference, or NULL (o->err; *status 404 when gone). */
static json_t *fetch_node_st(struct vg_orch *o, const char *name, long *status)
{
    char path[256];
    snprintf(path, sizeof path, "/api/v1/nodes/%s", name);
    json_t *n;
    long st;
    if (vg_k8s_call(o, "GET", path, NULL, NULL, &n, &st)) {
        if (st == 409) vg_orch_fail(o, "GET %s: 409 Conflict", path);
        if (status) *status = st;
        return NULL;
    }
    remember(o, n);
    json_decref(n);
    return cached(o, name);
}
static json_t *fetch_node(struct vg_orch *o, const char *name) { return fetch_node_st(o, name, NULL); }

/* ---- nodes ----------------------------------------------------------------- */

struct node_list {
    struct vg_orch_node *v;
    size_t n, cap;
    const char *const *names;   /* the nodes asked for; NULL: all */
    size_t nnames;
    json_t *seen;               /* names in the list */
};

static void list_add(struct node_list *l, const struct vg_orch_node *n)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->v = vg_xrealloc(l->v, (l->cap + 1) * sizeof *l->v);
    }
    l->v[l->n++] = *n;
}

static int list_node(struct vg_orch *o, const json_t *node, void *ud)
{
    struct node_list *l = ud;
    struct vg_k8s_node kn;
    if (vg_k8s_node_parse(node, &kn)) return 0;
    remember(o, node);
    json_object_set_new(l->seen, kn.n.name, json_true());
    bool want = !l->names;
    for (size_t j = 0; l->names && j < l->nnames && !want; j++) want = !strcmp(l->names[j], kn.n.name);
    if (want) list_add(l, &kn.n);
    return 0;
}

/* The nodes read before that the list left out, each read by name: a list
 * can miss a node that is there (re-registering, a lagging cache), and a
 * node missing from the cluster view leaves its incident undecided.  404:
 * gone, forgotten.  -1 when one cannot be read. */
static int reread_missing(struct vg_orch *o, struct node_list *l)
{
    json_t *missing = json_array();
    pthread_mutex_lock(&P(o)->lock);
    const char *name;
    json_t *node;
    json_object_foreach(P(o)->cache, name, node)
        if (!json_object_get(l->seen, name)) json_array_append_new(missing, json_string(name));
    pthread_mutex_unlock(&P(o)->lock);
    int rc = 0;
    size_t i;
    json_t *m;
    json_array_foreach(missing, i, m) {
        const char *nm = json_string_value(m);
        long st = 0;
        json_t *one = fetch_node_st(o, nm, &st);
        if (!one && st == 404) {
            pthread_mutex_lock(&P(o)->lock);
            json_object_del(P(o)->cache, nm);
            pthread_mutex_unlock(&P(o)->lock);
            continue;
        }
        if (!one) {
            rc = -1;
            break;
        }
        vg_warn("k8s: node %s was missing from the node list; read by name, it is there", nm);
        rc = list_node(o, one, l);
        json_decref(one);
    }
    json_decref(missing);
    return rc;
}

static int k8s_nodes(struct vg_orch *o, const char *const *names, size_t n, struct vg_orch_node **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    struct node_list l = { .names = names, .nnames = n, .seen = json_object() };
    int rc;
    if (names && n == 1) {
        json_t *one = fetch_node(o, names[0]);
        rc = one ? list_node(o, one, &l) : -1;
        json_decref(one);
    } else {
        rc = vg_k8s_list(o, &P(o)->h, "/api/v1/nodes", list_node, &l);
        if (!rc) rc = reread_missing(o, &l);
    }
    json_decref(l.seen);
    if (rc) {
        free(l.v);
        return -1;
    }
    *out = l.v ? l.v : vg_xcalloc(1, sizeof **out);
    *nout = l.n;
    return 0;
}

/* What a node PATCH is to do. */
enum node_op { OP_ISOLATE, OP_RESUME, OP_SPARE_ON, OP_SPARE_OFF };

struct node_change {
    enum node_op op;
    enum vg_isolate how;
    const char *reason;
};

/* The strategic merge patch for one change, against the node as read. */
static json_t *node_patch(const json_t *node, const struct node_change *ch)
{
    struct vg_k8s_node kn;
    vg_k8s_node_parse(node, &kn);
    json_t *md = json_object(), *spec = json_object(), *taints = json_array();
    json_object_set_new(md, "resourceVersion", json_string(kn.rv));
    const char *drop = ch->op == OP_ISOLATE || ch->op == OP_RESUME ? VG_K8S_FAULT_TAINT : VG_K8S_SPARE_TAINT;
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(json_object_get(node, "spec"), "taints"), i, t)
        if (strcmp(json_string_value(json_object_get(t, "key")) ?: "", drop)) json_array_append(taints, t);
    char now[32];
    now_rfc3339(now, sizeof now);
    if (ch->op == OP_ISOLATE) {
        char value[64];
        vg_k8s_taint_value(ch->reason, value, sizeof value);
        json_array_append_new(taints, json_pack("{s:s,s:s,s:s,s:s}", "key", VG_K8S_FAULT_TAINT, "value", value, "effect",
                                                ch->how == VG_ISOLATE_DOWN ? "NoExecute" : "NoSchedule", "timeAdded", now));
        /* an administrator's cordon before vigil's is remembered, so resume keeps it */
        bool before = kn.ours ? kn.cordoned_before : kn.cordoned;
        json_t *ann = json_pack("{s:s,s:s,s:s,s:b}", "how", ch->how == VG_ISOLATE_DOWN ? "down" : "drain", "reason",
                                ch->reason, "time", now, "cordoned", before);
        char *text = json_dumps(ann, JSON_COMPACT);
        json_object_set_new(md, "annotations", json_pack("{s:s}", VG_K8S_ANNOTATION, text));
        free(text);
        json_decref(ann);
        json_object_set_new(spec, "unschedulable", json_true());
    } else if (ch->op == OP_RESUME) {
        json_object_set_new(md, "annotations", json_pack("{s:n}", VG_K8S_ANNOTATION));
        json_object_set_new(spec, "unschedulable", kn.cordoned_before ? json_true() : json_null());
    } else if (ch->op == OP_SPARE_ON) {
        json_array_append_new(taints, json_pack("{s:s,s:s}", "key", VG_K8S_SPARE_TAINT, "effect", "NoSchedule"));
        if (!kn.spare_label) json_object_set_new(md, "labels", json_pack("{s:s}", VG_K8S_SPARE_LABEL, "true"));
    }
    json_object_set_new(spec, "taints", taints);
    return json_pack("{s:o,s:o}", "metadata", md, "spec", spec);
}

/* PATCHes one node, re-reading it after a 409 (CONFLICT_TRIES times). */
static int change_node(struct vg_orch *o, const char *name, const struct node_change *ch)
{
    char path[256];
    snprintf(path, sizeof path, "/api/v1/nodes/%s", name);
    json_t *node = cached(o, name);
    if (!node && !(node = fetch_node(o, name))) return -1;
    int rc = -1;
    for (int i = 0; i < CONFLICT_TRIES; i++) {
        json_t *patch = node_patch(node, ch);
        char *body = json_dumps(patch, JSON_COMPACT);
        json_decref(patch);
        json_decref(node);
        node = NULL;
        json_t *ans;
        long st;
        rc = vg_k8s_call(o, "PATCH", path, SMP, body, &ans, &st);
        free(body);
        if (!rc) {
            remember(o, ans);
            json_decref(ans);
            return 0;
        }
        if (st != 409 || !(node = fetch_node(o, name))) return -1;
    }
    json_decref(node);
    return vg_orch_fail(o, "PATCH %s: 409 Conflict %d times in a row (someone else keeps changing node %s)", path,
                        CONFLICT_TRIES, name);
}

/* The VigilHealthy condition (nodes/status: merged by type). */
static int set_condition(struct vg_orch *o, const char *name, bool healthy, const char *reason, const char *message)
{
    char path[256], now[32];
    snprintf(path, sizeof path, "/api/v1/nodes/%s/status", name);
    now_rfc3339(now, sizeof now);
    json_t *patch = json_pack("{s:{s:[{s:s,s:s,s:s,s:s,s:s,s:s}]}}", "status", "conditions", "type", VG_K8S_CONDITION,
                              "status", healthy ? "True" : "False", "reason", reason, "message", message,
                              "lastHeartbeatTime", now, "lastTransitionTime", now);
    char *body = json_dumps(patch, JSON_COMPACT);
    json_decref(patch);
    json_t *ans;
    int rc = vg_k8s_call(o, "PATCH", path, SMP, body, &ans, NULL);
    free(body);
    if (!rc) remember(o, ans);
    json_decref(ans);
    return rc;
}

/* ---- pods ------------------------------------------------------------------ */

struct pod_list {
    struct vg_k8s_pod *v;
    size_t n, cap;
};

static int list_pod(struct vg_orch *o, const json_t *pod, void *ud)
{
    (void)o;
    struct pod_list *l = ud;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->v = vg_xrealloc(l->v, (l->cap + 1) * sizeof *l->v);
    }
    if (!vg_k8s_pod_parse(pod, &l->v[l->n])) l->n++;
    return 0;
}

int vg_k8s_pods(struct vg_orch *o, const char *ns, const char *kind, const char *sel, struct vg_k8s_pod **out,
                size_t *n)
{
    struct sbuf p = SBUF_INIT;
    if (ns) sbuf_printf(&p, "/api/v1/namespaces/%s/pods?%s=", ns, kind);
    else sbuf_printf(&p, "/api/v1/pods?%s=", kind);
    vg_k8s_qenc(&p, sel);
    struct pod_list l = { 0 };
    int rc = vg_k8s_list(o, &P(o)->h, p.s, list_pod, &l);
    sbuf_free(&p);
    if (rc) free(l.v), l.v = NULL, l.n = 0;
    *out = l.v ? l.v : rc ? NULL : vg_xcalloc(1, sizeof **out);
    *n = l.n;
    return rc;
}

static int pods_on(struct vg_orch *o, const char *node, struct vg_k8s_pod **out, size_t *n)
{
    char sel[128];
    snprintf(sel, sizeof sel, "spec.nodeName=%s", node);
    return vg_k8s_pods(o, NULL, "fieldSelector", sel, out, n);
}

/* policy/v1 Eviction of one pod; a pod already gone is fine. */
static int evict(struct vg_orch *o, const struct vg_k8s_pod *p)
{
    char path[512];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s/eviction", p->ns, p->name);
    json_t *ev = json_pack("{s:s,s:s,s:{s:s,s:s}}", "apiVersion", "policy/v1", "kind", "Eviction", "metadata", "name",
                           p->name, "namespace", p->ns);
    char *body = json_dumps(ev, JSON_COMPACT);
    json_decref(ev);
    json_t *ans;
    long st = vg_k8s_request(o, &P(o)->h, "POST", path, NULL, body, &ans);
    free(body);
    int rc = st == 404 || (st >= 200 && st < 300) ? 0 : vg_k8s_fail(o, st, ans, "POST", path);
    json_decref(ans);
    return rc;
}

/* ---- isolation and return: a worker per node --------------------------------- */

/* DOWN: the node's pods evicted (not DaemonSet pods, not vigil's own). */
static int evict_node(struct vg_orch *o, const char *node)
{
    struct vg_k8s_pod *ps = NULL;
    size_t np = 0;
    struct k8s *k = P(o);
    pthread_mutex_lock(&k->lock);
    bool recent = !strcmp(k->recent.node, node) && vg_mono_ms() - k->recent.at < RECENT_MS;
    if (recent) {   /* taken: read once */
        ps = k->recent.pods, np = k->recent.n;
        k->recent.pods = NULL, k->recent.node[0] = 0;
    }
    pthread_mutex_unlock(&k->lock);
    if (!recent && pods_on(o, node, &ps, &np)) return -1;
    int rc = 0;
    for (size_t j = 0; j < np && !rc; j++)
        if (!ps[j].daemon && !ps[j].gone) rc = evict(o, &ps[j]);
    free(ps);
    return rc;
}

/* The Event saying what vigil did, after the node's own changes (it never fails them). */
static void node_event(struct vg_orch *o, const char *name, bool warning, const char *reason, const char *message)
{
    struct k8s *k = P(o);
    json_t *node = cached(o, name);
    if (!node) return;
    pthread_mutex_lock(&k->lock);
    bool warned = k->event_warned;
    pthread_mutex_unlock(&k->lock);
    vg_k8s_node_event(o, &k->h, node, warning, reason, message, &warned);
    pthread_mutex_lock(&k->lock);
    k->event_warned = warned;
    pthread_mutex_unlock(&k->lock);
    json_decref(node);
}

/* One node's isolation or return, on its worker. */
static int node_write(struct vg_orch *o, const struct vg_k8s_write *w)
{
    if (w->op == OP_RESUME) {
        struct node_change ch = { OP_RESUME, VG_ISOLATE_DRAIN, NULL };
        if (change_node(o, w->node, &ch) ||
            set_condition(o, w->node, true, "VigilReturned", "returned to service by vigil"))
            return -1;
        node_event(o, w->node, false, "VigilReturned", "returned to service by vigil: its taint and annotation removed");
        return 0;
    }
    bool down = w->how == VG_ISOLATE_DOWN;
    struct node_change ch = { OP_ISOLATE, (enum vg_isolate)w->how, w->reason };
    if (change_node(o, w->node, &ch) || set_condition(o, w->node, false, down ? "VigilDown" : "VigilDrain", w->reason) ||
        (down && evict_node(o, w->node)))
        return -1;
    char msg[512];
    snprintf(msg, sizeof msg, "%s: cordoned, tainted %s:%s%s", w->reason, VG_K8S_FAULT_TAINT,
             down ? "NoExecute" : "NoSchedule", down ? ", its pods evicted" : "");
    node_event(o, w->node, true, "VigilIsolated", msg);
    return 0;
}

/* Runs the write on each node's worker and waits for them all, at most
 * WRITE_WAIT_MS for those started now and not at all for one an earlier
 * call left running: a node whose write hangs holds no other. */
static int write_nodes(struct vg_orch *o, const char *const *nodes, size_t n, int op, int how, const char *reason)
{
    struct k8s *k = P(o);
    struct vg_k8s_write *w = vg_xcalloc(n + 1, sizeof *w);
    bool *fresh = vg_xcalloc(n + 1, sizeof *fresh);
    int64_t start = vg_mono_ms();
    for (size_t i = 0; i < n; i++) {
        vg_strlcpy(w[i].node, nodes[i], sizeof w[i].node);
        w[i].op = op, w[i].how = how;
        vg_strlcpy(w[i].reason, reason ? reason : "", sizeof w[i].reason);
        fresh[i] = vg_k8s_write_start(&k->workers, &w[i]);
    }
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        char err[256];
        unsigned calls;
        int r = vg_k8s_write_wait(&k->workers, &w[i], fresh[i] ? start + WRITE_WAIT_MS : 0, &calls, err, sizeof err);
        o->calls += calls;
        if (r && !rc) {
            rc = -1;
            if (r > 0) vg_orch_fail(o, "%s; waited %lld ms", err, (long long)(vg_mono_ms() - start));
            else vg_orch_fail(o, "%s", err);
        }
    }
    free(w);
    free(fresh);
    return rc;
}

static int k8s_isolate(struct vg_orch *o, const char *const *nodes, size_t n, enum vg_isolate how, const char *reason)
{
    return write_nodes(o, nodes, n, OP_ISOLATE, how, reason);
}

static int k8s_resume(struct vg_orch *o, const char *const *nodes, size_t n)
{
    return write_nodes(o, nodes, n, OP_RESUME, VG_ISOLATE_DRAIN, NULL);
}

static int k8s_jobs_on(struct vg_orch *o, const char *const *nodes, size_t n, const char *known, int64_t out_ms,
                       char ***jobs, size_t *njobs, char ***moved, size_t *nmoved)
{
    (void)known, (void)out_ms;   /* listed before the isolation: the pods are still bound to the node */
    *moved = vg_xcalloc(1, sizeof **moved);   /* nothing moves before it */
    *nmoved = 0;
    *jobs = NULL;
    *njobs = 0;
    char **v = NULL;
    size_t nv = 0;
    for (size_t i = 0; i < n; i++) {
        struct vg_k8s_pod *ps;
        size_t np;
        if (pods_on(o, nodes[i], &ps, &np)) {
            vg_strv_free(v, nv);
            return -1;
        }
        struct k8s *k = P(o);
        struct vg_k8s_pod *copy = vg_xcalloc(np + 1, sizeof *copy);
        memcpy(copy, ps, np * sizeof *ps);
        pthread_mutex_lock(&k->lock);
        free(k->recent.pods);
        vg_strlcpy(k->recent.node, nodes[i], sizeof k->recent.node);
        k->recent.at = vg_mono_ms(), k->recent.pods = copy, k->recent.n = np;
        pthread_mutex_unlock(&k->lock);
        for (size_t j = 0; j < np; j++) {
            if (!ps[j].workload[0] || ps[j].gone) continue;
            if (strstr(ps[j].workload, "/JobSet/")) {
                pthread_mutex_lock(&k->lock);
                json_object_set_new(k->attempts, ps[j].workload, json_integer(ps[j].attempt));
                pthread_mutex_unlock(&k->lock);
            }
            bool seen = false;
            for (size_t m = 0; m < nv && !seen; m++) seen = !strcmp(v[m], ps[j].workload);
            if (seen) continue;
            v = vg_xrealloc(v, (nv + 2) * sizeof *v);
            v[nv++] = vg_xstrdup(ps[j].workload);
            v[nv] = NULL;
        }
        free(ps);
    }
    *jobs = v ? v : vg_xcalloc(1, sizeof *v);
    *njobs = nv;
    return 0;
}

void vg_k8s_gang_selector(const char *kind, const char *name, char *sel, size_t n)
{
    if (!strcmp(kind, "JobSet")) snprintf(sel, n, VG_K8S_JOBSET_LABEL "=%s", name);
    else snprintf(sel, n, "batch.kubernetes.io/job-name=%s", name);
}

/* The whole gang restarted with one request: DELETE of the pod collection
 * the workload's label selects, so its controller recreates every pod at
 * once, the replacement of a pod evicted at DOWN included.  A JobSet's gang
 * is the pods of the restart attempt seen on the node: the JobSet's own
 * failure policy may have restarted it already (the pod evicted at DOWN
 * failed its Job), and the new gang is left alone.  Each pod still gets its
 * grace period; a PodDisruptionBudget is not consulted (a gang with a dead
 * member is disrupted already). */
static int k8s_requeue(struct vg_orch *o, const char *const *jobs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char ns[64], kind[16], name[256], sel[512];
        if (!vg_k8s_workload_split(jobs[i], ns, sizeof ns, kind, sizeof kind, name, sizeof name))
            return vg_orch_fail(o, "requeue: '%s' is not a workload (NAMESPACE/Job/NAME or NAMESPACE/JobSet/NAME)", jobs[i]);
        vg_k8s_gang_selector(kind, name, sel, sizeof sel);
        pthread_mutex_lock(&P(o)->lock);
        json_t *attempt = json_object_get(P(o)->attempts, jobs[i]);
        if (attempt) {
            size_t l = strlen(sel);
            snprintf(sel + l, sizeof sel - l, "," VG_K8S_JOBSET_ATTEMPT "=%lld", (long long)json_integer_value(attempt));
            json_object_del(P(o)->attempts, jobs[i]);
        }
        pthread_mutex_unlock(&P(o)->lock);
        struct sbuf p = SBUF_INIT;
        sbuf_printf(&p, "/api/v1/namespaces/%s/pods?labelSelector=", ns);
        vg_k8s_qenc(&p, sel);
        int rc = vg_k8s_call(o, "DELETE", p.s, NULL, NULL, NULL, NULL);
        sbuf_free(&p);
        if (rc) return -1;
    }
    return 0;
}

struct spares {
    char **v;
    size_t n, listed;
};

static int list_spare(struct vg_orch *o, const json_t *node, void *ud)
{
    struct spares *s = ud;
    struct vg_k8s_node kn;
    if (vg_k8s_node_parse(node, &kn)) return 0;
    remember(o, node);
    s->listed++;
    if (kn.spare_taint) {
        s->v = vg_xrealloc(s->v, (s->n + 2) * sizeof *s->v);
        s->v[s->n++] = vg_xstrdup(kn.n.name);
        s->v[s->n] = NULL;
    }
    return 0;
}

static int k8s_pool_get(struct vg_orch *o, const char *pool, char ***nodes, size_t *n)
{
    (void)pool;
    *nodes = NULL;
    *n = 0;
    struct sbuf p = SBUF_INIT;
    sbuf_puts(&p, "/api/v1/nodes?labelSelector=");
    vg_k8s_qenc(&p, VG_K8S_SPARE_LABEL "=true");
    struct spares s = { 0 };
    int rc = vg_k8s_list(o, &P(o)->h, p.s, list_spare, &s);
    sbuf_free(&p);
    if (rc || !s.listed) {
        vg_strv_free(s.v, s.n);
        return rc ? -1 : 1;
    }
    *nodes = s.v ? s.v : vg_xcalloc(1, sizeof **nodes);
    *n = s.n;
    return 0;
}

static int k8s_pool_set(struct vg_orch *o, const char *pool, const char *const *nodes, size_t n, bool exists)
{
    (void)pool, (void)exists;
    /* every node vigil knows that is labelled a spare or named here */
    const char *name;
    json_t *node;
    json_t *names = json_object();
    pthread_mutex_lock(&P(o)->lock);
    json_object_foreach(P(o)->cache, name, node) {
        struct vg_k8s_node kn;
        if (!vg_k8s_node_parse(node, &kn) && kn.spare_label) json_object_set_new(names, name, json_false());
    }
    pthread_mutex_unlock(&P(o)->lock);
    for (size_t i = 0; i < n; i++) json_object_set_new(names, nodes[i], json_true());
    int rc = 0;
    json_t *want;
    json_object_foreach(names, name, want) {
        node = cached(o, name);
        if (!node && !(node = fetch_node(o, name))) {
            rc = -1;
            break;
        }
        struct vg_k8s_node kn;
        vg_k8s_node_parse(node, &kn);
        json_decref(node);
        if (kn.spare_taint == json_is_true(want) && (kn.spare_label || !json_is_true(want))) continue;
        struct node_change ch = { json_is_true(want) ? OP_SPARE_ON : OP_SPARE_OFF, VG_ISOLATE_DRAIN, NULL };
        if ((rc = change_node(o, name, &ch))) break;
    }
    json_decref(names);
    return rc;
}

static int k8s_job_output(struct vg_orch *o, const char *id, char **text)
{
    if (vg_k8s_burnin_id(id)) return vg_k8s_burnin_output(o, &P(o)->h, id, text);
    return vg_k8s_job_output(o, id, text);
}

static int k8s_burnin_prepare(struct vg_orch *o, const char *queue, struct vg_orch_node *nodes, size_t n)
{
    return vg_k8s_burnin_prepare(o, &P(o)->h, queue, nodes, n);
}

/* The kubelet's port at the node's address: the API server's own view (the
 * Ready condition) lags by its node-monitor grace period, 40 s by default.
 * A node with no address to probe is judged by Ready alone. */
static int k8s_node_alive(struct vg_orch *o, const char *node, int timeout_ms)
{
    json_t *obj = fetch_node(o, node);
    if (!obj) return -1;
    struct vg_k8s_node kn;
    int bad = vg_k8s_node_parse(obj, &kn);
    json_decref(obj);
    if (bad) return vg_orch_fail(o, "GET node %s: the answer is not a Node", node);
    if (kn.addr[0]) {
        enum vg_tcp_alive a = vg_tcp_probe(kn.addr, kn.kubelet_port, timeout_ms);
        if (a != VG_TCP_UNKNOWN) return a == VG_TCP_ALIVE;
    }
    if (strcmp(kn.ready, "True")) return 0;
    return vg_orch_fail(o, "node %s: no address to probe its kubelet at, and the API still reports it Ready", node);
}

static const char *const k8s_procs[] = { "kubelet", "containerd-shim-runc-v2", NULL };
static const char *const k8s_daemons[] = { "kubelet", "containerd", NULL };

const struct vg_orch_ops vg_orch_k8s = {
    .name = "k8s",
    .help = "Kubernetes through its REST API (--orch-config KUBECONFIG, $KUBECONFIG, or in-cluster)",
    .caps = VG_CAP_JOBS | VG_CAP_JOB_OUTPUT | VG_CAP_PRIORITY | VG_CAP_EXEC | VG_CAP_NODE_ALIVE |
            VG_CAP_STAMPED_TIMES | VG_CAP_LOCAL_NODE | VG_CAP_TASK_RANK | VG_CAP_WORKLOADS,
    .open = k8s_open,
    .close = k8s_close,
    .nodes = k8s_nodes,
    .isolate = k8s_isolate,
    .resume = k8s_resume,
    .jobs_on = k8s_jobs_on,
    .requeue = k8s_requeue,
    .pool_get = k8s_pool_get,
    .pool_set = k8s_pool_set,
    .job_submit = vg_k8s_job_submit,
    .job_get = vg_k8s_job_get,
    .job_cancel = vg_k8s_job_cancel,
    .job_output = k8s_job_output,
    .burnin_prepare = k8s_burnin_prepare,
    .exec_on = vg_k8s_exec_on,
    .node_alive = k8s_node_alive,
    .local_node = vg_k8s_local_node,
    .task_rank = vg_k8s_task_rank,
    .node_procs = k8s_procs,
    .node_daemons = k8s_daemons,
};
