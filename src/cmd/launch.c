/* launch.c — `vigil launch --spares K [--tasks-per-node T] -- PROGRAM ARGS…`:
 * the batch script of a Slurm job that keeps K warm spares inside its own
 * allocation (sbatch -N N+K --no-kill): PROGRAM runs on N nodes and is
 * restarted on a spare when a node fails, without a requeue
 * (orch/slurm_launch.c; the protocol in docs/drill.md). */
#include "cmd/cmd.h"
#include "orch/slurm_launch.h"
#include "util/log.h"
#include "util/strutil.h"
#include <getopt.h>
#include <stdio.h>

#define LAUNCH_USAGE "usage: vigil launch --spares K [--tasks-per-node T] -- PROGRAM [ARGS…]\n" \
                     "  (the batch script of sbatch -N N+K --no-kill: runs PROGRAM on N nodes, K kept warm)\n"

static int parse_opts(int argc, char **argv, long *spares, long *tasks)
{
    static const struct option opts[] = {
        { "spares", required_argument, 0, 's' }, { "tasks-per-node", required_argument, 0, 't' },
        { "help", no_argument, 0, 'h' },         { 0, 0, 0, 0 },
    };
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            if (!vg_parse_long(optarg, spares) || *spares < 0 || *spares > 1000)
                return vg_input_error("launch: --spares: '%s' is not a count 0..1000", optarg);
            break;
        case 't':
            if (!vg_parse_long(optarg, tasks) || *tasks < 1 || *tasks > 1024)
                return vg_input_error("launch: --tasks-per-node: '%s' is not a count 1..1024", optarg);
            break;
        case 'h': fputs(LAUNCH_USAGE, stdout); return -1;
        default: return vg_input_error("launch: unknown option '%s'\n%s", argv[optind - 1], LAUNCH_USAGE);
        }
    }
    if (optind >= argc) return vg_input_error("launch: no PROGRAM to run\n%s", LAUNCH_USAGE);
    return 0;
}

int cmd_launch(int argc, char **argv)
{
    long spares = -1, tasks = 1;
    int rc = parse_opts(argc, argv, &spares, &tasks);
    if (rc) return rc < 0 ? VG_EXIT_OK : rc;
    if (spares < 0) return vg_input_error("launch: --spares K is required\n%s", LAUNCH_USAGE);
    char err[256];
    rc = vg_slurm_launch(spares, tasks, argv + optind, err, sizeof err);
    return rc == VG_LAUNCH_BAD_INPUT ? vg_input_error("launch: %s", err) : rc;
}
