/* slurmjobs.h — the Slurm jobs on this node from slurmd's spool directory
 * (no RPC to slurmctld); see slurmjobs.c. */
#ifndef VG_SLURMJOBS_H
#define VG_SLURMJOBS_H
#include <stddef.h>

/* The jobs with a step on node, ascending, as "12,345" (whole ids that fit
 * in n); 0, or -1 when dir cannot be read (out ""). */
int vg_slurmd_jobs(const char *dir, const char *node, char *out, size_t n);

#endif
