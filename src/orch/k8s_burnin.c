/* k8s_burnin.c — burn-in on idle Kubernetes nodes (docs/burnin.md): the
 * PriorityClass the passes run at (low, never preempting, created when
 * missing), which nodes are idle (Ready, schedulable, no pod but a
 * DaemonSet's holding GPUs), one pod per pass pinned to its node by a
 * required node affinity on kubernetes.io/hostname and requesting all the
 * node's GPUs, and what became of it: its phase, the DisruptionTarget
 * condition (reason PreemptionByScheduler) the scheduler sets on a victim
 * before deleting it, or once the pod is gone the victim's `Preempted`
 * event (kube-scheduler: "Preempted by pod UID on node NODE").  The
 * pass's result is its log (pods/NAME/log). */
#include "orch/k8s.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PC_PATH "/apis/scheduling.k8s.io/v1/priorityclasses"
#define PC_VALUE -100
#define GRACE_S 1   /* a preempted pass stops at once: the production pod waits for it */

static const char *s_of(const json_t *o, const char *k) { return json_string_value(json_object_get(o, k)) ?: ""; }
static const json_t *md_of(const json_t *o) { return json_object_get(o, "metadata"); }

static long quantity(const json_t *v)
{
    if (json_is_integer(v)) return (long)json_integer_value(v);
    return json_is_string(v) ? strtol(json_string_value(v), NULL, 10) : 0;
}

int vg_k8s_pc_check(const json_t *pc, char *why, size_t n)
{
    const char *name = s_of(md_of(pc), "name");
    json_int_t v = json_integer_value(json_object_get(pc, "value"));
    const char *pol = s_of(pc, "preemptionPolicy");
    if (!json_is_integer(json_object_get(pc, "value")))
        return snprintf(why, n, "PriorityClass %s has no value", name), 1;
    if (v >= 0 || strcmp(pol, "Never") || json_is_true(json_object_get(pc, "globalDefault")))
        return snprintf(why, n,
                        "PriorityClass %s exists with value %lld, preemptionPolicy %s%s: a burn-in class must be "
                        "below 0 (production pods' default), preemptionPolicy Never and not the global default",
                        name, (long long)v, *pol ? pol : "PreemptLowerPriority",
                        json_is_true(json_object_get(pc, "globalDefault")) ? ", globalDefault" : ""), 1;
    return 0;
}

json_t *vg_k8s_pc_new(const char *name)
{
    return json_pack("{s:s,s:s,s:{s:s,s:{s:s}},s:i,s:b,s:s,s:s}", "apiVersion", "scheduling.k8s.io/v1", "kind",
                     "PriorityClass", "metadata", "name", name, "labels", VG_K8S_BURNIN_LABEL, "class", "value",
                     PC_VALUE, "globalDefault", 0, "preemptionPolicy", "Never", "description",
                     "vigil burn-in passes on idle nodes: below every production pod, never preempting; a pod that "
                     "needs the node's GPUs preempts the pass (docs/burnin.md)");
}

static const char *const gpu_resources[] = { VG_K8S_GPU, VG_K8S_AMD_GPU, NULL };

const char *vg_k8s_gpu_resource(const json_t *allocatable, long *count)
{
    *count = 0;
    for (size_t i = 0; gpu_resources[i]; i++)
        if ((*count = quantity(json_object_get(allocatable, gpu_resources[i]))) > 0) return gpu_resources[i];
    *count = 0;
    return NULL;
}

long vg_k8s_pod_gpus(const json_t *pod)
{
    long n = 0;
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(pod, "spec"), "containers"), i, c) {
        json_t *res = json_object_get(c, "resources");
        for (size_t r = 0; gpu_resources[r]; r++) {
            json_t *q = json_object_get(json_object_get(res, "requests"), gpu_resources[r]);
            n += quantity(q ? q : json_object_get(json_object_get(res, "limits"), gpu_resources[r]));
        }
    }
    return n;
}

