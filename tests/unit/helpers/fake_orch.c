/* fake_orch.c — an orchestrator double for unit tests (orch.h): nodes, jobs
 * and a spare pool held in memory, every call counted and logged, and
 * failures on demand ("the scheduler is down").  It keeps the contract every
 * backend keeps (tests/unit/test_orch_contract.c runs the same expectations
 * against it, the Slurm lab and the Kubernetes double): fake_slurm_orch_ops'
 * DOWN requeues the node's running jobs, as Slurm's node-failure path does;
 * requeue makes a job pending with one more restart, and refuses an id it
 * does not know; resume clears the reason.  Submitted jobs stay pending until
 * a test sets their state (or run at once with run_submitted); job_get
 * answers with the phase the Slurm backend gives that state. */
#include "fake_orch.h"
#include "core/event.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fake_orch fake;

void fake_reset(void)
{
    memset(&fake, 0, sizeof fake);
}

struct vg_orch_node *fake_node(const char *name)
{
    for (size_t i = 0; i < fake.nnodes; i++)
        if (!strcmp(fake.nodes[i].name, name)) return &fake.nodes[i];
    return NULL;
}

void fake_add_node(const char *name, const char *features)
{
    struct vg_orch_node *n = &fake.nodes[fake.nnodes++];
    memset(n, 0, sizeof *n);
    vg_strlcpy(n->name, name, sizeof n->name);
    vg_strlcpy(n->state, "IDLE", sizeof n->state);
    vg_strlcpy(n->features, features ? features : "", sizeof n->features);
    n->responding = n->idle = true;
}

void fake_add_job(const char *id, const char *node)
{
    struct fake_job *j = &fake.jobs[fake.njobs++];
    memset(j, 0, sizeof *j);
    vg_strlcpy(j->id, id, sizeof j->id);
    vg_strlcpy(j->node, node, sizeof j->node);
    j->running = true;
    struct vg_orch_node *n = fake_node(node);
    if (n) n->idle = false, n->busy = true;
}

static void logf_(const char *fmt, const char *a, const char *b)
{
    size_t l = strlen(fake.log);
    snprintf(fake.log + l, sizeof fake.log - l, fmt, a, b);
}

static int call(struct vg_orch *o, const char *what)
{
    o->calls++;
    if (fake.down) return vg_orch_fail(o, "%s: Unable to contact slurm controller (connect failure)", what);
    return 0;
}

static int f_nodes(struct vg_orch *o, const char *const *names, size_t n, struct vg_orch_node **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    fake.node_reads++;
    while (__atomic_load_n(&fake.hold_nodes, __ATOMIC_SEQ_CST)) usleep(1000);
    if (call(o, "nodes")) return -1;
    *out = calloc(fake.nnodes + 1, sizeof **out);
    for (size_t i = 0; i < fake.nnodes; i++) {
        bool want = !names;
        for (size_t k = 0; names && k < n; k++) want |= !strcmp(names[k], fake.nodes[i].name);
        if (want) (*out)[(*nout)++] = fake.nodes[i];
    }
    return 0;
}

/* A job requeued: not running, one more restart, a submitted one pending again. */
static void requeued(struct fake_job *j)
{
    j->running = j->failed = false;
    j->restarts++;
    if (j->submitted) j->state[0] = 0;
}

static int f_isolate(struct vg_orch *o, const char *const *nodes, size_t n, enum vg_isolate how, const char *reason)
{
    if (call(o, "isolate") || (fake.fail_isolate && fake.fail_isolate-- > 0 && vg_orch_fail(o, "isolate refused")))
        return -1;
    for (size_t i = 0; i < n; i++) {
        struct vg_orch_node *nd = fake_node(nodes[i]);
        if (!nd) return vg_orch_fail(o, "Invalid node name specified: %s", nodes[i]);
        if (how == VG_ISOLATE_DOWN) nd->down = true;
        else nd->drain = true;
        for (size_t j = 0; j < fake.njobs && how == VG_ISOLATE_DOWN && vg_orch_can(o->ops, VG_CAP_DOWN_REQUEUES); j++)
            if (fake.jobs[j].running && !strcmp(fake.jobs[j].node, nodes[i])) {
                requeued(&fake.jobs[j]);
                logf_("down-requeued %s;%s", fake.jobs[j].id, "");
            }
        nd->idle = false;
        vg_strlcpy(nd->reason, reason, sizeof nd->reason);
        logf_("%s %s;", how == VG_ISOLATE_DOWN ? "down" : "drain", nodes[i]);
    }
    return 0;
}

