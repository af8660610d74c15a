/* goodput.h — the goodput of `vigil trainer` jobs, from their logs (the
 * stamped progress lines the drill reads, appended across restarts, with
 * Slurm's own srun/slurmstepd lines between them).  Each start of rank 0 is
 * an attempt; an attempt resumes from a checkpoint (its "resumed from step"
 * line, else the step before its first).  A step done in one attempt is
 * lost when a later attempt resumes from a checkpoint before it (the work is
 * done again, or never counted); every other step is productive.  Per job:
 *   steps             step lines (every attempt)
 *   productive_steps  those that count towards the result; lost_steps the rest
 *   restarts          attempts after the first
 *   restart_overhead_s  per restart, from the last line of the stopped
 *                     attempt (its last sign of progress) to the first new
 *                     step after resuming, summed
 *   productive_s, lost_s  step-time of those steps (a step's time: since the
 *                     previous line of rank 0 in its attempt; a checkpoint's
 *                     write, from its step line to its checkpoint line, is
 *                     no step's time)
 *   wall_s            first to last stamped line
 *   goodput           productive_s / wall_s
 * The first step after a restart lies inside both its step-time and the
 * restart's overhead; the figures are not meant to add up to wall_s. */
#ifndef VG_GOODPUT_H
#define VG_GOODPUT_H
#include <jansson.h>
#include <stddef.h>

struct vg_goodput;

/* One job's log, read line by line; name is how messages and the JSON call it. */
struct vg_goodput *vg_goodput_new(const char *name);
void vg_goodput_free(struct vg_goodput *g);
/* The next line (without its newline).  0, or -1 with "NAME:LINE: why" in
 * err when it is neither the trainer's (stamped: start, resumed from, step,
 * checkpoint, done; vigil launch's) nor Slurm's (srun, slurmstepd) nor
 * vigil's own diagnostics ("vigil: …"). */
int vg_goodput_line(struct vg_goodput *g, const char *line, char *err, size_t errlen);
/* The job's figures: {job, started, ended, wall_s, ranks, steps,
 * productive_steps, lost_steps, last_step, restarts, restart_overhead_s,
 * productive_s, lost_s, goodput, ckpt_every, done, resumes [{stopped_at,
 * last_step, resumed_from, first_step_at, lost_steps, overhead_s}]}; NULL
 * with err when the log holds no step. */
json_t *vg_goodput_finish(struct vg_goodput *g, char *err, size_t errlen);

/* Adds to jobs the jobs at path: a job log; a directory (every *.log file
 * below it, in name order); or a drill report (*.json, as `vigil drill
 * --json/--save` writes it: its runs' logs).  0, or -1 with err naming the
 * file (and line) at fault. */
int vg_goodput_add(json_t *jobs, const char *path, char *err, size_t errlen);
/* {jobs (stolen), totals {jobs, steps, productive_steps, lost_steps,
 * restarts, restart_overhead_s, productive_s, lost_s, wall_s, goodput}}. */
json_t *vg_goodput_summary(json_t *jobs);

#endif
