/* kapi_jobset.c — the harness's JobSet controller (jobset.x-k8s.io/v1alpha2,
 * as kubernetes-sigs/jobset documents it), one step at a time under K.lock:
 * each replicated Job of a JobSet is created `replicas` times, named
 * JOBSET-REPLICATEDJOB-INDEX, owned by the JobSet, its labels and its pods'
 * saying which JobSet, replicated Job, index and restart attempt they are
 * (jobset.sigs.k8s.io/jobset-name, replicatedjob-name, job-index,
 * restart-attempt).  The failure policy: when one of its Jobs fails, every
 * Job of the JobSet is deleted (their pods with them) and the set is made
 * again with restart-attempt one higher, status.restarts counting, until
 * failurePolicy.maxRestarts; then the JobSet fails (condition Failed).
 * When every Job completed, it is Completed.  Jobs whose JobSet is gone are
 * deleted (garbage collection by owner reference). */
#include "kapi.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LABEL "jobset.sigs.k8s.io/"

static const char *meta(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(json_object_get(o, "metadata"), k)) ?: "";
}

static bool cond(const json_t *o, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(o, "status"), "conditions"), i, c)
        if (!strcmp(json_string_value(json_object_get(c, "type")) ?: "", type) &&
            !strcmp(json_string_value(json_object_get(c, "status")) ?: "", "True"))
            return true;
    return false;
}

static void set_cond(json_t *o, const char *type, const char *reason, const char *message)
{
    json_t *st = json_object_get(o, "status");
    if (!json_is_array(json_object_get(st, "conditions"))) json_object_set_new(st, "conditions", json_array());
    json_array_append_new(json_object_get(st, "conditions"),
                          json_pack("{s:s,s:s,s:s,s:s,s:s}", "type", type, "status", "True", "reason", reason,
                                    "message", message, "lastTransitionTime", kapi_now()));
    kapi_bump(o);
}

/* The JobSet's uid owning job, or NULL. */
static const char *owner_jobset(const json_t *job)
{
    json_t *r = json_array_get(json_object_get(json_object_get(job, "metadata"), "ownerReferences"), 0);
    return !strcmp(json_string_value(json_object_get(r, "kind")) ?: "", "JobSet") ? json_string_value(json_object_get(r, "uid"))
                                                                                  : NULL;
}

static void add_labels(json_t *md, const char *js, const char *rj, long index, long attempt)
{
    char ix[24], at[24];
    snprintf(ix, sizeof ix, "%ld", index);
    snprintf(at, sizeof at, "%ld", attempt);
    for (int k = 0; k < 2; k++) {
        const char *field = k ? "annotations" : "labels";
        if (!json_is_object(json_object_get(md, field))) json_object_set_new(md, field, json_object());
        json_t *m = json_object_get(md, field);
        json_object_set_new(m, LABEL "jobset-name", json_string(js));
        json_object_set_new(m, LABEL "replicatedjob-name", json_string(rj));
        json_object_set_new(m, LABEL "job-index", json_string(ix));
        json_object_set_new(m, LABEL "restart-attempt", json_string(at));
    }
}

static void create_job(const json_t *js, const json_t *rj, long index, long attempt)
{
    const char *ns = meta(js, "namespace"), *jsname = meta(js, "name");
    const char *rjname = json_string_value(json_object_get(rj, "name")) ?: "job";
    char name[300], key[400], uid[64];
    snprintf(name, sizeof name, "%s-%s-%ld", jsname, rjname, index);
    snprintf(key, sizeof key, "%s/%s", ns, name);
    json_t *tmpl = json_object_get(rj, "template");
    json_t *tmd = json_object_get(tmpl, "metadata"), *tspec = json_object_get(tmpl, "spec");
    json_t *job = json_pack("{s:s,s:s,s:o,s:o,s:{}}", "apiVersion", "batch/v1", "kind", "Job", "metadata",
                            json_is_object(tmd) ? json_deep_copy(tmd) : json_object(), "spec",
                            json_is_object(tspec) ? json_deep_copy(tspec) : json_object(), "status");
    json_t *md = json_object_get(job, "metadata");
    json_object_set_new(md, "name", json_string(name));
    json_object_set_new(md, "namespace", json_string(ns));
    snprintf(uid, sizeof uid, "jobs-%lu", ++K.seq);
    json_object_set_new(md, "uid", json_string(uid));
    json_object_set_new(md, "creationTimestamp", json_string(kapi_now()));
    json_object_set_new(md, "ownerReferences",
                        json_pack("[{s:s,s:s,s:s,s:s,s:b,s:b}]", "apiVersion", "jobset.x-k8s.io/v1alpha2", "kind",
                                  "JobSet", "name", jsname, "uid", meta(js, "uid"), "controller", 1,
                                  "blockOwnerDeletion", 1));
    add_labels(md, jsname, rjname, index, attempt);
    json_t *pt = json_object_get(json_object_get(job, "spec"), "template");
    if (json_is_object(pt)) {
        json_t *pmd = json_object_get(pt, "metadata");
        if (!json_is_object(pmd)) json_object_set_new(pt, "metadata", pmd = json_object());
        add_labels(pmd, jsname, rjname, index, attempt);
    }
    kapi_bump(job);
    json_object_set_new(K.jobs, key, job);
}

