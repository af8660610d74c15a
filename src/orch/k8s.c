/* k8s.c — Kubernetes as an orchestrator (orch.h), on the REST API (no
 * kubectl).  Isolation: cordon (spec.unschedulable), the taint
 * vigil.dev/fault=<what> (NoSchedule to drain, NoExecute to down, and at
 * DOWN the node's pods evicted through policy/v1 Eviction), an annotation
 * recording what vigil did (so resume undoes only vigil's, and a node an
 * administrator cordoned is never vigil's), and the node condition
 * VigilHealthy=False that `kubectl describe node` shows, with an Event
 * (k8s_event.c) on the node when vigil isolates or returns it.  Jobs are the
 * workloads (Job, JobSet) of the pods on a node; requeue deletes a workload's
 * pods so its controller recreates the whole gang.  The spare pool: nodes
 * labelled vigil.dev/spare=true; in the pool while they carry the taint
 * vigil.dev/spare:NoSchedule; promotion removes it (one PATCH).  Node writes
 * are strategic merge patches carrying the resourceVersion read last: a 409
 * re-reads the node and tries again. */
#include "orch/k8s.h"
#include "util/tcpprobe.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SMP "application/strategic-merge-patch+json"
#define CONFLICT_TRIES 5

#define RECENT_MS 5000

struct k8s {
    struct vg_k8s_http h;
    json_t *cache;            /* node name → the Node as last read or written */
    char ns[64];              /* namespace of drill Jobs */
    /* The pods jobs_on read on a node, reused by the DOWN that follows it
     * within RECENT_MS: a pod bound after that read is evicted by the
     * NoExecute taint anyway. */
    struct { char node[64]; int64_t at; struct vg_k8s_pod *pods; size_t n; } recent;
    bool event_warned;        /* an Event failed and that was logged */
};

static struct k8s *P(struct vg_orch *o) { return o->priv; }

static void now_rfc3339(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Percent-encodes a query value. */
static void qenc(struct sbuf *b, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("-_.~", c))
            sbuf_putc(b, (char)c);
        else sbuf_printf(b, "%%%02X", c);
    }
}

static int k8s_open(struct vg_orch *o, const struct vg_orch_conf *c)
{
    struct k8s *k = vg_xcalloc(1, sizeof *k);
    char err[600];
    if (vg_k8s_conf_load(c->config, &k->h.conf, err, sizeof err)) {
        vg_k8s_conf_free(&k->h.conf);
        free(k);
        return vg_orch_fail(o, "%s", err);
    }
    k->h.timeout_ms = o->timeout_ms;
    k->h.retries = 4;
    k->h.backoff_ms = 200;
    k->cache = json_object();
    const char *ns = getenv("VIGIL_K8S_NAMESPACE");
    vg_strlcpy(k->ns, ns && *ns ? ns : "default", sizeof k->ns);
    o->priv = k;
    return 0;
}

static void k8s_close(struct vg_orch *o)
{
    struct k8s *k = P(o);
    if (!k) return;
    json_decref(k->cache);
    free(k->recent.pods);
    vg_k8s_conf_free(&k->h.conf);
    free(k);
}

/* A request whose success is `want` (or any 2xx when want is 0); else -1 with o->err. */
static int call(struct vg_orch *o, const char *method, const char *path, const char *ctype, const char *body,
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

static void remember(struct vg_orch *o, json_t *node)
{
    const char *name = json_string_value(json_object_get(json_object_get(node, "metadata"), "name"));
    if (name) json_object_set(P(o)->cache, name, node);
}

/* GET one node into the cache; borrowed. */
static json_t *fetch_node(struct vg_orch *o, const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "/api/v1/nodes/%s", name);
    json_t *n;
    if (call(o, "GET", path, NULL, NULL, &n, NULL)) return NULL;
    remember(o, n);
    json_decref(n);
    return json_object_get(P(o)->cache, name);
}

