/* lab.c — `vigil lab up|status|down|env`: a real local Slurm cluster on this
 * machine (see lab/lab.h and docs/lab.md).  `up` prints the `export` lines
 * a client needs, so `eval "$(vigil lab up 5)"` works. */
#include "cmd/cmd.h"
#include "lab/lab.h"
#include "orch/slurm.h"
#include "report/table.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include "wire/leader.h"
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UP_USAGE                                                                                          \
    "usage: vigil lab up N [--spares K] [--rack-size R] [--gpus-per-node G] [--gpu nvidia|amd|nvidia,amd]\n" \
    "                      [--cpus C] [--port-base P] [--nvl72] [--wait SECS]\n"                          \
    "                      [--conf-extra Key=Value]... [--policy-extra 'key = value']...\n"             \
    "                      [--controllers K] [--store sqlite|postgres] [--no-vigil] [--dir DIR] [--json]\n"
#define STATUS_SYN "vigil lab status [--dir DIR] [--json]\n"
#define DOWN_SYN "vigil lab down [--dir DIR]\n"
#define ENV_SYN "vigil lab env [--dir DIR]\n"
#define STATUS_USAGE "usage: " STATUS_SYN
#define DOWN_USAGE "usage: " DOWN_SYN
#define ENV_USAGE "usage: " ENV_SYN
#define DIR_HELP "DIR defaults to " VG_LAB_DEFAULT_DIR "; see docs/lab.md.\n"
#define LAB_USAGE UP_USAGE "       " STATUS_SYN "       " DOWN_SYN "       " ENV_SYN DIR_HELP

/* Each action's own help (`vigil lab ACTION --help`). */
static const struct {
    const char *name, *help;
} actions[] = {
    { "up", UP_USAGE "Starts munged, slurmctld and N slurmd (n1..nN, the last K spares) in DIR, with vigil's\n"
            "controller and an agent per node unless --no-vigil; waits until every node is idle (SECS,\n"
            "default 60) and prints the `export` lines a client needs: eval \"$(vigil lab up 5)\".\n"
            "--gpu: the nodes' GPUs, NVIDIA's (the fake NVML, the default) or AMD's (the fake AMD SMI,\n"
            "Gres=gpu:mi300x:G, an XGMI hive per node); nvidia,amd takes them in turn (n1 NVIDIA).\n"
            "With vigil, stderr says where the dashboard is and which file holds its read token.\n"
            "--nvl72: racks of 18 trays (or R) like GB200/GB300 NVL72, each an NVLink domain its nodes'\n"
            "GPUs register in (the fake NVML's fabric info), no domain written in the controller's policy.\n"
            "--store postgres: a private PostgreSQL server under DIR/pg holds the controllers' store (else\n"
            "SQLite); --controllers K: K controllers on it (one leads), each agent given all K URLs.\n"
            DIR_HELP
            "Exit 0 up, 1 it did not come up (the half-started lab is taken down), 2 bad options or DIR.\n" },
    { "status", STATUS_USAGE "The lab's daemons (alive or not), its controllers (role and term from their\n"
                "/healthz, \"down\" when one does not answer) and its nodes' states.\n" DIR_HELP
                "Exit 0 everything runs and responds, 1 otherwise, 2 DIR is not a lab.\n" },
    { "down", DOWN_USAGE "Stops every process of the lab in DIR and removes DIR.\n" DIR_HELP
              "Exit 0 done, 1 something of the lab still runs from DIR (named; DIR kept), 2 DIR is not a\n"
              "lab (nothing touched).\n" },
    { "env", ENV_USAGE "Prints the lab's `export` lines again (SLURM_CONF, VIGIL_LAB, the controller and its\n"
             "read token, PATH with the burn-in stand-in tools): eval \"$(vigil lab env)\".\n" DIR_HELP
             "Exit 0, 2 DIR is not a lab.\n" },
};

struct args {
    const char *dir;
    char dirbuf[PATH_MAX];
    int json;
    struct vg_lab_opts o;
    const char **extra, **policy;
};

static int opt_int(const char *name, const char *v, int *out)
{
    long x;
    if (!vg_parse_long(v, &x) || x < 0 || x > 100000)
        return vg_input_error("lab: %s: '%s' is not a non-negative integer", name, v);
    *out = (int)x;
    return 0;
}

