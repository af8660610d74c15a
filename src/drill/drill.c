/* drill.c — running a drill (see drill.h): per run, submit the job through
 * the orchestrator (requeueable, its log appended across restarts), wait for
 * steady progress, inject the fault on one of its nodes, then poll the
 * orchestrator (one `nodes` call for all nodes and one `job_get` per poll),
 * the controller's incidents and the job's log until the job resumes or the
 * deadline passes; then cancel, clear the injection, and wait for the nodes
 * to be idle. */
#include "drill/drill.h"
#include "lab/lab.h"
#include "wire/client.h"
#include "orch/orch.h"
#include "util/hostlist.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/rootfs.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SETTLE_MS 60000     /* for nodes to be idle again after a run */
#define START_MS 60000      /* for the job to start and reach steady progress (plus its steps) */
#define LOST_MS 5000        /* the orchestrator failing every call this long ends the run */
#define DELETE_MS 30000     /* for the orchestrator to take the job's deletion */
#define ENDED_GRACE_MS 10000 /* a job seen FAILED or NODE_FAIL after the fault may still be requeued */
#define CRASH_LEAD_MS 200   /* controller-crash: from the leader's SIGKILL to the node's fault */

static volatile sig_atomic_t interrupted;
static void on_signal(int sig) { (void)sig; interrupted = 1; }

struct run {
    const struct vg_drill_opts *o;
    struct vg_orch *orch;
    char dir[1024], log[1100], ckpt[1100];
    char job[128];            /* the orchestrator's id (Kubernetes: NAMESPACE/JobSet/NAME) */
    int gpu;                  /* the GPU faulted in this run */
    int restarts0;
    char victim[64], batch_host[64], nodes_before[256];
    char also[VG_DRILL_VICTIMS_MAX - 1][64];   /* --victims: the other nodes hit at once */
    int nalso;
    json_t *also_inj;         /* their injections' records */
    json_t *view;             /* the controller's view after the run: the victim's domain and incident */
    int64_t submitted, steady, t0;
    int64_t at[VG_ST_COUNT];
    char by[16], detail[256], restart_nodes[256];
    bool restart_spare, restart_victim, job_over;
    int64_t ended_at;         /* vg_mono_ms() the job was first seen ended (0: it is not) */
    bool in_allocation;   /* restarted by vigil launch on a spare of its own, not requeued */
    char job_end[32];
    json_t *injection;
    struct vg_joblog log_state;
    char tag[64];             /* marks the job as this run's (Kubernetes: label vigil.dev/drill) */
    int64_t api_at[VG_ST_COUNT];  /* the scheduler's own stamp a stage was taken from (to the second) */
    bool resume_unknown;      /* the job's output stays in the cluster: resume cannot be seen */
    int64_t failing_since;    /* monotonic ms since the orchestrator failed every call; 0 when it answers */
    char lost[300];           /* why the run stopped: the orchestrator stopped answering */
    bool job_deleted;
    char left[400];           /* what the run left behind (stamped_times: the node vigil isolated) */
    char ctl[512];            /* the controller asked: o->controller, then the one that took over */
    struct vg_ctl_crash crash;   /* controller-crash: the leader killed, the takeover */
};

static bool node_unavailable(const struct vg_orch_node *n) { return n->down || n->drain || !n->responding; }

static bool node_isolated(const struct vg_orch_node *n) { return n->down || n->drain; }

/* ---- the job ------------------------------------------------------------- */

/* The trainer, one rank per node (its own binary: this one unless --self). */
static int submit(struct run *r, char *err, size_t errlen)
{
    const struct vg_drill_opts *o = r->o;
    char self[1024] = "vigil", steps[32], step_ms[32], every[32];
    if (o->self) vg_strlcpy(self, o->self, sizeof self);
    else if (vg_read_link(NULL, "/proc/self/exe", self, sizeof self)) vg_strlcpy(self, "vigil", sizeof self);
    /* enough steps to outlast the drill */
    snprintf(steps, sizeof steps, "%ld", (long)o->deadline_s * 1000 / (o->step_ms > 0 ? o->step_ms : 1) * 2 + 1000);
    snprintf(step_ms, sizeof step_ms, "%d", o->step_ms);
    snprintf(every, sizeof every, "%d", o->ckpt_every);
    if (mkdir(r->ckpt, 0755) && errno != EEXIST) return snprintf(err, errlen, "%.300s: %s", r->ckpt, strerror(errno)), -1;
    char spares[16], tasks[16];
    snprintf(spares, sizeof spares, "%d", o->spares_in_job);
    snprintf(tasks, sizeof tasks, "%d", o->gpus_per_node > 0 ? o->gpus_per_node : 1);
    /* with spares of its own: the trainer under vigil launch, K nodes kept warm */
    /* without a shared filesystem (Kubernetes) the checkpoints stay in the pod's own working directory,
     * unless a claim holds them (a directory of the run's own on it) */
    char claimed[256];
    snprintf(claimed, sizeof claimed, "%s/%s", VG_ORCH_CLAIM_PATH, r->tag);
    const char *ckpt = o->checkpoint_pvc ? claimed : vg_orch_can(r->orch->ops, VG_CAP_HOST_FILES) || o->shared_workdir ? r->ckpt : "vigil-drill-ckpt";
    const char *launched[] = { self, "launch", "--spares", spares, "--tasks-per-node", tasks, "--",
                               self, "trainer", "--ckpt-dir", ckpt, "--steps", steps, "--step-ms", step_ms,
                               "--ckpt-every", every, NULL, NULL, NULL };
    const char *shared[] = { r->dir, NULL };
    if (!vg_orch_can(r->orch->ops, VG_CAP_HOST_FILES) && o->shared_workdir) {   /* the trainer writes the log the scheduler keeps to itself */
        launched[17] = "--log";
        launched[18] = r->log;
    }
    const char *const *argv = o->spares_in_job ? launched : launched + 7;
    struct vg_orch_jobspec spec = { .name = "vigil-drill", .nodes = o->nodes + o->spares_in_job,
                                    .tasks_per_node = o->gpus_per_node > 0 ? o->gpus_per_node : 1,
                                    .gpus_per_node = o->gpus_per_node,
                                    .partition = o->partition, .argv = o->job_script ? NULL : argv,
                                    .script = o->job_script, .output = r->log, .workdir = r->dir, .requeue = true,
                                    .self_launched = o->spares_in_job > 0,
                                    .keep_on_node_failure = o->spares_in_job > 0, .tag = r->tag,
                                    .host_paths = o->shared_workdir ? shared : NULL, .workload = o->workload,
                                    .claim = o->checkpoint_pvc };
    if (r->orch->ops->job_submit(r->orch, &spec, r->job, sizeof r->job))
        return snprintf(err, errlen, "%s", r->orch->err), -1;
    r->submitted = vg_now_ms();
    return 0;
}