static int f_resume(struct vg_orch *o, const char *const *nodes, size_t n)
{
    if (call(o, "resume")) return -1;
    for (size_t i = 0; i < n; i++) {
        struct vg_orch_node *nd = fake_node(nodes[i]);
        if (!nd) continue;
        nd->down = nd->drain = false;
        nd->reason[0] = 0;
        nd->idle = true;
        logf_("resume %s;%s", nodes[i], "");
    }
    return 0;
}

static int f_jobs_on(struct vg_orch *o, const char *const *nodes, size_t n, const char *known, int64_t out_ms,
                     char ***jobs, size_t *njobs, char ***moved, size_t *nmoved)
{
    fake.jobs_out_ms = out_ms;
    *moved = calloc(fake.njobs + 1, sizeof **moved);
    *nmoved = 0;
    if (fake.fail_jobs_on && fake.fail_jobs_on-- > 0) {
        o->calls++;
        return vg_orch_fail(o, "jobs_on: Unable to contact slurm controller (connect failure)");
    }
    for (size_t j = 0; j < fake.njobs; j++)   /* of those the agent listed: pending again after a run */
        if (vg_event_jobs_has(known, atol(fake.jobs[j].id)) && !fake.jobs[j].running && !fake.jobs[j].failed && fake.jobs[j].restarts)
            (*moved)[(*nmoved)++] = vg_xstrdup(fake.jobs[j].id);
    *jobs = NULL;
    *njobs = 0;
    if (call(o, "jobs_on")) return -1;
    *jobs = calloc(fake.njobs + 1, sizeof **jobs);
    for (size_t j = 0; j < fake.njobs; j++)
        for (size_t i = 0; i < n; i++)
            if ((fake.jobs[j].running || fake.jobs[j].failed) && !strcmp(fake.jobs[j].node, nodes[i])) {
                (*jobs)[(*njobs)++] = vg_xstrdup(fake.jobs[j].id);
                break;
            }
    return 0;
}

static struct fake_job *job_of(const char *id)
{
    for (size_t j = 0; j < fake.njobs; j++)
        if (!strcmp(fake.jobs[j].id, id)) return &fake.jobs[j];
    return NULL;
}

static int f_requeue(struct vg_orch *o, const char *const *jobs, size_t n)
{
    if (call(o, "requeue")) return -1;
    for (size_t i = 0; i < n; i++)
        if (!job_of(jobs[i])) return vg_orch_fail(o, "scontrol requeue: Invalid job id specified: %s", jobs[i]);
    for (size_t i = 0; i < n; i++) {
        requeued(job_of(jobs[i]));
        logf_("requeue %s;%s", jobs[i], "");
    }
    return 0;
}

static int f_pool_get(struct vg_orch *o, const char *pool, char ***nodes, size_t *n)
{
    (void)pool;
    *nodes = NULL;
    *n = 0;
    if (call(o, "pool_get")) return -1;
    if (!fake.pool_exists) return 1;
    *nodes = calloc(fake.npool + 1, sizeof **nodes);
    for (size_t i = 0; i < fake.npool; i++) (*nodes)[i] = vg_xstrdup(fake.pool[i]);
    *n = fake.npool;
    return 0;
}

static int f_pool_set(struct vg_orch *o, const char *pool, const char *const *nodes, size_t n, bool exists)
{
    (void)pool;
    (void)exists;
    if (call(o, "pool_set")) return -1;
    fake.npool = 0;
    for (size_t i = 0; i < n && i < FAKE_MAX; i++) vg_strlcpy(fake.pool[fake.npool++], nodes[i], sizeof fake.pool[0]);
    fake.pool_exists = n > 0;
    struct sbuf b = SBUF_INIT;
    for (size_t i = 0; i < n; i++) sbuf_printf(&b, "%s%s", i ? "," : "", nodes[i]);
    logf_("pool %s;%s", b.s ? b.s : "", "");
    sbuf_free(&b);
    return 0;
}

static int f_job_submit(struct vg_orch *o, const struct vg_orch_jobspec *s, char *id, size_t idlen)
{
    if (call(o, "job_submit")) return -1;
    if (fake.njobs == FAKE_MAX) return vg_orch_fail(o, "too many jobs");
    if (s->workload || s->claim) return vg_orch_fail(o, "submit: no workload kind and no volume claim here");
    struct fake_job *j = &fake.jobs[fake.njobs++];
    memset(j, 0, sizeof *j);
    snprintf(j->id, sizeof j->id, "%d", 100 + fake.next_job++);
    vg_strlcpy(j->node, s->nodelist ? s->nodelist : "", sizeof j->node);
    vg_strlcpy(j->partition, s->partition ? s->partition : "", sizeof j->partition);
    struct sbuf b = SBUF_INIT;
    for (size_t i = 0; s->argv && s->argv[i]; i++) sbuf_printf(&b, "%s%s", i ? " " : "", s->argv[i]);
    vg_strlcpy(j->argv, b.s ? b.s : "", sizeof j->argv);
    sbuf_free(&b);
    j->submitted = true;
    for (size_t i = 0; i < fake.nnodes && fake.run_submitted && !j->running; i++) {
        struct vg_orch_node *nd = &fake.nodes[i];
        bool spare = false;
        for (size_t k = 0; k < fake.npool; k++) spare |= !strcmp(fake.pool[k], nd->name);
        if (nd->drain || nd->down || !nd->idle || spare) continue;
        vg_strlcpy(j->node, nd->name, sizeof j->node);
        vg_strlcpy(j->state, "RUNNING", sizeof j->state);
        j->running = true;
        j->started_ms = vg_now_ms();
        nd->idle = false, nd->busy = true;
    }
    j->exclusive = s->exclusive;
    j->time_limit_s = s->time_limit_s;
    vg_strlcpy(id, j->id, idlen);
    logf_("submit %s %s;", j->id, j->node);
    return 0;
}

