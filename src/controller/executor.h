/* executor.h — the controller's hands: applies the policy's decisions to Slurm
 * (through the adapter) for each new incident, and records every step in the
 * store.  One worker thread acts on incidents in arrival order; a second runs
 * repairs (remediation command, then the health/burn-in command) so a slow
 * repair never delays isolating the next failed node.  Per incident:
 *   1 call   scontrol show node -o              (the cluster, for the policy)
 *   1 call   squeue -w NODES                    (jobs to requeue; DOWN only)
 *   1 call   scontrol requeue JOBS              (DOWN only, when jobs ran there; before
 *                                                the DOWN, so slurmctld never has to notice)
 *   1 call   scontrol update NodeName=… State=DOWN|DRAIN Reason="vigil: …"
 *   1 call   scontrol update ReservationName=…  (a hot spare joins production)
 * The spare pool is a Slurm reservation (Users=root, no end): nodes in it are
 * up and healthy but no job is scheduled on them; promoting a spare is one
 * update of the reservation's node list, effective at once, and a repaired
 * node rejoins the pool the same way. */
#ifndef VG_EXECUTOR_H
#define VG_EXECUTOR_H
#include "controller/policy.h"
#include "controller/store.h"
#include "core/event.h"
#include "util/sbuf.h"
#include <stdbool.h>

struct vg_executor;

/* act=false: decide and record, but never call Slurm (a dry run). */
struct vg_executor *vg_executor_start(struct vg_store *st, const struct vg_policy *p, const char *slurm_conf,
                                      bool act);
/* Queues a new incident (called from the intake; returns at once). */
void vg_executor_submit(struct vg_executor *x, int64_t incident, const struct vg_event *e);
/* Prometheus lines: actions taken, holds, Slurm commands issued. */
void vg_executor_metrics(struct vg_executor *x, struct sbuf *out);
/* Finishes the queued work, then stops both threads. */
void vg_executor_stop(struct vg_executor *x);

#endif
