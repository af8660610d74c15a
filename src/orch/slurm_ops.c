/* slurm_ops.c — Slurm as an orchestrator (orch.h), on the commands of
 * slurm.c: nodes from one `scontrol show node -o`, isolation as one
 * `scontrol update` for all nodes, jobs from `scontrol show job`, requeue, the hot-spare
 * pool as a reservation (Users=root, no end, IGNORE_JOBS: its nodes are up
 * and healthy but no job is scheduled on them; promoting a spare is one
 * update of its node list), drill jobs through sbatch with one srun step,
 * and commands on a node as an overlapping job step. */
#include "orch/orch.h"
#include "orch/slurm.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include "util/tcpprobe.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct slurm_priv {
    struct vg_slurm s;
    char conf[1024];
    struct vg_job_brief *seen;   /* the last jobs_on listing: tell reads it, not Slurm again */
    size_t nseen;
};

static struct vg_slurm *S(struct vg_orch *o) { return &((struct slurm_priv *)o->priv)->s; }

/* Carries the command's outcome (error text, count) over to o. */
static int done(struct vg_orch *o, int rc)
{
    struct vg_slurm *s = S(o);
    o->calls = s->calls;
    if (rc < 0) vg_strlcpy(o->err, s->err, sizeof o->err);
    return rc;
}

static int sl_open(struct vg_orch *o, const struct vg_orch_conf *c)
{
    struct slurm_priv *p = vg_xcalloc(1, sizeof *p);
    if (c->config && *c->config) {
        struct stat st;
        if (stat(c->config, &st)) {
            free(p);
            return vg_orch_fail(o, "%s: %s", c->config, strerror(errno));
        }
        vg_strlcpy(p->conf, c->config, sizeof p->conf);
        p->s.conf = p->conf;
    }
    p->s.timeout_ms = o->timeout_ms;
    o->priv = p;
    return 0;
}

static void sl_close(struct vg_orch *o)
{
    struct slurm_priv *p = o->priv;
    if (p) free(p->seen);
    free(p);
}

static void to_node(const struct vg_node_state *in, struct vg_orch_node *out)
{
    memset(out, 0, sizeof *out);
    vg_strlcpy(out->name, in->name, sizeof out->name);
    vg_strlcpy(out->state, in->state, sizeof out->state);
    vg_strlcpy(out->reason, in->reason, sizeof out->reason);
    vg_strlcpy(out->features, in->features, sizeof out->features);
    vg_strlcpy(out->partitions, in->partitions, sizeof out->partitions);
    vg_strlcpy(out->addr, in->addr, sizeof out->addr);
    out->drain = in->drain;
    out->down = in->down || strstr(in->state, "FAIL") != NULL;
    out->responding = in->responding;
    out->busy = strstr(in->state, "ALLOCATED") || strstr(in->state, "MIXED") || strstr(in->state, "COMPLETING");
    out->idle = vg_startswith(in->state, "IDLE") && !strchr(in->state, '+');
}

static int sl_nodes(struct vg_orch *o, const char *const *names, size_t n, struct vg_orch_node **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    char *list = NULL;
    if (names) {
        struct sbuf b = SBUF_INIT;
        for (size_t i = 0; i < n; i++) sbuf_printf(&b, "%s%s", i ? "," : "", names[i]);
        list = sbuf_take(&b);
    }
    struct vg_node_state *ns;
    size_t k;
    int rc = vg_slurm_nodes(S(o), list, &ns, &k);
    free(list);
    if (rc) return done(o, -1);
    *out = vg_xcalloc(k + 1, sizeof **out);
    for (size_t i = 0; i < k; i++) to_node(&ns[i], &(*out)[i]);
    *nout = k;
    free(ns);
    return done(o, 0);
}

static int sl_isolate(struct vg_orch *o, const char *const *nodes, size_t n, enum vg_isolate how, const char *reason)
{
    return done(o, vg_slurm_set_state(S(o), nodes, n, how == VG_ISOLATE_DOWN ? "down" : "drain", reason));
}

static int sl_resume(struct vg_orch *o, const char *const *nodes, size_t n)
{
    return done(o, vg_slurm_set_state(S(o), nodes, n, "resume", NULL));
}