static int f_job_get(struct vg_orch *o, const char *id, struct vg_orch_job *out)
{
    memset(out, 0, sizeof *out);
    if (call(o, "job_get")) return -1;
    for (size_t i = 0; i < fake.njobs; i++) {
        struct fake_job *j = &fake.jobs[i];
        if (strcmp(j->id, id)) continue;
        vg_strlcpy(out->id, id, sizeof out->id);
        vg_strlcpy(out->state, j->state[0] ? j->state : "PENDING", sizeof out->state);
        vg_strlcpy(out->nodes, j->node, sizeof out->nodes);
        vg_strlcpy(out->leader, j->node, sizeof out->leader);
        out->restarts = j->restarts;
        out->phase = !j->state[0] || !strcmp(j->state, "PENDING") ? VG_JOB_PENDING
                     : !strcmp(j->state, "RUNNING")              ? VG_JOB_RUNNING
                                                                 : VG_JOB_ENDED;
        out->started_ms = j->started_ms;
        out->ended_ms = j->ended_ms;
        return 0;
    }
    return vg_orch_fail(o, "scontrol show job %s: slurm_load_jobs error: Invalid job id specified", id);
}

/* A submitted job ends CANCELLED; an id it does not know: -1. */
static int f_job_cancel(struct vg_orch *o, const char *id)
{
    if (call(o, "job_cancel")) return -1;
    struct fake_job *j = job_of(id);
    if (!j) return vg_orch_fail(o, "scancel: error: Invalid job id specified: %s", id);
    struct vg_orch_node *nd = j->running ? fake_node(j->node) : NULL;
    if (nd) nd->idle = !nd->drain && !nd->down, nd->busy = false;
    j->running = false;
    vg_strlcpy(j->state, "CANCELLED", sizeof j->state);
    logf_("cancel %s;%s", id, "");
    return 0;
}

/* Whether the node's daemon answers: the node's `responding`; -1 for a node
 * it does not know or when probes fail (as the Slurm backend: it reads the
 * node's address first). */
static int f_node_alive(struct vg_orch *o, const char *node, int timeout_ms)
{
    (void)timeout_ms;
    fake.probes++;
    if (call(o, "node_alive")) return -1;
    const struct vg_orch_node *n = fake_node(node);
    if (fake.probe_fails || !n) return vg_orch_fail(o, "node %s cannot be probed", node);
    return n->responding ? 1 : 0;
}

static int f_epoch(struct vg_orch *o, char *buf, size_t n)
{
    fake.epoch_reads++;
    if (call(o, "epoch")) return -1;
    vg_strlcpy(buf, fake.epoch[0] ? fake.epoch : "1", n);
    return 0;
}

static const char *const procs[] = { "fake-noded", NULL };

/* The calls both doubles share (an initializer list: C11 takes no const object here). */
#define FAKE_CAPS VG_CAP_JOBS | VG_CAP_NODE_ALIVE | VG_CAP_EPOCH
#define FAKE_CALLS                                                                                         \
    .help = "an in-memory double for tests", .nodes = f_nodes, .isolate = f_isolate, .resume = f_resume,   \
    .jobs_on = f_jobs_on, .requeue = f_requeue, .pool_get = f_pool_get, .pool_set = f_pool_set,            \
    .job_submit = f_job_submit, .job_get = f_job_get, .job_cancel = f_job_cancel, .node_alive = f_node_alive, \
    .epoch = f_epoch, .node_procs = procs

const struct vg_orch_ops fake_orch_ops = { .name = "fake", .caps = FAKE_CAPS, FAKE_CALLS };
const struct vg_orch_ops fake_slurm_orch_ops = { .name = "fake-slurm", .caps = FAKE_CAPS | VG_CAP_DOWN_REQUEUES,
                                                 FAKE_CALLS };