/* ---- nodes ----------------------------------------------------------------- */

static int k8s_nodes(struct vg_orch *o, const char *const *names, size_t n, struct vg_orch_node **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    json_t *list;
    if (names && n == 1) {
        json_t *one = fetch_node(o, names[0]);
        if (!one) return -1;
        list = json_pack("[O]", one);
    } else {
        json_t *ans;
        if (call(o, "GET", "/api/v1/nodes", NULL, NULL, &ans, NULL)) return -1;
        list = json_incref(json_object_get(ans, "items"));
        json_decref(ans);
        if (!json_is_array(list)) {
            json_decref(list);
            return vg_orch_fail(o, "GET /api/v1/nodes: the answer is not a NodeList");
        }
    }
    *out = vg_xcalloc(json_array_size(list) + 1, sizeof **out);
    size_t i;
    json_t *node;
    json_array_foreach(list, i, node) {
        struct vg_k8s_node kn;
        if (vg_k8s_node_parse(node, &kn)) continue;
        remember(o, node);
        bool want = !names;
        for (size_t j = 0; names && j < n && !want; j++) want = !strcmp(names[j], kn.n.name);
        if (want) (*out)[(*nout)++] = kn.n;
    }
    json_decref(list);
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
    json_t *node = json_object_get(P(o)->cache, name);
    if (!node && !(node = fetch_node(o, name))) return -1;
    for (int i = 0; i < CONFLICT_TRIES; i++) {
        json_t *patch = node_patch(node, ch);
        char *body = json_dumps(patch, JSON_COMPACT);
        json_decref(patch);
        json_t *ans;
        long st;
        int rc = call(o, "PATCH", path, SMP, body, &ans, &st);
        free(body);
        if (!rc) {
            remember(o, ans);
            json_decref(ans);
            return 0;
        }
        if (st != 409) return -1;
        if (!(node = fetch_node(o, name))) return -1;
    }
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
    int rc = call(o, "PATCH", path, SMP, body, &ans, NULL);
    free(body);
    if (!rc) remember(o, ans);
    json_decref(ans);
    return rc;
}

/* ---- pods ------------------------------------------------------------------ */

/* Pods matching a selector ("fieldSelector" or "labelSelector"), in ns or all. */
static int pods(struct vg_orch *o, const char *ns, const char *kind, const char *sel, struct vg_k8s_pod **out, size_t *n)
{
    struct sbuf p = SBUF_INIT;
    if (ns) sbuf_printf(&p, "/api/v1/namespaces/%s/pods?%s=", ns, kind);
    else sbuf_printf(&p, "/api/v1/pods?%s=", kind);
    qenc(&p, sel);
    json_t *ans;
    int rc = call(o, "GET", p.s, NULL, NULL, &ans, NULL);
    sbuf_free(&p);
    *out = NULL;
    *n = 0;
    if (rc) return -1;
    json_t *items = json_object_get(ans, "items");
    *out = vg_xcalloc(json_array_size(items) + 1, sizeof **out);
    size_t i;
    json_t *pod;
    json_array_foreach(items, i, pod)
        if (!vg_k8s_pod_parse(pod, &(*out)[*n])) (*n)++;
    json_decref(ans);
    return 0;
}

