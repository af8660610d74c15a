/* trainer.h — the checkpoints of `vigil trainer`, the stand-in for a
 * distributed training job in drills: rank 0 writes one file per checkpoint
 * (temp file, fsync, atomic rename, directory fsync), holding the step
 * number and an end marker; on start every rank resumes from the newest
 * complete one.  A torn or foreign file is never taken for a checkpoint. */
#ifndef VG_TRAINER_H
#define VG_TRAINER_H
#include <stdbool.h>
#include <stddef.h>

#define VG_CKPT_KEEP 3   /* the newest checkpoints kept; older ones are removed */

/* Parses a checkpoint file's text; true and *step when it is complete. */
bool vg_ckpt_parse(const char *text, size_t len, long *step);
/* Writes the checkpoint of step into dir.  0, or -1 with errno set. */
int vg_ckpt_write(const char *dir, long step);
/* The step of the newest complete checkpoint in dir; 0 when there is none
 * (a fresh start); -1 when dir cannot be read. */
long vg_ckpt_latest(const char *dir);

/* The ranks' progress, a file barrier standing in for the collective of a real
 * job (one rank dead or frozen stalls all, as NCCL would): each rank records
 * the step it finished in DIR/.progress-C-R (C: the restart count). */
int vg_progress_write(const char *dir, long restart, long rank, long step);
/* Whether all ntasks ranks of that restart finished step.  *from (0 at
 * first, kept between calls of one wait) is the first rank not yet seen
 * there: the ranks before it are not read again, and the scan stops at the
 * first rank behind. */
bool vg_progress_reached(const char *dir, long restart, long ntasks, long step, long *from);

#endif
