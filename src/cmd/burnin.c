/* burnin.c — `vigil burnin`: one pass of active tests now, on this node
 * (`--node NAME`, the entry point a scheduler's job calls) or on the nodes
 * of a `vigil lab` (each node's pass runs as that node: its NVML state, its
 * sysfs, its stand-in tools' state).  A failed node is drained through the
 * same node-apply function `vigil check --drain` uses, with a "vigil:
 * burnin …" reason naming the test and the figure.  See docs/burnin.md. */
#include "cmd/cmd.h"
#include "catalog/catalog.h"
#include "cmd/burnin_opts.h"
#include "cmd/opts.h"
#include "burnin/burnin.h"
#include "burnin/schedule.h"
#include "lab/lab.h"
#include "orch/healthcheck.h"
#include "util/hostlist.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/spawn.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BURNIN_USAGE                                                                                    \
    "usage: vigil burnin [--suite quick|standard|long] [--node NAME] [--drain] [--json]\n"              \
    "                    [--root DIR] [--tool NAME=PATH]… [--thresholds FILE] [--test NAME]\n"           \
    "                    [--vendor nvidia|amd|nvidia,amd]\n"                                        \
    "       vigil burnin --lab [--dir DIR] [--nodes HOSTLIST] [--suite …] [--no-drain] [--json]\n"      \
    "       (--drain acts through " VG_OPTS_ORCH_USAGE ")\n"                                          \
    "       vigil burnin --schedule [--lab [--dir DIR]] [--nodes HOSTLIST] [--suite …] [--budget MIN]\n"  \
    "                    [--burnin-partition NAME] [--state FILE] [--jobs-dir DIR] [--every SECONDS]\n" \
    "       any form: " VG_OPTS_CLIENT_USAGE "\n"                                                       \
    "       sends the results, each node's as that node (F may hold %n: the node's own token file)\n"  \
    "Runs one pass now: on this machine as NAME (default: the host name), or with --lab on the\n"      \
    "lab's nodes (default: every idle one), each as that node.  --drain (default with --lab)\n"        \
    "drains a failed node with a 'vigil: burnin …' reason.  The suite is that of the vendors\n"        \
    "whose GPUs the node has (NVIDIA: DCGM, nccl-tests, vigil-gpu; AMD: RVS, TransferBench,\n"        \
    "rccl-tests); --vendor runs those vendors' instead.  --schedule submits a preemptible\n"       \
    "pass to the burn-in partition (default vigil-burnin) on each idle node whose budget (default\n"  \
    "20 min per rolling hour) is not spent.  --controller sends each pass to vigil serve, which keeps\n"\
    "every node's burn-in history (GET /v1/burnin).  Exit 0 no node failed, 1 a node failed or the\n" \
    "controller did not take the results, 2 usage or input error.\n"                                 \
    VG_OPTS_CLIENT_HELP VG_OPTS_ORCH_HELP

#define MAX_TOOLS VG_BURNIN_MAX_TOOLS