/* Waits for the job to run and its log to show steady progress. */
static int wait_steady(struct run *r, char *err, size_t errlen)
{
    const struct vg_drill_opts *o = r->o;
    int64_t end = vg_mono_ms() + START_MS + (int64_t)o->steady_steps * o->step_ms;
    struct vg_orch_job js;
    while (vg_mono_ms() < end && !interrupted) {
        if (r->orch->ops->job_get(r->orch, r->job, &js) == 0) {
            if (js.phase == VG_JOB_ENDED)
                return snprintf(err, errlen, "job %s ended (%s) before the fault; see %.300s", r->job, js.state,
                                r->log), -1;
            vg_joblog_poll(&r->log_state);
            /* with no log to read, running (every pod Ready) is as steady as can be seen */
            bool steady = r->resume_unknown || r->log_state.max_step >= o->steady_steps;
            if (js.phase == VG_JOB_RUNNING && steady) {
                r->restarts0 = js.restarts;
                vg_strlcpy(r->batch_host, js.leader, sizeof r->batch_host);
                vg_strlcpy(r->nodes_before, js.nodes, sizeof r->nodes_before);
                r->steady = vg_now_ms();
                return 0;
            }
        }
        vg_sleep_ms(o->poll_ms);
    }
    return snprintf(err, errlen, "job %s did not reach step %d within %lld s; see %.300s", r->job, o->steady_steps,
                    (long long)(START_MS / 1000 + (int64_t)o->steady_steps * o->step_ms / 1000), r->log), -1;
}

static bool is_victim(const struct run *r, const char *name)
{
    if (!strcmp(r->victim, name)) return true;
    for (int i = 0; i < r->nalso; i++)
        if (!strcmp(r->also[i], name)) return true;
    return false;
}

/* --victims K: K - 1 more of the job's busy nodes (in a lab, of the fault's
 * GPU vendor), the batch host last. */
static int pick_others(struct run *r, char **names, int busy, char *err, size_t errlen)
{
    int want = r->o->victims - 1;
    const char *vendor = vg_inj_ops(r->o->kind)->gpu;
    for (int pass = 0; pass < 2 && r->nalso < want; pass++)
        for (int i = 0; i < busy && r->nalso < want; i++)
            if ((pass == 1) == !strcmp(names[i], r->batch_host) && !is_victim(r, names[i]) &&
                !(r->o->lab && vendor && strcmp(vg_lab_node_gpu(r->o->lab, names[i]), vendor)))
                vg_strlcpy(r->also[r->nalso++], names[i], sizeof r->also[0]);
    if (r->nalso < want)
        return snprintf(err, errlen, "--victims %d: job %s runs on %d node(s) besides %s", r->o->victims, r->job, busy,
                        r->victim), -1;
    return 0;
}

static int pick_victim(struct run *r, char *err, size_t errlen)
{
    char **names;
    int n = vg_hostlist_expand(r->nodes_before, &names, 4096);
    if (n <= 0 && !r->o->victim)
        return snprintf(err, errlen, "job %s: node list '%s' unreadable", r->job, r->nodes_before), -1;
    int pick = -1, busy = n, rc = 0;
    if (r->o->spares_in_job && busy > r->o->nodes) busy = r->o->nodes;   /* not a warm spare: vigil launch uses the first N */
    /* in a lab of NVIDIA and AMD nodes, a GPU fault hits a node of its vendor */
    const char *vendor = vg_inj_ops(r->o->kind)->gpu;
    for (int pass = 0; pass < 2 && pick < 0; pass++)   /* not the batch host, then (or --hit-batch-host) any */
        for (int i = 0; i < busy && pick < 0; i++) {
            if (pass == 0 && (r->o->hit_batch_host || !strcmp(names[i], r->batch_host))) continue;
            if (r->o->lab && vendor && strcmp(vg_lab_node_gpu(r->o->lab, names[i]), vendor)) continue;
            pick = i;
        }
    if (pick < 0) pick = 0;   /* none of the fault's vendor: the injection says why */
    vg_strlcpy(r->victim, r->o->victim ? r->o->victim : names[pick], sizeof r->victim);
    if (r->o->victims > 1) rc = pick_others(r, names, busy > 0 ? busy : 0, err, errlen);
    for (int i = 0; i < n; i++) free(names[i]);
    if (n > 0) free(names);
    return rc;
}

