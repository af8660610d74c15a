/* orch.h — the scheduler behind one struct of function pointers, the way
 * nvtop puts each GPU vendor behind one: everything the controller, the node
 * health check, the drill and fault injection need from a scheduler.  A
 * backend (src/orch/slurm_ops.c, src/orch/k8s.c; a fake in tests/) fills in
 * struct vg_orch_ops and takes one line in the table in orch.c; callers pick
 * it by name (`--orchestrator slurm`, the default) and never name a
 * scheduler's commands, variables or objects themselves.
 *
 * Conventions: every call returns 0 on success and -1 with a one-line reason
 * in o->err; calls that take a list of nodes act on all of them in one
 * request where the scheduler allows (batched, counted in o->calls). */
#ifndef VG_ORCH_H
#define VG_ORCH_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "util/spawn.h"

/* Every reason vigil writes starts with this; vigil only undoes node states
 * whose reason starts with it. */
#define VG_REASON_PREFIX "vigil:"

enum vg_isolate { VG_ISOLATE_DRAIN, VG_ISOLATE_DOWN };

/* One node as the scheduler sees it. */
struct vg_orch_node {
    char name[64];
    char state[64];        /* the scheduler's own words, e.g. "IDLE+DRAIN" */
    char reason[256];      /* why it is unavailable, without stamps; "" when none */
    char features[128];    /* features or labels, comma-separated */
    char domain[64];       /* rack / NVLink domain the scheduler knows (Kubernetes: a node label); "" */
    char addr[64];         /* the address the scheduler reaches it at (Slurm: NodeAddr; Kubernetes: its
                            * InternalIP, else ExternalIP); "" when it does not say */
    char partitions[128];  /* the queues (Slurm partitions) it takes work from, comma-separated; "" when
                            * the scheduler has none */
    bool drain;            /* no new work (draining or drained) */
    bool down;             /* out of service, its work ended or requeued */
    bool responding;       /* the scheduler hears from the node */
    bool idle;             /* up and running nothing */
    bool busy;             /* running work (allocated, mixed or completing) */
    int64_t isolated_ms;   /* when the scheduler's own record says vigil took it out (Kubernetes: the
                            * VigilHealthy=False condition's lastTransitionTime, else vigil's taint's
                            * timeAdded); 0 when it does not say */
};

enum vg_job_phase { VG_JOB_PENDING, VG_JOB_RUNNING, VG_JOB_ENDED };

/* One job (a Slurm job, a Kubernetes workload). */
struct vg_orch_job {
    char id[128];
    char name[128];
    enum vg_job_phase phase;
    char state[32];        /* the scheduler's own word, e.g. "RUNNING", "NODE_FAIL" */
    char reason[128];
    char nodes[256];       /* host list of the nodes it runs on, "" when none */
    char leader[64];       /* the node that runs its first task (batch host) */
    int restarts;          /* times it was requeued or restarted */
    int64_t started_ms;    /* when it started running (ms since the epoch); 0: not yet or unknown.
                            * Kubernetes: when its current gang was last all Ready (the latest Ready
                            * condition's lastTransitionTime of its live pods) */
    int64_t ended_ms;      /* when it ended; 0: not ended or unknown */
};

