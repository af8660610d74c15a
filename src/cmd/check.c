/* check.c — `vigil check`: a one-shot node health check in the spirit of LBNL
 * NHC, usable as Slurm's HealthCheckProgram.  Expectations come from
 * /etc/vigil/vigil.conf (checkconf.h); every check runs in a watchdog probe
 * under one deadline (default 50 s, under Slurm's 60 s HealthCheckTimeout),
 * so a hung GPU library call is reported, never waited for.  Events get their
 * verdicts from the catalog and site policy, as in scan and the agent.
 * --drain drains the node through the orchestrator with a "vigil: …" reason
 * and resumes it once vigil's drain is no longer needed (orch/healthcheck.h).
 * See docs/check.md. */
#include "cmd/cmd.h"
#include "catalog/catalog.h"
#include "cmd/opts.h"
#include "orch/healthcheck.h"
#include "signal/checkrun.h"
#include "signal/checks.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/rootfs.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_CONF "/etc/vigil/vigil.conf"
#define CHECK_USAGE                                                                                   \
    "usage: vigil check [--config FILE] [--root DIR] [--node NAME] [--deadline S] [--json]\n"       \
    "                   [--policy FILE] [--catalog FILE] [--drain " VG_OPTS_ORCH_USAGE "]\n"       \
    "                   [--init] [--quick]\n"                                                          \
    "FILE defaults to $VIGIL_CONFIG, else " DEFAULT_CONF "; NAME to $VIGIL_NODE, the orchestrator's\n" \
    "name for this node, else the host name; S to 50 seconds.  --drain drains this node through the\n" \
    "orchestrator (default slurm) when a check fails and resumes vigil's own drain once they pass.\n"  \
    "--init writes expectations from this (healthy) node to FILE (\"-\" for stdout).  --quick: a\n"    \
    "5-second deadline, for Slurm's Prolog/Epilog.\n"                                                  \
    "Exit 0 healthy, 1 a check failed, 2 usage or config error.\n" VG_OPTS_ORCH_HELP

struct opts {
    const char *config, *root, *node, *policy, *catalog;
    struct vg_shared_opts sh;   /* --orchestrator and how to reach it */
    double deadline_s;
    bool json, drain, init, config_given, quick, deadline_given;
};

/* 0 to go on, 1 after --help, 2 for bad usage (printed). */
static int parse_args(int argc, char **argv, struct opts *o)
{
    enum { O_CONFIG = 256, O_ROOT, O_NODE, O_DEADLINE, O_JSON, O_DRAIN, O_INIT, O_POLICY, O_CATALOG, O_QUICK, O_HELP };
    static const struct option own[] = {
        { "config", required_argument, 0, O_CONFIG },   { "root", required_argument, 0, O_ROOT },
        { "node", required_argument, 0, O_NODE },       { "deadline", required_argument, 0, O_DEADLINE },
        { "json", no_argument, 0, O_JSON },             { "drain", no_argument, 0, O_DRAIN },
        { "slurm", no_argument, 0, O_DRAIN },           { "init", no_argument, 0, O_INIT },
        { "policy", required_argument, 0, O_POLICY },   { "catalog", required_argument, 0, O_CATALOG },
        { "quick", no_argument, 0, O_QUICK },           { "help", no_argument, 0, O_HELP },
        { 0, 0, 0, 0 },
    };
    struct vg_opts_buf ob;
    const struct option *opts = vg_opts_table(own, VG_OPTS_ORCH, &ob);
    int c;
    char *end;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case O_CONFIG: o->config = optarg, o->config_given = true; break;
        case O_ROOT: o->root = optarg; break;
        case O_NODE: o->node = optarg; break;
        case O_JSON: o->json = true; break;
        case O_DRAIN: o->drain = true; break;
        case O_INIT: o->init = true; break;
        case O_QUICK: o->quick = true; break;
        case O_POLICY: o->policy = optarg; break;
        case O_CATALOG: o->catalog = optarg; break;
        case O_DEADLINE:
            o->deadline_s = strtod(optarg, &end);
            o->deadline_given = true;
            if (end == optarg || *end || o->deadline_s <= 0 || o->deadline_s > 86400)
                return vg_input_error("check: --deadline '%s': expected seconds (0 < S <= 86400)", optarg);
            break;
        case 'h': case O_HELP: fputs(CHECK_USAGE, stdout); return 1;
        default:
            if (vg_opts_take(c, optarg, &o->sh)) break;
            return vg_input_error("check: unknown or incomplete option '%s' (vigil check --help)", argv[optind - 1]);
        }
    }
    if (optind < argc) return vg_input_error("check: unexpected argument '%s'", argv[optind]);
    if (vg_opts_check("check", VG_OPTS_ORCH, &o->sh)) return VG_EXIT_INPUT;
    return 0;
}

static void node_name(struct opts *o, char *buf, size_t n)
{
    if (o->node && *o->node) vg_strlcpy(buf, o->node, n);
    else if (o->root && vg_read_line(o->root, "/etc/hostname", buf, n) == 0 && *buf) {
    } else vg_orch_local_node(vg_orch_find(o->sh.orchestrator), buf, n);
    buf[strcspn(buf, ".")] = 0;
}