/* ---- measuring ----------------------------------------------------------- */

static void mark(struct run *r, enum vg_stage s, int64_t at, const char *by, const char *detail)
{
    if (r->at[s]) return;
    r->at[s] = at < r->t0 ? r->t0 : at;
    if (s == VG_ST_DETECT) {
        vg_strlcpy(r->by, by, sizeof r->by);
        vg_strlcpy(r->detail, detail, sizeof r->detail);
    }
}

/* The vigil incident of the victim opened since t0: its `detected` time. */
static int64_t vigil_detected(struct run *r)
{
    char url[1200], err[256];
    snprintf(url, sizeof url, "%s/v1/incidents?node=%s&limit=10", r->ctl, r->victim);
    long status;
    char *body = NULL;
    int64_t best = 0;
    if (vg_client_get(url, getenv("VIGIL_READ_TOKEN"), 2000, &status, &body, err, sizeof err) || status != 200 ||
        !body) {
        free(body);
        return 0;
    }
    json_t *list = json_loads(body, 0, NULL);
    free(body);
    size_t i;
    json_t *inc;
    json_array_foreach(list, i, inc) {
        if (strcmp(vg_json_str(inc, "node", ""), r->victim)) continue;
        int64_t at = vg_json_get_time(json_object_get(json_object_get(inc, "steps"), "detected"), "at");
        /* the agent's clock may be a little behind the injection's */
        if (at >= r->t0 - 500 && (!best || at < best)) best = at;
    }
    json_decref(list);
    return best;
}

/* A stage from a time the scheduler stamped to the second: counted to the
 * end of that second (never early, at most 1 s late); a stamp from before
 * t0's second is an older change, not this run's: when it was seen, then. */
static void mark_stamped(struct run *r, enum vg_stage s, int64_t stamp, int64_t seen)
{
    if (r->at[s]) return;
    if (stamp && stamp + 1000 > r->t0) {
        mark(r, s, stamp + 1000, "", "");
        r->api_at[s] = stamp;
    } else mark(r, s, seen, "", "");
}

static bool any_spare(const char *nodelist, const struct vg_orch_node *ns, size_t nn, const char *victim,
                      bool *on_victim)
{
    char **names;
    int n = vg_hostlist_expand(nodelist, &names, 4096);
    bool spare = false;
    *on_victim = false;
    for (int i = 0; i < n; i++) {
        for (size_t k = 0; k < nn; k++)
            if (!strcmp(ns[k].name, names[i]) && strstr(ns[k].features, "spare")) spare = true;
        if (!strcmp(names[i], victim)) *on_victim = true;
        free(names[i]);
    }
    if (n > 0) free(names);
    return spare;
}

static bool in_hostlist(const char *list, const char *name);

/* One poll: the job first, then all nodes (one call each).  Slurm requeues a
 * job because its node went down, so a node seen DOWN right after the job was
 * seen requeued was isolated by then: its time is taken as the requeue's. */