/* A job to submit (the drill's trainer, a burn-in pass). */
struct vg_orch_jobspec {
    const char *name;
    int nodes;                   /* node count */
    int tasks_per_node;          /* default 1 */
    int gpus_per_node;           /* 0: none requested */
    const char *partition;       /* queue / partition; NULL: the default */
    const char *const *argv;     /* what every task runs (NULL-terminated) */
    const char *script;          /* instead of argv: a user's own job script */
    const char *output;          /* the job's log, appended across restarts */
    const char *error;           /* its standard error (the scheduler's own lines too) apart from
                                  * output; NULL: in output */
    const char *workdir;         /* where generated files go (the job script) */
    bool requeue;                /* may be requeued when a node fails */
    bool self_launched;          /* argv starts its own steps (vigil launch): run once, not on every node */
    bool keep_on_node_failure;   /* a failed node does not end the job (it holds spares of its own) */
    const char *nodelist;        /* exactly these nodes (a host list); NULL: the scheduler picks */
    const char *tag;             /* marks the job as this drill's (Kubernetes: label vigil.dev/drill=TAG); NULL */
    bool exclusive;              /* the nodes whole: no other job shares them */
    int time_limit_s;            /* killed after this long; 0: the queue's limit */
    const char *const *host_paths; /* directories of the nodes the tasks use at the same path (NULL-terminated,
                                  * may be NULL): Kubernetes mounts them as hostPath volumes; on Slurm the
                                  * tasks run on the host and see them */
    const char *workload;        /* VG_CAP_WORKLOADS: "job" (an Indexed Job, the default) or "jobset" (a
                                  * JobSet whose failure policy restarts the gang); NULL: the default */
    const char *claim;           /* VG_CAP_WORKLOADS: a PersistentVolumeClaim every task mounts at
                                  * VG_ORCH_CLAIM_PATH (the checkpoints); NULL: none */
};

/* Where a job's tasks see jobspec.claim. */
#define VG_ORCH_CLAIM_PATH "/mnt/vigil-checkpoints"

/* How to reach the scheduler. */
struct vg_orch_conf {
    const char *config;          /* slurm.conf / kubeconfig; NULL: the backend's default */
    int timeout_ms;              /* per call; 0 = 10 s */
    bool insecure_http;          /* Kubernetes: an http:// API server is accepted (no credentials sent over it) */
};

/* What a backend can do beyond the required operations, one bit each: it
 * says so in ops.caps, and callers ask through vg_orch_can() alone, never by
 * testing a function pointer or a backend's name.  A bit that names an
 * operation means that operation is set; the other bits are promises about
 * how the required ones behave.  vg_orch_ops_check() holds a table entry to
 * it, vg_orch_open() refuses an entry that breaks it, and one contract test
 * (tests/unit/test_orch_contract.c) runs the same expectations against every
 * backend for what it says it can do, and "unsupported" where it says not. */
enum vg_orch_cap {
    VG_CAP_JOBS = 1u << 0,          /* job_submit, job_get, job_cancel: runs jobs (the drill, burn-in passes) */
    VG_CAP_JOB_OUTPUT = 1u << 1,    /* job_output: the scheduler keeps what a job printed (a pod's log) */
    VG_CAP_HOST_FILES = 1u << 2,    /* a job's tasks run on the nodes' own filesystem, shared with the
                                     * submitter: its output is appended to jobspec.output as it runs, and a
                                     * file its argv names is there (Slurm on a shared filesystem; not
                                     * Kubernetes, whose tasks run in containers) */
    VG_CAP_TELL = 1u << 3,          /* tell: a job holding spares in its allocation restarts on one itself */
    VG_CAP_PRIORITY = 1u << 4,      /* burnin_prepare: burn-in preempted by priority, not by partition */
    VG_CAP_EXEC = 1u << 5,          /* exec_on: a command run on a node through the scheduler */
    VG_CAP_NODE_ALIVE = 1u << 6,    /* node_alive: whether a node's daemon answers */
    VG_CAP_EPOCH = 1u << 7,         /* epoch: the scheduler can lose node states it acknowledged, and says when */
    VG_CAP_DOWN_REQUEUES = 1u << 8, /* isolate DOWN requeues the node's running jobs itself (Slurm's node-failure
                                     * path): jobs_on, called after the DOWN, lists those it left and names in
                                     * *moved those of `known` it requeued.  Without it the DOWN may end the
                                     * node's work (Kubernetes' NoExecute taint evicts its pods), so jobs_on is
                                     * called before it */
    VG_CAP_STAMPED_TIMES = 1u << 9, /* a node's isolated_ms and a running job's started_ms are the moments as the
                                     * scheduler recorded them (to the second), the measure of those stages;
                                     * without it they are informational and a measurement takes the moment it
                                     * saw the change */
    VG_CAP_LOCAL_NODE = 1u << 10,   /* local_node */
    VG_CAP_LOCAL_JOBS = 1u << 11,   /* local_jobs: the jobs on this node, read on the node itself */
    VG_CAP_TASK_RANK = 1u << 12,    /* task_rank: a task's rank among its job's tasks, from its environment */
    VG_CAP_WORKLOADS = 1u << 13,    /* job_submit honours jobspec.workload and jobspec.claim (Kubernetes: an
                                     * Indexed Job or a JobSet; a PersistentVolumeClaim every task mounts);
                                     * without it a spec that sets either is refused */
};