void vg_k8s_burnin_idle(struct vg_orch_node *nodes, size_t n, const json_t *nodelist, const json_t *podlist)
{
    for (size_t i = 0; i < n; i++) {
        struct vg_orch_node *nd = &nodes[i];
        long gpus = 0;
        size_t k;
        json_t *o;
        json_array_foreach(json_object_get(nodelist, "items"), k, o)
            if (!strcmp(s_of(md_of(o), "name"), nd->name))
                vg_k8s_gpu_resource(json_object_get(json_object_get(o, "status"), "allocatable"), &gpus);
        const char *holder = NULL;
        json_array_foreach(json_object_get(podlist, "items"), k, o) {
            struct vg_k8s_pod p;
            if (vg_k8s_pod_parse(o, &p) || strcmp(p.node, nd->name) || p.daemon || p.gone || !vg_k8s_pod_gpus(o)) continue;
            holder = s_of(md_of(o), "name");
            break;
        }
        nd->busy = holder != NULL;
        nd->idle = !holder && gpus > 0 && nd->responding && !nd->drain && !nd->down;
        size_t l = strlen(nd->state);
        if (holder) snprintf(nd->state + l, sizeof nd->state - l, ",GPUs held by %.40s", holder);
        else if (gpus <= 0) snprintf(nd->state + l, sizeof nd->state - l, ",no %s or %s", VG_K8S_GPU, VG_K8S_AMD_GPU);
    }
}

/* A request whose success is any 2xx; else -1 with o->err (404 too unless ok404). */
static int req(struct vg_orch *o, struct vg_k8s_http *h, const char *method, const char *path, const json_t *body,
               json_t **out, long *status)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_t *ans;
    long st = vg_k8s_request(o, h, method, path, NULL, text, &ans);
    free(text);
    if (status) *status = st;
    if (st >= 200 && st < 300) {
        if (out) *out = ans;
        else json_decref(ans);
        return 0;
    }
    if (out) *out = NULL;
    if (!status || st != 404) vg_k8s_fail(o, st, ans, method, path);
    json_decref(ans);
    return -1;
}

/* List items kept with only what vg_k8s_burnin_idle reads (lists are read
 * in pages; a cluster's every pod and node, whole, would be hundreds of MB). */
static int keep_node(struct vg_orch *o, const json_t *node, void *ud)
{
    (void)o;
    json_t *t = vg_k8s_node_trim(node);
    if (t) json_array_append_new(ud, t);
    return 0;
}

/* A pod: its metadata but the managed fields, its node, its containers' resources, its phase. */
static int keep_pod(struct vg_orch *o, const json_t *pod, void *ud)
{
    (void)o;
    const json_t *spec = json_object_get(pod, "spec"), *st = json_object_get(pod, "status");
    json_t *md = json_deep_copy(json_object_get(pod, "metadata"));
    json_object_del(md, "managedFields");
    json_t *cs = json_array();
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(spec, "containers"), i, c)
        json_array_append_new(cs, json_pack("{s:O*}", "resources", json_object_get(c, "resources")));
    json_t *t = json_pack("{s:o,s:{s:O*,s:o},s:{s:O*,s:O*,s:O*}}", "metadata", md ? md : json_object(), "spec",
                          "nodeName", json_object_get(spec, "nodeName"), "containers", cs, "status", "phase",
                          json_object_get(st, "phase"), "conditions", json_object_get(st, "conditions"),
                          "containerStatuses", json_object_get(st, "containerStatuses"));
    if (t) json_array_append_new(ud, t);
    return 0;
}

int vg_k8s_burnin_prepare(struct vg_orch *o, struct vg_k8s_http *h, const char *queue, struct vg_orch_node *nodes,
                          size_t n)
{
    char path[300], why[400];
    snprintf(path, sizeof path, PC_PATH "/%s", queue);
    json_t *pc;
    long st;
    if (req(o, h, "GET", path, NULL, &pc, &st)) {
        if (st != 404) return -1;
        json_t *nw = vg_k8s_pc_new(queue);
        int rc = req(o, h, "POST", PC_PATH, nw, &pc, NULL);
        json_decref(nw);
        if (rc) return -1;
    }
    int bad = vg_k8s_pc_check(pc, why, sizeof why);
    json_decref(pc);
    if (bad) return vg_orch_fail(o, "%s", why), 1;
    json_t *nl = json_pack("{s:[]}", "items"), *pl = json_pack("{s:[]}", "items");
    int rc = vg_k8s_list(o, h, "/api/v1/nodes", keep_node, json_object_get(nl, "items"));
    if (!rc)
        rc = vg_k8s_list(o, h, "/api/v1/pods?fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed",
                         keep_pod, json_object_get(pl, "items"));
    if (!rc) vg_k8s_burnin_idle(nodes, n, nl, pl);
    json_decref(nl);
    json_decref(pl);
    return rc;
}

