/* drill.c — `vigil drill`: the timed node-failure drill (see drill/drill.h and
 * docs/drill.md).  Exit 0 when every run went through every stage, 1 when a
 * stage never happened in some run (the report says which), 2 for bad
 * options. */
#include "cmd/cmd.h"
#include "cmd/opts.h"
#include "drill/drill.h"
#include "lab/lab.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/strutil.h"
#include "wire/leader.h"
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DRILL_USAGE                                                                                     \
    "usage: vigil drill [--lab [--dir DIR]] [--partition P] [--nodes N] [--fault KIND] [--gpu G]\n"     \
    "                   [--runs N] [--deadline S] [--steady-steps K] [--step-ms MS] [--ckpt-every K]\n" \
    "                   [--job-script FILE --resume-pattern REGEX [--step-pattern REGEX]]\n"            \
    "                   [--controller URL] [--victim NODE | --hit-batch-host] [--victims K] [--via orch|ssh]\n" \
    "                   " VG_OPTS_ORCH_USAGE " [--gpus-per-node G]\n"                                \
    "                   [--spares-in-job K] [--kmsg PATH] [--workload job|jobset] [--checkpoint-pvc NAME]\n"      \
    "                   [--workdir DIR [--shared-workdir]] [--poll-ms MS] [--json] [--save FILE]\n"     \
    "                   [--html FILE]\n"                                                               \
    "KIND: xid:CODE (e.g. xid:79), gpu-lost, ecc-dbe, ib-down, nvml-hang, node-crash, node-freeze,\n"   \
    "      nic-hung, link-flap, ib-errors, fabric-degraded (the last four in a lab), controller-crash\n"\
    "      (a lab of several controllers: the leader SIGKILLed a moment before an XID 79)\n"            \
    VG_OPTS_ORCH_HELP

/* The orchestrators whose jobs take a workload kind and a volume claim, for the message. */
static const char *workload_orchs(void)
{
    static char names[128];
    names[0] = 0;
    for (size_t i = 0, l = 0; vg_orch_at(i) && l < sizeof names; i++)
        if (vg_orch_can(vg_orch_at(i), VG_CAP_WORKLOADS))
            l += (size_t)snprintf(names + l, sizeof names - l, "%s%s", l ? " or " : "", vg_orch_at(i)->name);
    return names;
}

static int int_opt(const char *name, const char *v, long min, long max, int *out)
{
    long x;
    if (!vg_parse_long(v, &x) || x < min || x > max)
        return vg_input_error("drill: %s: '%s' is not a number in %ld..%ld", name, v, min, max);
    *out = (int)x;
    return 0;
}

