/* slurm.h — the Slurm adapter: the only code in vigil that knows scontrol,
 * squeue and sinfo exist.  Every call spawns the command with argv (never a
 * shell) under a timeout; calls are batched (one `scontrol update` for many
 * nodes, one `squeue` for many nodes) and counted, so callers can report how
 * many Slurm commands an incident cost. */
#ifndef VG_SLURM_H
#define VG_SLURM_H
#include "orch/orch.h"
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

/* The comment `vigil launch --spares K` gives its job: "vigil:spares=K". */
#define VG_INALLOC_COMMENT "vigil:spares="

struct vg_slurm {
    const char *conf;      /* SLURM_CONF to pass to the commands, or NULL for the default */
    int timeout_ms;        /* per command; 0 = 10 s */
    unsigned calls;        /* commands issued so far */
    char err[256];         /* last error, one line */
};

struct vg_node_state {
    char name[64];
    char state[64];        /* scontrol's State=, e.g. "IDLE+DRAIN", "DOWN+NOT_RESPONDING" */
    char reason[256];      /* Reason= without the "[user@time]" suffix, "" when none */
    char partitions[128];
    char features[128];    /* AvailableFeatures */
    char addr[64];         /* NodeAddr */
    int port;              /* Port (slurmd's), 0 when not shown */
    bool drain, down, responding;
};

/* All nodes (nodelist NULL) or the named ones ("n1,n3" or "n[1-3]"): one
 * `scontrol show node -o` call.  *out is malloc'd.  Returns 0 or -1 (err set). */
int vg_slurm_nodes(struct vg_slurm *s, const char *nodelist, struct vg_node_state **out, size_t *n);
/* state: "drain", "down", "resume" (or any scontrol State= value); one call for
 * all nodes.  reason is required for drain/down and must start with "vigil:". */
int vg_slurm_set_state(struct vg_slurm *s, const char *const *nodes, size_t n, const char *state,
                       const char *reason);
/* A running job as `squeue -h -o "%A %B %k"` shows it: enough to tell it
 * (orch tell, vigil launch) without another call. */
struct vg_job_brief {
    long id;
    char batch_host[64];   /* "" when the line has no more than the id */
    char comment[128];     /* "(null)" mapped to "" */
    bool requeued;         /* one of known, requeued (pending again, or completing off the nodes,
                            * its restart counted): not on the nodes any more */
};
/* Job ids running (or completing) on any of the nodes: one `scontrol show job` call;
 * out_ms: when they went out (0 = now), see vg_slurm_parse_jobs_on. */
int vg_slurm_jobs_on(struct vg_slurm *s, const char *const *nodes, size_t n, const char *known, int64_t out_ms,
                     struct vg_job_brief **jobs, size_t *njobs);
/* One `scontrol requeue` for all the jobs.  A job Slurm has requeued
 * already (its DOWN requeues a node's running jobs that may be requeued:
 * "Job is pending execution for job N") counts as done; any other refusal
 * fails with Slurm's lines. */
int vg_slurm_requeue(struct vg_slurm *s, const long *jobs, size_t n);
/* scontrol requeue's error lines without the benign ones, "; "-joined into
 * out; whether any is left. */
bool vg_slurm_requeue_refused(const char *err, char *out, size_t n);

struct vg_job_state {
    long id;
    char name[128];
    char state[32];        /* JobState=, e.g. "RUNNING", "PENDING", "NODE_FAIL" */
    char reason[128];      /* Reason=, e.g. "BeginTime", "None" */
    char nodelist[256];    /* NodeList=, "(null)" mapped to "" */
    char batch_host[64];   /* BatchHost= */
    char comment[128];     /* Comment=, "(null)" mapped to "" */
    int restarts;          /* Restarts= */
    int64_t start_ms;      /* StartTime= (local time, as slurmctld prints it); 0 when "Unknown"/"None" */
    int64_t end_ms;        /* EndTime= (the expected end while it runs); 0 when "Unknown"/"None" */
};
/* One `scontrol show job -o ID`.  Returns 0, or -1 (err set; also when the
 * job is unknown). */
int vg_slurm_job(struct vg_slurm *s, long id, struct vg_job_state *out);

/* `sbatch --parsable OPTS… SCRIPT`: submits a batch job; *jobid gets its id.
 * opts are whole sbatch arguments ("--requeue", "-N3", "--output=FILE"). */
int vg_slurm_submit(struct vg_slurm *s, const char *const *opts, size_t nopts, const char *script, long *jobid);
/* `scancel ID`. */
int vg_slurm_cancel(struct vg_slurm *s, long id);
/* `scancel --batch --signal=SIG ID`: the signal to the job's batch script only. */
int vg_slurm_signal_batch(struct vg_slurm *s, long id, const char *sig);
/* `scontrol update JobId=ID Comment=TEXT` (TEXT without blanks). */
int vg_slurm_set_comment(struct vg_slurm *s, long id, const char *text);

