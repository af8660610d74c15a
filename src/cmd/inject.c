/* inject.c — `vigil inject KIND --node NAME …` and `vigil inject clear`:
 * makes a node fail the way a real one does, records the exact time, and
 * undoes it (see drill/inject.h and docs/drill.md). */
#include "cmd/cmd.h"
#include "drill/inject.h"
#include "lab/lab.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/strutil.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INJECT_USAGE                                                                                   \
    "usage: vigil inject xid CODE --node NAME [--gpu N] [TARGET] [--record FILE] [--json]\n"           \
    "       vigil inject gpu-lost|ecc-dbe|ib-down|nvml-hang|node-crash|node-freeze --node NAME [--gpu N]\n" \
    "                    [TARGET] [--record FILE] [--json]\n"                                          \
    "       vigil inject sdc|gpu-slow|nccl-slow|ib-bw-low|dcgm-diag-fail --node NAME [--gpu N] --lab [--dir DIR]\n" \
    "                    (faults only `vigil burnin` sees, through the lab's stand-in tools)\n"                  \
    "       vigil inject clear [--node NAME] [TARGET] [--record FILE] [--json]\n"                      \
    "TARGET: --lab [--dir DIR] (a `vigil lab` node; DIR defaults to $VIGIL_LAB, else " VG_LAB_DEFAULT_DIR \
    ")\n"                                                                                              \
    "        --via srun|ssh (a real node, runs `vigil inject … --local` there; default srun)\n"        \
    "        --local [--root DIR] (this machine: /dev/kmsg, its slurmd and job steps)\n"

int cmd_inject(int argc, char **argv)
{
    static const struct option opts[] = {
        { "node", required_argument, 0, 'n' }, { "gpu", required_argument, 0, 'g' },
        { "lab", no_argument, 0, 'L' },        { "dir", required_argument, 0, 'd' },
        { "via", required_argument, 0, 'v' },  { "local", no_argument, 0, 'l' },
        { "record", required_argument, 0, 'r' }, { "root", required_argument, 0, 'R' },
        { "json", no_argument, 0, 'j' },       { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 },
    };
    struct vg_inject_opts o = { .via = "srun" };
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
        case 'j': json = true; break;
        case 'h': fputs(INJECT_USAGE, stdout); return 0;
        default: fputs(INJECT_USAGE, stderr); return VG_EXIT_INPUT;
        }
    }
    o.gpu = (int)gpu;
    if (lab) o.lab = vg_lab_resolve_dir(dir);
    if (optind >= argc) return vg_input_error("inject: the fault kind is missing\n%s", INJECT_USAGE);
    const char *what = argv[optind++];
    char err[512];
    if (!strcmp(what, "clear")) {
        if (optind < argc) return vg_input_error("inject clear: unexpected argument '%s'", argv[optind]);
        int n;
        int rc = vg_inject_clear(&o, &n, err, sizeof err);
        if (rc == -2) return vg_input_error("inject clear: %s", err);
        if (json) vg_json_print(stdout, json_pack("{s:i,s:b}", "cleared", n, "ok", rc == 0), 0);
        else printf("cleared %d injection%s%s\n", n, n == 1 ? "" : "s", o.node ? "" : " (all nodes)");
        if (rc) vg_err("inject clear: %s", err);
        return rc ? VG_EXIT_FINDINGS : 0;
    }
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
    if (optind < argc) return vg_input_error("inject: unexpected argument '%s'", argv[optind]);
    if (!o.node) return vg_input_error("inject: --node NAME is required");
    json_t *rec;
    int rc = vg_inject(&o, &rec, err, sizeof err);
    if (rc == -2) return vg_input_error("inject: %s", err);
    if (rc) {
        vg_err("inject: %s", err);
        return VG_EXIT_FINDINGS;
    }
    if (json) vg_json_print(stdout, rec, 1);
    else {
        printf("%s %s on %s gpu %d at %s: %s\n", vg_json_str(rec, "id", ""), vg_json_str(rec, "kind", ""),
               o.node, o.gpu, vg_json_str(rec, "time", ""), vg_json_str(rec, "detail", ""));
        json_decref(rec);
    }
    return 0;
}