static void step(json_t *js)
{
    if (cond(js, "Completed") || cond(js, "Failed")) return;
    json_t *st = json_object_get(js, "status");
    if (!json_is_object(st)) json_object_set_new(js, "status", st = json_object());
    long restarts = (long)json_integer_value(json_object_get(st, "restarts"));
    const char *uid = meta(js, "uid");
    long expected = 0, failed = 0, done = 0;
    size_t i;
    json_t *rj;
    json_array_foreach(json_object_get(json_object_get(js, "spec"), "replicatedJobs"), i, rj)
        expected += json_is_integer(json_object_get(rj, "replicas")) ? (long)json_integer_value(json_object_get(rj, "replicas")) : 1;
    const char *key;
    json_t *job;
    json_object_foreach(K.jobs, key, job) {
        const char *o = owner_jobset(job);
        if (!o || strcmp(o, uid)) continue;
        failed += cond(job, "Failed");
        done += cond(job, "Complete");
    }
    if (failed) {
        long max = (long)json_integer_value(json_object_get(json_object_get(json_object_get(js, "spec"), "failurePolicy"), "maxRestarts"));
        if (restarts >= max) {
            set_cond(js, "Failed", "ReachedMaxRestarts", "jobset failed due to reaching max number of restarts");
            json_object_set_new(st, "terminalState", json_string("Failed"));
            return;
        }
        void *tmp;
        json_object_foreach_safe(K.jobs, tmp, key, job) {   /* the whole gang goes; its pods follow their Jobs */
            const char *o = owner_jobset(job);
            if (o && !strcmp(o, uid)) json_object_del(K.jobs, key);
        }
        json_object_set_new(st, "restarts", json_integer(restarts + 1));
        kapi_bump(js);
        return;   /* made again on the next step, one attempt higher */
    }
    if (expected && done == expected) {
        set_cond(js, "Completed", "AllJobsCompleted", "jobset completed successfully");
        json_object_set_new(st, "terminalState", json_string("Completed"));
        return;
    }
    json_array_foreach(json_object_get(json_object_get(js, "spec"), "replicatedJobs"), i, rj) {
        long reps = json_is_integer(json_object_get(rj, "replicas")) ? (long)json_integer_value(json_object_get(rj, "replicas")) : 1;
        for (long x = 0; x < reps; x++) {
            char name[400];
            snprintf(name, sizeof name, "%s/%s-%s-%ld", meta(js, "namespace"), meta(js, "name"),
                     json_string_value(json_object_get(rj, "name")) ?: "job", x);
            if (!json_object_get(K.jobs, name)) create_job(js, rj, x, restarts);
        }
    }
}

void kapi_jobsets(void)
{
    const char *key;
    json_t *js, *job;
    void *tmp;
    json_object_foreach_safe(K.jobs, tmp, key, job) {   /* garbage collection: a Job whose JobSet is gone */
        const char *o = owner_jobset(job);
        if (!o) continue;
        bool alive = false;
        const char *k2;
        json_object_foreach(K.jobsets, k2, js) alive = alive || !strcmp(meta(js, "uid"), o);
        if (!alive) json_object_del(K.jobs, key);
    }
    json_object_foreach(K.jobsets, key, js) step(js);
}
