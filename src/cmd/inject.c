/* inject.c — `vigil inject KIND --node NAME …` and `vigil inject clear`:
 * makes a node fail the way a real one does, records the exact time, and
 * undoes it (see drill/inject.h and docs/drill.md). */
#include "cmd/cmd.h"
#include "cmd/opts.h"
#include "drill/inject.h"
#include "lab/lab.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/strutil.h"
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INJECT_USAGE                                                                                   \
    "usage: vigil inject xid CODE --node NAME [--gpu N] [TARGET] [--record FILE] [--json]\n"           \
    "       vigil inject gpu-lost|ecc-dbe|ib-down|nvml-hang|node-crash|node-freeze --node NAME [--gpu N]\n" \
    "                    [TARGET] [--record FILE] [--json]\n"                                          \
    "       vigil inject amd-ue|amd-bad-pages|amd-ring-timeout|amd-init-fail --node NAME [--gpu N] [TARGET]\n" \
    "                    [--record FILE] [--json]   (an AMD GPU, in the amdgpu driver's words)\n"             \
    "       vigil inject amd-xgmi-down --node NAME [--gpu N] --lab [--dir DIR]\n"                          \
    "       vigil inject sdc|gpu-slow|nccl-slow|ib-bw-low|dcgm-diag-fail --node NAME [--gpu N] --lab [--dir DIR]\n" \
    "                    (faults only `vigil burnin` sees, through the lab's stand-in tools)\n"                  \
    "       vigil inject amd-rccl-slow|amd-rvs-fail|amd-xgmi-bw-low --node NAME --lab [--dir DIR]\n"        \
    "                    (the same on an AMD node: rccl-tests at half speed, RVS's GPU stress test\n"        \
    "                    failing, XGMI at half its bandwidth in TransferBench)\n"                                \
    "       vigil inject nic-hung|link-flap|ib-errors|fabric-degraded --node NAME [--gpu N] --lab [--dir DIR]\n" \
    "                    (a wedged NIC driver, a link flap, a burst of link errors, a GPU's NVLink fabric\n"   \
    "                    registration failed: the lab node's verbs-state, sysfs counters, fake NVML)\n"      \
    "       vigil inject clear [--node NAME] [TARGET] [--record FILE] [--json]\n"                      \
    "TARGET: --lab [--dir DIR] (a `vigil lab` node; DIR defaults to $VIGIL_LAB, else " VG_LAB_DEFAULT_DIR \
    ")\n"                                                                                              \
    "        --via orch|ssh (a real node, runs `vigil inject … --local` there: as a job step through\n" \
    "              " VG_OPTS_ORCH_USAGE ", or over ssh)\n"                                        \
    "        --local [--root DIR] (this machine: /dev/kmsg, its node daemon and job steps)\n"             \
    "        --kmsg FILE: the node's kernel log instead of /dev/kmsg (a regular file gets records as\n"   \
    "              /dev/kmsg reads them back: the file an agent follows with --kmsg)\n"                    \
    VG_OPTS_ORCH_HELP

static int do_clear(const struct vg_inject_opts *o, bool json, char *err, size_t errlen);
static int do_inject(const struct vg_inject_opts *o, bool json, char *err, size_t errlen);