static int parse_args(int argc, char **argv, struct vg_burnin_opts *o)
{
    static const struct option own[] = {
        { "suite", required_argument, 0, 's' }, { "node", required_argument, 0, 'n' },
        { "nodes", required_argument, 0, 'N' }, { "lab", no_argument, 0, 'L' },
        { "dir", required_argument, 0, 'd' },   { "root", required_argument, 0, 'R' },
        { "tool", required_argument, 0, 't' },  { "thresholds", required_argument, 0, 'T' },
        { "test", required_argument, 0, 'x' },  { "drain", no_argument, 0, 'D' },
        { "no-drain", no_argument, 0, 'K' },    { "json", no_argument, 0, 'j' },
        { "help", no_argument, 0, 'h' },        { "schedule", no_argument, 0, 'S' },
        { "budget", required_argument, 0, 'B' },     { "every", required_argument, 0, 'E' },
        { "state", required_argument, 0, 'F' },      { "burnin-partition", required_argument, 0, 'P' },
        { "partition", required_argument, 0, 'P' },  { "jobs-dir", required_argument, 0, 'J' },
        { "vendor", required_argument, 0, 'V' },
        { 0, 0, 0, 0 },
    };
    enum { BLOCKS = VG_OPTS_ORCH | VG_OPTS_CLIENT };
    struct vg_opts_buf ob;
    const struct option *lo = vg_opts_table(own, BLOCKS, &ob);
    struct vg_shared_opts so = { 0 };
    bool sched_opt = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (c) {
        case 's':
            if (!vg_bi_suite_parse(optarg, &o->suite))
                return vg_input_error("burnin: --suite: '%s' is not quick, standard or long", optarg);
            break;
        case 'n': o->node = optarg; break;
        case 'N': o->nodes = optarg; break;
        case 'L': o->lab = true; break;
        case 'd': o->dir = optarg, o->lab = true; break;
        case 'R': o->root = optarg; break;
        case 't': {
            char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg || !eq[1]) return vg_input_error("burnin: --tool: '%s' is not NAME=PATH", optarg);
            if (o->ntools == MAX_TOOLS) return vg_input_error("burnin: --tool: at most %d", MAX_TOOLS);
            *eq = 0;
            o->tools[o->ntools++] = (struct vg_bi_tool){ optarg, eq + 1 };
            break;
        }
        case 'T': o->thresholds = optarg; break;
        case 'x': o->only = optarg; break;
        case 'V': {
            char why[200];
            if (vg_bi_vendors_check(optarg, why, sizeof why)) return vg_input_error("burnin: %s", why);
            o->vendors = optarg;
            break;
        }
        case 'D': o->drain = true; break;
        case 'K': o->no_drain = true; break;
        case 'j': o->json = true; break;
        case 'S': o->schedule = true; break;
        case 'B':
            if (!vg_parse_long(optarg, &o->budget_min) || o->budget_min < 1 || o->budget_min > 60)
                return vg_input_error("burnin: --budget: '%s' is not a number of minutes from 1 to 60", optarg);
            sched_opt = true;
            break;
        case 'E':
            if (!vg_parse_long(optarg, &o->every_s) || o->every_s < 1 || o->every_s > 86400)
                return vg_input_error("burnin: --every: '%s' is not a number of seconds from 1 to 86400", optarg);
            sched_opt = true;
            break;
        case 'F': o->state = optarg, sched_opt = true; break;
        case 'P': o->partition = optarg, sched_opt = true; break;
        case 'J': o->jobs_dir = optarg, sched_opt = true; break;
        case 'h': fputs(BURNIN_USAGE, stdout); return -1;
        default:
            if (vg_opts_take(c, optarg, &so)) break;
            fputs(BURNIN_USAGE, stderr);
            return VG_EXIT_INPUT;
        }
    }
    if (vg_opts_check("burnin", BLOCKS, &so)) return VG_EXIT_INPUT;
    o->orchestrator = so.orchestrator, o->orch_config = so.orch_config, o->insecure_http = so.insecure_http;
    o->controller = so.controller, o->auth = so.auth, o->token_file = so.token_file;
    o->munge_socket = so.munge_socket, o->ca_file = so.ca_file;
    if (optind < argc) return vg_input_error("burnin: unexpected argument '%s'", argv[optind]);
    if (sched_opt && !o->schedule)
        return vg_input_error("burnin: --budget, --every, --state, --burnin-partition and --jobs-dir go with "
                              "--schedule");
    if (o->schedule && (o->node || o->root))
        return vg_input_error("burnin: --schedule: the scheduled job runs each node's pass; --%s does not apply",
                              o->node ? "node" : "root");
    if (o->schedule && !o->budget_min) o->budget_min = 20;
    if (o->schedule && o->budget_min * 60000 < vg_bi_suite_min_ms(o->suite))
        return vg_input_error("burnin: --budget: %ld min is less than a %s pass needs (%lld min)", o->budget_min,
                              vg_bi_suite_name(o->suite), (long long)vg_bi_suite_min_ms(o->suite) / 60000);
    if (o->schedule && !o->partition) o->partition = "vigil-burnin";
    if (o->lab && o->node) return vg_input_error("burnin: --node is for one machine's pass; with --lab use --nodes");
    if (o->lab && o->root) return vg_input_error("burnin: --root: each lab node's tree is used with --lab");
    if (o->drain && o->no_drain) return vg_input_error("burnin: --drain and --no-drain");
    return 0;
}

