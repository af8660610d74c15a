/* drill.h — the timed node-failure drill (`vigil drill`): submit a requeueable
 * job, wait for steady progress, inject a fault on one of its nodes, and
 * time each stage of the recovery from authoritative sources — the injection
 * record (t0), the orchestrator's node and job states, the vigil incident
 * when a controller is known, and the job's own log.  Runs on any cluster an
 * orchestrator backend reaches; in a `vigil lab` it injects directly into
 * the node. */
#ifndef VG_DRILL_H
#define VG_DRILL_H
#include "drill/inject.h"
#include <jansson.h>
#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

enum vg_stage { VG_ST_DETECT = 0, VG_ST_ISOLATE, VG_ST_REQUEUE, VG_ST_RESTART, VG_ST_RESUME, VG_ST_COUNT };
const char *vg_stage_name(enum vg_stage s);   /* "detect" … "resume" */

/* Targets printed next to the figures (seconds): the public ClusterMAX bar
 * (detection within 2 min, replacement within 1 h) and vigil's own. */
#define VG_TARGET_CMAX_DETECT 120.0
#define VG_TARGET_CMAX_RESTART 3600.0
#define VG_TARGET_VIGIL_DETECT 1.0
#define VG_TARGET_VIGIL_ISOLATE 2.0
#define VG_TARGET_VIGIL_RESTART 10.0

/* ---- statistics ---------------------------------------------------------- */

/* median / p90 / max of n durations where a negative value is a stage that
 * never happened (counted as +infinity): a statistic that lands on one is
 * "none" (have_* false).  p90 is the nearest rank (ceil(0.9 n)); an even
 * count's median is the mean of the middle two. */
struct vg_stat {
    bool have_median, have_p90, have_max;
    double median, p90, max;
    int count, never;
};
void vg_stat_compute(const double *v, int n, struct vg_stat *st);
/* {"median":…, "p90":…, "max":…, "count":…, "never":…}, seconds or null
 * (vg_drill_summarize adds "unknown": runs whose job cannot report the stage). */
json_t *vg_stat_json(const struct vg_stat *st);

/* ---- the job's log ------------------------------------------------------- */

struct vg_joblog {
    regex_t step_re, resume_re;   /* group 1: the step number */
    char path[1024];
    long off;
    char carry[4096];
    size_t carry_len;
    /* what was read */
    long last_step;               /* the last `step` line's step (-1 none) */
    int64_t last_step_at;
    long max_step;
    long step_before;             /* the last step at or before `mark` */
    int64_t mark;                 /* t0: lines after it count for resume */
    long resumed_from;            /* -1 until a resume line after mark */
    int64_t resumed_at, resume_step_at;
    long resume_step;
    /* under vigil launch (--spares-in-job): after mark, the first `launch:
     * told` line, and the first step it started again (its nodes) */
    int64_t told_at, relaunched_at;
    char relaunch_nodes[256];
};
/* One line of a job's log as read (vg_joblog_parse). */
enum vg_jobline_kind {
    VG_JL_OTHER = 0,    /* none of these */
    VG_JL_STEP,         /* the step pattern matched: step */
    VG_JL_RESUME,       /* the resume pattern matched: step */
    VG_JL_LAUNCH,       /* vigil launch's own line (launch points at its " launch: ") */
    VG_JL_START,        /* the trainer's "start rank R/N restart C": rank, ntasks, step = C */
    VG_JL_CHECKPOINT,   /* the trainer's "checkpoint S": step */
    VG_JL_DONE,         /* the trainer's "done S steps": step */
};
struct vg_jobline {
    enum vg_jobline_kind kind;
    bool stamped;            /* led by an RFC 3339 stamp (its time is at) */
    int64_t at;              /* the stamp's time, else now */
    long step, rank, ntasks;
    const char *launch;      /* points into the line */
};
/* The trainer's lines, as the drill matches them by default. */
#define VG_TRAINER_STEP_RE "step ([0-9]+)"
#define VG_TRAINER_RESUME_RE "resumed from step ([0-9]+)"

/* Compiles the patterns (POSIX extended, group 1 = step).  -1 with err on a bad one. */
int vg_joblog_init(struct vg_joblog *l, const char *path, const char *step_re, const char *resume_re,
                   char *err, size_t errlen);
/* Reads the lines appended since the last call. */
void vg_joblog_poll(struct vg_joblog *l);
/* Feeds one line (without newline) read at now; a leading RFC 3339 stamp is
 * the line's time, else now. */
void vg_joblog_line(struct vg_joblog *l, const char *line, int64_t now);
/* What one line is (vg_joblog_line's reading, without its state): vigil
 * launch's lines first, then the resume and step patterns, then the trainer's
 * other words (the whole text after the stamp). */
void vg_joblog_parse(const struct vg_joblog *l, const char *line, int64_t now, struct vg_jobline *out);
void vg_joblog_free(struct vg_joblog *l);

/* ---- a drill ------------------------------------------------------------- */

#define VG_DRILL_VICTIMS_MAX 8