int cmd_inject(int argc, char **argv)
{
    static const struct option own[] = {
        { "node", required_argument, 0, 'n' }, { "gpu", required_argument, 0, 'g' },
        { "lab", no_argument, 0, 'L' },        { "dir", required_argument, 0, 'd' },
        { "via", required_argument, 0, 'v' },  { "local", no_argument, 0, 'l' },
        { "record", required_argument, 0, 'r' }, { "root", required_argument, 0, 'R' },
        { "json", no_argument, 0, 'j' },       { "help", no_argument, 0, 'h' },
        { "kmsg", required_argument, 0, 'k' },
        { 0, 0, 0, 0 },
    };
    struct vg_opts_buf ob;
    const struct option *opts = vg_opts_table(own, VG_OPTS_ORCH, &ob);
    struct vg_inject_opts o = { .via = VG_VIA_ORCH };
    struct vg_shared_opts so = { 0 };
    bool lab = false, json = false;
    const char *dir = NULL;
    long gpu = 0;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'n': o.node = optarg; break;
        case 'g':
            if (!vg_parse_long(optarg, &gpu) || gpu < 0 || gpu > 7)
                return vg_input_error("inject: --gpu: '%s' is not a GPU index 0..7", optarg);
            break;
        case 'L': lab = true; break;
        case 'd': dir = optarg, lab = true; break;
        case 'v': o.via = optarg; break;
        case 'l': o.via = "local"; break;
        case 'r': o.record = optarg; break;
        case 'R': o.root = optarg; break;
        case 'k': o.kmsg = optarg; break;
        case 'j': json = true; break;
        case 'h': fputs(INJECT_USAGE, stdout); return 0;
        default:
            if (vg_opts_take(c, optarg, &so)) break;
            fputs(INJECT_USAGE, stderr);
            return VG_EXIT_INPUT;
        }
    }
    o.gpu = (int)gpu;
    char labdir[PATH_MAX];
    if (lab) o.lab = vg_lab_resolve_dir(dir, labdir, sizeof labdir);
    if (vg_opts_check("inject", VG_OPTS_ORCH, &so)) return VG_EXIT_INPUT;
    if (optind >= argc) return vg_input_error("inject: the fault kind is missing\n%s", INJECT_USAGE);
    const char *what = argv[optind++];
    char err[512];
    bool clear = !strcmp(what, "clear");
    if (!clear) {
        if (!vg_inj_kind_parse(what, &o.kind, &o.code))
            return vg_input_error("inject: unknown fault '%s'\n%s", what, INJECT_USAGE);
        if (o.kind == VG_INJ_XID && !strchr(what, ':')) {
            long code;
            if (optind >= argc || !vg_parse_long(argv[optind], &code) || code < 1 || code > 999)
                return vg_input_error("inject xid: CODE: '%s' is not an XID number 1..999",
                                      optind < argc ? argv[optind] : "");
            o.code = (int)code;
            optind++;
        }
        if (!o.node) return vg_input_error("inject: --node NAME is required");
    }
    if (optind < argc) return vg_input_error("inject%s: unexpected argument '%s'", clear ? " clear" : "", argv[optind]);
    if (!lab && o.via && !strcmp(o.via, VG_VIA_ORCH)) {
        struct vg_orch_conf oc = vg_opts_orch_conf(&so, 0);
        if (!(o.orch = vg_orch_open(so.orchestrator, &oc, err, sizeof err))) return vg_input_error("inject: %s", err);
    }
    int rc = clear ? do_clear(&o, json, err, sizeof err) : do_inject(&o, json, err, sizeof err);
    vg_orch_close(o.orch);
    return rc;
}

static int do_clear(const struct vg_inject_opts *o, bool json, char *err, size_t errlen)
{
    int n;
    int rc = vg_inject_clear(o, &n, err, errlen);
    if (rc == -2) return vg_input_error("inject clear: %s", err);
    if (json) vg_json_print(stdout, json_pack("{s:i,s:b}", "cleared", n, "ok", rc == 0), 0);
    else printf("cleared %d injection%s%s\n", n, n == 1 ? "" : "s", o->node ? "" : " (all nodes)");
    if (rc) vg_err("inject clear: %s", err);
    return rc ? VG_EXIT_FINDINGS : 0;
}

static int do_inject(const struct vg_inject_opts *o, bool json, char *err, size_t errlen)
{
    json_t *rec;
    int rc = vg_inject(o, &rec, err, errlen);
    if (rc == -2) return vg_input_error("inject: %s", err);
    if (rc) {
        vg_err("inject: %s", err);
        return VG_EXIT_FINDINGS;
    }
    if (json) vg_json_print(stdout, rec, 1);
    else {
        printf("%s %s on %s gpu %d at %s: %s\n", vg_json_str(rec, "id", ""), vg_json_str(rec, "kind", ""),
               o->node, o->gpu, vg_json_str(rec, "time", ""), vg_json_str(rec, "detail", ""));
        json_decref(rec);
    }
    return 0;
}
