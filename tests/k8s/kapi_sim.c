/* kapi_sim.c — the harness's minimal cluster behind the Kubernetes API
 * double: a Job controller (keeps `parallelism` pods of each Job alive,
 * counting lost ones as failed, and collects pods whose Job is gone), a
 * scheduler (binds pending pods to nodes that are schedulable, Ready, have
 * the GPUs free, match the nodeSelector and whose NoSchedule/NoExecute
 * taints the pod tolerates, and its required node affinity admits), with
 * preemption as the scheduler documents it (a pending pod that fits nowhere,
 * whose preemptionPolicy is not Never, takes the first node where removing
 * pods of lower spec.priority, lowest first, makes it fit: each victim gets
 * the DisruptionTarget condition, reason PreemptionByScheduler, and a
 * Preempted event, then is deleted; the preemptor is nominated there and
 * bound on the next pass; a pod whose PersistentVolumeClaim does not exist
 * waits), a kubelet (bound pods run) and the taint manager (pods that do
 * not tolerate a NoExecute taint are deleted).  A Job fails once its failed
 * pods pass its backoffLimit, and completes with condition Complete; the
 * JobSet controller is kapi_jobset.c.  Pods go at once on deletion: there
 * is no graceful termination here. */
#include "kapi.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *meta(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(json_object_get(o, "metadata"), k));
}

static long quantity(json_t *v)
{
    if (json_is_integer(v)) return (long)json_integer_value(v);
    if (json_is_string(v)) return strtol(json_string_value(v), NULL, 10);
    return 0;
}

/* The extended resources the scheduler counts: each vendor's GPUs apart. */
static const char *const gpu_res[] = { "nvidia.com/gpu", "amd.com/gpu" };

static long gpus_of(const json_t *pod, const char *resource)
{
    long n = 0;
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(pod, "spec"), "containers"), i, c) {
        json_t *res = json_object_get(c, "resources");
        json_t *q = json_object_get(json_object_get(res, "requests"), resource);
        if (!q) q = json_object_get(json_object_get(res, "limits"), resource);
        n += quantity(q);
    }
    return n;
}

static bool phase_is(const json_t *pod, const char *p)
{
    const char *v = json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
    return v && !strcmp(v, p);
}

static bool active(const json_t *pod) { return phase_is(pod, "Pending") || phase_is(pod, "Running"); }

static bool node_ready(const json_t *node)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(node, "status"), "conditions"), i, c) {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t && !strcmp(t, "Ready")) return !strcmp(json_string_value(json_object_get(c, "status")) ?: "", "True");
    }
    return true;   /* a node without conditions counts as Ready here */
}

static long prio(const json_t *pod) { return (long)json_integer_value(json_object_get(json_object_get(pod, "spec"), "priority")); }

/* Whether pod fits on node, not counting active pods of priority below `below` (LONG_MIN: all count). */
static bool fits_below(const json_t *pod, const json_t *node, const char *name, long below)
{
    json_t *spec = json_object_get(node, "spec");
    if (json_is_true(json_object_get(spec, "unschedulable"))) return false;
    if (!node_ready(node)) return false;
    if (!kapi_tolerates(pod, node, "NoSchedule") || !kapi_tolerates(pod, node, "NoExecute")) return false;
    json_t *labels = json_object_get(json_object_get(node, "metadata"), "labels");
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(json_object_get(pod, "spec"), "nodeSelector"), k, v)
        if (!json_equal(json_object_get(labels, k), v)) return false;
    if (!kapi_affinity_ok(pod, node)) return false;
    json_t *alloc = json_object_get(json_object_get(node, "status"), "allocatable");
    long maxpods = quantity(json_object_get(alloc, "pods"));
    if (!maxpods) maxpods = 110;
    long used[2] = { 0, 0 }, npods = 0;
    const char *key;
    json_t *p;
    json_object_foreach(K.pods, key, p) {
        const char *on = json_string_value(json_object_get(json_object_get(p, "spec"), "nodeName"));
        if (on && !strcmp(on, name) && active(p) && prio(p) >= below) {
            for (int r = 0; r < 2; r++) used[r] += gpus_of(p, gpu_res[r]);
            npods++;
        }
    }
    for (int r = 0; r < 2; r++)
        if (used[r] + gpus_of(pod, gpu_res[r]) > quantity(json_object_get(alloc, gpu_res[r]))) return false;
    return npods < maxpods;
}