static int sl_jobs_on(struct vg_orch *o, const char *const *nodes, size_t n, const char *known, int64_t out_ms,
                      char ***jobs, size_t *njobs, char ***moved, size_t *nmoved)
{
    struct slurm_priv *p = o->priv;
    struct vg_job_brief *js;
    size_t k;
    *jobs = *moved = NULL;
    *njobs = *nmoved = 0;
    if (vg_slurm_jobs_on(S(o), nodes, n, known, out_ms, &js, &k)) return done(o, -1);
    *jobs = vg_xcalloc(k + 1, sizeof **jobs);
    *moved = vg_xcalloc(k + 1, sizeof **moved);
    size_t keep = 0;
    for (size_t i = 0; i < k; i++) {
        char id[32];
        snprintf(id, sizeof id, "%ld", js[i].id);
        if (js[i].requeued) (*moved)[(*nmoved)++] = vg_xstrdup(id);
        else (*jobs)[(*njobs)++] = vg_xstrdup(id), js[keep++] = js[i];
    }
    free(p->seen);
    p->seen = js, p->nseen = keep;
    return done(o, 0);
}

static bool job_id(const char *s, long *id) { return vg_parse_long(s, id) && *id > 0; }

static int sl_requeue(struct vg_orch *o, const char *const *jobs, size_t n)
{
    long *ids = vg_xcalloc(n + 1, sizeof *ids);
    for (size_t i = 0; i < n; i++)
        if (!job_id(jobs[i], &ids[i])) {
            free(ids);
            return vg_orch_fail(o, "requeue: '%s' is not a Slurm job id", jobs[i]);
        }
    int rc = vg_slurm_requeue(S(o), ids, n);
    free(ids);
    return done(o, rc);
}

/* A job run by `vigil launch --spares K` says so in its comment
 * (VG_INALLOC_COMMENT); told through SIGUSR1 to its batch script, which runs
 * the launcher, unless the batch host itself failed. */
static int sl_tell(struct vg_orch *o, const char *job, const char *const *nodes, size_t n)
{
    struct slurm_priv *p = o->priv;
    long jid;
    if (!job_id(job, &jid)) return vg_orch_fail(o, "tell: '%s' is not a Slurm job id", job);
    struct vg_job_brief b = { .id = 0 };
    for (size_t i = 0; i < p->nseen && !b.id; i++)
        if (p->seen[i].id == jid) b = p->seen[i];   /* listed by jobs_on a moment ago */
    if (!b.id) {
        struct vg_job_state js;
        if (vg_slurm_job(S(o), jid, &js)) return done(o, -1);
        b.id = jid;
        vg_strlcpy(b.batch_host, js.batch_host, sizeof b.batch_host);
        vg_strlcpy(b.comment, js.comment, sizeof b.comment);
    }
    long k;
    if (!vg_startswith(b.comment, VG_INALLOC_COMMENT) || !vg_parse_long(b.comment + strlen(VG_INALLOC_COMMENT), &k) ||
        k < 1)
        return done(o, 0);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(nodes[i], b.batch_host)) return done(o, 0);   /* the launcher went with it */
    return done(o, vg_slurm_signal_batch(S(o), jid, "USR1") ? -1 : 1);
}

static int sl_pool_get(struct vg_orch *o, const char *pool, char ***nodes, size_t *n)
{
    return done(o, vg_slurm_reservation_nodes(S(o), pool, nodes, n));
}

static int sl_pool_set(struct vg_orch *o, const char *pool, const char *const *nodes, size_t n, bool exists)
{
    return done(o, vg_slurm_reservation_set(S(o), pool, nodes, n, exists));
}

/* ---- jobs ------------------------------------------------------------------ */

/* A word for a single-quoted sh string: refuses a quote. */
static bool quotable(const char *s) { return !strchr(s, '\''); }

/* DIR/NAME.sbatch: `exec srun … ARGV`, one srun step over the allocation. */
static int write_script(struct vg_orch *o, const struct vg_orch_jobspec *j, char *path, size_t n)
{
    snprintf(path, n, "%s/%s.sbatch", j->workdir ? j->workdir : ".", j->name ? j->name : "vigil-job");
    struct sbuf b = SBUF_INIT;
    if (j->self_launched)   /* it starts its own steps */
        sbuf_puts(&b, "#!/bin/sh\n# written by vigil: the program starts its own steps\nexec");
    else
        sbuf_printf(&b, "#!/bin/sh\n# written by vigil: one task per %s, restarted as a whole on requeue\n"
                        "exec srun --ntasks-per-node=%d --kill-on-bad-exit=1",
                    j->gpus_per_node > 0 ? "GPU" : "node", j->tasks_per_node > 0 ? j->tasks_per_node : 1);
    for (size_t i = 0; j->argv[i]; i++) {
        if (!quotable(j->argv[i])) {
            sbuf_free(&b);
            return vg_orch_fail(o, "a word with a quote cannot go in a job script: %.100s", j->argv[i]);
        }
        sbuf_printf(&b, " '%s'", j->argv[i]);
    }
    sbuf_puts(&b, "\n");
    FILE *f = fopen(path, "we");
    int rc = f && fputs(b.s, f) >= 0 ? 0 : -1;
    if (f && fclose(f)) rc = -1;
    if (!rc && chmod(path, 0755)) rc = -1;
    sbuf_free(&b);
    return rc ? vg_orch_fail(o, "%.200s: %s", path, strerror(errno)) : 0;
}