static void poll_once(struct run *r)
{
    const struct vg_drill_opts *o = r->o;
    struct vg_orch_job js;
    bool requeued_now = false;
    /* controller-crash: once another controller leads, it is the one asked */
    if (o->crash_leader && !r->crash.took_at && vg_drill_takeover(o->lab, &r->crash))
        vg_strlcpy(r->ctl, r->crash.leader, sizeof r->ctl);
    bool have_job = r->orch->ops->job_get(r->orch, r->job, &js) == 0;
    /* what this read shows was so when it returned: stamped then, never before
     * (a stamp taken before a slow read can precede the controller's own
     * stamp of the step that caused what the read shows) */
    int64_t tj = vg_now_ms();
    if (have_job) r->failing_since = 0;
    else if (!r->failing_since) r->failing_since = vg_mono_ms();
    else if (vg_mono_ms() - r->failing_since >= LOST_MS)
        snprintf(r->lost, sizeof r->lost, "the orchestrator stopped answering for %d s mid-drill: %.220s",
                 LOST_MS / 1000, r->orch->err);
    if (have_job) {
        bool requeued = js.restarts > r->restarts0 || js.phase == VG_JOB_PENDING;
        if (requeued && !r->at[VG_ST_REQUEUE]) requeued_now = true, mark(r, VG_ST_REQUEUE, tj, "", "");
        /* a job that failed with its node may still be requeued (the controller requeues one that
         * ended FAILED or NODE_FAIL moments before it listed the node's jobs): over only after a while */
        bool may_return = !strcmp(js.state, "FAILED") || !strcmp(js.state, "NODE_FAIL");
        if (js.phase != VG_JOB_ENDED) r->ended_at = 0;
        else if (!r->ended_at) r->ended_at = vg_mono_ms();
        if (js.phase == VG_JOB_ENDED && (!may_return || vg_mono_ms() - r->ended_at >= ENDED_GRACE_MS)) {
            r->job_over = true;
            vg_strlcpy(r->job_end, js.state, sizeof r->job_end);
        }
    }
    /* vigil's incident first: when vigil isolated the node between two polls,
     * the node seen down must not take the detection from it */
    if (o->controller && !r->at[VG_ST_DETECT]) {
        int64_t at = vigil_detected(r);
        if (at) mark(r, VG_ST_DETECT, at, "vigil", "vigil incident detected");
    }
    struct vg_orch_node *ns = NULL;
    size_t nn = 0;
    if (r->orch->ops->nodes(r->orch, NULL, 0, &ns, &nn) == 0) {
        int64_t now = requeued_now ? tj : vg_now_ms();
        for (size_t i = 0; i < nn; i++) {
            if (strcmp(ns[i].name, r->victim)) continue;
            char d[256];
            snprintf(d, sizeof d, "%.60s %.60s%s%.100s", r->victim, ns[i].state, ns[i].reason[0] ? ": " : "",
                     ns[i].reason);
            /* vigil's incident may have been opened since it was looked for
             * above; and a node out with a reason vigil wrote ("vigil:
             * node-silent") was found by vigil even when its incident cannot
             * be read */
            if (node_unavailable(&ns[i]) && !r->at[VG_ST_DETECT]) {
                int64_t at = o->controller ? vigil_detected(r) : 0;
                if (at) mark(r, VG_ST_DETECT, at, "vigil", "vigil incident detected");
                else mark(r, VG_ST_DETECT, now, vg_orch_ours(&ns[i]) ? "vigil" : r->orch->ops->name, d);
            }
            if (node_isolated(&ns[i]) && vg_orch_can(r->orch->ops, VG_CAP_STAMPED_TIMES))
                mark_stamped(r, VG_ST_ISOLATE, ns[i].isolated_ms, now);
            else if (node_isolated(&ns[i])) mark(r, VG_ST_ISOLATE, now, "", "");
        }
    }
    if (have_job && js.restarts > r->restarts0 && js.phase == VG_JOB_RUNNING && !r->at[VG_ST_RESTART]) {
        if (vg_orch_can(r->orch->ops, VG_CAP_STAMPED_TIMES)) mark_stamped(r, VG_ST_RESTART, js.started_ms, tj);
        else mark(r, VG_ST_RESTART, tj, "", "");
        vg_strlcpy(r->restart_nodes, js.nodes, sizeof r->restart_nodes);
        r->restart_spare = any_spare(js.nodes, ns, nn, r->victim, &r->restart_victim);
        for (int k = 0; k < r->nalso; k++) r->restart_victim |= in_hostlist(js.nodes, r->also[k]);
    }
    free(ns);
    vg_joblog_poll(&r->log_state);
    /* in the allocation (vigil launch): told, then the step started again on a spare of its own */
    if (r->log_state.told_at && !r->at[VG_ST_REQUEUE]) mark(r, VG_ST_REQUEUE, r->log_state.told_at, "", "");
    if (r->log_state.relaunched_at && !r->at[VG_ST_RESTART]) {
        mark(r, VG_ST_RESTART, r->log_state.relaunched_at, "", "");
        vg_strlcpy(r->restart_nodes, r->log_state.relaunch_nodes, sizeof r->restart_nodes);
        r->restart_spare = true;
        r->restart_victim = in_hostlist(r->restart_nodes, r->victim);
        r->in_allocation = true;
    }
    if (r->log_state.resume_step >= 0 && r->at[VG_ST_RESTART])
        mark(r, VG_ST_RESUME, r->log_state.resume_step_at, "", "");
}

static int inject(struct run *r, char *err, size_t errlen)
{
    const struct vg_drill_opts *o = r->o;
    struct vg_inject_opts io = { .kind = o->kind, .code = o->code, .node = r->victim, .gpu = r->gpu,
                                 .lab = o->lab, .via = o->via, .self = o->self, .orch = r->orch };
    char rec[1200], kmsg[1024];
    if (o->kmsg) {   /* "{node}" → the victim */
        const char *p = strstr(o->kmsg, "{node}");
        if (p) snprintf(kmsg, sizeof kmsg, "%.*s%s%s", (int)(p - o->kmsg), o->kmsg, r->victim, p + 6);
        else vg_strlcpy(kmsg, o->kmsg, sizeof kmsg);
        io.kmsg = kmsg;
    }
    if (!o->lab) {
        snprintf(rec, sizeof rec, "%.1100s/injections.jsonl", r->dir);
        io.record = rec;
    }
    if (o->crash_leader) {   /* the leader dies a moment before the node's fault */
        if (vg_drill_crash_leader(o->lab, &r->crash, err, errlen)) return -1;
        vg_info("drill: controller-crash: killed the leader %s (pid %d, term %lld)", r->crash.killed,
                (int)r->crash.pid, r->crash.killed_term);
        vg_sleep_ms(CRASH_LEAD_MS);
    }
    if (vg_inject(&io, &r->injection, err, errlen)) return -1;
    r->t0 = vg_json_get_time(r->injection, "time");
    r->log_state.mark = r->t0;
    /* --victims: the others at once (t0 stays the first's) */
    for (int k = 0; k < r->nalso; k++) {
        json_t *rec1 = NULL;
        io.node = r->also[k];
        if (o->kmsg) {
            const char *p = strstr(o->kmsg, "{node}");
            if (p) snprintf(kmsg, sizeof kmsg, "%.*s%s%s", (int)(p - o->kmsg), o->kmsg, r->also[k], p + 6);
        }
        if (vg_inject(&io, &rec1, err, errlen)) return -1;
        if (!r->also_inj) r->also_inj = json_array();
        json_array_append_new(r->also_inj, rec1);
    }
    return 0;
}

/* The controller's view once the run is over: the victim's NVLink domain
 * (its nodes, how many are out) and the state of the victim's incident (the
 * domain rule and the spare domain promoted say themselves there). */
