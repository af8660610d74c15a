/* main.c — vigil's entry point: the subcommand table (name → cmd_* function,
 * one-line help), in the manner of git's.  Each subcommand lives in
 * src/cmd/<name>.c. */
#include "cmd/cmd.h"
#include "util/log.h"
#include <stdio.h>
#include <string.h>

struct subcommand {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
};

static const struct subcommand commands[] = {
    { "advisories", cmd_advisories, "import, list and query the offline advisory database" },
    { "agent", cmd_agent, "the per-node daemon: kernel log, NVML events, periodic checks → the controller" },
    { "audit", cmd_audit, "audit installed software against known CVEs (--root DIR, merge)" },
    { "bmc", cmd_bmc, "power-cycle, power on/off or read the power state of a node through its BMC (Redfish, IPMI)" },
    { "burnin", cmd_burnin, "active tests now (DCGM diag, nccl-tests, ib_write_bw, GEMM): quick, standard, long" },
    { "check", cmd_check, "one-shot node health check (NHC-style; Slurm HealthCheckProgram)" },
    { "drill", cmd_drill, "timed node-failure drill: detect, isolate, requeue, restart, resume (--html report)" },
    { "inject", cmd_inject, "make a node fail like a real one (XID, lost GPU, crash, freeze…); clear undoes it" },
    { "lab", cmd_lab, "a real local Slurm cluster on this machine: up N, status, down, env" },
    { "report", cmd_report, "drill reports side by side (vigil against plain Slurm), terminal and --html" },
    { "scan", cmd_scan, "read kernel logs: GPU fault events (XID, SXid, AER, …) with verdicts" },
    { "score", cmd_score, "a ClusterMAX-style scorecard from audit, security, check and drill reports" },
    { "serve", cmd_serve, "the cluster controller: receive agents' events, record incidents (HTTP API)" },
    { "status", cmd_status, "one screen of what vigil sees on this node (GPUs, kernel log, IB, scheduler, controller)" },
    { "token", cmd_token, "each node's own token for --auth token, derived from the cluster secret" },
    { "trainer", cmd_trainer, "stand-in training job for drills: timed steps, checkpoints, resume (run with srun)" },
    { "launch", cmd_launch, "a job's batch script that keeps spares inside its allocation: restarts its step on one (sbatch --no-kill)" },
    { "version", cmd_version, "print the version and the data directory" },
};

static void usage(FILE *f)
{
    fprintf(f, "usage: vigil [-v|-q] <command> [options]   (vigil <command> --help)\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].help);
}

int main(int argc, char **argv)
{
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "-v")) vg_log_level(vg_log_get_level() + 1);
        else if (!strcmp(argv[i], "-q")) vg_log_level(0);
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(stdout); return 0; }
        else return vg_input_error("unknown option '%s' (vigil --help)", argv[i]);
    }
    if (i >= argc) {
        usage(stderr);
        return VG_EXIT_INPUT;
    }
    if (!strcmp(argv[i], "help")) { usage(stdout); return 0; }
    for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++)
        if (!strcmp(argv[i], commands[c].name)) return commands[c].fn(argc - i, argv + i);
    return vg_input_error("unknown command '%s' (vigil help)", argv[i]);
}