/* The pod id: "pod/NS/NAME". */
static bool split_id(const char *id, char *ns, size_t nsn, char *name, size_t nn)
{
    const char *p = id + 4, *slash = strchr(p, '/');
    if (strncmp(id, "pod/", 4) || !slash) return false;
    snprintf(ns, nsn, "%.*s", (int)(slash - p), p);
    vg_strlcpy(name, slash + 1, nn);
    return *ns && *name;
}

bool vg_k8s_burnin_id(const char *id) { return !strncmp(id, "pod/", 4); }

int vg_k8s_burnin_submit(struct vg_orch *o, struct vg_k8s_http *h, const char *ns, const char *image,
                         const struct vg_orch_jobspec *j, json_t *command, char *id, size_t idlen)
{
    char path[300], name[128];
    const char *node = j->nodelist;
    snprintf(path, sizeof path, "/api/v1/nodes/%s", node);
    json_t *nd;
    if (req(o, h, "GET", path, NULL, &nd, NULL)) return json_decref(command), -1;
    const json_t *labels = json_object_get(md_of(nd), "labels");
    char host[256], gpus[16];
    vg_strlcpy(host, json_is_string(json_object_get(labels, "kubernetes.io/hostname"))
                         ? s_of(labels, "kubernetes.io/hostname") : node, sizeof host);
    long count;   /* every GPU of the node, of its vendor: the pass holds them all */
    const char *res = vg_k8s_gpu_resource(json_object_get(json_object_get(nd, "status"), "allocatable"), &count);
    char resource[32];
    vg_strlcpy(resource, res ? res : VG_K8S_GPU, sizeof resource);
    snprintf(gpus, sizeof gpus, "%ld", count);
    json_decref(nd);
    snprintf(name, sizeof name, "vigil-burnin-%.40s-%lld", node, (long long)(vg_now_ms() % 100000000));
    for (char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-')) *p = '-';
    json_t *c = json_pack("{s:s,s:s,s:o,s:{s:{s:s},s:{s:s}}}", "name", "burnin", "image", image, "command", command,
                          "resources", "requests", resource, gpus, "limits", resource, gpus);
    json_t *aff = json_pack("{s:{s:{s:[{s:[{s:s,s:s,s:[s]}]}]}}}", "nodeAffinity",
                            "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms", "matchExpressions",
                            "key", "kubernetes.io/hostname", "operator", "In", "values", host);
    json_t *pod = json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s}},s:{s:s,s:s,s:i,s:i,s:o,s:[o]}}", "apiVersion", "v1", "kind",
                            "Pod", "metadata", "name", name, "namespace", ns, "labels", VG_K8S_BURNIN_LABEL, node,
                            "spec", "priorityClassName", j->partition ? j->partition : "vigil-burnin",
                            "restartPolicy", "Never", "activeDeadlineSeconds",
                            j->time_limit_s > 0 ? j->time_limit_s : 3600, "terminationGracePeriodSeconds", GRACE_S,
                            "affinity", aff, "containers", c);
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods", ns);
    int rc = req(o, h, "POST", path, pod, NULL, NULL);
    json_decref(pod);
    if (!rc) snprintf(id, idlen, "pod/%s/%s", ns, name);
    return rc;
}

static int64_t stamp(const json_t *o, const char *k)
{
    int64_t ms;
    return vg_parse_time(s_of(o, k), &ms) && ms > 0 ? ms : 0;
}

static const json_t *condition(const json_t *pod, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(pod, "status"), "conditions"), i, c)
        if (!strcmp(s_of(c, "type"), type)) return c;
    return NULL;
}