int cmd_drill(int argc, char **argv)
{
    static const struct option own[] = {
        { "lab", no_argument, 0, 'L' },           { "dir", required_argument, 0, 'd' },
        { "partition", required_argument, 0, 'p' }, { "nodes", required_argument, 0, 'N' },
        { "fault", required_argument, 0, 'f' },   { "gpu", required_argument, 0, 'g' },
        { "runs", required_argument, 0, 'r' },    { "deadline", required_argument, 0, 'D' },
        { "steady-steps", required_argument, 0, 's' }, { "step-ms", required_argument, 0, 'm' },
        { "ckpt-every", required_argument, 0, 'k' }, { "job-script", required_argument, 0, 'J' },
        { "resume-pattern", required_argument, 0, 'R' }, { "step-pattern", required_argument, 0, 'S' },
        { "victim", required_argument, 0, 'v' },
        { "hit-batch-host", no_argument, 0, 'B' }, { "via", required_argument, 0, 'V' },
        { "workdir", required_argument, 0, 'w' }, { "poll-ms", required_argument, 0, 'P' },
        { "json", no_argument, 0, 'j' },          { "html", required_argument, 0, 'H' },
        { "save", required_argument, 0, 'O' },
        { "gpus-per-node", required_argument, 0, 'G' }, { "spares-in-job", required_argument, 0, 'K' },
        { "kmsg", required_argument, 0, 'x' },    { "shared-workdir", no_argument, 0, 'W' },
        { "workload", required_argument, 0, 'X' },
        { "checkpoint-pvc", required_argument, 0, 'Y' }, { "victims", required_argument, 0, 'n' },
        { "help", no_argument, 0, 'h' },          { 0, 0, 0, 0 },
    };
    struct vg_drill_opts o = { .nodes = 2, .kind = VG_INJ_XID, .code = 79, .gpu = -1, .runs = 1, .deadline_s = 180,
                               .steady_steps = -1, .step_ms = 200, .ckpt_every = 5, .poll_ms = 100,
                               .step_pattern = VG_TRAINER_STEP_RE, .resume_pattern = VG_TRAINER_RESUME_RE,
                               .via = VG_VIA_ORCH, .fault_name = "xid:79" };
    bool lab = false, json = false, resume_given = false, gpus_given = false, fault_given = false;
    const char *dir = NULL, *html = NULL, *save = NULL;
    const struct vg_drill_fault *fault = NULL;
    enum { BLOCKS = VG_OPTS_ORCH | VG_OPTS_CONTROLLER };
    struct vg_opts_buf ob;
    const struct option *opts = vg_opts_table(own, BLOCKS, &ob);
    struct vg_shared_opts so = { 0 };
    int c, rc = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1 && !rc) {
        switch (c) {
        case 'L': lab = true; break;
        case 'd': dir = optarg, lab = true; break;
        case 'p': o.partition = optarg; break;
        case 'N': rc = int_opt("--nodes", optarg, 1, 4096, &o.nodes); break;
        case 'f':
            if ((fault = vg_drill_fault_find(optarg))) {   /* more than a node's fault */
                o.kind = fault->kind, o.code = fault->code, o.crash_leader = fault->crash_leader;
                o.fault_name = optarg;
                fault_given = true;
                break;
            }
            if (!vg_inj_kind_parse(optarg, &o.kind, &o.code) || (o.kind == VG_INJ_XID && !strchr(optarg, ':')))
                return vg_input_error("drill: --fault: '%s' is not xid:CODE, gpu-lost, ecc-dbe, ib-down, "
                                      "nvml-hang, node-crash, node-freeze, amd-ue, amd-bad-pages, amd-ring-timeout, "
                                      "amd-xgmi-down, amd-init-fail, nic-hung, link-flap, ib-errors, "
                                      "fabric-degraded or controller-crash", optarg);
            o.fault_name = optarg;
            fault_given = true;
            break;
        case 'g': rc = int_opt("--gpu", optarg, 0, 7, &o.gpu); break;
        case 'r': rc = int_opt("--runs", optarg, 1, 1000, &o.runs); break;
        case 'D': rc = int_opt("--deadline", optarg, 1, 86400, &o.deadline_s); break;
        case 's': rc = int_opt("--steady-steps", optarg, 1, 1000000, &o.steady_steps); break;
        case 'm': rc = int_opt("--step-ms", optarg, 1, 600000, &o.step_ms); break;
        case 'k': rc = int_opt("--ckpt-every", optarg, 1, 1000000, &o.ckpt_every); break;
        case 'J': o.job_script = optarg; break;
        case 'R': o.resume_pattern = optarg, resume_given = true; break;
        case 'S': o.step_pattern = optarg; break;
        case 'v': o.victim = optarg; break;
        case 'B': o.hit_batch_host = true; break;
        case 'n': rc = int_opt("--victims", optarg, 1, VG_DRILL_VICTIMS_MAX, &o.victims); break;
        case 'V': o.via = optarg; break;
        case 'w': o.workdir = optarg; break;
        case 'P': rc = int_opt("--poll-ms", optarg, 10, 10000, &o.poll_ms); break;
        case 'j': json = true; break;
        case 'H': html = optarg; break;
        case 'O': save = optarg; break;
        case 'G': rc = int_opt("--gpus-per-node", optarg, 0, 8, &o.gpus_per_node), gpus_given = true; break;
        case 'K': rc = int_opt("--spares-in-job", optarg, 0, 64, &o.spares_in_job); break;
        case 'x':
            if (optarg[0] != '/') return vg_input_error("drill: --kmsg: '%s' is not an absolute path", optarg);
            o.kmsg = optarg;
            break;
        case 'W': o.shared_workdir = true; break;
        case 'X':
            if (strcmp(optarg, "job") && strcmp(optarg, "jobset"))
                return vg_input_error("drill: --workload: '%s' is not job (an Indexed Job) or jobset (a JobSet)", optarg);
            o.workload = optarg;
            break;
        case 'Y':
            if (!*optarg) return vg_input_error("drill: --checkpoint-pvc: the PersistentVolumeClaim's name is empty");
            o.checkpoint_pvc = optarg;
            break;
        case 'h': fputs(DRILL_USAGE, stdout); return 0;
        default:
            if (vg_opts_take(c, optarg, &so)) break;
            fputs(DRILL_USAGE, stderr);
            return VG_EXIT_INPUT;
        }
    }
    if (rc) return rc;
    if (vg_opts_check("drill", BLOCKS, &so)) return VG_EXIT_INPUT;
    o.controller = so.controller;
    o.orchestrator = so.orchestrator, o.orch_config = so.orch_config, o.insecure_http = so.insecure_http;
    if (optind < argc) return vg_input_error("drill: unexpected argument '%s'", argv[optind]);
    if (o.job_script && o.spares_in_job)
        return vg_input_error("drill: --spares-in-job runs the trainer under vigil launch; a --job-script does its own");
    if (o.shared_workdir && (!o.workdir || o.workdir[0] != '/'))
        return vg_input_error("drill: --shared-workdir needs --workdir DIR, an absolute path every node mounts");
    if (o.shared_workdir && o.job_script)
        return vg_input_error("drill: --shared-workdir is for the trainer; a --job-script keeps its own log and checkpoints");
    if ((o.workload || o.checkpoint_pvc) && (lab || !vg_orch_can(vg_orch_find(o.orchestrator), VG_CAP_WORKLOADS)))
        return vg_input_error("drill: --workload and --checkpoint-pvc are for --orchestrator %s", workload_orchs());
    if (o.checkpoint_pvc && o.job_script)
        return vg_input_error("drill: --checkpoint-pvc is for the trainer; a --job-script keeps its own checkpoints");
    if (o.job_script && !resume_given)
        return vg_input_error("drill: --job-script needs --resume-pattern REGEX (group 1: the step resumed from)");
    if (o.victims > o.nodes)
        return vg_input_error("drill: --victims %d: more than the job's %d nodes (--nodes)", o.victims, o.nodes);
    if (o.steady_steps < 0) o.steady_steps = o.ckpt_every + 2;
    struct vg_lab_info info;
    char labdir[PATH_MAX];
    if (lab) {
        o.lab = vg_lab_resolve_dir(dir, labdir, sizeof labdir);
        if (vg_lab_info(o.lab, &info)) return vg_input_error("drill: --dir: %s is not a vigil lab", o.lab);
        o.orch_config = info.conf;
        if (!gpus_given) o.gpus_per_node = info.gpus;   /* the lab's GPUs, one rank each */
        if (!o.controller && info.controller[0]) o.controller = info.controller; /* the lab runs vigil */
        int live = o.crash_leader ? vg_drill_live_controllers(o.lab) : 0;
        if (o.crash_leader && live < 2)
            return vg_input_error("drill: --fault controller-crash: the lab in %s runs %d controller(s); it needs 2 or "
                                  "more (vigil lab up N --controllers 2 --store postgres)", o.lab, live);
        if (!fault_given && !strcmp(info.gpu, "amd"))   /* an AMD lab: the MI300X's uncorrectable error */
            o.kind = VG_INJ_AMD_UE, o.code = -1, o.fault_name = "amd-ue";
    }
    char err[512], leader[512];
    if (o.crash_leader && !lab)
        return vg_input_error("drill: --fault controller-crash: for a lab (--lab): the drill kills a controller it started");
    /* several controllers (URL1,URL2,…): the one that leads is asked */
    if (o.controller && vg_ctl_pick_leader(o.controller, leader, sizeof leader, err, sizeof err))
        return vg_input_error("drill: --controller: %s", err);
    if (o.controller) o.controller = leader;
    if (!lab) {   /* a cluster that cannot be reached as configured is bad input (no kubeconfig, …) */
        struct vg_orch_conf oc = vg_opts_orch_conf(&so, 10000);
        if (!(o.orch = vg_orch_open(o.orchestrator, &oc, err, sizeof err)))
            return vg_input_error("drill: --orchestrator %s: %s", o.orchestrator ? o.orchestrator : "slurm", err);
    }
    FILE *hf = NULL;
    if (html && !(hf = fopen(html, "we"))) {
        vg_orch_close(o.orch);
        return vg_input_error("drill: --html: %s: %s", html, strerror(errno));
    }
    json_t *rep = vg_drill(&o, err, sizeof err);
    vg_orch_close(o.orch);
    if (!rep) {
        if (hf) fclose(hf);
        vg_err("drill: %s", err);
        return VG_EXIT_FINDINGS;
    }
    bool ok = vg_drill_recovered(rep);
    if (hf) {
        int hrc = vg_drill_html(hf, rep);
        if (fclose(hf) || hrc) vg_err("drill: --html: %s: %s", html, strerror(errno));
        else if (!json) fprintf(stderr, "vigil: drill: HTML report: %s\n", html);
    }
    if (save) { /* the JSON report to a file, whatever stdout shows */
        FILE *sf = fopen(save, "we");
        if (!sf || vg_json_print(sf, json_incref(rep), 0) || fclose(sf))
            vg_err("drill: --save: %s: %s", save, strerror(errno));
    }
    if (json) vg_json_print(stdout, rep, 0);
    else {
        vg_drill_print(stdout, rep);
        json_decref(rep);
    }
    return ok ? 0 : VG_EXIT_FINDINGS;
}