struct vg_drill_opts {
    const char *lab;             /* lab directory, or NULL for the orchestrator's cluster */
    const char *orchestrator;    /* NULL = slurm */
    const char *orch_config;     /* its configuration; NULL = its default */
    bool insecure_http;          /* Kubernetes: an http:// API server accepted (--insecure-http) */
    const char *workload;        /* Kubernetes: "job" (an Indexed Job, the default) or "jobset" */
    const char *checkpoint_pvc;  /* Kubernetes: the trainer's checkpoints on this PersistentVolumeClaim */
    const char *partition;       /* NULL = the default partition */
    int nodes;                   /* job size; default 2 */
    int gpus_per_node;           /* one rank per GPU (G tasks and G GPUs per node); 0: one rank per node */
    enum vg_inj_kind kind;
    int code;
    int gpu;                     /* -1: GPU 0, 1, 2… in successive runs */
    int runs;                    /* default 1 */
    int deadline_s;              /* per run, from t0; default 180 */
    int steady_steps;            /* steps before the fault; default ckpt_every + 2 */
    int step_ms, ckpt_every;     /* trainer: 200 ms, every 5 steps */
    int poll_ms;                 /* default 100 */
    const char *job_script;      /* the user's job instead of the trainer */
    const char *step_pattern;    /* default VG_TRAINER_STEP_RE */
    const char *resume_pattern;  /* default VG_TRAINER_RESUME_RE */
    const char *controller;      /* vigil controller URL, or NULL */
    const char *victim;          /* a node to hit; NULL = a job node other than the batch host */
    bool hit_batch_host;
    int victims;                 /* nodes hit at once (0 or 1: one): victim first, then other job nodes
                                  * (e.g. 3 of an NVL72 rack's trays: the domain rule takes the rack out) */
    int spares_in_job;           /* nodes + K allocated; vigil launch keeps K warm (docs/drill.md) */
    const char *workdir;         /* job scripts, logs, checkpoints; NULL = LAB/drill or ./vigil-drill */
    bool shared_workdir;         /* every node mounts workdir at the same path: where the scheduler keeps the
                                  * job's output to itself (Kubernetes), the trainer's checkpoints and log go
                                  * there (hostPath), so a restarted job resumes and the drill sees it */
    const char *via;             /* inject on a real node: srun|ssh */
    const char *self;            /* the vigil binary; NULL = /proc/self/exe */
    const char *fault_name;      /* as given: "xid:79" */
    const char *kmsg;            /* the node's kernel log the injection writes ("{node}": the victim's name);
                                  * NULL: /dev/kmsg */
    struct vg_orch *orch;        /* the orchestrator, already opened (the caller closes it); NULL: opened here */
    bool crash_leader;           /* controller-crash (a lab of several controllers): the leader is killed a moment
                                  * before the fault, the takeover timed from the kill */
};

/* ---- faults beyond a node's (ctlcrash.c) --------------------------------- */

/* A drill fault that is more than a node's: the node's fault it injects
 * (kind, code) and what it does around it. */
struct vg_drill_fault {
    const char *name;            /* "controller-crash" */
    enum vg_inj_kind kind;
    int code;
    bool crash_leader;           /* SIGKILL the lab's leading controller a moment before the injection */
};
/* The fault of that name, or NULL. */
const struct vg_drill_fault *vg_drill_fault_find(const char *name);

/* A leading controller killed, and the one that took over. */
struct vg_ctl_crash {
    char killed[64];             /* its URL */
    pid_t pid;
    long long killed_term;
    int64_t killed_at;           /* wall-clock ms of the SIGKILL */
    char leader[64];             /* the controller that leads since, "" until one does */
    long long term;
    int64_t took_at;             /* wall-clock ms its /healthz was first seen saying leader; 0 until then */
};
/* Kills the leader among the lab's controllers (asked by /healthz) with
 * SIGKILL; 0, or -1 with err (fewer than two controllers, none leads). */
int vg_drill_crash_leader(const char *lab, struct vg_ctl_crash *c, char *err, size_t errlen);
/* Whether another controller of the lab now says it leads (asked once each;
 * c gets it the first time). */
bool vg_drill_takeover(const char *lab, struct vg_ctl_crash *c);

/* Starts the killed controller again (on its own URL); 0, or -1 with err. */
int vg_drill_crash_restart(const char *lab, const struct vg_ctl_crash *c, char *err, size_t errlen);
/* How many of the lab's controllers run. */
int vg_drill_live_controllers(const char *lab);

/* Runs the drill; returns the report (the --json document), or NULL with err
 * (nothing could be measured: no job, bad options). */
json_t *vg_drill(const struct vg_drill_opts *o, char *err, size_t errlen);
/* True when every run went through every stage. */
bool vg_drill_recovered(const json_t *report);

/* Fills the per-stage statistics of a report from its runs (used by vg_drill
 * and the tests). */
void vg_drill_summarize(json_t *report);
/* "a 64-GPU job: 8 nodes × 8 GPUs" or "a 3-node job" (UTF-8), from a report. */
void vg_drill_size(const json_t *report, char *buf, size_t n);
/* "vigil, xid:79" or "plain Slurm (vigil off), node-crash". */
void vg_drill_label(const json_t *report, char *buf, size_t n);
/* Several reports side by side: per-stage medians (terminal), and one HTML
 * page with a bar chart per stage; 0 or -1. */
void vg_drill_compare_print(FILE *f, json_t *const *reps, size_t n);
int vg_drill_compare_html(FILE *f, json_t *const *reps, size_t n);
/* The terminal summary. */
void vg_drill_print(FILE *f, const json_t *report);
/* The self-contained HTML page (inline CSS and SVG).  0 or -1. */
int vg_drill_html(FILE *f, const json_t *report);

#endif
