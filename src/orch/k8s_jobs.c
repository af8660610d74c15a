/* k8s_jobs.c — the drill's workloads on Kubernetes and commands on a node:
 * the trainer as a batch/v1 Indexed Job (one pod per node, JOB_COMPLETION_INDEX
 * its rank) or a JobSet (jobset.x-k8s.io/v1alpha2) of that Job replicated
 * once, its failure policy restarting the gang; the checkpoints on a
 * PersistentVolumeClaim or a host path; read back by the workload's pods
 * (running when every pod of the current gang is Ready, started when the
 * last of them became Ready), deleted with its pods; and a command run on a
 * node as a one-shot privileged pod bound to it, whose log is its output. */
#include "orch/k8s_int.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    if (vg_k8s_call(o, "GET", "/api/v1/nodes", NULL, NULL, &nl, NULL) == 0) {
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

#define JOBSET_API "jobset.x-k8s.io/v1alpha2"
#define JOBSET_REPLICATED "workers"
#define JOBSET_MAX_RESTARTS 100

/* The claim must exist, and a gang on several nodes needs ReadWriteMany
 * (a ReadWriteOnce volume attaches to one node). */
static int claim_check(struct vg_orch *o, const char *ns, const char *claim, int nodes)
{
    char path[512];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/persistentvolumeclaims/%s", ns, claim);
    json_t *pvc;
    long st;
    if (vg_k8s_call(o, "GET", path, NULL, NULL, &pvc, &st))
        return st == 404 ? vg_orch_fail(o, "submit: checkpoint PersistentVolumeClaim %s not found in namespace %s",
                                        claim, ns)
                         : -1;
    bool rwx = false;
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(json_object_get(pvc, "spec"), "accessModes"), i, m)
        rwx = rwx || !strcmp(json_string_value(m) ?: "", "ReadWriteMany");
    json_decref(pvc);
    if (nodes > 1 && !rwx)
        return vg_orch_fail(o, "submit: checkpoint PersistentVolumeClaim %s is not ReadWriteMany: the %d pods on %d "
                               "nodes could not all mount it", claim, nodes, nodes);
    return 0;
}

/* The pods' template: the task (the program, VIGIL_NTASKS, GPUs), the host
 * paths and the checkpoint claim. */
static json_t *pod_template(struct vg_orch *o, const struct vg_orch_jobspec *j, const char *image, int nodes,
                            const json_t *labels)
{
    json_t *args = image_command(j->argv), *mounts, *vols;
    host_volumes(j->host_paths, &mounts, &vols);
    if (j->claim) {
        json_array_append_new(mounts, json_pack("{s:s,s:s}", "name", "checkpoints", "mountPath", VG_ORCH_CLAIM_PATH));
        json_array_append_new(vols, json_pack("{s:s,s:{s:s}}", "name", "checkpoints", "persistentVolumeClaim",
                                              "claimName", j->claim));
    }
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
    return json_pack("{s:{s:O},s:{s:s,s:[o],s:o}}", "metadata", "labels", labels, "spec", "restartPolicy", "Never",
                     "containers", container, "volumes", vols);
}

/* An Indexed Job: pod i gets JOB_COMPLETION_INDEX=i (its rank; a replacement
 * keeps the index of the pod it replaces), VIGIL_NTASKS the pod count.  Or
 * the same Job as the one replicated Job of a JobSet, backoffLimit 0: a pod
 * that fails fails its Job, and the JobSet's failure policy restarts the
 * whole gang (every Job recreated, status.restarts counting), as training
 * on Kubernetes runs. */
