/* k8s_parse.c — reads the parts of Node and Pod objects vigil acts on (pure
 * functions: the unit test and fuzz/fuzz_k8s.c drive them).  A node's reason
 * is vigil's own (from its annotation) only when vigil isolated it; a node
 * an administrator cordoned or tainted gets a reason that does not start
 * with "vigil:", so vigil leaves it alone. */
#include "orch/k8s.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *str(const json_t *o, const char *k)
{
    const char *v = json_string_value(json_object_get(o, k));
    return v ? v : "";
}

static json_t *at(const json_t *o, const char *a, const char *b)
{
    return json_object_get(json_object_get(o, a), b);
}

/* The condition of type `type` (of a Node or a Pod), or NULL. */
static json_t *condition(const json_t *obj, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(at(obj, "status", "conditions"), i, c)
        if (!strcmp(str(c, "type"), type)) return c;
    return NULL;
}

/* A metav1.Time field (RFC 3339, to the second) in ms; 0 when absent or malformed. */
static int64_t stamp(const json_t *o, const char *k)
{
    int64_t ms;
    return vg_parse_time(str(o, k), &ms) && ms > 0 ? ms : 0;
}

/* The kubelet's address and port, for the liveness probe. */
static void kubelet_address(const json_t *node, struct vg_k8s_node *out)
{
    static const char *const types[] = { "InternalIP", "ExternalIP" };
    for (size_t k = 0; k < 2 && !out->addr[0]; k++) {
        size_t i;
        json_t *a;
        json_array_foreach(at(node, "status", "addresses"), i, a)
            if (!strcmp(str(a, "type"), types[k]) && *str(a, "address")) {
                vg_strlcpy(out->addr, str(a, "address"), sizeof out->addr);
                break;
            }
    }
    json_int_t port = json_integer_value(json_object_get(
        json_object_get(at(node, "status", "daemonEndpoints"), "kubeletEndpoint"), "Port"));
    out->kubelet_port = port > 0 && port < 65536 ? (int)port : 10250;
}