static int pods_on(struct vg_orch *o, const char *node, struct vg_k8s_pod **out, size_t *n)
{
    char sel[128];
    snprintf(sel, sizeof sel, "spec.nodeName=%s", node);
    return pods(o, NULL, "fieldSelector", sel, out, n);
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

/* ---- the ops ---------------------------------------------------------------- */

/* DOWN: the node's pods evicted (not DaemonSet pods, not vigil's own). */
static int evict_node(struct vg_orch *o, const char *node)
{
    struct vg_k8s_pod *ps;
    size_t np;
    struct k8s *k = P(o);
    if (!strcmp(k->recent.node, node) && vg_mono_ms() - k->recent.at < RECENT_MS) {
        ps = k->recent.pods, np = k->recent.n;   /* taken: read once */
        k->recent.pods = NULL, k->recent.node[0] = 0;
    } else if (pods_on(o, node, &ps, &np)) return -1;
    int rc = 0;
    for (size_t j = 0; j < np && !rc; j++)
        if (!ps[j].daemon && !ps[j].gone) rc = evict(o, &ps[j]);
    free(ps);
    return rc;
}

/* The Event saying what vigil did, after the node's own changes (it never fails them). */
static void node_event(struct vg_orch *o, const char *name, bool warning, const char *reason, const char *message)
{
    const json_t *node = json_object_get(P(o)->cache, name);
    if (node) vg_k8s_node_event(o, &P(o)->h, node, warning, reason, message, &P(o)->event_warned);
}

static int k8s_isolate(struct vg_orch *o, const char *const *nodes, size_t n, enum vg_isolate how, const char *reason)
{
    struct node_change ch = { OP_ISOLATE, how, reason };
    bool down = how == VG_ISOLATE_DOWN;
    for (size_t i = 0; i < n; i++) {
        if (change_node(o, nodes[i], &ch) || set_condition(o, nodes[i], false, down ? "VigilDown" : "VigilDrain", reason) ||
            (down && evict_node(o, nodes[i])))
            return -1;
        char msg[512];
        snprintf(msg, sizeof msg, "%s: cordoned, tainted %s:%s%s", reason, VG_K8S_FAULT_TAINT,
                 down ? "NoExecute" : "NoSchedule", down ? ", its pods evicted" : "");
        node_event(o, nodes[i], true, "VigilIsolated", msg);
    }
    return 0;
}

static int k8s_resume(struct vg_orch *o, const char *const *nodes, size_t n)
{
    struct node_change ch = { OP_RESUME, VG_ISOLATE_DRAIN, NULL };
    for (size_t i = 0; i < n; i++) {
        if (change_node(o, nodes[i], &ch) ||
            set_condition(o, nodes[i], true, "VigilReturned", "returned to service by vigil"))
            return -1;
        node_event(o, nodes[i], false, "VigilReturned", "returned to service by vigil: its taint and annotation removed");
    }
    return 0;
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
        free(k->recent.pods);
        vg_strlcpy(k->recent.node, nodes[i], sizeof k->recent.node);
        k->recent.at = vg_mono_ms(), k->recent.pods = ps, k->recent.n = np;
        for (size_t j = 0; j < np; j++) {
            if (!ps[j].workload[0] || ps[j].gone) continue;
            bool seen = false;
            for (size_t m = 0; m < nv && !seen; m++) seen = !strcmp(v[m], ps[j].workload);
            if (seen) continue;
            v = vg_xrealloc(v, (nv + 2) * sizeof *v);
            v[nv++] = vg_xstrdup(ps[j].workload);
            v[nv] = NULL;
        }
    }
    *jobs = v ? v : vg_xcalloc(1, sizeof *v);
    *njobs = nv;
    return 0;
}

/* The label every pod of the workload carries. */
static void gang_selector(const char *kind, const char *name, char *sel, size_t n)
{
    if (!strcmp(kind, "JobSet")) snprintf(sel, n, "jobset.sigs.k8s.io/jobset-name=%s", name);
    else snprintf(sel, n, "batch.kubernetes.io/job-name=%s", name);
}

/* The whole gang restarted with one request: DELETE of the pod collection
 * the workload's label selects (what JobSet's own failurePolicy does), so its
 * controller recreates every pod at once, the replacement of a pod evicted at
 * DOWN included.  Each pod still gets its grace period; a PodDisruptionBudget
 * is not consulted (a gang with a dead member is disrupted already). */