/* argv[1] is the subcommand; its options follow.  1 after --help. */
static int parse(int argc, char **argv, bool up, struct args *a, const char *usage)
{
    enum { O_JSON = 256, O_DIR, O_NOVIGIL, O_EXTRA, O_SPARES, O_RACK, O_CPUS, O_PORT, O_WAIT, O_GPUS, O_POLICY, O_GPU,
           O_NVL72, O_CONTROLLERS, O_STORE };
    static const struct option opts[] = {
        { "json", no_argument, 0, O_JSON },           { "dir", required_argument, 0, O_DIR },
        { "no-vigil", no_argument, 0, O_NOVIGIL },    { "conf-extra", required_argument, 0, O_EXTRA },
        { "spares", required_argument, 0, O_SPARES }, { "rack-size", required_argument, 0, O_RACK },
        { "cpus", required_argument, 0, O_CPUS },     { "port-base", required_argument, 0, O_PORT },
        { "wait", required_argument, 0, O_WAIT },     { "gpus-per-node", required_argument, 0, O_GPUS },
        { "policy-extra", required_argument, 0, O_POLICY }, { "gpu", required_argument, 0, O_GPU },
        { "nvl72", no_argument, 0, O_NVL72 },       { "controllers", required_argument, 0, O_CONTROLLERS },
        { "store", required_argument, 0, O_STORE },
        { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 },
    };
    int c, *dst;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc - 1, argv + 1, "h", opts, NULL)) != -1) {
        const char *opt = argv[optind];   /* for messages: the option just read (or its value) */
        if (c == 'h') return fputs(usage, stdout), 1;
        if (c != O_JSON && c != O_DIR && c > 0 && !up)
            return vg_input_error("lab %s: unknown argument '%s'\n%s", argv[1], argv[optind], usage);
        switch (c) {
        case O_JSON: a->json = 1; continue;
        case O_DIR: a->dir = optarg; continue;
        case O_NOVIGIL: a->o.no_vigil = true; continue;
        case O_GPU: a->o.gpu = optarg; continue;   /* an option of its own: never a prefix of --gpus-per-node */
        case O_NVL72: a->o.nvl72 = true; continue;
        case O_STORE: a->o.store = optarg; continue;
        case O_EXTRA:
            a->extra = vg_xrealloc(a->extra, (a->o.nconf_extra + 1) * sizeof *a->extra);
            a->extra[a->o.nconf_extra++] = optarg;
            continue;
        case O_POLICY:
            a->policy = vg_xrealloc(a->policy, (a->o.npolicy_extra + 1) * sizeof *a->policy);
            a->policy[a->o.npolicy_extra++] = optarg;
            continue;
        case O_SPARES: dst = &a->o.spares; break;
        case O_RACK: dst = &a->o.rack_size; break;
        case O_CPUS: dst = &a->o.cpus; break;
        case O_PORT: dst = &a->o.port_base; break;
        case O_WAIT: dst = &a->o.wait_ms; break;
        case O_GPUS: dst = &a->o.gpus; break;
        case O_CONTROLLERS: dst = &a->o.controllers; break;
        default: return vg_input_error("lab %s: unknown or incomplete option '%s'\n%s", argv[1], opt, usage);
        }
        char name[32];
        snprintf(name, sizeof name, "--%s", opts[c - O_JSON].name);
        if (opt_int(name, optarg, dst)) return VG_EXIT_INPUT;
        if (dst == &a->o.gpus && *dst > 8) return vg_input_error("lab: --gpus-per-node: %d is more than 8", *dst);
        if (dst == &a->o.controllers && *dst < 1) return vg_input_error("lab: --controllers: 0: K must be 1 or more");
    }
    int pos = optind + 1;   /* positional arguments, after the subcommand */
    if (up && pos < argc) {
        if (opt_int("N", argv[pos], &a->o.nodes)) return VG_EXIT_INPUT;
        pos++;
    } else if (up)
        return vg_input_error("lab up: the number of nodes N is missing\n%s", usage);
    if (pos < argc) return vg_input_error("lab %s: unknown argument '%s'\n%s", argv[1], argv[pos], usage);
    a->o.wait_ms *= 1000;
    if (a->o.nvl72 && !a->o.rack_size) a->o.rack_size = 18;   /* an NVL72 rack: 18 compute trays */
    a->o.conf_extra = a->extra;
    a->o.policy_extra = a->policy;
    /* once, before anything uses it: the path every daemon is tagged with */
    a->o.dir = a->dir = vg_lab_resolve_dir(a->dir ? a->dir : VG_LAB_DEFAULT_DIR, a->dirbuf, sizeof a->dirbuf);
    return 0;
}

