/* orch.c — the table of scheduler backends, the contract each entry keeps
 * (required operations, capabilities), and what is built on their ops the
 * same way for every backend (ownership, resume what vigil isolated, the
 * local node name, jobs and task rank); see orch.h. */
#include "orch/orch.h"
#include "util/strutil.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern const struct vg_orch_ops vg_orch_slurm;
extern const struct vg_orch_ops vg_orch_k8s;

/* One line per scheduler. */
static const struct vg_orch_ops *const backends[] = {
    &vg_orch_slurm,
    &vg_orch_k8s,
};
#define NBACKENDS (sizeof backends / sizeof backends[0])

const struct vg_orch_ops *vg_orch_at(size_t i) { return i < NBACKENDS ? backends[i] : NULL; }

const struct vg_orch_ops *vg_orch_find(const char *name)
{
    if (!name || !*name) return backends[0];
    for (size_t i = 0; i < NBACKENDS; i++)
        if (!strcmp(backends[i]->name, name)) return backends[i];
    return NULL;
}

const char *vg_orch_names(void)
{
    static char names[128];
    if (!names[0])
        for (size_t i = 0, l = 0; i < NBACKENDS && l < sizeof names; i++)
            l += (size_t)snprintf(names + l, sizeof names - l, "%s%s", i ? ", " : "", backends[i]->name);
    return names;
}

int vg_orch_fail(struct vg_orch *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->err, sizeof o->err, fmt, ap);
    va_end(ap);
    for (char *p = o->err; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    return -1;
}

bool vg_orch_can(const struct vg_orch_ops *ops, unsigned caps) { return ops && (ops->caps & caps) == caps; }

/* The optional operations and the capability each goes with. */
#define OPTIONAL(op, cap) { #op, offsetof(struct vg_orch_ops, op), cap }
static const struct {
    const char *name;
    size_t off;
    unsigned cap;
} optional[] = {
    OPTIONAL(job_submit, VG_CAP_JOBS),        OPTIONAL(job_get, VG_CAP_JOBS),
    OPTIONAL(job_cancel, VG_CAP_JOBS),        OPTIONAL(job_output, VG_CAP_JOB_OUTPUT),
    OPTIONAL(tell, VG_CAP_TELL),              OPTIONAL(burnin_prepare, VG_CAP_PRIORITY),
    OPTIONAL(exec_on, VG_CAP_EXEC),           OPTIONAL(node_alive, VG_CAP_NODE_ALIVE),
    OPTIONAL(epoch, VG_CAP_EPOCH),            OPTIONAL(local_node, VG_CAP_LOCAL_NODE),
    OPTIONAL(local_jobs, VG_CAP_LOCAL_JOBS),  OPTIONAL(task_rank, VG_CAP_TASK_RANK),
};
#define REQUIRED(op) { #op, offsetof(struct vg_orch_ops, op) }
static const struct {
    const char *name;
    size_t off;
} required[] = {
    REQUIRED(nodes), REQUIRED(isolate), REQUIRED(resume), REQUIRED(jobs_on), REQUIRED(requeue),
    REQUIRED(pool_get), REQUIRED(pool_set),
};
#define NARR(a) (sizeof a / sizeof a[0])

/* Whether the function pointer at off is set (every one is the size of a pointer to a function). */
static bool has(const struct vg_orch_ops *ops, size_t off)
{
    void (*fn)(void);
    memcpy(&fn, (const char *)ops + off, sizeof fn);
    return fn != NULL;
}

int vg_orch_ops_check(const struct vg_orch_ops *ops, char *err, size_t errlen)
{
    const char *name = ops->name && *ops->name ? ops->name : "(unnamed)";
    for (size_t i = 0; i < NARR(required); i++)
        if (!has(ops, required[i].off))
            return snprintf(err, errlen, "the %s orchestrator lacks %s, which every backend has", name,
                            required[i].name), -1;
    for (size_t i = 0; i < NARR(optional); i++) {
        bool says = vg_orch_can(ops, optional[i].cap), set = has(ops, optional[i].off);
        if (says != set)
            return snprintf(err, errlen, "the %s orchestrator %s %s but %s its capability", name,
                            set ? "has" : "lacks", optional[i].name, says ? "says" : "does not say"), -1;
    }
    return 0;
}

/* The answer of an operation the backend does not have. */
static int cannot(struct vg_orch *o, const char *what)
{
    return vg_orch_fail(o, "the %s orchestrator cannot %s", o->ops->name, what);
}
static int no_submit(struct vg_orch *o, const struct vg_orch_jobspec *spec, char *id, size_t idlen)
{
    (void)spec;
    if (idlen) *id = 0;
    return cannot(o, "run jobs");
}
static int no_get(struct vg_orch *o, const char *id, struct vg_orch_job *out)
{
    (void)id;
    memset(out, 0, sizeof *out);
    return cannot(o, "run jobs");
}
static int no_cancel(struct vg_orch *o, const char *id) { return (void)id, cannot(o, "run jobs"); }
static int no_output(struct vg_orch *o, const char *id, char **text)
{
    (void)id;
    *text = NULL;
    return cannot(o, "give a job's output (it is in the job's output file)");
}
static int no_tell(struct vg_orch *o, const char *job, const char *const *nodes, size_t n)
{
    (void)job, (void)nodes, (void)n;
    return cannot(o, "tell a job that one of its nodes failed");
}
static int no_prepare(struct vg_orch *o, const char *queue, struct vg_orch_node *nodes, size_t n)
{
    (void)queue, (void)nodes, (void)n;
    return cannot(o, "preempt burn-in by priority (it takes a partition)");
}
static int no_exec(struct vg_orch *o, const char *node, const char *const *cmd, const char *const *host_paths,
                   int timeout_ms, struct vg_spawn_result *r)
{
    (void)node, (void)cmd, (void)host_paths, (void)timeout_ms;
    memset(r, 0, sizeof *r);
    return cannot(o, "run a command on a node");
}
static int no_alive(struct vg_orch *o, const char *node, int timeout_ms)
{
    (void)node, (void)timeout_ms;
    return cannot(o, "tell whether a node's daemon answers");
}
static int no_epoch(struct vg_orch *o, char *buf, size_t n)
{
    if (n) *buf = 0;
    return cannot(o, "lose a node state, and has no epoch");
}