static int sl_job_submit(struct vg_orch *o, const struct vg_orch_jobspec *j, char *id, size_t idlen)
{
    char script[1200], nodes[32], tasks[48], gres[48], out[1200], errf[1200], part[160], name[160], list[300],
        limit[48];
    if (!j->script && !j->argv) return vg_orch_fail(o, "submit: no program and no script");
    if (j->workload || j->claim)   /* VG_CAP_WORKLOADS is not Slurm's: a batch job on the hosts' own files */
        return vg_orch_fail(o, "submit: Slurm runs a batch job: no workload kind and no volume claim");
    if (!j->script && write_script(o, j, script, sizeof script)) return -1;
    const char *opts[16];
    size_t k = 0;
    if (j->requeue) opts[k++] = "--requeue";
    if (j->keep_on_node_failure) opts[k++] = "--no-kill";
    opts[k++] = "--open-mode=append";
    snprintf(name, sizeof name, "--job-name=%s", j->name ? j->name : "vigil-job");
    opts[k++] = name;
    snprintf(nodes, sizeof nodes, "--nodes=%d", j->nodes > 0 ? j->nodes : 1);
    opts[k++] = nodes;
    snprintf(tasks, sizeof tasks, "--ntasks-per-node=%d", j->tasks_per_node > 0 ? j->tasks_per_node : 1);
    opts[k++] = tasks;
    if (j->gpus_per_node > 0) {
        snprintf(gres, sizeof gres, "--gres=gpu:%d", j->gpus_per_node);
        opts[k++] = gres;
    }
    if (j->output) {
        snprintf(out, sizeof out, "--output=%s", j->output);
        opts[k++] = out;
    }
    if (j->error) {
        snprintf(errf, sizeof errf, "--error=%s", j->error);
        opts[k++] = errf;
    }
    if (j->partition) {
        snprintf(part, sizeof part, "--partition=%s", j->partition);
        opts[k++] = part;
    }
    if (j->nodelist) {
        snprintf(list, sizeof list, "--nodelist=%s", j->nodelist);
        opts[k++] = list;
    }
    if (j->exclusive) opts[k++] = "--exclusive";
    if (j->time_limit_s > 0) {   /* minutes:seconds; Slurm rounds up to whole minutes */
        snprintf(limit, sizeof limit, "--time=%d:%02d", j->time_limit_s / 60, j->time_limit_s % 60);
        opts[k++] = limit;
    }
    long jid;
    if (vg_slurm_submit(S(o), opts, k, j->script ? j->script : script, &jid)) return done(o, -1);
    snprintf(id, idlen, "%ld", jid);
    return done(o, 0);
}