static void controller_view(struct run *r)
{
    char url[1200], err[256];
    long status;
    char *body = NULL;
    const char *tok = getenv("VIGIL_READ_TOKEN");
    json_t *view = json_object(), *nodes = NULL, *incs = NULL;
    snprintf(url, sizeof url, "%s/v1/nodes", r->ctl);
    if (!vg_client_get(url, tok, 2000, &status, &body, err, sizeof err) && status == 200 && body)
        nodes = json_loads(body, 0, NULL);
    free(body);
    size_t i;
    json_t *x;
    const char *dom = NULL;
    json_array_foreach(nodes, i, x) if (!strcmp(vg_json_str(x, "node", ""), r->victim)) dom = vg_json_str(x, "domain", NULL);
    if (dom) {
        json_int_t total = 0, out = 0;
        json_t *names = json_array();
        json_array_foreach(nodes, i, x) {
            if (strcmp(vg_json_str(x, "domain", ""), dom)) continue;
            total++;
            const char *st = vg_json_str(x, "state", "");
            if (!strcmp(st, "isolated") || !strcmp(st, "unavailable") || !strcmp(st, "failed") ||
                !strcmp(st, "repairing") || !strcmp(st, "rma")) {
                out++;
                json_array_append_new(names, json_string(vg_json_str(x, "node", "")));
            }
        }
        json_object_set_new(view, "domain", json_pack("{s:s,s:I,s:I,s:o}", "name", dom, "nodes", total, "out", out,
                                                      "out_nodes", names));
    }
    json_t *states = json_array();
    for (int k = -1; k < r->nalso; k++) {
        const char *v = k < 0 ? r->victim : r->also[k];
        json_decref(incs), incs = NULL, body = NULL;
        snprintf(url, sizeof url, "%s/v1/incidents?node=%s&limit=10", r->ctl, v);
        if (!vg_client_get(url, tok, 2000, &status, &body, err, sizeof err) && status == 200 && body)
            incs = json_loads(body, 0, NULL);
        free(body);
        json_array_foreach(incs, i, x) {   /* newest first: the run's first incident on the node is the last one */
            int64_t at = vg_json_get_time(json_object_get(json_object_get(x, "steps"), "detected"), "at");
            if (!strcmp(vg_json_str(x, "node", ""), v) && at >= r->t0 - 500) {
                json_t *one = json_pack("{s:s,s:s,s:s}", "node", v, "state", vg_json_str(x, "state", ""), "detail",
                                        vg_json_str(x, "detail", ""));
                if (json_array_size(states) && !strcmp(vg_json_str(json_array_get(states, json_array_size(states) - 1), "node", ""), v))
                    json_array_set_new(states, json_array_size(states) - 1, one);
                else
                    json_array_append_new(states, one);
            }
        }
    }
    json_object_set_new(view, "incidents", states);
    json_decref(nodes);
    json_decref(incs);
    r->view = view;
}

/* ---- cleanup ------------------------------------------------------------- */

/* Whether name is in a Slurm host list such as "n[1,3-4]". */
static bool in_hostlist(const char *list, const char *name)
{
    char **v;
    int n = list && *list ? vg_hostlist_expand(list, &v, 4096) : -1;
    bool found = false;
    for (int k = 0; k < n; k++) {
        found |= !strcmp(v[k], name);
        free(v[k]);
    }
    if (n >= 0) free(v);
    return found;
}

/* What the run leaves on a cluster that keeps isolation to the controller:
 * the victim as the scheduler now has it. */
static void note_left(struct run *r)
{
    struct vg_orch_node n;
    if (vg_orch_node(r->orch, r->victim, &n)) {
        snprintf(r->left, sizeof r->left, "%.60s: unknown (%.200s)", r->victim, r->orch->err);
        return;
    }
    snprintf(r->left, sizeof r->left, "%.60s %.60s%s%.200s%s", n.name, n.state, n.reason[0] ? ": " : "", n.reason,
             vg_orch_ours(&n) ? " (vigil's: the controller repairs it and returns it to service)" : "");
}

