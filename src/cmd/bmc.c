/* bmc.c — `vigil bmc power-cycle|power-on|power-off|status NODE --redfish
 * URL | --ipmi HOST --user-file F`: one power operation on a node's BMC,
 * the repair ladder's power-cycle rung (docs/bmc.md).  Exit 0 done, 1 the
 * BMC refused or did not answer in time (one line saying what it said), 2
 * bad input. */
#include "bmc/bmc.h"
#include "cmd/cmd.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/strutil.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BMC_USAGE                                                                                          \
    "usage: vigil bmc power-cycle|power-on|power-off|status NODE (--redfish https://BMC | --ipmi HOST)\n" \
    "                 --user-file FILE [--cacert FILE | --insecure] [--reset-type T] [--timeout S]\n"     \
    "                 [--poll S] [--json]\n"                                                              \
    "FILE: 'user:password' on its first line, mode 0600.  Redfish: the system's #ComputerSystem.Reset\n"  \
    "(PowerCycle, else ForceRestart, for a cycle; --reset-type picks one the BMC allows), its task\n"     \
    "followed, then PowerState confirmed; IPMI: ipmitool -I lanplus chassis power.  S: the whole\n"       \
    "operation (default 300 s); --poll: task and power state polls (default 1 s).\n"                      \
    "Exit 0 done, 1 the BMC refused or did not answer in time, 2 bad input.\n"

static int seconds(const char *opt, const char *s, int64_t *ms)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || v <= 0 || v > 86400) return vg_input_error("bmc: %s '%s': expected seconds (0 < S <= 86400)", opt, s);
    *ms = (int64_t)(v * 1000);
    return 0;
}

int cmd_bmc(int argc, char **argv)
{
    enum { O_REDFISH = 256, O_IPMI, O_USER, O_CACERT, O_INSECURE, O_RESET, O_TIMEOUT, O_POLL, O_JSON, O_HELP };
    static const struct option opts[] = {
        { "redfish", required_argument, 0, O_REDFISH }, { "ipmi", required_argument, 0, O_IPMI },
        { "user-file", required_argument, 0, O_USER },  { "cacert", required_argument, 0, O_CACERT },
        { "insecure", no_argument, 0, O_INSECURE },     { "reset-type", required_argument, 0, O_RESET },
        { "timeout", required_argument, 0, O_TIMEOUT }, { "poll", required_argument, 0, O_POLL },
        { "json", no_argument, 0, O_JSON },             { "help", no_argument, 0, O_HELP },
        { 0, 0, 0, 0 },
    };
    struct vg_bmc_conf c = { .timeout_ms = 300000, .poll_ms = 1000 };
    const char *redfish = NULL, *ipmi = NULL, *user_file = NULL;
    bool json = false;
    int o;
    optind = 1;
    opterr = 0;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (o) {
        case O_REDFISH: redfish = optarg; break;
        case O_IPMI: ipmi = optarg; break;
        case O_USER: user_file = optarg; break;
        case O_CACERT:
            if (access(optarg, R_OK)) return vg_input_error("bmc: --cacert %s: not readable", optarg);
            vg_strlcpy(c.cacert, optarg, sizeof c.cacert);
            break;
        case O_INSECURE: c.insecure = true; break;
        case O_RESET: vg_strlcpy(c.reset_type, optarg, sizeof c.reset_type); break;
        case O_TIMEOUT: if (seconds("--timeout", optarg, &c.timeout_ms)) return VG_EXIT_INPUT; break;
        case O_POLL: if (seconds("--poll", optarg, &c.poll_ms)) return VG_EXIT_INPUT; break;
        case O_JSON: json = true; break;
        case 'h': case O_HELP: fputs(BMC_USAGE, stdout); return 0;
        default: return vg_input_error("bmc: unknown or incomplete option '%s' (vigil bmc --help)", argv[optind - 1]);
        }
    }
    enum vg_bmc_op op;
    if (argc - optind != 2 || vg_bmc_op_parse(argv[optind], &op))
        return vg_input_error("bmc: expected an action (power-cycle, power-on, power-off, status) and a node "
                              "(vigil bmc --help)");
    const char *node = argv[optind + 1];
    if (!redfish == !ipmi) return vg_input_error("bmc: give one of --redfish URL or --ipmi HOST");
    if (c.cacert[0] && c.insecure) return vg_input_error("bmc: --cacert and --insecure exclude each other");
    if (ipmi && (c.cacert[0] || c.insecure || c.reset_type[0]))
        return vg_input_error("bmc: --cacert, --insecure and --reset-type are for --redfish");
    if (!user_file) return vg_input_error("bmc: --user-file FILE ('user:password', mode 0600) is required");
    char err[600];
    if (vg_bmc_read_user_file(user_file, &c, err, sizeof err)) return vg_input_error("bmc: %s", err);
    vg_strlcpy(redfish ? c.url : c.host, redfish ? redfish : ipmi, redfish ? sizeof c.url : sizeof c.host);
    struct vg_bmc_result r;
    int rc = redfish ? vg_bmc_redfish(&c, op, &r) : vg_bmc_ipmi(&c, op, &r);
    memset(c.password, 0, sizeof c.password);
    if (rc == VG_BMC_BAD_INPUT) return vg_input_error("bmc: %s", r.message);
    const char *result = rc == VG_BMC_DONE ? "done" : "refused";
    if (json) {
        json_t *doc = json_pack("{s:s, s:s, s:s, s:s, s:s}", "node", node, "action", vg_bmc_op_name(op), "via",
                                redfish ? "redfish" : "ipmi", "result", result, "message", r.message);
        if (r.power[0]) vg_json_set_str(doc, "power_state", r.power);
        if (r.reset_type[0]) vg_json_set_str(doc, redfish ? "reset_type" : "control", r.reset_type);
        if (r.task[0]) vg_json_set_str(doc, "task_state", r.task);
        if (vg_json_print(stdout, doc, 0)) return VG_EXIT_INPUT;
    } else
        fprintf(rc ? stderr : stdout, "%s %s: %s: %s\n", vg_bmc_op_name(op), node, result, r.message);
    return rc == VG_BMC_DONE ? VG_EXIT_OK : VG_EXIT_FINDINGS;
}