static bool fits(const json_t *pod, const json_t *node, const char *name) { return fits_below(pod, node, name, LONG_MIN); }

/* Removes lower-priority pods from the first node where that makes pod fit
 * (lowest priority first, only as many as needed); the node's name, or NULL. */
static const char *preempt(json_t *pod)
{
    if (!strcmp(json_string_value(json_object_get(json_object_get(pod, "spec"), "preemptionPolicy")) ?: "", "Never"))
        return NULL;
    long p = prio(pod);
    const char *name;
    json_t *node;
    json_object_foreach(K.nodes, name, node) {
        if (!fits_below(pod, node, name, p)) continue;
        while (!fits(pod, node, name)) {   /* the lowest-priority active pod on the node goes */
            const char *key, *vkey = NULL;
            json_t *v, *victim = NULL;
            json_object_foreach(K.pods, key, v) {
                const char *on = json_string_value(json_object_get(json_object_get(v, "spec"), "nodeName"));
                if (on && !strcmp(on, name) && active(v) && prio(v) < p && (!victim || prio(v) < prio(victim)))
                    victim = v, vkey = key;
            }
            if (!victim) break;
            json_t *st = json_object_get(victim, "status");
            if (!json_is_array(json_object_get(st, "conditions"))) json_object_set_new(st, "conditions", json_array());
            json_array_append_new(json_object_get(st, "conditions"),
                                  json_pack("{s:s,s:s,s:s,s:s,s:s}", "type", "DisruptionTarget", "status", "True",
                                            "reason", "PreemptionByScheduler", "message",
                                            "default-scheduler: preempting to accommodate a higher priority pod",
                                            "lastTransitionTime", kapi_now()));
            char msg[300];
            snprintf(msg, sizeof msg, "Preempted by pod %s on node %s", meta(pod, "uid") ?: "", name);
            kapi_event(victim, "Preempted", "Preempting", msg, "default-scheduler");
            kapi_pod_lost(victim);
            json_object_del(K.pods, vkey);
            K.rv++;
        }
        return name;
    }
    return NULL;
}

/* Whether every PersistentVolumeClaim the pod mounts exists (the scheduler
 * waits for a missing one). */
static bool claims_bound(const json_t *pod)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(json_object_get(pod, "spec"), "volumes"), i, v) {
        const char *c = json_string_value(json_object_get(json_object_get(v, "persistentVolumeClaim"), "claimName"));
        char key[400];
        snprintf(key, sizeof key, "%s/%s", meta(pod, "namespace") ?: "default", c ? c : "");
        if (c && !json_object_get(kapi_store("", "persistentvolumeclaims"), key)) return false;
    }
    return true;
}

/* Pending pods without a node go to the first node that fits. */
static void schedule(void)
{
    const char *key;
    json_t *pod;
    json_object_foreach(K.pods, key, pod) {
        json_t *spec = json_object_get(pod, "spec");
        if (json_object_get(spec, "nodeName") || !phase_is(pod, "Pending") || !claims_bound(pod)) continue;
        const char *name;
        json_t *node;
        bool bound = false;
        json_object_foreach(K.nodes, name, node)
            if (fits(pod, node, name)) {
                json_object_set_new(spec, "nodeName", json_string(name));
                json_t *st = json_object_get(pod, "status");
                json_object_set_new(st, "conditions", json_pack("[{s:s,s:s,s:s}]", "type", "PodScheduled", "status",
                                                                "True", "lastTransitionTime", kapi_now()));
                json_object_del(st, "nominatedNodeName");
                char msg[400];
                snprintf(msg, sizeof msg, "Successfully assigned %s/%s to %s", meta(pod, "namespace") ?: "default",
                         meta(pod, "name") ?: "", name);
                kapi_event(pod, "Scheduled", "Binding", msg, "default-scheduler");
                kapi_bump(pod);
                bound = true;
                break;
            }
        const char *at = bound ? NULL : preempt(pod);
        if (at) {   /* nominated; bound on the next pass, its victims gone */
            json_object_set_new(json_object_get(pod, "status"), "nominatedNodeName", json_string(at));
            kapi_bump(pod);
        }
    }
}