int vg_k8s_node_parse(const json_t *node, struct vg_k8s_node *out)
{
    memset(out, 0, sizeof *out);
    json_t *md = json_object_get(node, "metadata"), *spec = json_object_get(node, "spec");
    if (!*str(md, "name")) return -1;
    vg_strlcpy(out->n.name, str(md, "name"), sizeof out->n.name);
    vg_strlcpy(out->rv, str(md, "resourceVersion"), sizeof out->rv);
    out->cordoned = json_is_true(json_object_get(spec, "unschedulable"));
    json_t *labels = json_object_get(md, "labels");
    out->spare_label = !strcmp(str(labels, VG_K8S_SPARE_LABEL), "true");

    /* taints: vigil's fault, the spare pool's, anyone else's */
    char other[128] = "";
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(spec, "taints"), i, t) {
        const char *key = str(t, "key"), *effect = str(t, "effect");
        if (!strcmp(key, VG_K8S_FAULT_TAINT)) {
            vg_strlcpy(out->fault_effect, effect, sizeof out->fault_effect);
            out->n.isolated_ms = stamp(t, "timeAdded");
        }
        else if (!strcmp(key, VG_K8S_SPARE_TAINT)) out->spare_taint = true;
        else if (!other[0] && (!strcmp(effect, "NoSchedule") || !strcmp(effect, "NoExecute")))
            snprintf(other, sizeof other, "taint %.60s%s%.40s:%s", key, *str(t, "value") ? "=" : "", str(t, "value"), effect);
    }

    /* vigil's annotation: {"how":…,"reason":"vigil: …","cordoned":bool} */
    const char *ann = str(json_object_get(md, "annotations"), VG_K8S_ANNOTATION);
    json_t *a = *ann ? json_loads(ann, 0, NULL) : NULL;
    const char *why = str(a, "reason");
    out->ours = json_is_object(a) && vg_startswith(why, VG_REASON_PREFIX);
    out->cordoned_before = out->ours && json_is_true(json_object_get(a, "cordoned"));

    /* when vigil took it out, as the API recorded it: its condition, else its taint */
    json_t *vc = condition(node, VG_K8S_CONDITION);
    if (vc && !strcmp(str(vc, "status"), "False") && stamp(vc, "lastTransitionTime"))
        out->n.isolated_ms = stamp(vc, "lastTransitionTime");
    if (!out->ours) out->n.isolated_ms = 0;
    json_t *ready = condition(node, "Ready");
    const char *rs = ready ? str(ready, "status") : "Unknown";
    vg_strlcpy(out->ready, rs, sizeof out->ready);
    kubelet_address(node, out);
    vg_strlcpy(out->n.addr, out->addr, sizeof out->n.addr);
    out->n.responding = !strcmp(rs, "True");
    out->n.drain = out->cordoned || out->fault_effect[0] || other[0];
    out->n.down = !out->n.responding || !strcmp(out->fault_effect, "NoExecute");
    out->n.idle = out->n.busy = false;   /* pods, not the node, say that */
    if (out->ours) vg_strlcpy(out->n.reason, why, sizeof out->n.reason);
    else if (out->cordoned) vg_strlcpy(out->n.reason, "cordoned (not by vigil)", sizeof out->n.reason);
    else if (other[0]) vg_strlcpy(out->n.reason, other, sizeof out->n.reason);
    else if (!out->n.responding)
        snprintf(out->n.reason, sizeof out->n.reason, "Ready %s: %.200s", rs, ready ? str(ready, "message") : "no Ready condition");
    json_decref(a);
    snprintf(out->n.state, sizeof out->n.state, "%s%s%s%s",
             !strcmp(rs, "True") ? "Ready" : !strcmp(rs, "False") ? "NotReady" : "Unknown",
             out->cordoned ? ",SchedulingDisabled" : "", out->fault_effect[0] ? ",VigilFault" : "",
             out->spare_taint ? ",Spare" : "");
    const char *dl = getenv("VIGIL_K8S_DOMAIN_LABEL");
    vg_strlcpy(out->n.domain, str(labels, dl && *dl ? dl : VG_K8S_DOMAIN_LABEL), sizeof out->n.domain);
    if (!out->n.domain[0]) vg_strlcpy(out->n.domain, str(labels, VG_K8S_HIVE_LABEL), sizeof out->n.domain);
    const char *clique = str(labels, "nvidia.com/gpu.clique");
    snprintf(out->n.features, sizeof out->n.features, "%s%s%s%.80s", out->spare_label ? "spare" : "",
             out->spare_label && *clique ? "," : "", *clique ? "clique=" : "", clique);
    return 0;
}

/* A new object with o's fields of those keys that are there (copies). */
static json_t *kept(const json_t *o, const char *const *keys)
{
    json_t *t = json_object();
    for (size_t i = 0; keys[i]; i++) {
        json_t *v = json_object_get(o, keys[i]);
        if (v) json_object_set_new(t, keys[i], json_deep_copy(v));
    }
    return t;
}

json_t *vg_k8s_node_trim(const json_t *node)
{
    static const char *const top[] = { "apiVersion", "kind", NULL },
                             *const meta[] = { "name", "uid", "resourceVersion", "labels", NULL },
                             *const spec[] = { "unschedulable", "taints", NULL },
                             *const status[] = { "conditions", "addresses", "daemonEndpoints", "allocatable", NULL };
    const json_t *md = json_object_get(node, "metadata");
    if (!json_is_object(node) || !*str(md, "name")) return NULL;
    json_t *t = kept(node, top), *tmd = kept(md, meta);
    const json_t *ann = json_object_get(json_object_get(md, "annotations"), VG_K8S_ANNOTATION);
    if (ann) json_object_set_new(tmd, "annotations", json_pack("{s:O}", VG_K8S_ANNOTATION, ann));
    json_object_set_new(t, "metadata", tmd);
    json_object_set_new(t, "spec", kept(json_object_get(node, "spec"), spec));
    json_object_set_new(t, "status", kept(json_object_get(node, "status"), status));
    return t;
}