/* ---- one node, here -------------------------------------------------------- */

static json_t *run_here(const struct vg_burnin_opts *o, const struct vg_bi_thresholds *th, const char *node,
                        char *err, size_t errlen)
{
    struct vg_bi_opts bo = { .node = node, .root = o->root, .suite = o->suite, .th = th, .tools = o->tools,
                             .ntools = o->ntools, .only = o->only, .vendors = o->vendors };
    struct vg_bi_node n;
    /* the verdicts of its failures: the one loader, with the site policy (ROOT/etc/vigil/policy.tsv) */
    struct vg_catalog *cat = vg_catalog_open(o->root, NULL, NULL, err, errlen);
    if (!cat) return NULL;
    if (vg_bi_run(&bo, &n, err, errlen)) {
        vg_catalog_free(cat);
        return NULL;
    }
    json_t *j = vg_bi_node_to_json(&n, cat);
    vg_bi_node_free(&n);
    vg_catalog_free(cat);
    return j;
}

/* ---- the lab's nodes, each as itself ------------------------------------- */

struct lab_job {
    const struct vg_burnin_opts *o;
    const char *dir, *node;
    json_t *doc;        /* the node's result */
};

static json_t *unknown_node(const char *node, const char *why)
{
    json_t *j = json_pack("{s:s, s:s, s:[]}", "node", node, "result", "unknown", "tests");
    vg_json_set_str(j, "detail", why);
    return j;
}

static void *lab_node_main(void *arg)
{
    struct lab_job *jb = arg;
    const struct vg_burnin_opts *o = jb->o;
    char self[600], root[700], envbuf[4096];
    ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
    self[l > 0 ? l : 0] = 0;
    snprintf(root, sizeof root, "%s/nodes/%s", jb->dir, jb->node);
    const char *argv[64], *env[6];
    char toolargs[MAX_TOOLS][1200];
    int a = 0;
    argv[a++] = self, argv[a++] = "burnin", argv[a++] = "--node", argv[a++] = jb->node;
    argv[a++] = "--root", argv[a++] = root;
    a = vg_burnin_forward(o, argv, a, toolargs);
    argv[a] = NULL;
    if (vg_lab_node_env(jb->dir, jb->node, envbuf, sizeof envbuf, env)) {
        jb->doc = unknown_node(jb->node, "the node's environment does not fit");
        return NULL;
    }
    int timeout_s = o->suite == VG_BI_QUICK ? 120 : o->suite == VG_BI_STANDARD ? 900 : 3600;
    struct vg_spawn_result r;
    vg_spawn(argv, env, NULL, timeout_s * 1000, &r);
    json_error_t je;
    json_t *doc = r.out_len ? json_loads(r.out, 0, &je) : NULL;
    json_t *node = json_array_get(json_object_get(doc, "nodes"), 0);
    if (node) jb->doc = json_incref(node);
    else {
        char why[300];
        snprintf(why, sizeof why, "the node's pass %s: %.200s", r.timed_out ? "timed out" : "printed no result",
                 vg_trim(r.err));
        jb->doc = unknown_node(jb->node, why);
    }
    json_decref(doc);
    vg_spawn_result_free(&r);
    return NULL;
}

