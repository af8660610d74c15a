/* agent.c — `vigil agent`: the per-node daemon (agent/agent.h): options,
 * defaults, then the loop.  See docs/agent.md. */
#include "cmd/cmd.h"
#include "agent/agent.h"
#include "cmd/opts.h"
#include "orch/orch.h"
#include "util/log.h"
#include "util/strutil.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AGENT_USAGE                                                                                        \
    "usage: vigil agent [--node NAME] " VG_OPTS_CLIENT_USAGE "\n"                                         \
    "                   [--kmsg PATH] [--kmsg-from-start] [--spool FILE] [--spool-max MB]\n"               \
    "                   [--config FILE] [--root DIR] [--no-nic] [--interval S] [--nic-interval S]\n"     \
    "                   [--window S] [--retry-max S] [--heartbeat S]\n"                                    \
    "                   [--audit-every S] [--policy FILE] [--slurmd-spool DIR]\n"                           \
    "                   [--catalog FILE] [--drain-at ACTION] [--drain] " VG_OPTS_ORCH_USAGE "\n"         \
    "                   [--no-gpu-events] [--once] [--json] [-v]\n"                                         \
    "Follows the kernel log (PATH: /dev/kmsg, a file or a FIFO), the GPU vendors' events and periodic checks\n"\
    "(every S seconds, default 30; 0 = none; FILE: a `vigil check` config, else the GPU probe) with the\n" \
    "NIC probe (port counters judged over time, the RDMA stack; every --nic-interval S, default --interval;\n" \
    "--no-nic: none; files read under DIR), and\n"                                                       \
    "sends each new incident to the controller (spooled in FILE first, default\n"                          \
    "/var/lib/vigil/agent.spool).  With no --controller it acts alone: with --drain it drains this node\n" \
    "through the orchestrator (the scheduler of this node, default slurm) at or above ACTION (default\n"   \
    "restart-app) with a \"vigil:\" reason.  NAME defaults to $VIGIL_NODE, the orchestrator's name for\n"   \
    "this node, then the host name.  --once: one pass (a file is read from its start), then exit.  DIR\n"   \
    "(slurm): slurmd's SlurmdSpoolDir (%n = NAME; default /var/spool/slurmd; \"\" = none): the jobs there\n" \
    "go with each event and heartbeat.\n"                                                                   \
    "--no-gpu-events (formerly --no-nvml-events, still read): no GPU vendor's event watcher.\n"           \
    "--controller URL1,URL2,... (at most 8): controllers sharing one store; one at a time is sent to, and on\n" \
    "no answer or a 5xx the next, at once (sticky: until it fails in turn).\n"                            \
    "--spool-max: the spool's cap (default 64; 0: none): past it the oldest record-only events are\n"     \
    "dropped (counted, told to the controller), never a fault.\n"                                         \
    VG_OPTS_CLIENT_HELP VG_OPTS_ORCH_HELP

static int seconds(const char *opt, const char *v, int min_ms, int *out)
{
    char *end;
    double s = strtod(v, &end);
    if (end == v || *end || s * 1000 < min_ms || s > 86400)
        return vg_input_error("agent: %s '%s': expected seconds (%g to 86400)", opt, v, min_ms / 1000.0);
    *out = (int)(s * 1000);
    return 0;
}