/* Bound pending pods on Ready nodes start running. */
static void kubelet(void)
{
    const char *key;
    json_t *pod;
    json_object_foreach(K.pods, key, pod) {
        const char *on = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
        if (!on || !phase_is(pod, "Pending")) continue;
        json_t *node = json_object_get(K.nodes, on);
        if (!node || !node_ready(node)) continue;
        if (kapi_exec_on()) {   /* the container really runs (kapi_exec.c) */
            kapi_exec_run(pod, key);
            if (phase_is(pod, "Failed")) kapi_pod_lost(pod);
            else kapi_event(pod, "Started", "", "Started container", "kubelet");
            continue;
        }
        kapi_event(pod, "Started", "", "Started container", "kubelet");
        json_t *st = json_object_get(pod, "status");
        json_object_set_new(st, "phase", json_string("Running"));
        json_object_set_new(st, "startTime", json_string(kapi_now()));
        json_object_set_new(st, "conditions",
                            json_pack("[{s:s,s:s,s:s},{s:s,s:s,s:s}]", "type", "PodScheduled", "status", "True",
                                      "lastTransitionTime", kapi_now(), "type", "Ready", "status", "True",
                                      "lastTransitionTime", kapi_now()));
        kapi_bump(pod);
    }
}

void kapi_pod_lost(const json_t *pod)
{
    json_t *owner = json_array_get(json_object_get(json_object_get(pod, "metadata"), "ownerReferences"), 0);
    const char *kind = json_string_value(json_object_get(owner, "kind"));
    if (!kind || strcmp(kind, "Job") || phase_is(pod, "Succeeded")) return;
    if (!active(pod) && !phase_is(pod, "Failed")) return;
    char jk[320];
    snprintf(jk, sizeof jk, "%s/%s", meta(pod, "namespace") ?: "default",
             json_string_value(json_object_get(owner, "name")) ?: "");
    json_t *job = json_object_get(K.jobs, jk);
    if (!job) return;
    /* counted once: a pod that failed is not counted again when it is deleted */
    static json_t *counted;
    if (!counted) counted = json_object();
    const char *uid = meta(pod, "uid");
    if (!uid || json_object_get(counted, uid)) return;
    json_object_set_new(counted, uid, json_true());
    json_t *st = json_object_get(job, "status");
    json_object_set_new(st, "failed", json_integer(json_integer_value(json_object_get(st, "failed")) + 1));
    kapi_bump(job);
}

/* Taint manager and pod garbage collection: pods on a node whose NoExecute
 * taint they do not tolerate, on a node that is gone, or owned by a Job that
 * is gone, are deleted.  Lost active pods of a Job count as failed. */
static void collect(void)
{
    const char *key;
    json_t *pod;
    void *tmp;
    json_object_foreach_safe(K.pods, tmp, key, pod) {
        const char *on = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
        json_t *node = on ? json_object_get(K.nodes, on) : NULL;
        json_t *owner = json_array_get(json_object_get(json_object_get(pod, "metadata"), "ownerReferences"), 0);
        const char *kind = json_string_value(json_object_get(owner, "kind"));
        char jk[320];
        snprintf(jk, sizeof jk, "%s/%s", meta(pod, "namespace") ?: "default",
                 json_string_value(json_object_get(owner, "name")) ?: "");
        bool orphan = kind && !strcmp(kind, "Job") && !json_object_get(K.jobs, jk);
        if ((on && !node) || (node && !kapi_tolerates(pod, node, "NoExecute")) || orphan) {
            if (!orphan) kapi_pod_lost(pod);
            json_object_del(K.pods, key);
            K.rv++;
        }
    }
}

#define INDEX_KEY "batch.kubernetes.io/job-completion-index"

/* An Indexed Job's pod index (its annotation), -1 when it has none. */
static long pod_index(const json_t *pod)
{
    const char *v = json_string_value(json_object_get(json_object_get(json_object_get(pod, "metadata"), "annotations"), INDEX_KEY));
    char *end;
    long i = v ? strtol(v, &end, 10) : -1;
    return v && *v && !*end ? i : -1;
}