/* The nodes to test: --nodes (each must be a lab node), else every idle one. */
static int lab_nodes(const struct vg_burnin_opts *o, const char *dir, struct vg_orch *s, char ***names, size_t *n)
{
    *names = NULL;
    *n = 0;
    if (o->nodes) {
        int k = vg_hostlist_expand(o->nodes, names, 4096);
        if (k <= 0) return vg_input_error("burnin: --nodes: '%s' is not a host list", o->nodes);
        *n = (size_t)k;
        for (size_t i = 0; i < *n; i++) {
            char p[1200];
            snprintf(p, sizeof p, "%s/nodes/%s", dir, (*names)[i]);
            if (strchr((*names)[i], '/') || access(p, F_OK)) {
                int rc = vg_input_error("burnin: --nodes: the lab in %s has no node '%s'", dir, (*names)[i]);
                for (size_t k = 0; k < *n; k++) free((*names)[k]);
                free(*names);
                *names = NULL;
                return rc;
            }
        }
        return 0;
    }
    struct vg_orch_node *st;
    size_t ns;
    if (s->ops->nodes(s, NULL, 0, &st, &ns)) {
        vg_err("burnin: %s", s->err);
        return VG_EXIT_FINDINGS;
    }
    *names = vg_xcalloc(ns ? ns : 1, sizeof **names);
    for (size_t i = 0; i < ns; i++)
        if (st[i].idle && !st[i].drain && !st[i].down)
            (*names)[(*n)++] = vg_xstrdup(st[i].name);
    free(st);
    return 0;
}

static int run_lab(const struct vg_burnin_opts *o, json_t *nodes, struct vg_orch *s, const char *dir)
{
    char **names;
    size_t n;
    int rc = lab_nodes(o, dir, s, &names, &n);
    if (rc) return rc;
    struct lab_job *jobs = vg_xcalloc(n ? n : 1, sizeof *jobs);
    pthread_t *th = vg_xcalloc(n ? n : 1, sizeof *th);
    for (size_t i = 0; i < n; i++) {
        jobs[i] = (struct lab_job){ .o = o, .dir = dir, .node = names[i] };
        if (pthread_create(&th[i], NULL, lab_node_main, &jobs[i])) lab_node_main(&jobs[i]), th[i] = 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (th[i]) pthread_join(th[i], NULL);
        json_array_append_new(nodes, jobs[i].doc);
        free(names[i]);
    }
    free(jobs);
    free(th);
    free(names);
    return 0;
}

/* ---- the orchestrator -------------------------------------------------------- */

/* Drains each failed node with its reason (check's node-apply function:
 * nothing when someone else drained it). */
static void drain_failed(json_t *nodes, struct vg_orch *s)
{
    size_t i;
    json_t *n;
    json_array_foreach(nodes, i, n) {
        if (strcmp(vg_json_str(n, "result", ""), "fail")) continue;
        const char *node = vg_json_str(n, "node", ""), *reason = vg_json_str(n, "reason", "vigil: burnin failed");
        int a = vg_hc_apply(s, node, false, reason);
        json_t *sl = json_pack("{s:s}", "action", a < 0 ? "error" : vg_hc_action_name((enum vg_hc_action)a));
        vg_json_set_str(sl, "error", a < 0 ? s->err : NULL);
        json_object_set_new(n, "drain", sl);
        if (a < 0) vg_err("burnin: %s: %s: %s", node, s->ops->name, s->err);
    }
}

/* ---- output ---------------------------------------------------------------- */

static void print_human(const json_t *nodes)
{
    size_t i, k;
    json_t *n, *t;
    json_array_foreach(nodes, i, n) {
        printf("%s: %s", vg_json_str(n, "node", "?"), vg_json_str(n, "result", "?"));
        const char *model = vg_json_str(n, "model", "");
        if (*model) printf(" (%s, %lld GPUs)", model, vg_json_int(n, "gpus", -1));
        const json_t *vendors = json_object_get(n, "vendors");
        for (k = 0; k < json_array_size(vendors); k++)
            printf("%s%s", k ? "," : "; suite of ", json_string_value(json_array_get(vendors, k)));
        if (json_array_size(vendors)) printf(" (%s)", vg_json_str(n, "picked", ""));
        printf("\n");
        if (json_is_string(json_object_get(n, "detail"))) printf("  %s\n", vg_json_str(n, "detail", ""));
        json_array_foreach(json_object_get(n, "tests"), k, t) {
            char value[48] = "-";
            const json_t *v = json_object_get(t, "value");
            if (json_is_number(v)) snprintf(value, sizeof value, "%.2f %s", json_number_value(v), vg_json_str(t, "unit", ""));
            printf("  %-17s %-8s %-14s %-20s %s\n", vg_json_str(t, "name", ""), vg_json_str(t, "result", ""), value,
                   vg_json_str(t, "expected", "-"), vg_json_str(t, "detail", ""));
        }
        const json_t *sl = json_object_get(n, "drain");
        if (sl) printf("  drain: %s%s%s\n", vg_json_str(sl, "action", ""),
                       strcmp(vg_json_str(sl, "action", ""), "drain") ? "" : ": ",
                       strcmp(vg_json_str(sl, "action", ""), "drain") ? "" : vg_json_str(n, "reason", ""));
    }
}

