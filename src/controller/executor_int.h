/* executor_int.h — what the executor (executor.c: queues, threads, batches,
 * retries) shares with its remediation steps (remedy.c: one small struct of
 * function pointers per step, in one table per verdict), the spare pool
 * both change (sparepool.c), its store watch and its views. */
#ifndef VG_EXECUTOR_INT_H
#define VG_EXECUTOR_INT_H
#include "controller/executor.h"
#include "util/histogram.h"
#include <pthread.h>

#define VG_GATES_MAX 16        /* new nodes in burn-in at once (newnode.c) */

struct item {
    int64_t incident;
    struct vg_event e;
    char node[64];
    int attempts;              /* failed tries so far */
    int64_t isolated_ms;       /* when the node went out (vg_clock_ms), 0: before this process */
    int64_t due;               /* vg_mono_ms() of the next try (retries) */
    int64_t jobs_unread_ms;    /* the node went out then (vg_now_ms) and the jobs read after it
                                * failed: this retry reads them, tells and requeues, nothing else */
    char *plan;                /* a committed decision resumed after a restart (its JSON): its steps run
                                * again, nothing is decided; NULL: decide.  Owned (item_free) */
    int rung;                  /* repair: the rung to resume at (its index among the cause's), -1: start */
    bool rung_done;            /* repair: that rung's command finished ok before the restart */
    struct item *next;
};

struct queue {
    struct item *head, *tail;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stop;
};

struct vg_executor {
    struct vg_store *store;
    const struct vg_policy *policy;
    struct vg_orch *orch;
    bool act;
    struct vg_exec_gate gate;  /* may_act NULL: always */
    /* the incidents taken up, by id (sorted): one accepted by another
     * controller on the same store is taken up once, by the store watch */
    pthread_mutex_t taken_lock;
    int64_t *taken;
    size_t ntaken, captaken;
    pthread_t watcher;
    bool watching, watch_stop;
    int watch_ms;
    pthread_cond_t watch_wake;
    struct queue work, repair;
    struct item *retries;      /* the worker's own, soonest first */
    size_t nretries;
    pthread_t worker, repairer;
    bool busy;                 /* the worker holds a batch */
    struct vg_isolation_log log;
    pthread_mutex_t orch_lock; /* one orchestrator call at a time */
    pthread_mutex_t pool_lock; /* the spare pool, shared by both threads */
    char **pool;
    size_t npool;
    bool pool_exists;
    unsigned long actions, holds, recorded, failures, retried, returned;
    unsigned reconcile_calls;  /* of orch->calls: periodic reads of the cluster view (the worker's own
                                * clock), not caused by an incident */
    struct vg_orch_node *view; /* the cluster view: the worker's, read periodically, updated with what
                                * vigil isolated */
    size_t nview;
    int64_t view_mono;         /* when it was read; 0: never */
    int64_t view_tried;        /* when a read was last tried */
    struct vg_histogram to_isolated;  /* the signal's time → the node isolated */
    struct vg_histogram to_requeued;  /* the signal's time → its jobs requeued */
    struct vg_histogram repair_s;     /* isolated → back in service through the health check */
    struct vg_histogram mttr;         /* detected → returned (by vigil or by someone else) */
    /* the repair ladder, per rung of the policy (its index in ladder.rung); atomics */
    unsigned long rung_ok[VG_RUNGS_MAX], rung_failed[VG_RUNGS_MAX];
    unsigned long checks_passed, checks_failed, rma_handoffs, rma_failed;
    unsigned long gates_passed, gates_failed;   /* the burn-in gate before a return */
    struct vg_gate *gates[VG_GATES_MAX];   /* new nodes' burn-in threads (the worker's; newnode.c) */
    size_t ngates;
    unsigned long new_passed, new_failed; /* atomics */
    int64_t *repairing;               /* incidents queued for or in repair (under pool_lock) */
    size_t nrepairing;
    char id[16];                      /* this controller's (the store's): stamped in every reason it writes */
    char epoch[64];                   /* the scheduler's epoch as last read (the worker's); "" unknown */
    bool epoch_stale;                 /* a call failed since: read it again with the next view */
    char foreign[8][16];              /* other controllers' ids seen in node reasons (the worker's) */
    size_t nforeign;                  /* atomic for /metrics */
    unsigned long reasserted;         /* node states put back after the scheduler lost them */
};