static int k8s_requeue(struct vg_orch *o, const char *const *jobs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char ns[64], kind[16], name[256], sel[320];
        if (!vg_k8s_workload_split(jobs[i], ns, sizeof ns, kind, sizeof kind, name, sizeof name))
            return vg_orch_fail(o, "requeue: '%s' is not a workload (NAMESPACE/Job/NAME or NAMESPACE/JobSet/NAME)", jobs[i]);
        gang_selector(kind, name, sel, sizeof sel);
        struct sbuf p = SBUF_INIT;
        sbuf_printf(&p, "/api/v1/namespaces/%s/pods?labelSelector=", ns);
        qenc(&p, sel);
        int rc = call(o, "DELETE", p.s, NULL, NULL, NULL, NULL);
        sbuf_free(&p);
        if (rc) return -1;
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
    qenc(&p, VG_K8S_SPARE_LABEL "=true");
    json_t *ans;
    int rc = call(o, "GET", p.s, NULL, NULL, &ans, NULL);
    sbuf_free(&p);
    if (rc) return -1;
    json_t *items = json_object_get(ans, "items");
    if (!json_array_size(items)) {
        json_decref(ans);
        return 1;
    }
    *nodes = vg_xcalloc(json_array_size(items) + 1, sizeof **nodes);
    size_t i;
    json_t *node;
    json_array_foreach(items, i, node) {
        struct vg_k8s_node kn;
        if (vg_k8s_node_parse(node, &kn)) continue;
        remember(o, node);
        if (kn.spare_taint) (*nodes)[(*n)++] = vg_xstrdup(kn.n.name);
    }
    json_decref(ans);
    return 0;
}

static int k8s_pool_set(struct vg_orch *o, const char *pool, const char *const *nodes, size_t n, bool exists)
{
    (void)pool, (void)exists;
    /* every node vigil knows that is labelled a spare or named here */
    const char *name;
    json_t *node;
    json_t *names = json_object();
    json_object_foreach(P(o)->cache, name, node) {
        struct vg_k8s_node kn;
        if (!vg_k8s_node_parse(node, &kn) && kn.spare_label) json_object_set_new(names, name, json_false());
    }
    for (size_t i = 0; i < n; i++) json_object_set_new(names, nodes[i], json_true());
    int rc = 0;
    json_t *want;
    json_object_foreach(names, name, want) {
        node = json_object_get(P(o)->cache, name);
        if (!node && !(node = fetch_node(o, name))) {
            rc = -1;
            break;
        }
        struct vg_k8s_node kn;
        vg_k8s_node_parse(node, &kn);
        if (kn.spare_taint == json_is_true(want) && (kn.spare_label || !json_is_true(want))) continue;
        struct node_change ch = { json_is_true(want) ? OP_SPARE_ON : OP_SPARE_OFF, VG_ISOLATE_DRAIN, NULL };
        if ((rc = change_node(o, name, &ch))) break;
    }
    json_decref(names);
    return rc;
}

/* ---- drill jobs: a batch/v1 Job with one pod per node; commands on a node ---- */

/* A container's command from argv: the program is looked up on the image's
 * PATH by its base name (this machine's path to it means nothing there). */
static json_t *image_command(const char *const *argv)
{
    json_t *a = json_array();
    for (size_t i = 0; argv[i]; i++) {
        const char *slash = i ? NULL : strrchr(argv[i], '/');
        json_array_append_new(a, json_string(slash && slash[1] ? slash + 1 : argv[i]));
    }
    return a;
}

/* The node paths as hostPath volumes mounted where they are on the node. */
static void host_volumes(const char *const *host_paths, json_t **mounts, json_t **vols)
{
    *mounts = json_array(), *vols = json_array();
    for (size_t i = 0; host_paths && host_paths[i]; i++) {
        char vn[32];
        snprintf(vn, sizeof vn, "host-%zu", i);
        json_array_append_new(*mounts, json_pack("{s:s,s:s}", "name", vn, "mountPath", host_paths[i]));
        json_array_append_new(*vols, json_pack("{s:s,s:{s:s}}", "name", vn, "hostPath", "path", host_paths[i]));
    }
}