int cmd_burnin(int argc, char **argv)
{
    struct vg_burnin_opts o = { .suite = VG_BI_QUICK };
    int rc = parse_args(argc, argv, &o);
    if (rc) return rc < 0 ? 0 : rc;
    if (o.schedule) return vg_burnin_schedule(&o);
    int64_t start = vg_mono_ms(), started = vg_now_ms();
    char err[512];
    struct vg_bi_thresholds th;
    if (vg_bi_thresholds_load(o.thresholds, &th, err, sizeof err)) return vg_input_error("burnin: %s", err);
    json_t *nodes = json_array();
    struct vg_orch_conf oc = { .config = o.orch_config, .timeout_ms = 10000, .insecure_http = o.insecure_http };
    struct vg_orch *s = NULL;
    struct vg_lab_info info;
    if (o.lab) {
        char dirbuf[PATH_MAX];
        const char *dir = vg_lab_resolve_dir(o.dir, dirbuf, sizeof dirbuf);
        if (!vg_lab_is_lab(dir) || vg_lab_info(dir, &info)) {
            vg_bi_thresholds_free(&th);
            json_decref(nodes);
            return vg_input_error("burnin: --dir: %s is not a vigil lab", dir);
        }
        oc.config = info.conf;
        if (!(s = vg_orch_open(o.orchestrator, &oc, err, sizeof err))) rc = vg_input_error("burnin: %s", err);
        else rc = run_lab(&o, nodes, s, info.dir);
    } else {
        char node[64];
        if (o.node) vg_strlcpy(node, o.node, sizeof node);
        else vg_orch_local_node(vg_orch_find(o.orchestrator), node, sizeof node);
        if (o.nodes && strcmp(o.nodes, node))
            rc = vg_input_error("burnin: --nodes: without --lab only this node's pass runs here (%s); a scheduler "
                                "runs `vigil burnin --node NAME` on each node", node);
        else {
            json_t *j = run_here(&o, &th, node, err, sizeof err);
            if (j) json_array_append_new(nodes, j);
            else rc = vg_input_error("burnin: %s", err);
        }
    }
    vg_bi_thresholds_free(&th);
    if (!rc && !s && o.drain && !(s = vg_orch_open(o.orchestrator, &oc, err, sizeof err)))
        rc = vg_input_error("burnin: %s", err);
    if (rc) {
        json_decref(nodes);
        vg_orch_close(s);
        return rc;
    }
    if ((o.lab && !o.no_drain) || o.drain) drain_failed(nodes, s);
    vg_orch_close(s);
    size_t i, failed = 0, unknown = 0;
    json_t *n;
    json_array_foreach(nodes, i, n) {
        failed += !strcmp(vg_json_str(n, "result", ""), "fail");
        unknown += strcmp(vg_json_str(n, "result", ""), "pass") != 0;
    }
    const char *overall = failed ? "fail" : unknown || !json_array_size(nodes) ? "unknown" : "pass";
    json_t *doc = json_pack("{s:s, s:o, s:I, s:s, s:o}", "suite", vg_bi_suite_name(o.suite), "time",
                            vg_json_time(started), "elapsed_ms", (json_int_t)(vg_mono_ms() - start), "result", overall,
                            "nodes", nodes);
    /* sent before printing: a result the controller did not keep is said at once */
    int sent = o.controller && json_array_size(nodes) ? vg_burnin_post(&o, doc) : 0;
    if (o.json) vg_json_print(stdout, json_incref(doc), 0);
    else {
        if (!json_array_size(nodes)) printf("no idle node to test\n");
        print_human(nodes);
    }
    json_decref(doc);
    fflush(stdout);
    return failed || sent ? VG_EXIT_FINDINGS : VG_EXIT_OK;
}