static void cleanup(struct run *r)
{
    const struct vg_drill_opts *o = r->o;
    struct vg_orch_job js;
    char cerr[512];
    /* controller-crash: the killed controller comes back (a follower now), the lab whole for the next run */
    if (o->crash_leader && r->crash.pid && vg_drill_crash_restart(o->lab, &r->crash, cerr, sizeof cerr))
        vg_warn("drill: restarting the killed controller: %s", cerr);
    if (r->job[0]) {
        /* the orchestrator may be coming back from an outage: keep asking a while */
        int64_t until = vg_mono_ms() + DELETE_MS;
        while (!(r->job_deleted = r->orch->ops->job_cancel(r->orch, r->job) == 0) && vg_mono_ms() < until && !interrupted)
            vg_sleep_ms(500);
        if (!r->job_deleted) vg_warn("drill: job %s could not be deleted: %s", r->job, r->orch->err);
        for (int64_t end = vg_mono_ms() + 20000; r->job_deleted && vg_mono_ms() < end; vg_sleep_ms(200))
            if (r->orch->ops->job_get(r->orch, r->job, &js) || js.phase == VG_JOB_ENDED) break;
    }
    if (r->injection) {
        char rec[1200], err[256];
        struct vg_inject_opts io = { .node = r->victim, .lab = o->lab, .via = o->via, .self = o->self,
                                     .orch = r->orch };
        if (!o->lab) {
            snprintf(rec, sizeof rec, "%.1100s/injections.jsonl", r->dir);
            io.record = rec;
        }
        int n;
        if (vg_inject_clear(&io, &n, err, sizeof err)) vg_warn("drill: clearing the injection: %s", err);
        for (int k = 0; k < r->nalso; k++) {
            io.node = r->also[k];
            if (vg_inject_clear(&io, &n, err, sizeof err)) vg_warn("drill: clearing the injection: %s", err);
        }
        /* a probe that started on the hung NIC before the clear still reports it, up to a probe period
         * later, and the controller takes a repeat in the 3 s before a node's return as one that may
         * have come after it (a new incident): the node is returned once that has passed */
        if (o->lab && o->kind == VG_INJ_NIC_HUNG) vg_sleep_ms((VG_LAB_NIC_PROBE_S + 3) * 1000 + 500);
    }
    if (!r->victim[0]) return;
    if (vg_orch_can(r->orch->ops, VG_CAP_STAMPED_TIMES)) {   /* the node is the controller's to repair */
        note_left(r);
        return;
    }
    /* vigil's own drain/down (reason "vigil:…") is undone; Slurm returns a node
     * that was only "not responding" by itself once its node daemon is back */
    const char *v[VG_DRILL_VICTIMS_MAX] = { r->victim };
    for (int k = 0; k < r->nalso; k++) v[k + 1] = r->also[k];
    bool idle = false;
    for (int64_t end = vg_mono_ms() + SETTLE_MS; vg_mono_ms() < end && !idle && !interrupted; vg_sleep_ms(250)) {
        vg_orch_resume_ours(r->orch, v, (size_t)r->nalso + 1);
        struct vg_orch_node *ns;
        size_t nn;
        if (r->orch->ops->nodes(r->orch, NULL, 0, &ns, &nn)) continue;
        idle = true;
        for (size_t i = 0; i < nn; i++)
            if (!ns[i].idle) {
                /* only the victim and the drill job's nodes matter, not other jobs' */
                if (is_victim(r, ns[i].name) ||
                    (ns[i].busy && (in_hostlist(r->nodes_before, ns[i].name) || in_hostlist(r->restart_nodes, ns[i].name))))
                    idle = false;
            }
        free(ns);
    }
    if (!idle) vg_warn("drill: node %s is not idle %d s after the run", r->victim, SETTLE_MS / 1000);
}

/* ---- the run's record ---------------------------------------------------- */

static json_t *stage_json(const struct run *r, enum vg_stage s)
{
    json_t *j = json_object();
    json_object_set_new(j, "at", vg_json_time(r->at[s]));
    json_object_set_new(j, "after_s", r->at[s] ? json_real((double)(r->at[s] - r->t0) / 1000.0) : json_null());
    if (r->api_at[s]) {   /* counted to the end of the second the API stamped */
        json_object_set_new(j, "api_time", vg_json_time(r->api_at[s]));
        json_object_set_new(j, "resolution_s", json_integer(1));
    }
    if (s == VG_ST_RESUME && r->resume_unknown && !r->at[s]) {
        json_object_set_new(j, "unknown", json_true());
        json_object_set_new(j, "why", json_string("the job's output stays in the cluster (its pods' logs): "
                                                  "the drill cannot see it resume"));
    }
    return j;
}

/* controller-crash: the leader killed (its URL, pid, term, when), the one
 * that took over and after how long from the kill. */
static json_t *takeover_json(const struct vg_ctl_crash *c)
{
    json_t *j = json_object();
    vg_json_set_str(j, "killed", c->killed[0] ? c->killed : NULL);
    json_object_set_new(j, "killed_pid", c->pid ? json_integer(c->pid) : json_null());
    json_object_set_new(j, "killed_term", c->killed_term >= 0 && c->killed[0] ? json_integer(c->killed_term) : json_null());
    json_object_set_new(j, "killed_at", vg_json_time(c->killed_at));
    vg_json_set_str(j, "leader", c->leader[0] ? c->leader : NULL);
    json_object_set_new(j, "term", c->took_at && c->term >= 0 ? json_integer(c->term) : json_null());
    json_object_set_new(j, "at", vg_json_time(c->took_at));
    json_object_set_new(j, "after_s", c->took_at ? json_real((double)(c->took_at - c->killed_at) / 1000.0) : json_null());
    return j;
}

static const char *const never_words[VG_ST_COUNT] = {
    "never detected", "never isolated", "never requeued", "never restarted", "never resumed",
};