/* A task's place in its job, as the scheduler's environment gives it. */
struct vg_orch_task {
    long rank;                   /* 0 .. ntasks-1 */
    long ntasks;
    long restarts;               /* times the job was requeued or restarted (0 the first time) */
    bool restarts_known;         /* restarts is the scheduler's own count, the same in every task: a
                                  * collective may key on it (false: each task starts on its own) */
};

struct vg_orch;

/* Every operation says whether it is REQUIRED (set in every backend;
 * callers call it without asking) or optional (set exactly when the backend
 * says the capability named beside it). */
struct vg_orch_ops {
    const char *name;
    const char *help;            /* one line for usage texts */
    unsigned caps;               /* enum vg_orch_cap bits */
    /* Optional lifecycle hooks, called only by vg_orch_open() and
     * vg_orch_close(): private state lives in o->priv. */
    int (*open)(struct vg_orch *o, const struct vg_orch_conf *c);
    void (*close)(struct vg_orch *o);
    /* REQUIRED.  All nodes (names NULL) or the named ones; *out malloc'd. */
    int (*nodes)(struct vg_orch *o, const char *const *names, size_t n, struct vg_orch_node **out, size_t *nout);
    /* REQUIRED.  DRAIN or DOWN the nodes with reason (starts with
     * VG_REASON_PREFIX): afterwards nodes() shows them drain (DOWN: down
     * too) with that reason. */
    int (*isolate)(struct vg_orch *o, const char *const *nodes, size_t n, enum vg_isolate how, const char *reason);
    /* REQUIRED.  Back into service, unconditionally (callers check ownership
     * first: vg_orch_resume_ours); the reason is cleared. */
    int (*resume)(struct vg_orch *o, const char *const *nodes, size_t n);
    /* REQUIRED.  Ids of the jobs running (or ending) on any of the nodes;
     * *jobs malloc'd.  With VG_CAP_DOWN_REQUEUES, called after the DOWN: the
     * jobs it did not requeue, and in *moved (malloc'd) those of known the
     * DOWN did requeue; without it *moved is empty.  known: the jobs the
     * nodes' agents saw there ("12,345", "" none; local_jobs), for a backend
     * whose scheduler no longer shows a job on a node it lost.  out_ms: when
     * the nodes went out (vg_now_ms), 0 = now: a job that ended on them a
     * moment before that still counts, however late the read comes. */
    int (*jobs_on)(struct vg_orch *o, const char *const *nodes, size_t n, const char *known, int64_t out_ms,
                   char ***jobs, size_t *njobs, char ***moved, size_t *nmoved);
    /* REQUIRED.  Restart the jobs elsewhere (requeue; restart the whole
     * gang).  The controller calls it after it isolated their nodes; a job
     * the scheduler requeued itself meanwhile (VG_CAP_DOWN_REQUEUES) counts
     * as done.  An id that is no job of the scheduler's: -1. */
    int (*requeue)(struct vg_orch *o, const char *const *jobs, size_t n);
    /* VG_CAP_TELL.  Tells a job that keeps spares inside its own allocation
     * (`vigil launch`, docs/drill.md) that `nodes` failed: it restarts its
     * step on a spare of its own, no requeue.  1 told, 0 it holds none
     * (requeue it), -1 error. */
    int (*tell)(struct vg_orch *o, const char *job, const char *const *nodes, size_t n);
    /* REQUIRED.  The hot-spare pool `pool` (healthy nodes no job is
     * scheduled on): returns 0 with its nodes when it exists, 1 when it does
     * not. */
    int (*pool_get)(struct vg_orch *o, const char *pool, char ***nodes, size_t *n);
    /* REQUIRED.  Makes the pool hold exactly these nodes (n == 0 empties it);
     * exists: what pool_get last said. */
    int (*pool_set)(struct vg_orch *o, const char *pool, const char *const *nodes, size_t n, bool exists);
    /* VG_CAP_JOBS: submit (id written), read back (an id it does not know:
     * -1), cancel (the job ends or goes). */
    int (*job_submit)(struct vg_orch *o, const struct vg_orch_jobspec *spec, char *id, size_t idlen);
    int (*job_get)(struct vg_orch *o, const char *id, struct vg_orch_job *out);
    int (*job_cancel)(struct vg_orch *o, const char *id);
    /* VG_CAP_JOB_OUTPUT.  What the job printed, as the scheduler keeps it
     * (Kubernetes: the pod's log); *text malloc'd.  The job's record holds
     * it: a caller that read an ended job's output cancels the job. */
    int (*job_output)(struct vg_orch *o, const char *id, char **text);
    /* VG_CAP_PRIORITY.  Burn-in where the scheduler preempts by priority, not
     * by partition (Kubernetes): makes sure the low priority `queue` exists
     * (the PriorityClass, created when missing) and sets idle/busy of each
     * node from what runs on it.  0 ready, 1 `queue` exists but is not a low,
     * never-preempting priority (o->err says how: bad input), -1 error.
     * Without it burn-in goes to a partition of nodes (Slurm). */
    int (*burnin_prepare)(struct vg_orch *o, const char *queue, struct vg_orch_node *nodes, size_t n);
    /* VG_CAP_EXEC.  Runs cmd on node through the scheduler (a job step beside
     * whatever runs there; Kubernetes: a one-shot privileged pod bound to the
     * node) and waits at most timeout_ms; *r as vg_spawn gives it (its
     * stdout: the pod's log).  host_paths (NULL-terminated, may be NULL):
     * files of the node the command needs, seen at the same path (Kubernetes
     * mounts them as hostPath volumes; on Slurm the step runs on the host and
     * sees them). */
    int (*exec_on)(struct vg_orch *o, const char *node, const char *const *cmd, const char *const *host_paths,
                   int timeout_ms, struct vg_spawn_result *r);
    /* VG_CAP_NODE_ALIVE.  Whether the node's daemon answers now (the node is
     * up, not crashed or frozen): 1 yes, 0 no, -1 cannot tell (o->err says
     * why; a node it does not know).  Used to confirm a node whose agent fell
     * silent; without it the controller cannot confirm one. */
    int (*node_alive)(struct vg_orch *o, const char *node, int timeout_ms);
    /* VG_CAP_EPOCH.  The scheduler's epoch: a word that changes when its
     * controller restarts or fails over (Slurm: slurmctld's BOOT_TIME).  A
     * node state vigil set that is gone while the epoch changed was lost by
     * the scheduler, not undone by a person, and vigil sets it again.
     * Without it the scheduler never loses a node state it acknowledged
     * (Kubernetes keeps it in etcd). */
    int (*epoch)(struct vg_orch *o, char *buf, size_t n);
    /* The node-local operations: called on a node, without opening the
     * backend (no scheduler request). */
    /* VG_CAP_LOCAL_NODE.  This machine's node name as the scheduler knows
     * it, from the environment it sets; false when it sets none. */
    bool (*local_node)(char *buf, size_t n);
    /* VG_CAP_LOCAL_JOBS.  The jobs with a task on node, ascending, as
     * "12,345" (whole ids that fit in n), read on the node itself: where is
     * the node daemon's own record (Slurm: slurmd's spool directory).  0, or
     * -1 when it cannot be read (out ""). */
    int (*local_jobs)(const char *where, const char *node, char *out, size_t n);
    /* VG_CAP_TASK_RANK.  This process's place in its job, from the
     * environment the scheduler gives a task; false when it gives none. */
    bool (*task_rank)(struct vg_orch_task *t);
    /* Process names of the scheduler's node daemon and of the processes it
     * runs jobs under (a node crash kills them; a freeze stops them);
     * NULL-terminated, may be NULL: none known. */
    const char *const *node_procs;
    /* The daemons a healthy node of this scheduler runs (`vigil check --init`
     * expects those it finds running); NULL-terminated, may be NULL. */
    const char *const *node_daemons;
};

