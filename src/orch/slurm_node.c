/* slurm_node.c — Slurm's node-local operations (orch.h local_node,
 * local_jobs, task_rank), read on the node without asking slurmctld.
 * The jobs on this node come from slurmd's spool directory: every job step
 * running here has its slurmstepd socket there, named NODE_JOBID.STEPID (how
 * `scontrol listpids` and pam_slurm_adopt find the steps of a node).  The
 * agent attaches the list to its events and heartbeats; the controller names
 * those jobs in the incident when Slurm's DOWN requeued them (it never acts
 * on the list).  A task's rank and its job's restarts are the variables
 * srun and sbatch set. */
#include "orch/slurm.h"
#include "util/strutil.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_JOBS 64

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* NODE_JOBID.STEPID → JOBID, or 0 when the name is not a step of node. */
static long step_job(const char *name, const char *node)
{
    size_t nl = strlen(node);
    if (strncmp(name, node, nl) || name[nl] != '_') return 0;
    const char *dot = strchr(name + nl + 1, '.');
    if (!dot || dot == name + nl + 1 || !dot[1]) return 0;
    long job = 0;
    for (const char *p = name + nl + 1; p < dot; p++) {
        if (*p < '0' || *p > '9' || job > 100000000000L) return 0;
        job = job * 10 + (*p - '0');
    }
    for (const char *p = dot + 1; *p; p++)
        if (*p < '0' || *p > '9') return 0;
    return job;
}

int vg_slurm_local_jobs(const char *dir, const char *node, char *out, size_t n)
{
    if (n) out[0] = 0;
    DIR *d = opendir(dir);
    if (!d) return -1;
    long jobs[MAX_JOBS];
    size_t nj = 0;
    for (struct dirent *de; (de = readdir(d)) && nj < MAX_JOBS;) {
        long j = step_job(de->d_name, node);
        size_t i = 0;
        while (i < nj && jobs[i] != j) i++;
        if (j > 0 && i == nj) jobs[nj++] = j;
    }
    closedir(d);
    qsort(jobs, nj, sizeof *jobs, cmp_long);
    size_t k = 0;
    for (size_t i = 0; i < nj; i++) {
        char item[32];
        int w = snprintf(item, sizeof item, "%s%ld", k ? "," : "", jobs[i]);
        if (k + (size_t)w >= n) break;   /* whole ids only */
        memcpy(out + k, item, (size_t)w + 1);
        k += (size_t)w;
    }
    return 0;
}

bool vg_slurm_local_node(char *buf, size_t n)
{
    return vg_env_copy("SLURMD_NODENAME", buf, n);
}

/* SLURM_PROCID of SLURM_NTASKS; SLURM_RESTART_COUNT is the job's requeues,
 * the same in every task. */
bool vg_slurm_task_rank(struct vg_orch_task *t)
{
    if (!getenv("SLURM_PROCID")) return false;
    t->rank = vg_env_long("SLURM_PROCID", 0);
    t->ntasks = vg_env_long("SLURM_NTASKS", 1);
    t->restarts = vg_env_long("SLURM_RESTART_COUNT", 0);
    t->restarts_known = true;
    return true;
}