static json_t *run_json(struct run *r, int index, const char *error)
{
    json_t *j = json_object();
    json_object_set_new(j, "run", json_integer(index));
    long num;
    json_object_set_new(j, "job", !r->job[0]              ? json_null()
                                  : vg_parse_long(r->job, &num) ? json_integer(num) /* Slurm's ids are numbers */
                                                                : json_string(r->job));
    vg_json_set_str(j, "victim", r->victim);
    json_t *vs = json_array();
    json_array_append_new(vs, json_string(r->victim));
    for (int k = 0; k < r->nalso; k++) json_array_append_new(vs, json_string(r->also[k]));
    json_object_set_new(j, "victims", vs);
    vg_json_set_str(j, "batch_host", r->batch_host);
    vg_json_set_str(j, "nodes_before", r->nodes_before);
    json_object_set_new(j, "submitted", vg_json_time(r->submitted));
    json_object_set_new(j, "steady", vg_json_time(r->steady));
    json_object_set_new(j, "t0", vg_json_time(r->t0));
    json_object_set_new(j, "injection", r->injection ? json_incref(r->injection) : json_null());
    if (r->also_inj) json_object_set(j, "injections_also", r->also_inj);
    if (r->view) json_object_set(j, "controller_view", r->view);
    for (int s = 0; s < VG_ST_COUNT; s++) {
        json_t *st = stage_json(r, (enum vg_stage)s);
        if (s == VG_ST_DETECT) {
            vg_json_set_str(st, "by", r->at[s] ? r->by : NULL);
            vg_json_set_str(st, "detail", r->at[s] ? r->detail : NULL);
        }
        if (s == VG_ST_RESTART) {
            vg_json_set_str(st, "nodes", r->restart_nodes);
            json_object_set_new(st, "spare", r->at[s] ? json_boolean(r->restart_spare) : json_null());
            json_object_set_new(st, "same_node", r->at[s] ? json_boolean(r->restart_victim) : json_null());
            vg_json_set_str(st, "how", !r->at[s] ? NULL : r->in_allocation ? "in-allocation spare" : "requeue");
        }
        if (s == VG_ST_RESUME)
            json_object_set_new(st, "from_step", r->log_state.resumed_from >= 0
                                                     ? json_integer(r->log_state.resumed_from) : json_null());
        json_object_set_new(j, vg_stage_name((enum vg_stage)s), st);
    }
    long before = r->log_state.step_before, from = r->log_state.resumed_from;
    json_object_set_new(j, "last_step_before", before >= 0 ? json_integer(before) : json_null());
    json_object_set_new(j, "work_lost_steps",
                        before >= 0 && from >= 0 && r->at[VG_ST_RESUME] ? json_integer(before > from ? before - from : 0)
                                                                       : json_null());
    if (r->o->crash_leader) json_object_set_new(j, "takeover", takeover_json(&r->crash));
    const char *never = r->o->crash_leader && r->crash.killed_at && !r->crash.took_at ? "takeover" : NULL;
    for (int s = 0; s < VG_ST_COUNT && !never; s++)
        if (!r->at[s] && !(s == VG_ST_RESUME && r->resume_unknown)) never = vg_stage_name((enum vg_stage)s);
    vg_json_set_str(j, "never", error && !never ? "detect" : never);
    struct sbuf msg = SBUF_INIT;
    if (error) sbuf_puts(&msg, error);
    else if (never && !strcmp(never, "takeover"))
        sbuf_printf(&msg, "no other controller took over within the %d s deadline", r->o->deadline_s);
    else if (never) {
        for (int s = 0; s < VG_ST_COUNT; s++)
            if (!r->at[s] && !(s == VG_ST_RESUME && r->resume_unknown)) {
                sbuf_puts(&msg, never_words[s]);
                break;
            }
        if (r->job_over) sbuf_printf(&msg, " (the job ended %s)", r->job_end);
        else sbuf_printf(&msg, " within the %d s deadline", r->o->deadline_s);
    }
    vg_json_set_str(j, "message", msg.s);
    sbuf_free(&msg);
    vg_json_set_str(j, "log", r->log);
    return j;
}

/* ---- one run and the drill ----------------------------------------------- */

static json_t *one_run(const struct vg_drill_opts *o, struct vg_orch *orch, const char *base, int index,
                       char *err, size_t errlen, bool *fatal)
{
    struct run r;
    memset(&r, 0, sizeof r);
    r.o = o;
    r.orch = orch;
    snprintf(r.dir, sizeof r.dir, "%.900s/run-%d", base, index);
    /* a fresh fault each run: another GPU, unless --gpu fixes one */
    r.gpu = o->gpu >= 0 ? o->gpu : (index - 1) % (o->gpus_per_node > 0 ? o->gpus_per_node : 8);
    snprintf(r.log, sizeof r.log, "%.1000s/job.log", r.dir);
    snprintf(r.ckpt, sizeof r.ckpt, "%.1000s/ckpt", r.dir);
    snprintf(r.tag, sizeof r.tag, "%lld-%d", (long long)vg_now_ms(), index);
    r.resume_unknown = !vg_orch_can(orch->ops, VG_CAP_HOST_FILES) && !o->shared_workdir;
    if (o->controller) vg_strlcpy(r.ctl, o->controller, sizeof r.ctl);
    *fatal = false;
    if (mkdir(r.dir, 0755) && errno != EEXIST) {
        snprintf(err, errlen, "%.300s: %s", r.dir, strerror(errno));
        *fatal = true;
        return NULL;
    }
    char lerr[256];
    if (vg_joblog_init(&r.log_state, r.log, o->step_pattern, o->resume_pattern, lerr, sizeof lerr)) {
        snprintf(err, errlen, "%s", lerr);
        *fatal = true;
        return NULL;
    }
    char rerr[512] = "";
    int rc = submit(&r, rerr, sizeof rerr);
    if (rc) *fatal = true;   /* a job that cannot be submitted will not be the next time */
    if (!rc) rc = wait_steady(&r, rerr, sizeof rerr);
    if (!rc) rc = pick_victim(&r, rerr, sizeof rerr);
    if (!rc && !interrupted) {
        char names[VG_DRILL_VICTIMS_MAX * 66];
        int len = snprintf(names, sizeof names, "%s", r.victim);
        for (int k = 0; k < r.nalso; k++) len += snprintf(names + len, sizeof names - (size_t)len, ",%s", r.also[k]);
        vg_info("drill run %d: job %s on %s, injecting %s on %s", index, r.job, r.nodes_before, o->fault_name, names);
        rc = inject(&r, rerr, sizeof rerr);
    }
    if (!rc) {
        int64_t end = r.t0 + (int64_t)o->deadline_s * 1000;
        while (!interrupted && vg_now_ms() < end && !r.at[VG_ST_RESUME] && !r.job_over && !r.lost[0] &&
               !(r.resume_unknown && r.at[VG_ST_RESTART])) {
            poll_once(&r);
            vg_sleep_ms(o->poll_ms);
        }
        if (o->controller && !interrupted) controller_view(&r);
        if (interrupted) snprintf(rerr, sizeof rerr, "interrupted");
        else if (r.lost[0]) snprintf(rerr, sizeof rerr, "%s", r.lost);
    }
    json_t *j = *fatal ? NULL : run_json(&r, index, rerr[0] ? rerr : NULL);
    cleanup(&r);
    if (j && r.job[0]) json_object_set_new(j, "job_deleted", json_boolean(r.job_deleted));
    if (j) vg_json_set_str(j, "left", r.left[0] ? r.left : NULL);
    vg_joblog_free(&r.log_state);
    json_decref(r.injection);
    json_decref(r.also_inj);
    json_decref(r.view);
    if (*fatal) snprintf(err, errlen, "%s", rerr);
    return j;
}