struct vg_orch {
    const struct vg_orch_ops *ops;   /* the backend's, every optional operation it lacks answering -1 with
                                      * "the NAME orchestrator cannot …" in err: never a NULL to call */
    struct vg_orch_ops all;          /* what ops points at once opened */
    void *priv;
    int timeout_ms;
    unsigned calls;              /* scheduler requests issued so far */
    char err[256];               /* the last error, one line */
};

/* The i-th backend of the table, NULL past its end. */
const struct vg_orch_ops *vg_orch_at(size_t i);
/* The backend named name ("slurm" when NULL or ""); NULL when unknown. */
const struct vg_orch_ops *vg_orch_find(const char *name);
/* "slurm" (the names in the table, comma-separated) for usage texts. */
const char *vg_orch_names(void);
/* Opens a backend by name.  Returns NULL with err naming the orchestrator
 * or what failed (a table entry that breaks the contract, too). */
struct vg_orch *vg_orch_open(const char *name, const struct vg_orch_conf *c, char *err, size_t errlen);
/* Opens the given ops (tests hand in their fake). */
struct vg_orch *vg_orch_open_ops(const struct vg_orch_ops *ops, const struct vg_orch_conf *c, char *err,
                                 size_t errlen);
void vg_orch_close(struct vg_orch *o);
/* Whether the backend says every capability in caps (enum vg_orch_cap bits). */
bool vg_orch_can(const struct vg_orch_ops *ops, unsigned caps);
/* Whether a table entry keeps the contract above: the required operations
 * set, and each optional one set exactly when its capability is said.  0, or
 * -1 with err naming the operation. */
