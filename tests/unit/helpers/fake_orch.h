/* fake_orch.h — the in-memory orchestrator double of the unit tests; see
 * fake_orch.c. */
#ifndef VG_FAKE_ORCH_H
#define VG_FAKE_ORCH_H
#include "orch/orch.h"

#define FAKE_MAX 1024

struct fake_job {
    char id[32], node[64];
    bool running;
    bool failed;          /* ended FAILED a moment ago: listed, not running */
    int restarts;
    /* submitted through job_submit: what job_get answers (state "" while
     * pending), and what was asked */
    char state[32], partition[64], argv[512];
    bool submitted, exclusive;
    int time_limit_s;
    int64_t started_ms, ended_ms;
};

struct fake_orch {
    struct vg_orch_node nodes[FAKE_MAX];
    size_t nnodes;
    struct fake_job jobs[FAKE_MAX];
    size_t njobs;
    char pool[FAKE_MAX][64];
    size_t npool;
    bool pool_exists;
    bool down;            /* every call fails as if the scheduler were unreachable */
    int fail_isolate;     /* the next N isolate calls fail */
    int fail_jobs_on;     /* the next N jobs_on calls fail (the scheduler gone mid-action) */
    int64_t jobs_out_ms;  /* out_ms of the last jobs_on call */
    unsigned node_reads;  /* nodes() calls */
    unsigned probes;      /* node_alive() calls: a node that is not responding does not answer */
    bool probe_fails;     /* node_alive cannot tell (-1), as when the scheduler cannot be asked */
    char epoch[32];       /* the scheduler's epoch (its controller's start); "" = "1" */
    unsigned epoch_reads; /* epoch() calls */
    int next_job;         /* the id job_submit gives next (from 100) */
    bool run_submitted;   /* a submitted job runs at once on the first node free for it (not out, not a spare
                           * of the pool, running nothing), as a scheduler with room does; else it stays
                           * pending until a test sets its state */
    int hold_nodes;       /* nodes() waits while set (__atomic): incidents queued meanwhile come as one batch */
    char log[4096];       /* "down n2;requeue 7;pool n4;" … */
};

extern struct fake_orch fake;
extern const struct vg_orch_ops fake_orch_ops;
/* The same with Slurm's DOWN: it requeues the node's running jobs itself
 * (VG_CAP_DOWN_REQUEUES), so they are no longer listed on the node. */
extern const struct vg_orch_ops fake_slurm_orch_ops;

void fake_reset(void);
void fake_add_node(const char *name, const char *features);
void fake_add_job(const char *id, const char *node);
struct vg_orch_node *fake_node(const char *name);

#endif