int vg_k8s_job_submit(struct vg_orch *o, const struct vg_orch_jobspec *j, char *id, size_t idlen)
{
    const char *image = getenv("VIGIL_K8S_IMAGE");
    if (!image || !*image)
        return vg_orch_fail(o, "submit: set VIGIL_K8S_IMAGE to the container image that holds the program");
    if (j->script || !j->argv) return vg_orch_fail(o, "submit: a Job runs a program (argv), not a job script");
    if (j->nodelist && j->exclusive && !strchr(j->nodelist, ','))   /* a burn-in pass: one pod (k8s_burnin.c) */
        return vg_k8s_burnin_submit(o, &vg_k8s_of(o)->h, vg_k8s_of(o)->ns, image, j, image_command(j->argv), id, idlen);
    if (j->nodelist || j->exclusive)
        return vg_orch_fail(o, "submit: a Job on given nodes or alone on them is not supported by the kubernetes "
                               "orchestrator (one node alone: a burn-in pass's pod)");
    bool jobset = j->workload && !strcmp(j->workload, "jobset");
    if (j->workload && !jobset && strcmp(j->workload, "job"))
        return vg_orch_fail(o, "submit: workload '%s' is not job or jobset", j->workload);
    const char *ns = vg_k8s_of(o)->ns;
    int nodes = j->nodes > 0 ? j->nodes : 1;
    if (j->claim && claim_check(o, ns, j->claim, nodes)) return -1;
    char name[64];
    snprintf(name, sizeof name, "%.40s-%lld", j->name ? j->name : "vigil-job", (long long)(vg_now_ms() % 100000000));
    for (char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-')) *p = '-';
    json_t *labels = json_object();
    if (j->tag) json_object_set_new(labels, VG_K8S_DRILL_LABEL, json_string(j->tag));
    json_t *spec = json_pack("{s:i,s:i,s:s,s:i,s:o}", "parallelism", nodes, "completions", nodes, "completionMode",
                             "Indexed", "backoffLimit", jobset ? 0 : j->requeue ? 1000 : 0, "template",
                             pod_template(o, j, image, nodes, labels));
    json_t *obj;
    char path[256];
    if (jobset) {
        obj = json_pack("{s:s,s:s,s:{s:s,s:s,s:O},s:{s:{s:i},s:[{s:s,s:i,s:{s:{s:O},s:o}}]}}", "apiVersion", JOBSET_API,
                        "kind", "JobSet", "metadata", "name", name, "namespace", ns, "labels", labels, "spec",
                        "failurePolicy", "maxRestarts", j->requeue ? JOBSET_MAX_RESTARTS : 0, "replicatedJobs", "name",
                        JOBSET_REPLICATED, "replicas", 1, "template", "metadata", "labels", labels, "spec", spec);
        snprintf(path, sizeof path, "/apis/" JOBSET_API "/namespaces/%s/jobsets", ns);
    } else {
        obj = json_pack("{s:s,s:s,s:{s:s,s:s,s:O},s:o}", "apiVersion", "batch/v1", "kind", "Job", "metadata", "name",
                        name, "namespace", ns, "labels", labels, "spec", spec);
        snprintf(path, sizeof path, "/apis/batch/v1/namespaces/%s/jobs", ns);
    }
    json_decref(labels);
    char *body = json_dumps(obj, JSON_COMPACT);
    json_decref(obj);
    int rc = vg_k8s_call(o, "POST", path, NULL, body, NULL, NULL);
    free(body);
    if (rc) return rc;
    /* the workload's id as jobs_on names it, so the controller's requeue and the drill mean the same job */
    int l = snprintf(id, idlen, "%s/%s/%s", ns, jobset ? "JobSet" : "Job", name);
    if (l < 0 || (size_t)l >= idlen) return vg_orch_fail(o, "submit: the id of %s does not fit in %zu bytes", name, idlen);
    return 0;
}

static const char *str(const json_t *o, const char *k) { return json_string_value(json_object_get(o, k)) ?: ""; }

/* Whether a condition of `type` is True in status.conditions. */
static bool condition_true(const json_t *st, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(st, "conditions"), i, c)
        if (!strcmp(str(c, "type"), type) && !strcmp(str(c, "status"), "True")) return true;
    return false;
}

/* A Job: ended when Complete or Failed; restarts counted from its failed
 * pods, a gang's worth each. */
static int job_state(struct vg_orch *o, const char *ns, const char *name, long *par, struct vg_orch_job *out)
{
    char path[512];
    snprintf(path, sizeof path, "/apis/batch/v1/namespaces/%s/jobs/%s", ns, name);
    json_t *job;
    if (vg_k8s_call(o, "GET", path, NULL, NULL, &job, NULL)) return -1;
    json_t *st = json_object_get(job, "status"), *spec = json_object_get(job, "spec");
    *par = json_is_integer(json_object_get(spec, "parallelism")) ? (long)json_integer_value(json_object_get(spec, "parallelism")) : 1;
    long failed = (long)json_integer_value(json_object_get(st, "failed"));
    bool ended = json_object_get(st, "completionTime") || condition_true(st, "Complete") || condition_true(st, "Failed");
    out->phase = ended ? VG_JOB_ENDED : VG_JOB_PENDING;
    vg_strlcpy(out->state, condition_true(st, "Failed") ? "FAILED" : ended ? "ENDED" : "PENDING", sizeof out->state);
    out->restarts = failed > 0 ? (int)((failed + *par - 1) / *par) : 0;
    json_decref(job);
    return 0;
}

