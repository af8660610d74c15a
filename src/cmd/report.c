/* report.c — `vigil report DRILL.json… [--html FILE] [--json]`: drill reports
 * (as `vigil drill --save` writes them) side by side — vigil against plain
 * Slurm, stage by stage — in the terminal and as one HTML page; and `vigil
 * report --db FILE | --controller URL [--policy FILE] [--since T] [--until T]
 * [--nodes N] [--jobs PATH]… [--json] [--html FILE]`: reliability accounting
 * from the controller's incident store, or from a running controller's API
 * (controller/accounting.h), with the goodput of trainer jobs from their logs
 * (drill/goodput.h; --jobs alone: the goodput only).  Exit 0, or 2 for bad
 * input. */
#include "cmd/cmd.h"
#include "cmd/opts.h"
#include "controller/accounting.h"
#include "controller/store.h"
#include "drill/drill.h"
#include "drill/goodput.h"
#include "report/acct_html.h"
#include "report/goodput_print.h"
#include "util/rootfs.h"
#include "wire/client.h"
#include "wire/leader.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPORT_USAGE                                                                                  \
    "usage: vigil report DRILL.json… [--html FILE] [--json]\n"                                        \
    "       vigil report --db FILE | " VG_OPTS_READER_USAGE " [--policy FILE]\n"                        \
    "                    [--since TIME] [--until TIME] [--nodes N] [--jobs PATH]… [--json] [--html FILE]\n" \
    "       vigil report --jobs PATH… [--json] [--html FILE]\n"                                        \
    "TIME: RFC 3339 or YYYY-MM-DD; the window: the last 30 days (or from --since), starting no earlier than\n" \
    "the controller's first record.  The fleet size: the scheduler's node list the controller serves (--nodes\n" \
    "overrides; with --db, --nodes or unknown).\n"                                                    \
    "PATH: a vigil trainer job's log, a directory of them (*.log), or a drill report (.json).\n"
#define MAX_REPORTS 16
#define MAX_JOB_PATHS 64

/* What the accounting needs besides the incidents: the controller's first
 * record and the fleet's size (0: unknown). */
struct history {
    int64_t first_ms;
    size_t nodes;
    struct vg_domains *domains;   /* each node's domain as the controller sees it (its racks), or NULL */
    int domain_max_unavailable;   /* the controller's rule, 0: unknown */
};

/* The incidents of an incident store (--db), and its first record. */
static int from_db(const char *db, json_t **incs, struct history *h)
{
    char err[512];
    struct vg_store *st;
    if (vg_store_open_reader(db, &st, err, sizeof err)) return vg_input_error("report: --db %s", err);
    int64_t n_inc, n_open, n_msg;
    if (vg_store_counts(st, &n_inc, &n_open, &n_msg)) {
        vg_store_close(st);
        return vg_input_error("report: --db %s: not a vigil incident store", db);
    }
    *incs = vg_store_incidents(st, NULL, false, 0);
    h->first_ms = vg_store_first_record(st);
    vg_store_close(st);
    return 0;
}

/* The controller's first record and the scheduler's node list, from GET
 * /v1/summary (what the dashboard shows); a controller with no view of the
 * scheduler serves none: both stay unknown. */
static void controller_history(const char *url, const char *token, struct history *h)
{
    char u[1100], err[256];
    snprintf(u, sizeof u, "%.1000s/v1/summary", url);
    long status = 0;
    char *body = NULL;
    if (vg_client_get(u, token, 10000, &status, &body, err, sizeof err) || status != 200) {
        free(body);
        return;
    }
    json_t *sum = json_loads(body, 0, NULL);
    free(body);
    h->first_ms = vg_json_get_time(json_object_get(json_object_get(sum, "accounting"), "window"), "history_since");
    size_t i, n = 0;
    json_t *nd;
    json_array_foreach(json_object_get(sum, "nodes"), i, nd) {
        const json_t *st = json_object_get(nd, "scheduler_state");   /* null: a node only the store knows */
        if (st && !json_is_null(st)) n++;
    }
    h->nodes = n;
    /* the racks: the domain of each node, as the controller knows it (its
     * policy, the scheduler, or what the node's GPUs' fabric says) */
    json_array_foreach(json_object_get(sum, "nodes"), i, nd) {
        const char *dom = vg_json_str(nd, "domain", "");
        if (!vg_domain_name_ok(dom)) continue;
        if (!h->domains) h->domains = vg_domains_new();
        vg_domains_learn(h->domains, vg_json_str(nd, "node", ""), dom);
    }
    h->domain_max_unavailable = (int)vg_json_int(sum, "domain_max_unavailable", 0);
    json_decref(sum);
}

/* The incidents of a running controller (--controller), page by page, and
 * its history. */