/* The GPU resource a job asks for: $VIGIL_K8S_GPU_RESOURCE, else the one
 * most of the cluster's nodes offer (NVIDIA's on a tie, or when none can be
 * read): a drill's ranks land on one vendor's nodes. */
static const char *job_gpu_resource(struct vg_orch *o)
{
    const char *env = getenv("VIGIL_K8S_GPU_RESOURCE");
    if (env && *env) return env;
    json_t *nl = NULL;
    int nvidia = 0, amd = 0;
    if (call(o, "GET", "/api/v1/nodes", NULL, NULL, &nl, NULL) == 0) {
        size_t i;
        json_t *nd;
        json_array_foreach(json_object_get(nl, "items"), i, nd) {
            long count;
            const char *r = vg_k8s_gpu_resource(json_object_get(json_object_get(nd, "status"), "allocatable"), &count);
            if (r) ++*(!strcmp(r, VG_K8S_AMD_GPU) ? &amd : &nvidia);
        }
    }
    json_decref(nl);
    return amd > nvidia ? VG_K8S_AMD_GPU : VG_K8S_GPU;
}

/* An Indexed Job: pod i gets JOB_COMPLETION_INDEX=i (its rank; a replacement
 * keeps the index of the pod it replaces), VIGIL_NTASKS the pod count. */