/* What the Job controller adds to a pod of an Indexed Job: the index as
 * annotation and label, and JOB_COMPLETION_INDEX in every container's env
 * through the downward API (fieldRef on the annotation). */
static void set_index(json_t *pod, long index)
{
    char v[24];
    snprintf(v, sizeof v, "%ld", index);
    json_t *md = json_object_get(pod, "metadata");
    json_object_set_new(md, "annotations", json_pack("{s:s}", INDEX_KEY, v));
    json_object_set_new(json_object_get(md, "labels"), INDEX_KEY, json_string(v));
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(pod, "spec"), "containers"), i, c) {
        if (!json_is_array(json_object_get(c, "env"))) json_object_set_new(c, "env", json_array());
        json_array_append_new(json_object_get(c, "env"),
                              json_pack("{s:s,s:{s:{s:s}}}", "name", "JOB_COMPLETION_INDEX", "valueFrom", "fieldRef",
                                        "fieldPath", "metadata.annotations['" INDEX_KEY "']"));
    }
}

static json_t *pod_for(const char *ns, const char *jname, json_t *job)
{
    json_t *tmpl = json_object_get(json_object_get(job, "spec"), "template");
    json_t *pod = json_object();
    char name[300];
    snprintf(name, sizeof name, "%s-%05lu", jname, ++K.seq % 100000);
    json_t *md = json_object_get(tmpl, "metadata");
    json_t *labels = json_is_object(json_object_get(md, "labels")) ? json_deep_copy(json_object_get(md, "labels"))
                                                                   : json_object();
    const char *uid = meta(job, "uid");
    json_object_set_new(labels, "job-name", json_string(jname));
    json_object_set_new(labels, "batch.kubernetes.io/job-name", json_string(jname));
    json_object_set_new(labels, "controller-uid", json_string(uid));
    json_object_set_new(labels, "batch.kubernetes.io/controller-uid", json_string(uid));
    char puid[64];
    snprintf(puid, sizeof puid, "pod-%lu", K.seq);
    json_object_set_new(pod, "apiVersion", json_string("v1"));
    json_object_set_new(pod, "kind", json_string("Pod"));
    json_object_set_new(pod, "metadata",
                        json_pack("{s:s,s:s,s:s,s:s,s:o,s:[{s:s,s:s,s:s,s:s,s:b,s:b}]}", "name", name, "namespace",
                                  ns, "uid", puid, "creationTimestamp", kapi_now(), "labels", labels,
                                  "ownerReferences", "apiVersion", "batch/v1", "kind", "Job", "name", jname, "uid",
                                  uid, "controller", 1, "blockOwnerDeletion", 1));
    json_t *spec = json_object_get(tmpl, "spec");
    json_object_set_new(pod, "spec", json_is_object(spec) ? json_deep_copy(spec) : json_object());
    json_object_set_new(pod, "status", json_pack("{s:s}", "phase", "Pending"));
    char why[256];
    kapi_admit_pod(pod, why, sizeof why);   /* the controller's create passes admission too */
    kapi_bump(pod);
    return pod;
}

static bool job_cond(const json_t *job, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(job, "status"), "conditions"), i, c)
        if (!strcmp(json_string_value(json_object_get(c, "type")) ?: "", type)) return true;
    return false;
}

/* A Job whose failed pods passed its backoffLimit (default 6) fails: its
 * active pods are deleted, condition Failed (BackoffLimitExceeded). */