int cmd_agent(int argc, char **argv)
{
    struct vg_agent_opts o = {
        .auth_mode = "munge", .spool = "/var/lib/vigil/agent.spool", .interval_ms = 30000, .window_ms = 60000,
        .retry_max_ms = 5000, .heartbeat_ms = 1000, .audit_every_ms = 86400 * 1000, .drain_at = VG_ACT_RESTART_APP, .gpu_events = true,
        .jobs_from = "/var/spool/slurmd", .spool_max = 64u << 20, .nic = true,
    };
    enum { O_NODE = 256, O_SPOOLMAX, O_KMSG, O_FROMSTART, O_SPOOL, O_CONFIG, O_INTERVAL, O_WINDOW, O_RETRY, O_POLICY,
           O_CATALOG, O_DRAINAT, O_DRAIN, O_BEAT, O_AUDIT, O_NOGPUEV, O_ONCE, O_JSON, O_SLURMD, O_ROOT, O_NONIC, O_NICINT,
           O_HELP };
    static const struct option own[] = {
        { "node", required_argument, 0, O_NODE },         { "kmsg", required_argument, 0, O_KMSG },
        { "spool-max", required_argument, 0, O_SPOOLMAX },
        { "kmsg-from-start", no_argument, 0, O_FROMSTART }, { "spool", required_argument, 0, O_SPOOL },
        { "config", required_argument, 0, O_CONFIG },     { "interval", required_argument, 0, O_INTERVAL },
        { "window", required_argument, 0, O_WINDOW },     { "retry-max", required_argument, 0, O_RETRY },
        { "policy", required_argument, 0, O_POLICY },     { "catalog", required_argument, 0, O_CATALOG },
        { "drain-at", required_argument, 0, O_DRAINAT },  { "drain", no_argument, 0, O_DRAIN },
        { "slurm", no_argument, 0, O_DRAIN },             { "heartbeat", required_argument, 0, O_BEAT },
        { "audit-every", required_argument, 0, O_AUDIT }, { "slurmd-spool", required_argument, 0, O_SLURMD },
        { "no-gpu-events", no_argument, 0, O_NOGPUEV },    { "no-nvml-events", no_argument, 0, O_NOGPUEV },   { "once", no_argument, 0, O_ONCE },
        { "json", no_argument, 0, O_JSON },               { "help", no_argument, 0, O_HELP },
        { "root", required_argument, 0, O_ROOT },         { "no-nic", no_argument, 0, O_NONIC },
        { "nic-interval", required_argument, 0, O_NICINT },
        { 0, 0, 0, 0 },
    };
    enum { BLOCKS = VG_OPTS_CLIENT | VG_OPTS_ORCH };
    struct vg_opts_buf ob;
    const struct option *opts = vg_opts_table(own, BLOCKS, &ob);
    struct vg_shared_opts so = { 0 };
    bool jobs_from_given = false;
    int c, verbose = 0;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "v", opts, NULL)) != -1) {
        switch (c) {
        case O_NODE: o.node = optarg; break;
        case O_SPOOLMAX: {
            char *end;
            double mb = strtod(optarg, &end);
            if (end == optarg || *end || !(mb >= 0) || mb > 1 << 20 || (mb > 0 && mb < 1.0 / 64))
                return vg_input_error("agent: --spool-max '%s': expected megabytes (0: no cap; at least 1/64, at "
                                      "most 1048576)", optarg);
            o.spool_max = (size_t)(mb * (1u << 20));
            break;
        }
        case O_KMSG: o.kmsg = optarg; break;
        case O_FROMSTART: o.kmsg_from_start = true; break;
        case O_SPOOL: o.spool = optarg; break;
        case O_CONFIG: o.config = optarg; break;
        case O_POLICY: o.policy = optarg; break;
        case O_CATALOG: o.catalog = optarg; break;
        case O_DRAIN: o.drain = true; break;
        case O_NOGPUEV: o.gpu_events = false; break;
        case O_ONCE: o.once = o.kmsg_from_start = true; break;
        case O_JSON: o.json = true; break;
        case O_SLURMD: o.jobs_from = optarg, jobs_from_given = true; break;
        case O_ROOT: o.root = optarg; break;
        case O_NONIC: o.nic = false; break;
        case 'v': verbose++; break;
        case O_INTERVAL:
            if (!strcmp(optarg, "0")) o.interval_ms = 0;
            else if (seconds("--interval", optarg, 100, &o.interval_ms)) return VG_EXIT_INPUT;
            break;
        case O_NICINT:
            if (seconds("--nic-interval", optarg, 100, &o.nic_interval_ms)) return VG_EXIT_INPUT;
            break;
        case O_WINDOW:
            if (seconds("--window", optarg, 100, &o.window_ms)) return VG_EXIT_INPUT;
            break;
        case O_AUDIT:
            if (!strcmp(optarg, "0")) o.audit_every_ms = 0;
            else if (seconds("--audit-every", optarg, 1000, &o.audit_every_ms)) return VG_EXIT_INPUT;
            break;
        case O_BEAT:
            if (!strcmp(optarg, "0")) o.heartbeat_ms = 0;
            else if (seconds("--heartbeat", optarg, 100, &o.heartbeat_ms)) return VG_EXIT_INPUT;
            break;
        case O_RETRY:
            if (seconds("--retry-max", optarg, 100, &o.retry_max_ms)) return VG_EXIT_INPUT;
            break;
        case O_DRAINAT:
            if (!vg_action_parse(optarg, &o.drain_at) || o.drain_at == VG_ACT_IGNORE)
                return vg_input_error("agent: --drain-at '%s': expected restart-app, reset-gpu, reboot or drain-rma",
                                      optarg);
            break;
        case O_HELP: fputs(AGENT_USAGE, stdout); return 0;
        default:
            if (vg_opts_take(c, optarg, &so)) break;
            fputs(AGENT_USAGE, stderr);
            return vg_input_error("agent: unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc) return vg_input_error("agent: unexpected argument '%s'", argv[optind]);
    if (vg_opts_check("agent", BLOCKS, &so)) return VG_EXIT_INPUT;
    o.controller = so.controller && *so.controller ? so.controller : NULL;
    if (so.auth) o.auth_mode = so.auth;
    o.token_file = so.token_file, o.munge_socket = so.munge_socket, o.ca_file = so.ca_file;
    o.orchestrator = so.orchestrator, o.orch_config = so.orch_config, o.insecure_http = so.insecure_http;
    if (jobs_from_given && *o.jobs_from && !vg_orch_can(vg_orch_find(o.orchestrator), VG_CAP_LOCAL_JOBS))
        return vg_input_error("agent: --slurmd-spool: the %s orchestrator lists no jobs on a node",
                              vg_orch_find(o.orchestrator)->name);
    if (o.controller && o.drain) vg_warn("agent: --drain is for standalone mode; the controller acts on the cluster");
    if (verbose) vg_log_level(verbose + 1 > 3 ? 3 : verbose + 1);
    else if (vg_log_get_level() < 2) vg_log_level(2);   /* a daemon says what it does */
    char err[512];
    int rc = vg_agent_run(&o, err, sizeof err);
    return rc < 0 ? vg_input_error("agent: %s", err) : rc;
}