static int k8s_job_submit(struct vg_orch *o, const struct vg_orch_jobspec *j, char *id, size_t idlen)
{
    const char *image = getenv("VIGIL_K8S_IMAGE");
    if (!image || !*image)
        return vg_orch_fail(o, "submit: set VIGIL_K8S_IMAGE to the container image that holds the program");
    if (j->script || !j->argv) return vg_orch_fail(o, "submit: a Job runs a program (argv), not a job script");
    if (j->nodelist && j->exclusive && !strchr(j->nodelist, ','))   /* a burn-in pass: one pod (k8s_burnin.c) */
        return vg_k8s_burnin_submit(o, &P(o)->h, P(o)->ns, image, j, image_command(j->argv), id, idlen);
    if (j->nodelist || j->exclusive)
        return vg_orch_fail(o, "submit: a Job on given nodes or alone on them is not supported by the kubernetes "
                               "orchestrator (one node alone: a burn-in pass's pod)");
    char name[64];
    snprintf(name, sizeof name, "%.40s-%lld", j->name ? j->name : "vigil-job", (long long)(vg_now_ms() % 100000000));
    for (char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-')) *p = '-';
    int nodes = j->nodes > 0 ? j->nodes : 1;
    json_t *args = image_command(j->argv), *mounts, *vols;
    host_volumes(j->host_paths, &mounts, &vols);
    char ntasks[16];
    snprintf(ntasks, sizeof ntasks, "%d", nodes);
    json_t *container = json_pack("{s:s,s:s,s:o,s:[{s:s,s:s}],s:o}", "name", "task", "image", image, "command", args,
                                  "env", "name", "VIGIL_NTASKS", "value", ntasks, "volumeMounts", mounts);
    if (j->gpus_per_node > 0) {
        char g[16];
        snprintf(g, sizeof g, "%d", j->gpus_per_node);
        const char *res = job_gpu_resource(o);
        json_object_set_new(container, "resources", json_pack("{s:{s:s},s:{s:s}}", "requests", res, g, "limits", res, g));
    }
    json_t *labels = json_object();
    if (j->tag) json_object_set_new(labels, VG_K8S_DRILL_LABEL, json_string(j->tag));
    json_t *job = json_pack("{s:s,s:s,s:{s:s,s:s,s:O},s:{s:i,s:i,s:s,s:i,s:{s:{s:O},s:{s:s,s:[o],s:o}}}}",
                            "apiVersion", "batch/v1", "kind", "Job", "metadata", "name", name, "namespace", P(o)->ns,
                            "labels", labels, "spec", "parallelism", nodes, "completions", nodes, "completionMode",
                            "Indexed", "backoffLimit", j->requeue ? 1000 : 0, "template", "metadata", "labels", labels,
                            "spec", "restartPolicy", "Never", "containers", container, "volumes", vols);
    json_decref(labels);
    char *body = json_dumps(job, JSON_COMPACT);
    json_decref(job);
    char path[256];
    snprintf(path, sizeof path, "/apis/batch/v1/namespaces/%s/jobs", P(o)->ns);
    int rc = call(o, "POST", path, NULL, body, NULL, NULL);
    free(body);
    if (!rc) vg_strlcpy(id, name, idlen);
    return rc;
}

static int k8s_job_get(struct vg_orch *o, const char *id, struct vg_orch_job *out)
{
    if (vg_k8s_burnin_id(id)) return vg_k8s_burnin_get(o, &P(o)->h, id, out);
    memset(out, 0, sizeof *out);
    char ns[64], kind[16], name[256], path[512], sel[320];
    if (!vg_k8s_workload_split(id, ns, sizeof ns, kind, sizeof kind, name, sizeof name))
        vg_strlcpy(ns, P(o)->ns, sizeof ns), vg_strlcpy(name, id, sizeof name);
    snprintf(path, sizeof path, "/apis/batch/v1/namespaces/%s/jobs/%s", ns, name);
    json_t *job;
    if (call(o, "GET", path, NULL, NULL, &job, NULL)) return -1;
    json_t *st = json_object_get(job, "status"), *spec = json_object_get(job, "spec");
    long par = json_is_integer(json_object_get(spec, "parallelism")) ? (long)json_integer_value(json_object_get(spec, "parallelism")) : 1;
    long failed = (long)json_integer_value(json_object_get(st, "failed"));
    long ready = (long)json_integer_value(json_object_get(st, "ready"));
    bool ended = json_object_get(st, "completionTime") != NULL;
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(st, "conditions"), i, c)
        if (!strcmp(json_string_value(json_object_get(c, "status")) ?: "", "True") &&
            (!strcmp(json_string_value(json_object_get(c, "type")) ?: "", "Complete") ||
             !strcmp(json_string_value(json_object_get(c, "type")) ?: "", "Failed")))
            ended = true;
    vg_strlcpy(out->id, id, sizeof out->id);
    vg_strlcpy(out->name, name, sizeof out->name);
    out->phase = ended ? VG_JOB_ENDED : ready >= par ? VG_JOB_RUNNING : VG_JOB_PENDING;
    vg_strlcpy(out->state, ended ? "ENDED" : ready >= par ? "RUNNING" : "PENDING", sizeof out->state);
    out->restarts = failed > 0 ? (int)((failed + par - 1) / par) : 0;
    json_decref(job);
    gang_selector("Job", name, sel, sizeof sel);
    struct vg_k8s_pod *ps;
    size_t np;
    if (pods(o, ns, "labelSelector", sel, &ps, &np)) return -1;
    size_t l = 0;
    long live = 0, ready_n = 0;
    int64_t gang_ready = 0;   /* when the last pod of the current gang became Ready */
    for (size_t j = 0; j < np; j++) {
        if (ps[j].gone || !ps[j].node[0]) continue;
        live++;
        if (ps[j].ready) ready_n++;
        if (ps[j].ready_ms > gang_ready) gang_ready = ps[j].ready_ms;
        if (!out->leader[0]) vg_strlcpy(out->leader, ps[j].node, sizeof out->leader);
        if (l < sizeof out->nodes)
            l += (size_t)snprintf(out->nodes + l, sizeof out->nodes - l, "%s%s", l ? "," : "", ps[j].node);
    }
    free(ps);
    if (out->phase == VG_JOB_RUNNING && live >= par && ready_n >= par) out->started_ms = gang_ready;
    return 0;
}