/* The drain reason: "vigil: <first failure>" (+ how many more). */
static void drain_reason(const struct vg_check_results *rs, char *buf, size_t n)
{
    size_t failed = 0, first = 0;
    for (size_t i = 0; i < rs->n; i++)
        if (!rs->r[i].ok && failed++ == 0) first = i;
    char more[32] = "";
    if (failed > 1) snprintf(more, sizeof more, " (+%zu more)", failed - 1);
    char what[200];
    snprintf(what, sizeof what, "%.60s: %.130s", rs->r[first].name, rs->r[first].detail);
    for (char *c = what; *c; c++)
        if (*c == '\n' || *c == '\r') *c = ' ';
    snprintf(buf, n, VG_REASON_PREFIX " %s%s", what, more);
}

/* The line of a run where nothing failed: what ran, or why nothing did —
 * never "0 checks passed".  missing: the config looked for when the
 * built-in checks ran instead. */
static void print_passed(const char *node, const struct vg_check_results *rs, const char *missing,
                         const char *config, int64_t ms)
{
    char names[160] = "";   /* the checks that ran, once each: "gpu, driver, mount" */
    for (size_t i = 0; i < rs->n; i++) {
        int len = (int)strcspn(rs->r[i].name, " ");
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = (int)strcspn(rs->r[k].name, " ") == len && !strncmp(rs->r[k].name, rs->r[i].name, (size_t)len);
        size_t l = strlen(names);
        if (!seen) snprintf(names + l, sizeof names - l, "%s%.*s", l ? ", " : "", len, rs->r[i].name);
    }
    if (rs->n && missing)
        printf("ok %s: %zu built-in checks passed (%s) in %lld ms; no %s\n", node, rs->n, names, (long long)ms, missing);
    else if (rs->n)
        printf("ok %s: %zu checks passed (%s) in %lld ms\n", node, rs->n, names, (long long)ms);
    else if (missing) {
        char all[128] = "";
        for (size_t i = 0; vg_checks[i]; i++)
            if (vg_checks[i]->defaults)
                snprintf(all + strlen(all), sizeof all - strlen(all), "%s%s", *all ? ", " : "", vg_checks[i]->name);
        printf("%s: nothing checked: no %s, and none of the built-in checks (%s) finds anything to check on "
               "this node; write its expectations there (docs/check.md)\n", node, missing, all);
    } else
        printf("%s: nothing checked: no line of %s applies to this node\n", node, config);
}

static int do_init(struct opts *o, const struct vg_check_opts *co)
{
    struct sbuf text = SBUF_INIT;
    char now[32];
    vg_format_time(vg_now_ms(), now);
    sbuf_printf(&text, "# vigil check expectations, written by `vigil check --init` on %s at %s.\n"
                       "# Grammar: HOSTMASK || CHECK [WORD…] [KEY=VALUE…]; see docs/check.md.\n",
                co->node, now);
    vg_check_init_text(co, &text);
    int rc = 0;
    if (!strcmp(o->config, "-"))
        fputs(text.s, stdout);
    else {
        FILE *f = fopen(o->config, "wx");
        if (!f) rc = vg_input_error("%s: %s (remove it first to write new expectations)", o->config, strerror(errno));
        else {
            fputs(text.s, f);
            if (fclose(f) != 0) rc = vg_input_error("%s: %s", o->config, strerror(errno));
            else vg_info("wrote %s", o->config);
        }
    }
    sbuf_free(&text);
    return rc;
}