static int lab_up(struct args *a)
{
    struct vg_lab_info info;
    char err[2048];
    int rc = vg_lab_up(&a->o, &info, err, sizeof err);
    if (rc == -2) return vg_input_error("lab up: %s", err);
    if (rc) {
        vg_err("lab up: %s", err);
        return VG_EXIT_FINDINGS;
    }
    vg_info("lab up: %d nodes idle in %ld ms (ports %d-%d)", info.nodes, info.up_ms, info.port_base,
            info.port_base + info.nodes);
    if (info.controller[0]) {   /* where to look, on stderr: stdout is for eval */
        char tok[256] = "", *tp = NULL;
        if (asprintf(&tp, "%s/etc/read.token", info.dir) < 0) tp = NULL;
        if (tp) vg_read_line(NULL, tp, tok, sizeof tok);
        /* any controller serves the dashboard: the first */
        vg_notice("lab up: dashboard %.*s/?token=%s (the read token is in %s)", (int)strcspn(info.controller, ","),
                  info.controller, tok, tp ? tp : "?");
        free(tp);
    }
    if (a->json) {
        json_t *nodes = json_array(), *spares = json_array();
        for (int i = 1; i <= info.nodes; i++)
            json_array_append_new(i > info.nodes - info.spares ? spares : nodes, json_sprintf("n%d", i));
        json_t *doc = json_pack("{s:s, s:o, s:o, s:i, s:i, s:I, s:{s:s, s:s}}", "dir", info.dir, "nodes",
                                nodes, "spares", spares, "rack_size", info.rack_size, "port_base",
                                info.port_base, "up_ms", (json_int_t)info.up_ms, "env", "SLURM_CONF",
                                info.conf, "VIGIL_LAB", info.dir);
        if (info.controller[0])
            json_object_set_new(json_object_get(doc, "env"), "VIGIL_CONTROLLER", json_string(info.controller));
        return vg_json_print(stdout, doc, 0) ? VG_EXIT_INPUT : 0;
    }
    char *env = vg_lab_env(info.dir);
    fputs(env, stdout);
    free(env);
    return 0;
}

/* A controller of the lab and what its /healthz says. */
struct ctl {
    struct vg_lab_ctl c;
    struct vg_ctl_health h;
};

static size_t controllers(const char *dir, struct ctl *c)
{
    struct vg_lab_ctl lc[VG_LAB_CTL_MAX];
    size_t n = vg_lab_controllers(dir, lc, VG_LAB_CTL_MAX);
    for (size_t i = 0; i < n; i++) {
        c[i].c = lc[i];
        vg_ctl_health(lc[i].url, 2000, &c[i].h);
    }
    return n;
}