static int k8s_job_cancel(struct vg_orch *o, const char *id)
{
    if (vg_k8s_burnin_id(id)) return vg_k8s_burnin_cancel(o, &P(o)->h, id);
    char ns[64], kind[16], name[256], path[512];
    if (!vg_k8s_workload_split(id, ns, sizeof ns, kind, sizeof kind, name, sizeof name))
        vg_strlcpy(ns, P(o)->ns, sizeof ns), vg_strlcpy(name, id, sizeof name);
    snprintf(path, sizeof path, "/apis/batch/v1/namespaces/%s/jobs/%s?propagationPolicy=Background", ns, name);
    return call(o, "DELETE", path, NULL, NULL, NULL, NULL);
}

static int k8s_job_output(struct vg_orch *o, const char *id, char **text)
{
    return vg_k8s_burnin_output(o, &P(o)->h, id, text);
}

static int k8s_burnin_prepare(struct vg_orch *o, const char *queue, struct vg_orch_node *nodes, size_t n)
{
    return vg_k8s_burnin_prepare(o, &P(o)->h, queue, nodes, n);
}

/* A one-shot pod bound to the node (nodeName: no scheduler, cordon and
 * NoSchedule taints do not stop it), tolerating every taint (vigil's
 * NoExecute included), privileged with the host's PID namespace (to signal
 * the node's daemons), the host paths mounted where they are on the host. */
static json_t *exec_pod(struct vg_orch *o, const char *name, const char *node, const char *image,
                        const char *const *cmd, const char *const *host_paths)
{
    json_t *args = image_command(cmd), *mounts, *vols;
    host_volumes(host_paths, &mounts, &vols);
    json_t *c = json_pack("{s:s,s:s,s:o,s:{s:b},s:o}", "name", "vigil", "image", image, "command", args,
                          "securityContext", "privileged", 1, "volumeMounts", mounts);
    return json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s}},s:{s:s,s:s,s:b,s:[{s:s}],s:[o],s:o}}", "apiVersion", "v1", "kind",
                     "Pod", "metadata", "name", name, "namespace", P(o)->ns, "labels", VG_K8S_EXEC_LABEL, node,
                     "spec", "nodeName", node, "restartPolicy", "Never", "hostPID", 1, "tolerations", "operator",
                     "Exists", "containers", c, "volumes", vols);
}