static int from_controller(const char *url, const char *token, json_t **incs, struct history *h)
{
    *incs = NULL;
    if (!vg_startswith(url, "http://") && !vg_startswith(url, "https://"))
        return vg_input_error("report: --controller '%s': expected http://HOST:PORT or https://HOST:PORT", url);
    json_t *all = json_array();
    int64_t before = 0;
    for (;;) {
        char u[1200], err[256];
        snprintf(u, sizeof u, "%.1000s/v1/incidents?limit=1000%s", url, before ? "&before=" : "");
        if (before) snprintf(u + strlen(u), sizeof u - strlen(u), "%lld", (long long)before);
        long status = 0;
        char *body = NULL;
        if (vg_client_get(u, token, 10000, &status, &body, err, sizeof err) || status != 200) {
            int rc = vg_input_error("report: --controller %s: %s", url,
                                    status == 401 ? "401: the read token (--read-token-file or $VIGIL_READ_TOKEN)"
                                    : status     ? "unexpected answer" : err);
            free(body);
            json_decref(all);
            return rc;
        }
        json_t *page = json_loads(body, 0, NULL);
        free(body);
        if (!json_is_array(page)) {
            json_decref(page);
            json_decref(all);
            return vg_input_error("report: --controller %s: /v1/incidents is not a list of incidents", url);
        }
        size_t n = json_array_size(page);
        before = n ? vg_json_int(json_array_get(page, n - 1), "id", 0) : 0;
        json_array_extend(all, page);
        json_decref(page);
        if (n < 1000 || before <= 1) {
            controller_history(url, token, h);
            return *incs = all, 0;
        }
    }
}

/* The goodput of the jobs at the --jobs paths; 0, or 2 after saying which file is at fault. */
static int read_jobs(const char *const *paths, size_t n, json_t **goodput)
{
    *goodput = NULL;
    if (!n) return 0;
    json_t *list = json_array();
    char err[1200];
    for (size_t i = 0; i < n; i++)
        if (vg_goodput_add(list, paths[i], err, sizeof err)) {
            json_decref(list);
            return vg_input_error("report: --jobs %s", err);
        }
    *goodput = vg_goodput_summary(list);
    return 0;
}

/* A figure of doc as text, or why it is not stated. */
static void figure(const json_t *doc, const char *key, double scale, const char *fmt, char *buf, size_t n)
{
    const json_t *v = json_object_get(doc, key);
    if (json_is_number(v)) snprintf(buf, n, fmt, json_number_value(v) * scale);
    else snprintf(buf, n, "%s", vg_json_str(json_object_get(doc, "unmeasured"), key, "unknown"));
}

/* The accounting's terminal table. */
static void print_accounting(const json_t *doc)
{
    const json_t *w = json_object_get(doc, "window");
    char nodes[32], av[200], mttr[200], mtbi[200];
    if (json_is_integer(json_object_get(doc, "nodes"))) snprintf(nodes, sizeof nodes, "%lld nodes", vg_json_int(doc, "nodes", 0));
    else snprintf(nodes, sizeof nodes, "fleet size unknown");
    printf("window: %s to %s (%.0f s%s), %s, %lld incidents, %lld interruptions\n", vg_json_str(w, "since", "?"),
           vg_json_str(w, "until", "?"), json_number_value(json_object_get(w, "s")),
           !strcmp(vg_json_str(w, "history_since", ""), vg_json_str(w, "since", "?")) ? ", from the controller's first record"
                                                                                     : "",
           nodes, vg_json_int(doc, "incidents", 0), vg_json_int(doc, "interruptions", 0));
    figure(doc, "availability", 100.0, "%.1f %%", av, sizeof av);
    figure(doc, "mttr_s", 1.0, "%.3f s", mttr, sizeof mttr);
    figure(doc, "mtbi_s", 1.0 / 3600.0, "%.1f node-hours", mtbi, sizeof mtbi);
    printf("availability: %s\nnode-hours lost: %.3f\nMTTR: %s\nMTBI: %s\n", av,
           json_number_value(json_object_get(doc, "node_hours_lost")), mttr, mtbi);
    size_t i;
    json_t *x;
    printf("\n%-40s %s\n", "cause", "incidents");
    json_array_foreach(json_object_get(doc, "causes"), i, x)
        printf("%-40s %lld\n", vg_json_str(x, "cause", "?"), vg_json_int(x, "count", 0));
    int rw = 16;   /* a domain from the NVLink fabric is "CLUSTER-UUID/CLIQUE": the column fits it */
    json_array_foreach(json_object_get(doc, "racks"), i, x) {
        int l = (int)strlen(vg_json_str(x, "rack", "?"));
        if (l > rw) rw = l < 80 ? l : 80;
    }
    if (json_array_size(json_object_get(doc, "racks")))
        printf("\n%-*s %-6s %-13s %s\n", rw, "rack", "nodes", "availability", "SLA down");
    json_array_foreach(json_object_get(doc, "racks"), i, x) {
        char ra[24] = "n/a";
        if (json_is_number(json_object_get(x, "availability")))
            snprintf(ra, sizeof ra, "%.1f", 100.0 * json_number_value(json_object_get(x, "availability")));
        printf("%-*s %-6lld %-13s %.3f s\n", rw, vg_json_str(x, "rack", "?"), vg_json_int(x, "nodes", 0), ra,
               json_number_value(json_object_get(x, "sla_down_s")));
    }
    if (json_array_size(json_object_get(doc, "repairs")))
        printf("\n%-20s %-6s %-7s %s\n", "repair step", "tried", "failed", "returned the node");
    json_array_foreach(json_object_get(doc, "repairs"), i, x)
        printf("%-20s %-6lld %-7lld %lld\n", vg_json_str(x, "step", "?"), vg_json_int(x, "tried", 0),
               vg_json_int(x, "failed", 0), vg_json_int(x, "returned", 0));
    if (vg_json_int(doc, "rma_handoffs", 0))
        printf("handed off for RMA: %lld node(s)\n", vg_json_int(doc, "rma_handoffs", 0));
}