/* A JobSet: ended when Completed or Failed (its failure policy spent);
 * restarts are its own count (status.restarts); its size the sum of its
 * replicated Jobs' pods. */
static int jobset_state(struct vg_orch *o, const char *ns, const char *name, long *par, struct vg_orch_job *out)
{
    char path[512];
    snprintf(path, sizeof path, "/apis/" JOBSET_API "/namespaces/%s/jobsets/%s", ns, name);
    json_t *js;
    if (vg_k8s_call(o, "GET", path, NULL, NULL, &js, NULL)) return -1;
    json_t *st = json_object_get(js, "status");
    *par = 0;
    size_t i;
    json_t *rj;
    json_array_foreach(json_object_get(json_object_get(js, "spec"), "replicatedJobs"), i, rj) {
        json_t *js_spec = json_object_get(json_object_get(rj, "template"), "spec");
        json_int_t reps = json_is_integer(json_object_get(rj, "replicas")) ? json_integer_value(json_object_get(rj, "replicas")) : 1;
        json_int_t p = json_is_integer(json_object_get(js_spec, "parallelism")) ? json_integer_value(json_object_get(js_spec, "parallelism")) : 1;
        *par += (long)(reps * p);
    }
    bool failed = condition_true(st, "Failed"), ended = failed || condition_true(st, "Completed");
    out->phase = ended ? VG_JOB_ENDED : VG_JOB_PENDING;
    vg_strlcpy(out->state, failed ? "FAILED" : ended ? "ENDED" : "PENDING", sizeof out->state);
    out->restarts = (int)json_integer_value(json_object_get(st, "restarts"));
    json_decref(js);
    return 0;
}

int vg_k8s_job_get(struct vg_orch *o, const char *id, struct vg_orch_job *out)
{
    if (vg_k8s_burnin_id(id)) return vg_k8s_burnin_get(o, &vg_k8s_of(o)->h, id, out);
    memset(out, 0, sizeof *out);
    char ns[64], kind[16] = "Job", name[256], sel[320];
    if (!vg_k8s_workload_split(id, ns, sizeof ns, kind, sizeof kind, name, sizeof name))
        vg_strlcpy(ns, vg_k8s_of(o)->ns, sizeof ns), vg_strlcpy(kind, "Job", sizeof kind), vg_strlcpy(name, id, sizeof name);
    long par;
    bool jobset = !strcmp(kind, "JobSet");
    if ((jobset ? jobset_state : job_state)(o, ns, name, &par, out)) return -1;
    vg_strlcpy(out->id, id, sizeof out->id);
    vg_strlcpy(out->name, name, sizeof out->name);
    /* the current gang: the pods not ended (a JobSet's, of its current restart attempt) */
    vg_k8s_gang_selector(kind, name, sel, sizeof sel);
    struct vg_k8s_pod *ps;
    size_t np;
    if (vg_k8s_pods(o, ns, "labelSelector", sel, &ps, &np)) return -1;
    size_t l = 0;
    long live = 0, ready_n = 0;
    int64_t gang_ready = 0;   /* when the last pod of the current gang became Ready */
    for (size_t j = 0; j < np; j++) {
        if (ps[j].gone || !ps[j].node[0] || (jobset && ps[j].attempt != out->restarts)) continue;
        live++;
        if (ps[j].ready) ready_n++;
        if (ps[j].ready_ms > gang_ready) gang_ready = ps[j].ready_ms;
        if (!out->leader[0]) vg_strlcpy(out->leader, ps[j].node, sizeof out->leader);
        if (l < sizeof out->nodes)
            l += (size_t)snprintf(out->nodes + l, sizeof out->nodes - l, "%s%s", l ? "," : "", ps[j].node);
    }
    free(ps);
    if (out->phase != VG_JOB_ENDED && live >= par && ready_n >= par) {
        out->phase = VG_JOB_RUNNING;
        vg_strlcpy(out->state, "RUNNING", sizeof out->state);
        out->started_ms = gang_ready;
    }
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct vg_k8s_pod *)a)->name, ((const struct vg_k8s_pod *)b)->name);
}