/* One incident being acted on: the decision and what the steps did. */
struct act {
    struct item *it;
    struct vg_decision d;
    char what[160];
    char **jobs;               /* to requeue */
    size_t njobs;
    char **told;               /* told to restart on a spare of their own (orch tell) */
    size_t ntold;
    char **moved;              /* requeued by the DOWN itself (orch jobs_on, down_requeues) */
    size_t nmoved;
    int64_t out_ms;            /* when the isolation took the nodes out (vg_now_ms), 0 = not yet */
    bool jobs_unread;          /* the jobs read after the isolation failed */
    char err[300];             /* why a required step failed */
    bool fenced;               /* because this controller is no longer the leader: the incident is left to it */
};

/* A remediation step: apply returns 0 done, 1 nothing to do, -1 failed (err
 * in a->err; a required step's failure fails the incident, which is retried). */
struct vg_remedy_step {
    const char *name;
    bool required;
    int (*apply)(struct vg_executor *x, struct act *a);
};

/* The new-node gate (newnode.c): one look at the cluster (the worker calls
 * it every new_node_every), and the wait for running gates at stop until
 * deadline_mono (false: one still runs). */
void vg_newnode_look(struct vg_executor *x);
bool vg_newnode_stop(struct vg_executor *x, int64_t deadline_mono);

/* The burn-in gate (the policy's burnin_gate) with suite on node, its result
 * kept as burn-in evidence under source: 0 passed, -1 not (out says why). */
int vg_remedy_gate(struct vg_executor *x, const char *node, const char *suite, const char *source, char *out, size_t n);

/* The steps of a verdict (VG_OP_DOWN / VG_OP_DRAIN) on the backend, NULL-name terminated. */
const struct vg_remedy_step *vg_remedy_steps(enum vg_verdict_op op, const struct vg_orch_ops *ops);
/* For a jobs read that failed after the DOWN (act.jobs_unread), retried on
 * its own: read (required), tell, requeue. */
extern const struct vg_remedy_step vg_remedy_late_jobs_steps[];
/* After isolation: remediation command, health check, return to service. */
void vg_remedy_repair(struct vg_executor *x, struct item *it);

/* sparepool.c: the hot-spare pool, the executor's list and the
 * orchestrator's kept the same.  At start: the orchestrator's pool, else the
 * policy's spares healthy now (the pool is then made). */
void vg_pool_init(struct vg_executor *x);
/* nodes (promoted) leave the pool; 0, or -1 with the orchestrator's error in err. */
int vg_pool_take(struct vg_executor *x, char *const *nodes, size_t n, char *err, size_t errlen);
/* node (returned to service) joins it, written to the orchestrator when the
 * policy has spares or the pool exists; 0, or -1 with err. */
int vg_pool_give(struct vg_executor *x, const char *node, char *err, size_t errlen);
/* executor.c, for its store watch: queues it. */
void vg_exec_push(struct queue *q, struct item *it);
/* executor_view.c: marks an incident as queued for or in repair (on) or done. */
void vg_exec_repairing(struct vg_executor *x, int64_t id, bool on);
/* The repair ladder's counters in Prometheus lines. */
void vg_executor_ladder_metrics(struct vg_executor *x, struct sbuf *out);
/* One observation of detected → returned for incident inc (the store's JSON). */
void vg_exec_observe_mttr(struct vg_executor *x, const json_t *inc, int64_t returned_ms);

/* Marks incident id taken up; false when it already was. */
bool vg_exec_take(struct vg_executor *x, int64_t id);
/* An incident as the store has it ({id, node, event}) as a work item; NULL
 * when its event does not read back. */
struct item *vg_exec_stored_item(const json_t *inc);
/* The store watch (executor_watch.c): every interval_ms, and when woken, the
 * incidents the store has that no decision was taken on yet (those another
 * controller accepted) go to the worker, each once. */
void vg_exec_watch_start(struct vg_executor *x, int interval_ms);
void vg_exec_watch_stop(struct vg_executor *x);

#endif