int cmd_check(int argc, char **argv)
{
    struct opts o = { .deadline_s = 50 };
    int rc = parse_args(argc, argv, &o);
    if (rc) return rc == 1 ? VG_EXIT_OK : rc;
    /* Prolog/Epilog: a job waits for it, so 5 s whatever the config holds */
    if (o.quick && !o.deadline_given) o.deadline_s = 5;
    int64_t start = vg_mono_ms(), started_ms = vg_now_ms();
    if (!o.config) o.config = getenv("VIGIL_CONFIG");
    if (o.config && *o.config) o.config_given = true;
    else o.config = DEFAULT_CONF;
    char node[64];
    node_name(&o, node, sizeof node);
    /* Leave room for the orchestrator's calls after the probes. */
    int64_t total = (int64_t)(o.deadline_s * 1000), reserve = o.drain ? total / 4 : 100;
    if (reserve > 10000) reserve = 10000;
    struct vg_check_opts co = { .root = o.root, .node = node, .deadline_mono_ms = start + total - reserve,
                                .daemons = vg_orch_find(o.sh.orchestrator)->node_daemons };
    if (o.init) {
        if (!o.config_given) o.config = "-";
        return do_init(&o, &co);
    }
    struct vg_checkconf conf;
    char err[512];
    struct vg_catalog *cat = vg_catalog_open(o.root, o.catalog, o.policy, err, sizeof err);
    if (!cat) return vg_input_error("check: %s", err);
    /* The default path lives in the root; an explicit --config is taken as given. */
    int lrc;
    const char *missing = NULL;   /* the config looked for, when the built-in checks run instead */
    if (!o.config_given && !vg_path_exists(o.root, o.config)) {
        /* zero configuration: the built-in checks for what this node has */
        struct sbuf text = SBUF_INIT;
        vg_check_default_text(&co, &text);
        lrc = vg_checkconf_parse(text.s ? text.s : "", text.len, "(built-in checks)", &conf, err, sizeof err);
        char what[128] = "";
        for (const char *l = text.s; l && (l = strstr(l, "|| ")); l += 3) {
            char name[16];
            snprintf(name, sizeof name, "%.*s", (int)strcspn(l + 3, " \n"), l + 3);
            if (!strstr(what, name)) snprintf(what + strlen(what), sizeof what - strlen(what), "%s%s", *what ? ", " : "", name);
        }
        vg_warn("check: no %s: running the built-in checks for what this node has (%s); `vigil check --init "
                "--config %s` writes this node's expectations there", o.config, *what ? what : "none apply", o.config);
        missing = o.config;
        o.config = "built-in";
        sbuf_free(&text);
    } else if (o.config_given && !vg_path_exists(NULL, o.config)) {
        vg_catalog_free(cat);
        return vg_input_error("check: --config %s: no such file (`vigil check --init --config %s` writes one)",
                              o.config, o.config);
    } else
        lrc = vg_checkconf_load(o.config_given ? NULL : o.root, o.config, &conf, err, sizeof err);
    if (lrc < 0 || vg_check_validate(&conf, err, sizeof err) < 0) {
        vg_checkconf_free(&conf);
        vg_catalog_free(cat);
        return vg_input_error("%s", err);
    }
    struct vg_check_results rs = { 0 };
    int applied = vg_check_run(&conf, &co, &rs);
    for (size_t i = 0; i < rs.n; i++)
        for (int k = 0; k < rs.r[i].nev; k++) vg_catalog_classify(cat, &rs.r[i].ev[k]);
    vg_catalog_free(cat);
    size_t failed = 0;
    for (size_t i = 0; i < rs.n; i++) failed += !rs.r[i].ok;

    json_t *drain = NULL;
    if (o.drain) {
        char reason[256] = "";
        if (failed) drain_reason(&rs, reason, sizeof reason);
        int64_t left = start + total - vg_mono_ms();
        struct vg_orch_conf oc = vg_opts_orch_conf(&o.sh, left > 1000 ? (int)(left / 2) : 500);
        struct vg_orch *orch = vg_orch_open(o.sh.orchestrator, &oc, err, sizeof err);
        int a = orch ? vg_hc_apply(orch, node, failed == 0, reason) : -1;
        const char *why = orch ? orch->err : err;
        drain = json_pack("{s:s, s:s, s:i}", "orchestrator", vg_orch_find(o.sh.orchestrator)->name, "action",
                          a < 0 ? "error" : vg_hc_action_name((enum vg_hc_action)a), "calls",
                          orch ? (int)orch->calls : 0);
        vg_json_set_str(drain, "reason", a == VG_HC_DRAIN ? reason : "");
        vg_json_set_str(drain, "error", a < 0 ? why : "");
        if (a < 0) vg_err("check: %s", why);
        else if (a != VG_HC_NONE) vg_info("check: %s %s%s%s", vg_hc_action_name((enum vg_hc_action)a), node,
                                          a == VG_HC_DRAIN ? ": " : "", a == VG_HC_DRAIN ? reason : "");
        vg_orch_close(orch);
    }
    int64_t elapsed = vg_mono_ms() - start;
    if (o.json) {
        json_t *checks = json_array(), *events = json_array();
        for (size_t i = 0; i < rs.n; i++) {
            json_array_append_new(checks, vg_check_result_to_json(&rs.r[i]));
            for (int k = 0; k < rs.r[i].nev; k++) json_array_append_new(events, vg_event_to_json(&rs.r[i].ev[k]));
        }
        json_t *doc = json_pack("{s:s, s:o, s:b, s:s, s:i, s:i, s:I, s:f, s:o, s:o}", "node", node, "time",
                                vg_json_time(started_ms), "ok", failed == 0, "config", o.config, "lines", applied,
                                "failed", (int)failed, "elapsed_ms", (json_int_t)elapsed, "deadline_s", o.deadline_s,
                                "checks", checks, "events", events);
        if (drain) json_object_set_new(doc, "drain", drain);
        vg_json_print(stdout, doc, 0);
    } else {
        json_decref(drain);
        for (size_t i = 0; i < rs.n; i++)
            if (!rs.r[i].ok) {
                if (rs.r[i].line) printf("FAIL %s: %s (%s:%d)\n", rs.r[i].name, rs.r[i].detail, o.config, rs.r[i].line);
                else printf("FAIL %s: %s\n", rs.r[i].name, rs.r[i].detail);
            }
        if (!failed) print_passed(node, &rs, missing, o.config, elapsed);
    }
    fflush(stdout);
    vg_check_results_free(&rs);
    vg_checkconf_free(&conf);
    return failed ? VG_EXIT_FINDINGS : VG_EXIT_OK;
}