static bool terminal(const char *state)
{
    static const char *const end[] = { "COMPLETED", "FAILED", "CANCELLED", "NODE_FAIL", "TIMEOUT",
                                       "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "PREEMPTED" };
    for (size_t i = 0; i < sizeof end / sizeof end[0]; i++)
        if (vg_startswith(state, end[i])) return true;
    return false;
}

static int sl_job_get(struct vg_orch *o, const char *id, struct vg_orch_job *out)
{
    long jid;
    memset(out, 0, sizeof *out);
    if (!job_id(id, &jid)) return vg_orch_fail(o, "'%s' is not a Slurm job id", id);
    struct vg_job_state js;
    if (vg_slurm_job(S(o), jid, &js)) return done(o, -1);
    snprintf(out->id, sizeof out->id, "%ld", js.id);
    vg_strlcpy(out->name, js.name, sizeof out->name);
    vg_strlcpy(out->state, js.state, sizeof out->state);
    vg_strlcpy(out->reason, js.reason, sizeof out->reason);
    vg_strlcpy(out->nodes, js.nodelist, sizeof out->nodes);
    vg_strlcpy(out->leader, js.batch_host, sizeof out->leader);
    out->restarts = js.restarts;
    out->phase = terminal(js.state) ? VG_JOB_ENDED : !strcmp(js.state, "RUNNING") ? VG_JOB_RUNNING : VG_JOB_PENDING;
    /* a pending job's StartTime is an estimate, a running one's EndTime its limit */
    if (out->phase != VG_JOB_PENDING) out->started_ms = js.start_ms;
    if (out->phase == VG_JOB_ENDED) out->ended_ms = js.end_ms;
    return done(o, 0);
}

static int sl_job_cancel(struct vg_orch *o, const char *id)
{
    long jid;
    if (!job_id(id, &jid)) return vg_orch_fail(o, "'%s' is not a Slurm job id", id);
    return done(o, vg_slurm_cancel(S(o), jid));
}

static int sl_exec_on(struct vg_orch *o, const char *node, const char *const *cmd, const char *const *host_paths,
                      int timeout_ms, struct vg_spawn_result *r)
{
    (void)host_paths;   /* the step runs on the host: it sees them */
    const char *argv[48];
    size_t a = 0;
    argv[a++] = "srun", argv[a++] = "-w", argv[a++] = node, argv[a++] = "--overlap";
    argv[a++] = "-N1", argv[a++] = "-n1", argv[a++] = "--quiet";
    for (size_t i = 0; cmd[i] && a < 47; i++) argv[a++] = cmd[i];
    argv[a] = NULL;
    char confenv[1100];
    const char *env[2] = { NULL, NULL };
    if (S(o)->conf) snprintf(confenv, sizeof confenv, "SLURM_CONF=%s", S(o)->conf), env[0] = confenv;
    o->calls++;
    vg_spawn(argv, env, NULL, timeout_ms, r);
    if (r->status == 0 && !r->timed_out) return 0;
    char *line = vg_argv_str(argv);
    vg_orch_fail(o, "%s: %s", line, r->timed_out ? "timed out" : *vg_trim(r->err) ? vg_trim(r->err) : "failed");
    free(line);
    return -1;
}

/* slurmd's port: connect and see it read (tcpprobe.h). */
static int sl_node_alive(struct vg_orch *o, const char *node, int timeout_ms)
{
    struct vg_node_state *ns;
    size_t n;
    if (vg_slurm_nodes(S(o), node, &ns, &n)) return done(o, -1);
    char addr[64] = "";
    int port = 0;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(ns[i].name, node)) vg_strlcpy(addr, ns[i].addr, sizeof addr), port = ns[i].port;
    free(ns);
    done(o, 0);
    if (!addr[0]) return vg_orch_fail(o, "node %s is not known to Slurm", node);
    enum vg_tcp_alive a = vg_tcp_probe(addr, port > 0 ? port : 6818, timeout_ms);
    if (a == VG_TCP_UNKNOWN) return vg_orch_fail(o, "node %s: address %s does not resolve", node, addr);
    return a == VG_TCP_ALIVE;
}

/* slurmctld's BOOT_TIME from `scontrol show config` (one RPC): it changes
 * when slurmctld restarts or a backup takes over. */
static int sl_epoch(struct vg_orch *o, char *buf, size_t n)
{
    struct vg_slurm_kv *kv;
    size_t k;
    if (vg_slurm_show_config(S(o), &kv, &k)) return done(o, -1);
    const char *boot = vg_slurm_kv_get(kv, k, "BOOT_TIME");
    bool found = boot && *boot;
    if (found) vg_strlcpy(buf, boot, n);
    vg_slurm_kv_free(kv, k);
    done(o, 0);
    return found ? 0 : vg_orch_fail(o, "scontrol show config: no BOOT_TIME");
}

static const char *const slurm_procs[] = { "slurmd", "slurmstepd", NULL };
static const char *const slurm_daemons[] = { "munged", "slurmd", NULL };

const struct vg_orch_ops vg_orch_slurm = {
    .name = "slurm",
    .help = "Slurm through scontrol, sbatch and srun (--slurm-conf FILE or $SLURM_CONF)",
    .caps = VG_CAP_JOBS | VG_CAP_HOST_FILES | VG_CAP_TELL | VG_CAP_EXEC | VG_CAP_NODE_ALIVE | VG_CAP_EPOCH |
            VG_CAP_DOWN_REQUEUES | VG_CAP_LOCAL_NODE | VG_CAP_LOCAL_JOBS | VG_CAP_TASK_RANK,
    .open = sl_open,
    .close = sl_close,
    .nodes = sl_nodes,
    .isolate = sl_isolate,
    .resume = sl_resume,
    .jobs_on = sl_jobs_on,
    .requeue = sl_requeue,
    .tell = sl_tell,
    .pool_get = sl_pool_get,
    .pool_set = sl_pool_set,
    .job_submit = sl_job_submit,
    .job_get = sl_job_get,
    .job_cancel = sl_job_cancel,
    .exec_on = sl_exec_on,
    .node_alive = sl_node_alive,
    .epoch = sl_epoch,
    .local_node = vg_slurm_local_node,
    .local_jobs = vg_slurm_local_jobs,
    .task_rank = vg_slurm_task_rank,
    .node_procs = slurm_procs,
    .node_daemons = slurm_daemons,
};
