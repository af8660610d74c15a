/* main.c — vigil's entry point: the subcommand table (name → cmd_* function,
 * one-line help), in the manner of git's.  Each subcommand lives in
 * src/cmd/<name>.c. */
#include "cmd/cmd.h"
#include "util/log.h"
#include "util/strutil.h"
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

struct subcommand {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
};

static const struct subcommand commands[] = {
    { "advisories", cmd_advisories, "import, list and query the offline advisory database" },
    { "agent", cmd_agent, "the per-node daemon: kernel log, GPU events, periodic checks → the controller" },
    { "audit", cmd_audit, "audit installed software against known CVEs (--root DIR, merge)" },
    { "bmc", cmd_bmc, "power-cycle, power on/off or read the power state of a node through its BMC (Redfish, IPMI)" },
    { "burnin", cmd_burnin, "active tests now (DCGM diag, nccl-tests, ib_write_bw, GEMM): quick, standard, long" },
    { "check", cmd_check, "one-shot node health check (NHC-style; Slurm HealthCheckProgram)" },
    { "drill", cmd_drill, "timed node-failure drill: detect, isolate, requeue, restart, resume (--html report)" },
    { "inject", cmd_inject, "make a node fail like a real one (XID, lost GPU, crash, freeze…); clear undoes it" },
    { "lab", cmd_lab, "a real local Slurm cluster on this machine: up N, status, down, env" },
    { "report", cmd_report, "drill reports side by side (vigil against plain Slurm), terminal and --html" },
    { "reset-gpu", cmd_reset_gpu, "reset one GPU through its vendor's library (AMD) under a deadline: a repair rung" },
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
    fprintf(f, "usage: vigil [-v|-q] <command> [options]   (vigil help <command>, vigil <command> --help)\n"
               "       vigil --version\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\nExit status: 0 healthy or clean, 1 unhealthy or findings, 2 usage or input error.\n"
               "See vigil(1) and the documents in docs/ (installed: /usr/share/doc/vigil).\n");
}

static const struct subcommand *find(const char *name)
{
    for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++)
        if (!strcmp(name, commands[c].name)) return &commands[c];
    return NULL;
}

/* `vigil help COMMAND [ACTION…]`: that command's own help, as
 * `vigil COMMAND [ACTION…] --help` prints it. */
static int help(int argc, char **argv)
{
    if (argc < 2) {
        usage(stdout);
        return 0;
    }
    const struct subcommand *c = find(argv[1]);
    if (!c) return vg_input_error("help: unknown command '%s' (vigil help)", argv[1]);
    char **av = vg_xcalloc((size_t)argc + 1, sizeof *av);
    for (int i = 1; i < argc; i++) av[i - 1] = argv[i];
    av[argc - 1] = "--help";
    int rc = c->fn(argc, av);
    free(av);
    return rc;
}

int main(int argc, char **argv)
{
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "-v")) vg_log_level(vg_log_get_level() + 1);
        else if (!strcmp(argv[i], "-q")) vg_log_level(0);
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(stdout); return 0; }
        else if (!strcmp(argv[i], "-V") || !strcmp(argv[i], "--version")) return cmd_version(1, (char *[]){ "version", NULL });
        else return vg_input_error("unknown option '%s' (vigil --help)", argv[i]);
    }
    if (i >= argc) {
        usage(stderr);
        return VG_EXIT_INPUT;
    }
    if (!strcmp(argv[i], "help")) return help(argc - i, argv + i);
    const struct subcommand *c = find(argv[i]);
    if (c) return c->fn(argc - i, argv + i);
    return vg_input_error("unknown command '%s' (vigil help)", argv[i]);
}