/* The accounting over the incidents (stolen; NULL: none asked for), with the
 * goodput of the jobs (stolen; NULL: none asked for). */
static int accounting(json_t *incs, json_t *goodput, const char *policy_file, int64_t since, int64_t until,
                      const struct history *h, bool now, bool json, const char *html)
{
    char err[512];
    struct vg_policy p;
    vg_policy_defaults(&p);
    if (policy_file && vg_policy_load(&p, policy_file, err, sizeof err)) {
        json_decref(incs);
        json_decref(goodput);
        return vg_input_error("report: %s", err);
    }
    if (!policy_file && h->domain_max_unavailable > 0) p.domain_max_unavailable = h->domain_max_unavailable;
    p.learned = h->domains;   /* a --policy line still names a node's domain first */
    struct vg_acct_opts o = { .since_ms = since, .until_ms = until, .first_ms = h->first_ms, .nodes = h->nodes,
                              .policy = &p, .until_now = now };
    json_t *doc = incs ? vg_accounting(incs, &o) : json_object();
    if (json_object_get(doc, "clock_behind_s"))
        vg_warn("report: this machine's clock is %.0f s behind the store's newest record (stepped back?): "
                "availability and MTBI cannot be known; give --until",
                json_real_value(json_object_get(doc, "clock_behind_s")));
    json_decref(incs);
    vg_policy_free(&p);
    if (goodput) json_object_set_new(doc, "goodput", goodput);
    if (html) {
        FILE *f = fopen(html, "we");
        if (!f || (vg_accounting_html(f, doc) | fclose(f))) {
            json_decref(doc);
            return vg_input_error("report: --html %s: %s", html, f ? "write failed" : strerror(errno));
        }
    }
    if (json) return vg_json_print(stdout, doc, 0) ? VG_EXIT_INPUT : VG_EXIT_OK;   /* takes doc */
    if (json_object_get(doc, "window")) print_accounting(doc);
    if (goodput) vg_goodput_print(stdout, goodput);
    json_decref(doc);
    return VG_EXIT_OK;
}