/* What a workload's pods printed (their logs, in the order of their names:
 * a gang's pods by index, a JobSet's by restart attempt).  A pod whose log is
 * not there (never started) adds nothing; no pod at all: -1. */
int vg_k8s_job_output(struct vg_orch *o, const char *id, char **text)
{
    *text = NULL;
    char ns[64], kind[16] = "Job", name[256], sel[320];
    if (!vg_k8s_workload_split(id, ns, sizeof ns, kind, sizeof kind, name, sizeof name))
        return vg_orch_fail(o, "output: '%s' is not a workload (NAMESPACE/Job/NAME or NAMESPACE/JobSet/NAME)", id);
    vg_k8s_gang_selector(kind, name, sel, sizeof sel);
    struct vg_k8s_pod *ps;
    size_t np;
    if (vg_k8s_pods(o, ns, "labelSelector", sel, &ps, &np)) return -1;
    if (!np) {
        free(ps);
        return vg_orch_fail(o, "output: %s has no pod", id);
    }
    qsort(ps, np, sizeof *ps, by_name);
    struct sbuf b = SBUF_INIT;
    for (size_t i = 0; i < np; i++) {
        char path[640], *log = NULL;
        snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s/log", ps[i].ns, ps[i].name);
        if (vg_k8s_request_raw(o, &vg_k8s_of(o)->h, "GET", path, NULL, NULL, &log) == 200 && log) sbuf_puts(&b, log);
        free(log);
    }
    free(ps);
    *text = b.s ? sbuf_take(&b) : vg_xstrdup("");
    return 0;
}

int vg_k8s_job_cancel(struct vg_orch *o, const char *id)
{
    if (vg_k8s_burnin_id(id)) return vg_k8s_burnin_cancel(o, &vg_k8s_of(o)->h, id);
    char ns[64], kind[16] = "Job", name[256], path[512];
    if (!vg_k8s_workload_split(id, ns, sizeof ns, kind, sizeof kind, name, sizeof name))
        vg_strlcpy(ns, vg_k8s_of(o)->ns, sizeof ns), vg_strlcpy(kind, "Job", sizeof kind), vg_strlcpy(name, id, sizeof name);
    if (!strcmp(kind, "JobSet"))   /* its Jobs and their pods go with it (owner references) */
        snprintf(path, sizeof path, "/apis/" JOBSET_API "/namespaces/%s/jobsets/%s?propagationPolicy=Background", ns, name);
    else snprintf(path, sizeof path, "/apis/batch/v1/namespaces/%s/jobs/%s?propagationPolicy=Background", ns, name);
    return vg_k8s_call(o, "DELETE", path, NULL, NULL, NULL, NULL);
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
                     "Pod", "metadata", "name", name, "namespace", vg_k8s_of(o)->ns, "labels", VG_K8S_EXEC_LABEL, node,
                     "spec", "nodeName", node, "restartPolicy", "Never", "hostPID", 1, "tolerations", "operator",
                     "Exists", "containers", c, "volumes", vols);
}

int vg_k8s_exec_on(struct vg_orch *o, const char *node, const char *const *cmd, const char *const *host_paths,
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
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods", vg_k8s_of(o)->ns);
    int rc = vg_k8s_call(o, "POST", path, NULL, body, NULL, NULL);
    free(body);
    if (rc) return -1;
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s", vg_k8s_of(o)->ns, name);
    struct vg_k8s_pod kp = { .exit_code = -1 };
    int64_t end = vg_mono_ms() + timeout_ms;
    while (!rc) {
        json_t *ans;
        if ((rc = vg_k8s_call(o, "GET", path, NULL, NULL, &ans, NULL))) break;
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
        if (vg_k8s_request_raw(o, &vg_k8s_of(o)->h, "GET", lp, NULL, NULL, &text) == 200 && text) {
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
    vg_k8s_call(o, "DELETE", path, NULL, NULL, NULL, NULL);   /* one-shot: gone either way */
    vg_strlcpy(o->err, saved, sizeof o->err);
    return rc;
}