int vg_orch_ops_check(const struct vg_orch_ops *ops, char *err, size_t errlen);

/* Sets o->err from a format; returns -1. */
int vg_orch_fail(struct vg_orch *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- built on the ops, the same for every backend ----------------------- */

/* Whether node state st was set by vigil (its reason starts with the prefix). */
bool vg_orch_ours(const struct vg_orch_node *st);
/* Resumes those of the nodes that vigil isolated (one query, at most one
 * request).  Returns how many, or -1. */
int vg_orch_resume_ours(struct vg_orch *o, const char *const *nodes, size_t n);
/* One node's state; -1 when unknown (err says so). */
int vg_orch_node(struct vg_orch *o, const char *name, struct vg_orch_node *out);
/* The jobs on this node by the backend's local_jobs (where: its node
 * daemon's record); 0, -1 when it cannot be read, and
 * -2 when the backend lists none on a node (out "" either way). */
int vg_orch_local_jobs(const struct vg_orch_ops *ops, const char *where, const char *node, char *out, size_t n);
/* This node's name: $VIGIL_NODE, else the scheduler's, else the host name
 * (without its domain). */
void vg_orch_local_node(const struct vg_orch_ops *ops, char *buf, size_t n);
/* This process's place in its job: the first backend of the table whose
 * task_rank knows it, else rank 0 of 1 (a process run by hand), restarts 0. */
void vg_orch_task_rank(struct vg_orch_task *t);
void vg_strv_free(char **v, size_t n);

#endif