static bool job_failed(json_t *job)
{
    if (job_cond(job, "Failed")) return true;
    json_t *spec = json_object_get(job, "spec"), *st = json_object_get(job, "status");
    long limit = json_is_integer(json_object_get(spec, "backoffLimit")) ? (long)json_integer_value(json_object_get(spec, "backoffLimit")) : 6;
    if ((long)json_integer_value(json_object_get(st, "failed")) <= limit) return false;
    const char *uid = meta(job, "uid");
    const char *key;
    json_t *pod;
    void *tmp;
    json_object_foreach_safe(K.pods, tmp, key, pod) {
        json_t *owner = json_array_get(json_object_get(json_object_get(pod, "metadata"), "ownerReferences"), 0);
        if (!uid || strcmp(json_string_value(json_object_get(owner, "uid")) ?: "", uid) || !active(pod)) continue;
        json_object_del(K.pods, key);
        K.rv++;
    }
    if (!json_is_array(json_object_get(st, "conditions"))) json_object_set_new(st, "conditions", json_array());
    json_array_append_new(json_object_get(st, "conditions"),
                          json_pack("{s:s,s:s,s:s,s:s,s:s}", "type", "Failed", "status", "True", "reason",
                                    "BackoffLimitExceeded", "message", "Job has reached the specified backoff limit",
                                    "lastTransitionTime", kapi_now()));
    json_object_set_new(st, "active", json_integer(0));
    kapi_bump(job);
    return true;
}

/* Each Job keeps `parallelism` active pods until it is done or failed. */
static void jobs(void)
{
    const char *jkey;
    json_t *job;
    json_object_foreach(K.jobs, jkey, job) {
        if (job_failed(job)) continue;
        json_t *spec = json_object_get(job, "spec"), *st = json_object_get(job, "status");
        long par = json_is_integer(json_object_get(spec, "parallelism")) ? (long)json_integer_value(json_object_get(spec, "parallelism")) : 1;
        const char *uid = meta(job, "uid");
        long act = 0, ok = 0, ready = 0;
        /* Indexed: each index held by an active or succeeded pod; a lost one is recreated with its index */
        bool indexed = !strcmp(json_string_value(json_object_get(spec, "completionMode")) ?: "", "Indexed");
        json_t *held = json_object();
        const char *key;
        json_t *pod;
        json_object_foreach(K.pods, key, pod) {
            json_t *owner = json_array_get(json_object_get(json_object_get(pod, "metadata"), "ownerReferences"), 0);
            const char *ou = json_string_value(json_object_get(owner, "uid"));
            if (!ou || !uid || strcmp(ou, uid)) continue;
            if (active(pod)) act++;
            if (phase_is(pod, "Running")) ready++;
            if (phase_is(pod, "Succeeded")) ok++;
            if (indexed && (active(pod) || phase_is(pod, "Succeeded"))) {
                char ix[24];
                snprintf(ix, sizeof ix, "%ld", pod_index(pod));
                json_object_set_new(held, ix, json_true());
            }
        }
        long comp = json_is_integer(json_object_get(spec, "completions")) ? (long)json_integer_value(json_object_get(spec, "completions")) : par;
        bool done = ok >= comp;
        long next = 0;
        for (long i = act; !done && i < par; i++) {
            json_t *p = pod_for(meta(job, "namespace"), meta(job, "name"), job);
            if (indexed) {
                char ix[24];
                for (;; next++) {
                    snprintf(ix, sizeof ix, "%ld", next);
                    if (!json_object_get(held, ix)) break;
                }
                json_object_set_new(held, ix, json_true());
                set_index(p, next);
            }
            char pk[400];
            snprintf(pk, sizeof pk, "%s/%s", meta(p, "namespace"), meta(p, "name"));
            json_object_set_new(K.pods, pk, p);
            act++;
        }
        json_decref(held);
        json_int_t old_act = json_integer_value(json_object_get(st, "active")),
                   old_ready = json_integer_value(json_object_get(st, "ready"));
        if (old_act != act || old_ready != ready || json_integer_value(json_object_get(st, "succeeded")) != ok) {
            json_object_set_new(st, "active", json_integer(act));
            json_object_set_new(st, "ready", json_integer(ready));
            json_object_set_new(st, "succeeded", json_integer(ok));
            if (!json_object_get(st, "startTime")) json_object_set_new(st, "startTime", json_string(kapi_now()));
            if (done && !json_object_get(st, "completionTime")) {
                json_object_set_new(st, "completionTime", json_string(kapi_now()));
                json_object_set_new(st, "conditions", json_pack("[{s:s,s:s,s:s}]", "type", "Complete", "status", "True",
                                                                "lastTransitionTime", kapi_now()));
            }
            kapi_bump(job);
        }
    }
}

void kapi_sim_step(void)
{
    kapi_exec_reap();
    collect();
    kapi_jobsets();
    jobs();
    schedule();
    kubelet();
}