/* The parsers behind the calls, on the commands' text (tests and fuzzing). */
int vg_slurm_parse_nodes(const char *text, struct vg_node_state **out, size_t *n);
int vg_slurm_parse_job(const char *text, struct vg_job_state *out);
/* The jobs running or completing on any of nodes (in NodeList, or as
 * BatchHost when not completing), from `scontrol show job -o` (a line per
 * job; lines that are not a job skipped), those that ended NODE_FAIL there or
 * ended FAILED there and may be requeued, in the VG_SLURM_RECENT_END_MS
 * before out_ms, when the nodes went out (the fault killed their batch
 * script first), and the running jobs of known
 * ("12,345", the nodes' agents' list) that hold spares of their own (a
 * --no-kill job no longer shows a node its DOWN took) when the scheduler's
 * record shows the allocation held one of the nodes (in NodeList still, or
 * shrunk — ResizeTime — at out_ms or later), and, marked
 * requeued, the jobs of known that are pending again after a run, or
 * completing elsewhere with their restart counted (the DOWN requeued them);
 * duplicates dropped; -1 on a job line without a valid JobId. */
#define VG_SLURM_RECENT_END_MS 30000
int vg_slurm_parse_jobs_on(const char *text, const char *const *nodes, size_t n, const char *known, int64_t out_ms,
                           struct vg_job_brief **jobs, size_t *njobs);

/* The nodes of a reservation (`scontrol show reservation NAME -o`, one call),
 * expanded.  Returns 0 when it exists, 1 when it does not (*n = 0), -1 on error. */
int vg_slurm_reservation_nodes(struct vg_slurm *s, const char *name, char ***nodes, size_t *n);
/* Makes the reservation hold exactly these nodes, in one call: creates it
 * (Users=root, StartTime=now, Duration=infinite, Flags=IGNORE_JOBS) when it
 * does not exist, updates its node list when it does, deletes it when n == 0. */
int vg_slurm_reservation_set(struct vg_slurm *s, const char *name, const char *const *nodes, size_t n, bool exists);

/* Configuration as key/value pairs: `scontrol show config` ("Key = Value"
 * lines; "(null)" values become "") or a slurm.conf/cgroup.conf file
 * ("Key=Value", comments, NodeName=/PartitionName= lines skipped).  Keys
 * compare case-insensitively; the first occurrence wins for show config, the
 * last for a file (as Slurm reads it). */
struct vg_slurm_kv {
    char *key, *value;
};
int vg_slurm_show_config(struct vg_slurm *s, struct vg_slurm_kv **kv, size_t *n);
int vg_slurm_parse_config(const char *text, struct vg_slurm_kv **kv, size_t *n);
int vg_slurm_parse_conf_file(const char *text, struct vg_slurm_kv **kv, size_t *n);
/* `sdiag`: slurmctld's RPC counts since its statistics were last reset. */
#define VG_SDIAG_MAX 64
struct vg_sdiag_row {
    char name[48];
    long id;                           /* uid, or the RPC number */
    long count;
};
struct vg_sdiag {
    int64_t at, since;                 /* "sdiag output at" and "Data since", seconds since the epoch */
    struct vg_sdiag_row users[VG_SDIAG_MAX], types[VG_SDIAG_MAX];
    size_t nusers, ntypes;             /* by user (id: uid), by message type (id: the RPC number) */
};
/* Parses sdiag's text; -1 when it is not sdiag output. */
int vg_slurm_parse_sdiag(const char *text, struct vg_sdiag *d);
/* One `sdiag` call, parsed. */
int vg_slurm_sdiag(struct vg_slurm *s, struct vg_sdiag *d);

/* The value of key, or NULL when absent. */
const char *vg_slurm_kv_get(const struct vg_slurm_kv *kv, size_t n, const char *key);
void vg_slurm_kv_free(struct vg_slurm_kv *kv, size_t n);
/* The value of opt in a comma-separated "a=1,b=2,flag" list (e.g. AuthInfo's
 * cred_expire, SchedulerParameters' sched_interval) copied into buf; "" for a
 * bare flag.  Returns false when absent. */
bool vg_slurm_param(const char *list, const char *opt, char *buf, size_t n);

/* The node-local operations (slurm_node.c).  The jobs with a step on node,
 * from slurmd's spool directory dir, ascending, as "12,345" (whole ids that
 * fit in n); 0, or -1 when dir cannot be read (out ""). */
int vg_slurm_local_jobs(const char *dir, const char *node, char *out, size_t n);
/* $SLURMD_NODENAME (set in a job's environment). */
bool vg_slurm_local_node(char *buf, size_t n);
/* SLURM_PROCID, SLURM_NTASKS, SLURM_RESTART_COUNT; false outside a task. */
bool vg_slurm_task_rank(struct vg_orch_task *t);

#endif