static int k8s_exec_on(struct vg_orch *o, const char *node, const char *const *cmd, const char *const *host_paths,
                       int timeout_ms, struct vg_spawn_result *r)
{
    memset(r, 0, sizeof *r);
    r->status = -1;
    r->out = vg_xstrdup(""), r->err = vg_xstrdup("");
    const char *image = getenv("VIGIL_K8S_IMAGE");
    if (!image || !*image)
        return vg_orch_fail(o, "running a command on %s: set VIGIL_K8S_IMAGE to the container image that holds vigil",
                            node);
    char name[128], path[512];
    snprintf(name, sizeof name, "vigil-exec-%.40s-%lld", node, (long long)(vg_now_ms() % 100000000));
    for (char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-')) *p = '-';
    json_t *pod = exec_pod(o, name, node, image, cmd, host_paths);
    char *body = json_dumps(pod, JSON_COMPACT);
    json_decref(pod);
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods", P(o)->ns);
    int rc = call(o, "POST", path, NULL, body, NULL, NULL);
    free(body);
    if (rc) return -1;
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s", P(o)->ns, name);
    struct vg_k8s_pod kp = { .exit_code = -1 };
    int64_t end = vg_mono_ms() + timeout_ms;
    while (!rc) {
        json_t *ans;
        if ((rc = call(o, "GET", path, NULL, NULL, &ans, NULL))) break;
        vg_k8s_pod_parse(ans, &kp);
        json_decref(ans);
        if (!strcmp(kp.phase, "Succeeded") || !strcmp(kp.phase, "Failed")) break;
        if (vg_mono_ms() >= end) {
            r->timed_out = true;
            rc = vg_orch_fail(o, "pod %s on %s did not finish within %d ms (phase %s)", name, node, timeout_ms,
                              kp.phase[0] ? kp.phase : "none");
            break;
        }
        vg_sleep_ms(100);
    }
    if (!rc) {   /* what it printed: the pod's log */
        char lp[600], *text = NULL;
        snprintf(lp, sizeof lp, "%s/log", path);
        if (vg_k8s_request_raw(o, &P(o)->h, "GET", lp, NULL, NULL, &text) == 200 && text) {
            free(r->out);
            r->out = text, r->out_len = strlen(text);
        } else free(text);
        r->status = kp.exit_code;
        if (kp.exit_code != 0)
            rc = vg_orch_fail(o, "pod %s on %s: %s, exit code %d%s%s%s", name, node, kp.phase, kp.exit_code,
                              kp.exit_reason[0] ? " (" : "", kp.exit_reason, kp.exit_reason[0] ? ")" : "");
    }
    char saved[256];
    vg_strlcpy(saved, o->err, sizeof saved);
    call(o, "DELETE", path, NULL, NULL, NULL, NULL);   /* one-shot: gone either way */
    vg_strlcpy(o->err, saved, sizeof o->err);
    return rc;
}

/* The kubelet's port at the node's address: the API server's own view (the
 * Ready condition) lags by its node-monitor grace period, 40 s by default.
 * A node with no address to probe is judged by Ready alone. */
static int k8s_node_alive(struct vg_orch *o, const char *node, int timeout_ms)
{
    json_t *obj = fetch_node(o, node);
    if (!obj) return -1;
    struct vg_k8s_node kn;
    if (vg_k8s_node_parse(obj, &kn)) return vg_orch_fail(o, "GET node %s: the answer is not a Node", node);
    if (kn.addr[0]) {
        enum vg_tcp_alive a = vg_tcp_probe(kn.addr, kn.kubelet_port, timeout_ms);
        if (a != VG_TCP_UNKNOWN) return a == VG_TCP_ALIVE;
    }
    if (strcmp(kn.ready, "True")) return 0;
    return vg_orch_fail(o, "node %s: no address to probe its kubelet at, and the API still reports it Ready", node);
}

static bool k8s_local_node(char *buf, size_t n)
{
    const char *v = getenv("NODE_NAME");   /* the DaemonSet sets it from spec.nodeName */
    if (!v || !*v) return false;
    vg_strlcpy(buf, v, n);
    return true;
}

static const char *const k8s_procs[] = { "kubelet", "containerd-shim-runc-v2", NULL };
static const char *const k8s_daemons[] = { "kubelet", "containerd", NULL };

const struct vg_orch_ops vg_orch_k8s = {
    .name = "k8s",
    .help = "Kubernetes through its REST API (--orch-config KUBECONFIG, $KUBECONFIG, or in-cluster)",
    .open = k8s_open,
    .close = k8s_close,
    .nodes = k8s_nodes,
    .isolate = k8s_isolate,
    .resume = k8s_resume,
    .jobs_on = k8s_jobs_on,
    .requeue = k8s_requeue,
    .pool_get = k8s_pool_get,
    .pool_set = k8s_pool_set,
    .job_submit = k8s_job_submit,
    .job_get = k8s_job_get,
    .job_cancel = k8s_job_cancel,
    .job_output = k8s_job_output,
    .burnin_prepare = k8s_burnin_prepare,
    .exec_on = k8s_exec_on,
    .node_alive = k8s_node_alive,
    .local_node = k8s_local_node,
    .node_procs = k8s_procs,
    .node_daemons = k8s_daemons,
    .stamped_times = true,
};