json_t *vg_drill(const struct vg_drill_opts *o, char *err, size_t errlen)
{
    err[0] = 0;
    struct vg_orch_conf oc = { .config = o->orch_config, .timeout_ms = 10000, .insecure_http = o->insecure_http };
    struct vg_orch *orch = o->orch ? o->orch : vg_orch_open(o->orchestrator, &oc, err, errlen);
    if (!orch) return NULL;
    char base[1024];
    if (o->workdir) vg_strlcpy(base, o->workdir, sizeof base);
    else if (o->lab) snprintf(base, sizeof base, "%.1000s/drill", o->lab);
    else snprintf(base, sizeof base, "vigil-drill");
    if (mkdir(base, 0755) && errno != EEXIST) {
        snprintf(err, errlen, "%.300s: %s", base, strerror(errno));
        if (orch != o->orch) vg_orch_close(orch);
        return NULL;
    }
    /* a fresh directory per drill, so runs never resume another drill's checkpoints */
    char work[1100];
    snprintf(work, sizeof work, "%.1000s/%lld", base, (long long)vg_now_ms());
    if (mkdir(work, 0755)) {
        snprintf(err, errlen, "%.300s: %s", work, strerror(errno));
        if (orch != o->orch) vg_orch_close(orch);
        return NULL;
    }
    struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    interrupted = 0;
    json_t *rep = json_object();
    json_object_set_new(rep, "fault", json_string(o->fault_name));
    json_object_set_new(rep, "cluster", json_string(o->lab ? "lab" : orch->ops->name));
    json_object_set_new(rep, "orchestrator", json_string(orch->ops->name));
    vg_json_set_str(rep, "lab", o->lab);
    vg_json_set_str(rep, "partition", o->partition);
    json_object_set_new(rep, "nodes", json_integer(o->nodes));
    json_object_set_new(rep, "gpus_per_node", json_integer(o->gpus_per_node));
    json_object_set_new(rep, "gpus", json_integer((json_int_t)o->nodes * o->gpus_per_node));
    json_object_set_new(rep, "ranks", json_integer((json_int_t)o->nodes * (o->gpus_per_node > 0 ? o->gpus_per_node : 1)));
    json_object_set_new(rep, "spares_in_job", json_integer(o->spares_in_job));
    json_object_set_new(rep, "victims", json_integer(o->victims > 1 ? o->victims : 1));
    json_object_set_new(rep, "deadline_s", json_integer(o->deadline_s));
    vg_json_set_str(rep, "controller", o->controller);
    json_object_set_new(rep, "job", json_string(o->job_script ? o->job_script : "vigil trainer"));
    json_object_set_new(rep, "ckpt_every", o->job_script ? json_null() : json_integer(o->ckpt_every));
    json_object_set_new(rep, "started", vg_json_time(vg_now_ms()));
    vg_json_set_str(rep, "workdir", work);
    json_t *runs = json_array();
    json_object_set_new(rep, "runs", runs);
    for (int i = 1; i <= o->runs && !interrupted; i++) {
        bool fatal;
        json_t *run = one_run(o, orch, work, i, err, errlen, &fatal);
        if (fatal) {
            json_decref(rep);
            rep = NULL;
            break;
        }
        json_array_append_new(runs, run);
    }
    if (rep) {
        json_object_set_new(rep, "finished", vg_json_time(vg_now_ms()));
        json_object_set_new(rep, "orchestrator_calls", json_integer(orch->calls));
        json_t *t = json_object();
        json_object_set_new(t, "clustermax", json_pack("{s:f,s:f}", "detect", VG_TARGET_CMAX_DETECT, "restart",
                                                       VG_TARGET_CMAX_RESTART));
        json_object_set_new(t, "vigil", json_pack("{s:f,s:f,s:f}", "detect", VG_TARGET_VIGIL_DETECT, "isolate",
                                                  VG_TARGET_VIGIL_ISOLATE, "restart", VG_TARGET_VIGIL_RESTART));
        json_object_set_new(rep, "targets", t);
        vg_drill_summarize(rep);
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (orch != o->orch) vg_orch_close(orch);
    return rep;
}