struct vg_orch *vg_orch_open_ops(const struct vg_orch_ops *ops, const struct vg_orch_conf *c, char *err,
                                 size_t errlen)
{
    if (vg_orch_ops_check(ops, err, errlen)) return NULL;
    struct vg_orch *o = vg_xcalloc(1, sizeof *o);
    static const struct vg_orch_conf none;
    if (!c) c = &none;
    o->all = *ops;
    struct vg_orch_ops *a = &o->all;
    if (!a->job_submit) a->job_submit = no_submit, a->job_get = no_get, a->job_cancel = no_cancel;
    if (!a->job_output) a->job_output = no_output;
    if (!a->tell) a->tell = no_tell;
    if (!a->burnin_prepare) a->burnin_prepare = no_prepare;
    if (!a->exec_on) a->exec_on = no_exec;
    if (!a->node_alive) a->node_alive = no_alive;
    if (!a->epoch) a->epoch = no_epoch;
    o->ops = a;
    o->timeout_ms = c->timeout_ms > 0 ? c->timeout_ms : 10000;
    if (ops->open && ops->open(o, c)) {
        snprintf(err, errlen, "orchestrator %s: %s", ops->name, o->err);
        free(o);
        return NULL;
    }
    return o;
}

struct vg_orch *vg_orch_open(const char *name, const struct vg_orch_conf *c, char *err, size_t errlen)
{
    const struct vg_orch_ops *ops = vg_orch_find(name);
    if (!ops) {
        snprintf(err, errlen, "--orchestrator: '%s' is not one of %s", name, vg_orch_names());
        return NULL;
    }
    return vg_orch_open_ops(ops, c, err, errlen);
}

void vg_orch_close(struct vg_orch *o)
{
    if (!o) return;
    if (o->ops->close) o->ops->close(o);   /* a lifecycle hook, not an operation (orch.h) */
    free(o);
}

bool vg_orch_ours(const struct vg_orch_node *st) { return vg_startswith(st->reason, VG_REASON_PREFIX); }

int vg_orch_resume_ours(struct vg_orch *o, const char *const *nodes, size_t n)
{
    if (!n) return 0;
    struct vg_orch_node *st;
    size_t ns;
    if (o->ops->nodes(o, nodes, n, &st, &ns)) return -1;
    const char **ours = vg_xcalloc(ns + 1, sizeof *ours);
    size_t k = 0;
    for (size_t i = 0; i < ns; i++)
        if ((st[i].drain || st[i].down) && vg_orch_ours(&st[i])) ours[k++] = st[i].name;
    int rc = k ? o->ops->resume(o, ours, k) : 0;
    free(ours);
    free(st);
    return rc ? -1 : (int)k;
}

int vg_orch_node(struct vg_orch *o, const char *name, struct vg_orch_node *out)
{
    struct vg_orch_node *st;
    size_t n;
    if (o->ops->nodes(o, &name, 1, &st, &n)) return -1;
    int rc = -1;
    for (size_t i = 0; i < n && rc; i++)
        if (!strcmp(st[i].name, name)) *out = st[i], rc = 0;
    free(st);
    return rc ? vg_orch_fail(o, "node %s is not known to %s", name, o->ops->name) : 0;
}

void vg_orch_local_node(const struct vg_orch_ops *ops, char *buf, size_t n)
{
    const char *v = getenv("VIGIL_NODE");
    if (v && *v) vg_strlcpy(buf, v, n);
    else if (vg_orch_can(ops, VG_CAP_LOCAL_NODE) && ops->local_node(buf, n) && *buf) {
    } else if (gethostname(buf, n) || !*buf) vg_strlcpy(buf, "localhost", n);
    buf[n - 1] = 0;
    char *dot = strchr(buf, '.');
    if (dot) *dot = 0;
}

int vg_orch_local_jobs(const struct vg_orch_ops *ops, const char *where, const char *node, char *out, size_t n)
{
    if (n) *out = 0;
    if (!vg_orch_can(ops, VG_CAP_LOCAL_JOBS)) return -2;
    return ops->local_jobs(where, node, out, n) ? -1 : 0;
}

void vg_orch_task_rank(struct vg_orch_task *t)
{
    for (size_t i = 0; i < NBACKENDS; i++)
        if (vg_orch_can(backends[i], VG_CAP_TASK_RANK)) {
            memset(t, 0, sizeof *t);
            if (backends[i]->task_rank(t)) return;
        }
    *t = (struct vg_orch_task){ .rank = 0, .ntasks = 1, .restarts = 0, .restarts_known = true };
}

void vg_strv_free(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) free(v[i]);
    free(v);
}