int vg_k8s_pod_parse(const json_t *pod, struct vg_k8s_pod *out)
{
    memset(out, 0, sizeof *out);
    json_t *md = json_object_get(pod, "metadata");
    if (!*str(md, "name")) return -1;
    vg_strlcpy(out->ns, *str(md, "namespace") ? str(md, "namespace") : "default", sizeof out->ns);
    vg_strlcpy(out->name, str(md, "name"), sizeof out->name);
    vg_strlcpy(out->node, str(json_object_get(pod, "spec"), "nodeName"), sizeof out->node);
    json_t *st = json_object_get(pod, "status");
    const char *phase = str(st, "phase");
    vg_strlcpy(out->phase, phase, sizeof out->phase);
    json_t *ready = condition(pod, "Ready");
    out->ready = ready && !strcmp(str(ready, "status"), "True");
    out->ready_ms = out->ready ? stamp(ready, "lastTransitionTime") : 0;
    json_t *term = at(json_array_get(json_object_get(st, "containerStatuses"), 0), "state", "terminated");
    out->exit_code = -1;
    if (json_is_integer(json_object_get(term, "exitCode"))) {
        out->exit_code = (int)json_integer_value(json_object_get(term, "exitCode"));
        vg_strlcpy(out->exit_reason, str(term, "reason"), sizeof out->exit_reason);
    }
    out->gone = json_object_get(md, "deletionTimestamp") || !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed");
    json_t *labels = json_object_get(md, "labels");
    out->daemon = *str(json_object_get(md, "annotations"), "kubernetes.io/config.mirror") != 0 ||
                  *str(labels, VG_K8S_EXEC_LABEL);   /* vigil's own one-shot pod (exec_on): not evicted */
    const char *job = NULL;
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(md, "ownerReferences"), i, r) {
        if (!json_is_true(json_object_get(r, "controller"))) continue;
        if (!strcmp(str(r, "kind"), "DaemonSet")) out->daemon = true;
        if (!strcmp(str(r, "kind"), "Job") && *str(r, "name")) job = str(r, "name");
    }
    const char *jobset = str(labels, VG_K8S_JOBSET_LABEL);
    out->attempt = atoi(str(labels, VG_K8S_JOBSET_ATTEMPT));
    if (!job && *str(labels, "batch.kubernetes.io/job-name")) job = str(labels, "batch.kubernetes.io/job-name");
    if (!job && *str(labels, "job-name")) job = str(labels, "job-name");
    if (*jobset) snprintf(out->workload, sizeof out->workload, "%s/JobSet/%.200s", out->ns, jobset);
    else if (job) snprintf(out->workload, sizeof out->workload, "%s/Job/%.200s", out->ns, job);
    return 0;
}

bool vg_k8s_workload_split(const char *id, char *ns, size_t nsn, char *kind, size_t kn, char *name, size_t nn)
{
    const char *a = strchr(id, '/'), *b = a ? strchr(a + 1, '/') : NULL;
    if (!a || !b || a == id || !b[1] || strchr(b + 1, '/')) return false;
    snprintf(ns, nsn, "%.*s", (int)(a - id), id);
    snprintf(kind, kn, "%.*s", (int)(b - a - 1), a + 1);
    snprintf(name, nn, "%s", b + 1);
    return !strcmp(kind, "Job") || !strcmp(kind, "JobSet");
}

void vg_k8s_taint_value(const char *reason, char *out, size_t n)
{
    if (vg_startswith(reason, VG_REASON_PREFIX)) reason += strlen(VG_REASON_PREFIX);
    size_t o = 0;
    size_t max = n - 1 < 63 ? n - 1 : 63;   /* a label value: 63 characters at most */
    for (const char *p = reason; *p && o < max; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_';
        if (ok) out[o++] = c;
        else if (o && out[o - 1] != '-') out[o++] = '-';
    }
    /* begins and ends with a letter or digit */
    while (o && (out[o - 1] == '-' || out[o - 1] == '.' || out[o - 1] == '_')) o--;
    out[o] = 0;
    size_t s = 0;
    while (out[s] == '.' || out[s] == '_') s++;
    memmove(out, out + s, o - s + 1);
    if (!out[0]) vg_strlcpy(out, "fault", n);
}
