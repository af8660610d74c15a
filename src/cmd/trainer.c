/* trainer.c — `vigil trainer --ckpt-dir DIR [--steps N] [--step-ms MS]
 * [--ckpt-every K] [--log FILE]`: a stand-in for a distributed training
 * job, run with srun on N nodes.  Each rank (its place in the job as the
 * scheduler's environment gives it, orch.h task_rank: SLURM_PROCID of
 * SLURM_NTASKS; restart SLURM_RESTART_COUNT × 1000 + VIGIL_LAUNCH_RESTART
 * under vigil launch) resumes from the newest complete checkpoint and does timed steps;
 * rank 0 writes a checkpoint every K steps and prints the progress lines the
 * drill reads, each led by an RFC 3339 UTC timestamp:
 *   start rank R/N restart C · resumed from step S · step S · checkpoint S
 * In a Kubernetes Indexed Job the rank is the pod's JOB_COMPLETION_INDEX of
 * VIGIL_NTASKS; where the scheduler keeps no restart count every task
 * shares there is none to key a collective on, so the ranks step side by
 * side without one.  --log appends
 * the same lines to FILE (where nothing collects the job's output). */
#include "cmd/cmd.h"
#include "drill/trainer.h"
#include "orch/orch.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#define TRAINER_USAGE \
    "usage: vigil trainer --ckpt-dir DIR [--steps N] [--step-ms MS] [--ckpt-every K] [--log FILE]\n" \
    "  (run with srun; reads SLURM_PROCID, SLURM_NTASKS, SLURM_RESTART_COUNT;\n" \
    "   in a Kubernetes Indexed Job JOB_COMPLETION_INDEX and VIGIL_NTASKS)\n"

static long env_long(const char *name, long def)
{
    const char *v = getenv(name);
    long x;
    return v && vg_parse_long(v, &x) && x >= 0 ? x : def;
}

static int opt_long(const char *name, const char *v, long min, long *out)
{
    if (!vg_parse_long(v, out) || *out < min || *out > 100000000)
        return vg_input_error("trainer: %s: '%s' is not a number >= %ld", name, v, min);
    return 0;
}

int cmd_trainer(int argc, char **argv)
{
    static const struct option opts[] = {
        { "ckpt-dir", required_argument, 0, 'c' }, { "steps", required_argument, 0, 's' },
        { "step-ms", required_argument, 0, 'm' },  { "ckpt-every", required_argument, 0, 'k' },
        { "log", required_argument, 0, 'l' },      { "help", no_argument, 0, 'h' },
        { 0, 0, 0, 0 },
    };
    const char *dir = NULL, *logfile = NULL;
    long steps = 100, step_ms = 200, every = 10;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'c': dir = optarg; break;
        case 's': if (opt_long("--steps", optarg, 1, &steps)) return VG_EXIT_INPUT; break;
        case 'm': if (opt_long("--step-ms", optarg, 0, &step_ms)) return VG_EXIT_INPUT; break;
        case 'k': if (opt_long("--ckpt-every", optarg, 1, &every)) return VG_EXIT_INPUT; break;
        case 'l': logfile = optarg; break;
        case 'h': fputs(TRAINER_USAGE, stdout); return 0;
        default: fputs(TRAINER_USAGE, stderr); return VG_EXIT_INPUT;
        }
    }
    if (optind < argc) return vg_input_error("trainer: unexpected argument '%s'", argv[optind]);
    if (!dir) return vg_input_error("trainer: --ckpt-dir DIR is required\n%s", TRAINER_USAGE);
    struct vg_orch_task task;
    vg_orch_task_rank(&task);
    long rank = task.rank, ntasks = task.ntasks;
    int logfd = -1;
    if (logfile && (logfd = open(logfile, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0)
        return vg_input_error("trainer: --log: %s: %s", logfile, strerror(errno));
    vg_stamped_copy(logfd);
    /* a requeue (Slurm's count) or a restart inside the allocation (vigil launch) */
    long restart = task.restarts * 1000 + env_long("VIGIL_LAUNCH_RESTART", 0);
    if (mkdir(dir, 0755) && errno != EEXIST) return vg_input_error("trainer: --ckpt-dir: %s: %s", dir, strerror(errno));
    vg_stamped("start rank %ld/%ld restart %ld", rank, ntasks, restart);
    long step = vg_ckpt_latest(dir);
    if (step < 0) return vg_input_error("trainer: --ckpt-dir: %s: %s", dir, strerror(errno));
    if (step > 0 && rank == 0) vg_stamped("resumed from step %ld", step);
    int64_t next = vg_mono_ms();
    while (step < steps) {
        if (ntasks > 1 && task.restarts_known) {   /* the collective: every rank finished the previous step */
            if (vg_progress_write(dir, restart, rank, step))
                return vg_err("trainer: %s: %s", dir, strerror(errno)), VG_EXIT_FINDINGS;
            /* 1 ms, doubling to 16 ms: a rank waiting on a slow or dead one costs ~60 reads a
             * second, not 200 of every rank's file */
            long from = 0;
            for (int wait = 1; !vg_progress_reached(dir, restart, ntasks, step, &from); wait *= wait < 16 ? 2 : 1)
                vg_sleep_ms(wait);
        }
        next += step_ms;
        int64_t now = vg_mono_ms();
        if (next > now) vg_sleep_ms(next - now);
        step++;
        if (rank != 0) continue;
        vg_stamped("step %ld", step);
        if (step % every == 0) {
            if (vg_ckpt_write(dir, step)) {
                vg_err("trainer: checkpoint %ld in %s: %s", step, dir, strerror(errno));
                return VG_EXIT_FINDINGS;
            }
            vg_stamped("checkpoint %ld", step);
        }
    }
    if (rank == 0) vg_stamped("done %ld steps", step);
    return 0;
}