void vg_k8s_burnin_pod_job(const json_t *pod, struct vg_orch_job *out)
{
    const json_t *st = json_object_get(pod, "status");
    const char *phase = s_of(st, "phase");
    const json_t *cs = json_object_get(json_array_get(json_object_get(st, "containerStatuses"), 0), "state");
    const json_t *run = json_object_get(cs, "running"), *term = json_object_get(cs, "terminated");
    const json_t *dt = condition(pod, "DisruptionTarget");
    bool preempted = dt && !strcmp(s_of(dt, "status"), "True") && !strcmp(s_of(dt, "reason"), "PreemptionByScheduler");
    vg_strlcpy(out->name, s_of(md_of(pod), "name"), sizeof out->name);
    vg_strlcpy(out->nodes, s_of(json_object_get(pod, "spec"), "nodeName"), sizeof out->nodes);
    vg_strlcpy(out->leader, out->nodes, sizeof out->leader);
    out->started_ms = term ? stamp(term, "startedAt") : run ? stamp(run, "startedAt") : stamp(st, "startTime");
    bool ended = !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed") || preempted ||
                 json_object_get(md_of(pod), "deletionTimestamp");
    out->phase = ended ? VG_JOB_ENDED : !strcmp(phase, "Running") ? VG_JOB_RUNNING : VG_JOB_PENDING;
    if (ended) out->ended_ms = term ? stamp(term, "finishedAt") : preempted ? stamp(dt, "lastTransitionTime") : 0;
    if (preempted) {
        vg_strlcpy(out->state, "PREEMPTED", sizeof out->state);
        snprintf(out->reason, sizeof out->reason, "%s", s_of(dt, "message"));
    } else if (!strcmp(s_of(st, "reason"), "DeadlineExceeded")) {
        vg_strlcpy(out->state, "DEADLINE", sizeof out->state);
        snprintf(out->reason, sizeof out->reason, "activeDeadlineSeconds passed: %s", s_of(st, "message"));
    } else {
        vg_strlcpy(out->state, !ended ? (*phase ? phase : "Pending") : *phase ? phase : "Terminating",
                   sizeof out->state);
        for (char *p = out->state; *p; p++) *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
    }
}

bool vg_k8s_burnin_events(const json_t *events, struct vg_orch_job *out)
{
    bool preempted = false;
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(events, "items"), i, e) {
        int64_t t = stamp(e, "lastTimestamp") ?: stamp(e, "eventTime") ?: stamp(e, "firstTimestamp");
        if (!strcmp(s_of(e, "reason"), "Started") && (!out->started_ms || t < out->started_ms)) out->started_ms = t;
        if (strcmp(s_of(e, "reason"), "Preempted")) continue;
        preempted = true;
        out->ended_ms = t;
        snprintf(out->reason, sizeof out->reason, "%s", s_of(e, "message"));
    }
    if (preempted) {
        out->phase = VG_JOB_ENDED;
        vg_strlcpy(out->state, "PREEMPTED", sizeof out->state);
    }
    return preempted;
}

int vg_k8s_burnin_get(struct vg_orch *o, struct vg_k8s_http *h, const char *id, struct vg_orch_job *out)
{
    memset(out, 0, sizeof *out);
    char ns[64], name[200], path[400];
    if (!split_id(id, ns, sizeof ns, name, sizeof name)) return vg_orch_fail(o, "'%s' is not a burn-in pod id", id);
    vg_strlcpy(out->id, id, sizeof out->id);
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s", ns, name);
    json_t *pod;
    long st;
    if (!req(o, h, "GET", path, NULL, &pod, &st)) {
        vg_k8s_burnin_pod_job(pod, out);
        json_decref(pod);
        return 0;
    }
    if (st != 404) return -1;
    /* gone: a victim of preemption says so in its events */
    struct sbuf p = SBUF_INIT;
    sbuf_printf(&p, "/api/v1/namespaces/%s/events?fieldSelector=involvedObject.kind%%3DPod%%2CinvolvedObject.name%%3D%s",
                ns, name);
    json_t *ev;
    int rc = req(o, h, "GET", p.s, NULL, &ev, NULL);
    sbuf_free(&p);
    if (rc) return -1;
    vg_strlcpy(out->name, name, sizeof out->name);
    bool pre = vg_k8s_burnin_events(ev, out);
    json_decref(ev);
    return pre ? 0 : vg_orch_fail(o, "pod %s/%s is gone and no event says a higher-priority pod preempted it", ns, name);
}

int vg_k8s_burnin_cancel(struct vg_orch *o, struct vg_k8s_http *h, const char *id)
{
    char ns[64], name[200], path[400];
    if (!split_id(id, ns, sizeof ns, name, sizeof name)) return vg_orch_fail(o, "'%s' is not a burn-in pod id", id);
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s", ns, name);
    long st;
    return req(o, h, "DELETE", path, NULL, NULL, &st) && st != 404 ? -1 : 0;
}

int vg_k8s_burnin_output(struct vg_orch *o, struct vg_k8s_http *h, const char *id, char **text)
{
    *text = NULL;
    char ns[64], name[200], path[400];
    if (!split_id(id, ns, sizeof ns, name, sizeof name)) return vg_orch_fail(o, "'%s' is not a burn-in pod id", id);
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s/log", ns, name);
    long st = vg_k8s_request_raw(o, h, "GET", path, NULL, NULL, text);
    if (st == 200 && *text) return 0;
    free(*text);
    *text = NULL;
    return vg_orch_fail(o, "GET %s: HTTP %ld", path, st);
}
