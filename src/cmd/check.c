/* check.c — `vigil check`: a one-shot node health check in the spirit of LBNL
 * NHC, usable as Slurm's HealthCheckProgram.  Expectations come from
 * /etc/vigil/vigil.conf (checkconf.h); every check runs in a watchdog probe
 * under one deadline (default 50 s, under Slurm's 60 s HealthCheckTimeout),
 * so a hung NVML call is reported, never waited for.  --slurm drains the node
 * with a "vigil: …" reason and resumes it once vigil's drain is no longer
 * needed (orch/healthcheck.h).  See docs/check.md. */
#include "cmd/cmd.h"
#include "catalog/catalog.h"
#include "orch/healthcheck.h"
#include "signal/checkrun.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_CONF "/etc/vigil/vigil.conf"
#define CHECK_USAGE                                                                               \
    "usage: vigil check [--config FILE] [--root DIR] [--node NAME] [--deadline S] [--json]\n"   \
    "                   [--slurm] [--init] [--quick]\n"                                           \
    "FILE defaults to $VIGIL_CONFIG, else " DEFAULT_CONF "; NAME to $SLURMD_NODENAME, else the\n" \
    "host name; S to 50 seconds.  --init writes expectations from this (healthy) node to FILE\n" \
    "(\"-\" for stdout).  --quick: a 5-second deadline, for Slurm's Prolog/Epilog.\n"            \
    "Exit 0 healthy, 1 a check failed, 2 usage or config error.\n"

struct opts {
    const char *config, *root, *node;
    double deadline_s;
    bool json, slurm, init, config_given, quick, deadline_given;
};

static int parse_args(int argc, char **argv, struct opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--json")) o->json = true;
        else if (!strcmp(a, "--slurm")) o->slurm = true;
        else if (!strcmp(a, "--init")) o->init = true;
        else if (!strcmp(a, "--quick")) o->quick = true;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(CHECK_USAGE, stdout);
            return -1;
        } else if (!strcmp(a, "--config") || !strcmp(a, "--root") || !strcmp(a, "--node") ||
                   !strcmp(a, "--deadline")) {
            if (!v) return vg_input_error("check: %s needs a value", a);
            i++;
            if (!strcmp(a, "--config")) o->config = v, o->config_given = true;
            else if (!strcmp(a, "--root")) o->root = v;
            else if (!strcmp(a, "--node")) o->node = v;
            else {
                char *end;
                o->deadline_s = strtod(v, &end);
                o->deadline_given = true;
                if (end == v || *end || o->deadline_s <= 0 || o->deadline_s > 86400)
                    return vg_input_error("check: --deadline '%s': expected seconds (0 < S <= 86400)", v);
            }
        } else
            return vg_input_error("check: unknown option '%s' (vigil check --help)", a);
    }
    return 0;
}