int cmd_report(int argc, char **argv)
{
    static const struct option own[] = {
        { "html", required_argument, 0, 'H' }, { "json", no_argument, 0, 'j' }, { "help", no_argument, 0, 'h' },
        { "db", required_argument, 0, 'd' },   { "policy", required_argument, 0, 'p' },
        { "since", required_argument, 0, 's' }, { "until", required_argument, 0, 'u' },
        { "nodes", required_argument, 0, 'n' }, { "jobs", required_argument, 0, 'J' },
        { 0, 0, 0, 0 },
    };
    struct vg_opts_buf ob;
    const struct option *opts = vg_opts_table(own, VG_OPTS_READER, &ob);
    struct vg_shared_opts so = { 0 };
    const char *html = NULL, *db = NULL, *policy = NULL;
    const char *jobs[MAX_JOB_PATHS];
    size_t njobs = 0;
    int64_t until = vg_now_ms(), since = until - 30LL * 86400 * 1000;
    bool until_given = false;
    long nodes = 0;
    bool json = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'H': html = optarg; break;
        case 'j': json = true; break;
        case 'd': db = optarg; break;
        case 'p': policy = optarg; break;
        case 'J':
            if (njobs == MAX_JOB_PATHS) return vg_input_error("report: at most %d --jobs", MAX_JOB_PATHS);
            jobs[njobs++] = optarg;
            break;
        case 's':
            if (!vg_parse_day_or_time(optarg, &since)) return vg_input_error("report: --since '%s': expected RFC 3339 or YYYY-MM-DD", optarg);
            break;
        case 'u':
            if (!vg_parse_day_or_time(optarg, &until)) return vg_input_error("report: --until '%s': expected RFC 3339 or YYYY-MM-DD", optarg);
            until_given = true;
            break;
        case 'n':
            if (!vg_parse_long(optarg, &nodes) || nodes < 1 || nodes > 1000000)
                return vg_input_error("report: --nodes '%s': expected a node count", optarg);
            break;
        case 'h': fputs(REPORT_USAGE, stdout); return VG_EXIT_OK;
        default:
            if (vg_opts_take(c, optarg, &so)) break;
            fputs(REPORT_USAGE, stderr);
            return vg_input_error("report: unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    const char *controller = so.controller;
    char leader[512], lerr[400];
    vg_client_set_ca(so.ca_file);
    if (controller && vg_ctl_pick_leader(controller, leader, sizeof leader, lerr, sizeof lerr))   /* URL1,URL2,… */
        return vg_input_error("report: --controller: %s", lerr);
    if (controller) controller = leader;
    size_t n = (size_t)(argc - optind);
    json_t *goodput = NULL;
    if (njobs && n) return vg_input_error("report: --jobs and drill reports side by side do not go together");
    if (db || controller) {
        if (n) return vg_input_error("report: --db/--controller and drill reports do not go together");
        if (db && controller) return vg_input_error("report: --db or --controller, not both");
        if (until <= since) return vg_input_error("report: --since is not before --until");
        char token[512];
        if (vg_opts_read_token("report", &so, token, sizeof token)) return VG_EXIT_INPUT;
        if (read_jobs(jobs, njobs, &goodput)) return VG_EXIT_INPUT;
        json_t *incs = NULL;
        struct history h = { 0 };
        int rc = db ? from_db(db, &incs, &h) : from_controller(controller, token, &incs, &h);
        if (rc) return json_decref(goodput), vg_domains_free(h.domains), rc;
        if (nodes) h.nodes = (size_t)nodes;   /* --nodes overrides the scheduler's list */
        rc = accounting(incs, goodput, policy, since, until, &h, !until_given, json, html);
        vg_domains_free(h.domains);
        return rc;
    }
    struct history none = { 0, (size_t)nodes, NULL, 0 };
    if (njobs) return read_jobs(jobs, njobs, &goodput) ? VG_EXIT_INPUT
                                                     : accounting(NULL, goodput, policy, since, until, &none, !until_given, json, html);
    if (!n) return vg_input_error("report: no drill report given\n%s", REPORT_USAGE);
    if (n > MAX_REPORTS) return vg_input_error("report: at most %d reports", MAX_REPORTS);
    json_t *reps[MAX_REPORTS];
    int rc = VG_EXIT_OK;
    size_t k = 0;
    for (; k < n && rc == VG_EXIT_OK; k++) {
        json_error_t e;
        const char *path = argv[optind + (int)k];
        reps[k] = json_load_file(path, 0, &e);
        if (!reps[k]) rc = vg_input_error("%s:%d: %s", path, e.line, e.text), k--;
        else if (!json_is_array(json_object_get(reps[k], "runs")) || !json_is_string(json_object_get(reps[k], "fault")))
            rc = vg_input_error("%s: field 'runs'/'fault': not a vigil drill report", path);
    }
    if (rc == VG_EXIT_OK && html) {
        FILE *f = fopen(html, "we");
        if (!f) rc = vg_input_error("report: --html %s: %s", html, strerror(errno));
        else if (vg_drill_compare_html(f, reps, n) | fclose(f)) rc = vg_input_error("report: --html %s: write failed", html);
    }
    if (rc == VG_EXIT_OK) {
        if (json) {
            json_t *doc = json_array();
            for (size_t i = 0; i < n; i++) {
                char label[160];
                vg_drill_label(reps[i], label, sizeof label);
                json_t *row = json_pack("{s:s, s:s}", "label", label, "fault", vg_json_str(reps[i], "fault", ""));
                for (int s = 0; s < VG_ST_COUNT; s++) {
                    const char *name = vg_stage_name((enum vg_stage)s);
                    json_t *m = json_object_get(json_object_get(reps[i], name), "median");
                    json_object_set(row, name, m ? m : json_null());
                }
                json_array_append_new(doc, row);
            }
            vg_json_print(stdout, doc, 0);
        } else
            vg_drill_compare_print(stdout, reps, n);
    }
    for (size_t i = 0; i < k; i++) json_decref(reps[i]);
    return rc;
}
