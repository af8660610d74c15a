/* schedule.h — burn-in on idle nodes, never in the way (`vigil burnin
 * --schedule`, docs/burnin.md): each pass of the scheduler submits one
 * low-priority, preemptible job per idle node whose budget (minutes per
 * node per rolling hour) is not spent, through the orchestrator, and keeps
 * every pass it submitted (node, job, start, end, suite, result) in a small
 * JSON state file, written atomically.  A pass a production job preempted
 * counts as `preempted`, and against the budget only for what it ran. */
#ifndef VG_BURNIN_SCHEDULE_H
#define VG_BURNIN_SCHEDULE_H
#include "burnin/burnin.h"
#include "orch/orch.h"
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* ---- the state file (sched_state.c) ------------------------------------- */

/* One scheduled pass.  result: "pending" (submitted, not started),
 * "running", then "pass", "fail", "unknown" or "preempted". */
struct vg_bi_pass {
    char node[64], job[128], suite[16], result[16];
    char output[512];          /* the job's output file (holds the pass's JSON document) */
    char detail[256];          /* why the result is what it is, "" */
    int64_t submitted_ms;
    int64_t start_ms, end_ms;  /* 0: not started / not ended (or never known) */
};
struct vg_bi_state {
    struct vg_bi_pass *p;
    size_t n;
};

/* A missing file is an empty state.  -1 with "FILE: what" in err when it
 * is not a state file. */
int vg_bi_state_load(const char *path, struct vg_bi_state *st, char *err, size_t errlen);
/* Writes path atomically (a temporary file renamed over it). */
int vg_bi_state_save(const char *path, const struct vg_bi_state *st, char *err, size_t errlen);
int vg_bi_state_parse(const char *text, struct vg_bi_state *st, char *err, size_t errlen);
json_t *vg_bi_state_to_json(const struct vg_bi_state *st);
void vg_bi_state_free(struct vg_bi_state *st);
struct vg_bi_pass *vg_bi_state_add(struct vg_bi_state *st);
/* Drops passes that ended before `before` (their output files too). */
void vg_bi_state_prune(struct vg_bi_state *st, int64_t before);
/* Takes PATH.lock (one scheduler at a time): the fd, or -1 (err says why). */
int vg_bi_state_lock(const char *path, char *err, size_t errlen);

/* Submitted and not ended yet. */
bool vg_bi_pass_inflight(const struct vg_bi_pass *p);
/* The time node's passes ran within [now - window, now] (a running pass up
 * to now; a pass never seen running: nothing). */
int64_t vg_bi_budget_used_ms(const struct vg_bi_state *st, const char *node, int64_t now, int64_t window);

/* ---- one scheduling pass (schedule.c) ------------------------------------ */

struct vg_bi_sched_opts {
    const char *partition;       /* the burn-in partition (low PriorityTier, preemptible) */
    enum vg_bi_suite suite;
    int64_t budget_ms;           /* per node per window */
    int64_t window_ms;           /* the rolling window (an hour) */
    const char *jobs_dir;        /* the jobs' scripts and output files (must exist on the nodes) */
    const char *const *argv;     /* what the job runs, without the node: NODE_FLAG NODE is appended */
    const char *node_flag;       /* "--node" (this machine's pass) or "--nodes" (a lab's node) */
    const char *spare_pool;      /* the hot-spare pool (orch pool_get): its nodes are held for promotion
                                  * (on Slurm a reservation no burn-in job may use) and get no pass; NULL */
    char **only;                 /* consider only these nodes (NULL: all), nonly of them */
    size_t nonly;
    int64_t now_ms;              /* 0: the clock */
};

/* The least a suite's pass needs (1, 5 and 30 minutes). */
int64_t vg_bi_suite_min_ms(enum vg_bi_suite s);

/* Updates the passes in flight (ended: result, start and end from the
 * scheduler, the result from the job's output), then submits a pass on each
 * idle node of the partition with budget left.  *report gets what was done
 * (JSON).  Returns 0, 1 when the scheduler failed or a pass ended `fail`
 * (err says which), 2 when no node is in the partition or the orchestrator
 * cannot do it (err starts with the option at fault). */
int vg_bi_schedule(struct vg_orch *o, const struct vg_bi_sched_opts *so, struct vg_bi_state *st, json_t **report,
                   char *err, size_t errlen);

#endif