static int lab_status(struct args *a)
{
    struct vg_lab_info info;
    if (!vg_lab_is_lab(a->dir) || vg_lab_info(a->dir, &info))
        return vg_input_error("lab status: %s: not a vigil lab (no readable %s)", a->dir, VG_LAB_MARKER);
    struct vg_lab_daemon *d;
    size_t nd;
    vg_lab_daemons(a->dir, &d, &nd);
    struct vg_slurm s = { .conf = info.conf, .timeout_ms = 5000 };
    struct vg_node_state *ns = NULL;
    size_t nn = 0;
    bool ctld_ok = vg_slurm_nodes(&s, NULL, &ns, &nn) == 0;
    bool healthy = ctld_ok;
    for (size_t i = 0; i < nd; i++) {   /* a daemon started again (after a drill) counts by its latest record */
        bool again = false;
        for (size_t j = i + 1; j < nd && !again; j++) again = !strcmp(d[j].name, d[i].name) && !strcmp(d[j].node, d[i].node);
        healthy = healthy && (d[i].alive || again);
    }
    for (size_t i = 0; i < nn; i++) healthy = healthy && ns[i].responding;
    struct ctl c[VG_LAB_CTL_MAX];
    size_t nc = controllers(a->dir, c);
    if (a->json) {
        json_t *dj = json_array(), *nj = json_array();
        for (size_t i = 0; i < nd; i++) {
            json_t *o = json_pack("{s:s, s:i, s:b}", "name", d[i].name, "pid", (int)d[i].pid, "alive", d[i].alive);
            vg_json_set_str(o, "node", d[i].node);
            json_array_append_new(dj, o);
        }
        for (size_t i = 0; i < nn; i++) {
            json_t *o = json_pack("{s:s, s:s, s:s, s:b, s:b, s:b}", "name", ns[i].name, "state", ns[i].state,
                                  "features", ns[i].features, "drain", ns[i].drain, "down", ns[i].down,
                                  "responding", ns[i].responding);
            vg_json_set_str(o, "reason", ns[i].reason);
            json_array_append_new(nj, o);
        }
        json_t *cj = json_array();
        for (size_t i = 0; i < nc; i++)
            json_array_append_new(cj, json_pack("{s:s, s:i, s:s, s:o}", "url", c[i].c.url, "pid", (int)c[i].c.pid, "role",
                                                c[i].h.role, "term", c[i].h.term >= 0 ? json_integer(c[i].h.term)
                                                                                       : json_null()));
        json_t *doc = json_pack("{s:s, s:s, s:i, s:b, s:s, s:o, s:o, s:o}", "dir", a->dir, "slurm_conf", info.conf,
                                "port_base", info.port_base, "healthy", healthy, "store", info.store, "daemons", dj,
                                "controllers", cj, "nodes", nj);
        vg_json_print(stdout, doc, 0);
    } else {
        static const char *const dh[] = { "DAEMON", "NODE", "PID", "ALIVE" };
        struct vg_table *t = vg_table_new(4, dh);
        for (size_t i = 0; i < nd; i++)
            vg_table_rowf(t, "%s\t%s\t%d\t%s", d[i].name, d[i].node[0] ? d[i].node : "-", (int)d[i].pid,
                          d[i].alive ? "yes" : "NO");
        vg_table_print(t, stdout);
        vg_table_free(t);
        if (nc) {
            static const char *const ch[] = { "CONTROLLER", "PID", "ROLE", "TERM" };
            t = vg_table_new(4, ch);
            for (size_t i = 0; i < nc; i++) {
                char term[24] = "-";
                if (c[i].h.term >= 0) snprintf(term, sizeof term, "%lld", c[i].h.term);
                vg_table_rowf(t, "%s\t%d\t%s\t%s", c[i].c.url, (int)c[i].c.pid, c[i].h.role, term);
            }
            printf("\n");
            vg_table_print(t, stdout);
            vg_table_free(t);
        }
        static const char *const nh[] = { "NODE", "STATE", "FEATURES", "REASON" };
        t = vg_table_new(4, nh);
        for (size_t i = 0; i < nn; i++)
            vg_table_rowf(t, "%s\t%s\t%s\t%s", ns[i].name, ns[i].state, ns[i].features[0] ? ns[i].features : "-",
                          ns[i].reason[0] ? ns[i].reason : "-");
        printf("\n");
        if (ctld_ok) vg_table_print(t, stdout);
        else printf("slurmctld: %s\n", s.err);
        vg_table_free(t);
    }
    free(d);
    free(ns);
    return healthy ? 0 : VG_EXIT_FINDINGS;
}

int cmd_lab(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(LAB_USAGE, argc < 2 ? stderr : stdout);
        return argc < 2 ? VG_EXIT_INPUT : 0;
    }
    const char *act = argv[1], *usage = NULL;
    for (size_t i = 0; i < sizeof actions / sizeof actions[0]; i++)
        if (!strcmp(act, actions[i].name)) usage = actions[i].help;
    if (!usage) return vg_input_error("lab: unknown action '%s' (up, status, down, env)", act);
    bool up = !strcmp(act, "up");
    struct args a = { 0 };
    int rc = parse(argc, argv, up, &a, usage);
    if (rc) {
        free(a.extra);
        free(a.policy);
        return rc == 1 ? VG_EXIT_OK : rc;
    }
    if (up) rc = lab_up(&a);
    else if (!strcmp(act, "status")) rc = lab_status(&a);
    else if (!strcmp(act, "env")) {
        if (!vg_lab_is_lab(a.dir)) return vg_input_error("lab env: %s: not a vigil lab (no %s marker)", a.dir, VG_LAB_MARKER);
        char *env = vg_lab_env(a.dir);
        fputs(env, stdout);
        free(env);
    } else {
        char err[1024];
        int d = vg_lab_down(a.dir, err, sizeof err);
        if (d == -2) rc = vg_input_error("lab down: %s", err);
        else if (d) {
            vg_err("lab down: %s", err);
            rc = VG_EXIT_FINDINGS;
        }
    }
    free(a.extra);
    free(a.policy);
    return rc;
}