static void node_name(struct opts *o, char *buf, size_t n)
{
    const char *env = getenv("SLURMD_NODENAME");
    if (o->node && *o->node) vg_strlcpy(buf, o->node, n);
    else if (env && *env) vg_strlcpy(buf, env, n);
    else if (o->root && vg_read_line(o->root, "/etc/hostname", buf, n) == 0 && *buf) {
    } else if (gethostname(buf, n - 1) < 0)
        vg_strlcpy(buf, "localhost", n);
    buf[n - 1] = 0;
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

/* Sets each event's action from the fault catalog, when it loads and knows
 * the kind (otherwise the check's own action stays). */
static void classify(struct vg_check_results *rs)
{
    char err[256];
    struct vg_catalog *cat = vg_catalog_load(NULL, err, sizeof err);
    if (!cat) {
        vg_debug("catalog: %s (keeping the checks' own actions)", err);
        return;
    }
    for (size_t i = 0; i < rs->n; i++)
        for (int k = 0; k < rs->r[i].nev; k++)
            if (vg_catalog_lookup(cat, rs->r[i].ev[k].kind, rs->r[i].ev[k].code))
                vg_catalog_classify(cat, &rs->r[i].ev[k]);
    vg_catalog_free(cat);
}

int cmd_check(int argc, char **argv)
{
    struct opts o = { .deadline_s = 50 };
    int rc = parse_args(argc, argv, &o);
    if (rc) return rc < 0 ? 0 : rc;
    /* Prolog/Epilog: a job waits for it, so 5 s whatever the config holds */
    if (o.quick && !o.deadline_given) o.deadline_s = 5;
    int64_t start = vg_mono_ms(), started_ms = vg_now_ms();
    if (!o.config) o.config = getenv("VIGIL_CONFIG");
    if (o.config && *o.config) o.config_given = true;
    else o.config = DEFAULT_CONF;
    char node[64];
    node_name(&o, node, sizeof node);
    /* Leave room for the Slurm calls after the probes. */
    int64_t total = (int64_t)(o.deadline_s * 1000), reserve = o.slurm ? total / 4 : 100;
    if (reserve > 10000) reserve = 10000;
    struct vg_check_opts co = { .root = o.root, .node = node, .deadline_mono_ms = start + total - reserve };
    if (o.init) {
        if (!o.config_given) o.config = "-";
        return do_init(&o, &co);
    }
    struct vg_checkconf conf;
    char err[512];
    /* The default path lives in the root; an explicit --config is taken as given. */
    if (vg_checkconf_load(o.config_given ? NULL : o.root, o.config, &conf, err, sizeof err) < 0 ||
        vg_check_validate(&conf, err, sizeof err) < 0) {
        vg_checkconf_free(&conf);
        return vg_input_error("%s", err);
    }
    struct vg_check_results rs = { 0 };
    int applied = vg_check_run(&conf, &co, &rs);
    classify(&rs);
    size_t failed = 0;
    for (size_t i = 0; i < rs.n; i++) failed += !rs.r[i].ok;

    json_t *slurm = NULL;
    if (o.slurm) {
        char reason[256] = "";
        if (failed) drain_reason(&rs, reason, sizeof reason);
        int64_t left = start + total - vg_mono_ms();
        struct vg_slurm s = { .conf = getenv("SLURM_CONF"), .timeout_ms = left > 1000 ? (int)(left / 2) : 500 };
        int a = vg_hc_apply(&s, node, failed == 0, reason);
        slurm = json_pack("{s:s, s:i}", "action", a < 0 ? "error" : vg_hc_action_name((enum vg_hc_action)a), "calls",
                          (int)s.calls);
        vg_json_set_str(slurm, "reason", a == VG_HC_DRAIN ? reason : "");
        vg_json_set_str(slurm, "error", a < 0 ? s.err : "");
        if (a < 0) vg_err("check: slurm: %s", s.err);
        else if (a != VG_HC_NONE) vg_info("check: %s %s%s%s", vg_hc_action_name((enum vg_hc_action)a), node,
                                          a == VG_HC_DRAIN ? ": " : "", a == VG_HC_DRAIN ? reason : "");
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
        if (slurm) json_object_set_new(doc, "slurm", slurm);
        vg_json_print(stdout, doc, 0);
    } else {
        json_decref(slurm);
        for (size_t i = 0; i < rs.n; i++)
            if (!rs.r[i].ok) {
                if (rs.r[i].line) printf("FAIL %s: %s (%s:%d)\n", rs.r[i].name, rs.r[i].detail, o.config, rs.r[i].line);
                else printf("FAIL %s: %s\n", rs.r[i].name, rs.r[i].detail);
            }
        if (!failed) printf("ok %s: %zu checks passed in %lld ms\n", node, rs.n, (long long)elapsed);
    }
    fflush(stdout);
    vg_check_results_free(&rs);
    vg_checkconf_free(&conf);
    return failed ? VG_EXIT_FINDINGS : VG_EXIT_OK;
}
