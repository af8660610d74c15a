/* audit.c — `vigil audit`: inventories the node (or --root DIR), matches it
 * against the offline advisory database and reports CVE findings grouped by
 * severity, what the distribution fixed, and outdated (end-of-life,
 * below-minimum) components.  `vigil audit merge` combines per-node JSON
 * reports (report/audit_merge.c); `vigil audit --security` runs the isolation
 * checks (audit_security.c).
 * Exit: 0 clean, 1 a CVE finding at or above --fail-on (default high) (merge:
 * or version skew), 2 usage or input error (unreadable root, corrupt status
 * file, bad database, malformed report). */
#include "cmd/audit_opts.h"
#include "cmd/cmd.h"
#include "cmd/opts.h"
#include "util/rootfs.h"
#include "wire/client.h"
#include "wire/leader.h"
#include "report/audit_report.h"
#include "util/datadir.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MERGE_SYN "vigil audit merge REPORT.json…|DIR [--json] [--format table|json|markdown] [--fail-on SEV]\n"
#define FLEET_SYN                                                                                        \
    "vigil audit fleet " VG_OPTS_READER_USAGE " [--json] [--format …]\n"                          \
    "                         [--fail-on SEV]\n"                                                     \
    "       (the latest report every agent sent to the controller, merged, with the nodes whose\n"       \
    "       report is stale or that never sent one: exit 1 then, like version skew)\n"
static const char usage_text[] =
    "usage: vigil audit [--root DIR] [--db FILE] [--json] [--format table|json|markdown]\n"
    "                   [--fail-on none|low|medium|high|critical] [--now YYYY-MM-DD] [--components]\n"
    "       vigil audit --security … (tenant isolation; vigil audit --security --help)\n"
    "       " MERGE_SYN "       " FLEET_SYN;
static const char merge_usage[] = "usage: " MERGE_SYN
    "Merges per-node reports of `vigil audit --json` (files, or every *.json in DIR) into one fleet\n"
    "view; exit 1 on a finding at or above SEV (default high) or version skew, 2 bad input.\n";
static const char fleet_usage[] = "usage: " FLEET_SYN
    "URL defaults to $VIGIL_CONTROLLER, the read token to $VIGIL_READ_TOKEN; --ca F verifies an https://\n"
    "controller against the CA certificate(s) in F.  Exit 0 clean, 1 a finding at or above SEV (default\n"
    "high), skew, or a node stale or silent; 2 bad input or no answer.\n";

struct opts {
    const char *root, *db, *now;
    enum vg_out_fmt fmt;
    bool components, fail_none, help;
    enum vg_severity fail_on;
};

enum { O_ROOT = 256, O_DB, O_NOW, O_FORMAT, O_FAILON, O_JSON, O_COMPONENTS, O_HELP };
static const struct option long_opts[] = {
    { "root", required_argument, 0, O_ROOT },     { "db", required_argument, 0, O_DB },
    { "now", required_argument, 0, O_NOW },       { "format", required_argument, 0, O_FORMAT },
    { "fail-on", required_argument, 0, O_FAILON }, { "json", no_argument, 0, O_JSON },
    { "components", no_argument, 0, O_COMPONENTS }, { "help", no_argument, 0, O_HELP },
    { 0, 0, 0, 0 },
};

/* getopt_long over argv; `merge` accepts only --json, --format, --fail-on and
 * paths (left in argv[optind…]).  Returns 0 or VG_EXIT_INPUT. */
static int parse_opts(const char *what, int argc, char **argv, struct opts *o, bool merge)
{
    *o = (struct opts){ .root = "/", .fail_on = VG_SEV_HIGH };
    optind = 1;
    opterr = 0;
    int c;
    int64_t day;
    while ((c = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
        bool merge_ok = c == O_JSON || c == O_FORMAT || c == O_FAILON || c == O_HELP || c == 'h';
        if (merge && !merge_ok) return vg_input_error("%s: unknown option '%s'", what, argv[optind - 1]);
        switch (c) {
        case O_ROOT: o->root = optarg; break;
        case O_DB: o->db = optarg; break;
        case O_JSON: o->fmt = VG_FMT_JSON; break;
        case O_COMPONENTS: o->components = true; break;
        case 'h':
        case O_HELP: o->help = true; break;
        case O_NOW:
            if (strlen(optarg) != 10 || !vg_parse_day_or_time(optarg, &day))
                return vg_input_error("%s: --now '%s': expected a date YYYY-MM-DD", what, optarg);
            o->now = optarg;
            break;
        case O_FORMAT:
            if (vg_opt_format(what, optarg, &o->fmt)) return VG_EXIT_INPUT;
            break;
        case O_FAILON:
            if (vg_opt_fail_on(what, optarg, &o->fail_none, &o->fail_on)) return VG_EXIT_INPUT;
            break;
        case ':': return vg_input_error("%s: %s needs a value", what, argv[optind - 1]);
        default: return vg_input_error("%s: unknown option '%s' (vigil audit --help)", what, argv[optind - 1]);
        }
    }
    if (!merge && optind < argc) return vg_input_error("%s: unexpected argument '%s' (vigil audit --help)", what, argv[optind]);
    return 0;
}

static int audit_merge(int argc, char **argv)
{
    struct opts o;
    if (parse_opts("audit merge", argc, argv, &o, true)) return VG_EXIT_INPUT;
    if (o.help) return fputs(merge_usage, stdout), VG_EXIT_OK;
    if (optind >= argc) return vg_input_error("usage: vigil audit merge REPORT.json…|DIR [--json|--format markdown]");
    struct vg_fleet *fl = vg_fleet_new();
    char err[1024];
    for (int i = optind; i < argc; i++)
        if (vg_fleet_add_path(fl, argv[i], err, sizeof err) < 0) {
            vg_fleet_free(fl);
            return vg_input_error("%s", err);
        }
    if (!vg_fleet_nodes(fl)) {
        vg_fleet_free(fl);
        return vg_input_error("audit merge: no reports found");
    }
    if (o.fmt == VG_FMT_JSON) vg_json_print(stdout, vg_fleet_json(fl), 0);
    else vg_fleet_print(fl, stdout, o.fmt == VG_FMT_MARKDOWN);
    bool bad = vg_fleet_skewed(fl) > 0 || (!o.fail_none && vg_fleet_count_at_least(fl, o.fail_on));
    vg_fleet_free(fl);
    return bad ? VG_EXIT_FINDINGS : VG_EXIT_OK;
}

/* `vigil audit fleet --controller URL`: every node's latest report, as the
 * agents sent them to the controller, merged like `audit merge` (the
 * controller's GET /v1/audit), with the nodes whose report is stale or that
 * never sent one; either makes the exit 1, like version skew. */
static int audit_fleet(int argc, char **argv)
{
    static const struct option own[] = {
        { "json", no_argument, 0, 'j' },             { "format", required_argument, 0, 'f' },
        { "fail-on", required_argument, 0, 'F' },    { "help", no_argument, 0, 'h' },
        { 0, 0, 0, 0 },
    };
    struct vg_opts_buf ob;
    const struct option *lo = vg_opts_table(own, VG_OPTS_READER, &ob);
    struct vg_shared_opts so = { .controller = getenv("VIGIL_CONTROLLER") };
    enum vg_out_fmt fmt = VG_FMT_TABLE;
    bool none = false;
    enum vg_severity fail_on = VG_SEV_HIGH;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 'h': return fputs(fleet_usage, stdout), VG_EXIT_OK;
        case 'j': fmt = VG_FMT_JSON; break;
        case 'f': if (vg_opt_format("audit fleet", optarg, &fmt)) return VG_EXIT_INPUT; break;
        case 'F': if (vg_opt_fail_on("audit fleet", optarg, &none, &fail_on)) return VG_EXIT_INPUT; break;
        default:
            if (vg_opts_take(c, optarg, &so)) break;
            return vg_input_error("audit fleet: unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    vg_client_set_ca(so.ca_file);
    if (!so.controller || !*so.controller)
        return vg_input_error("audit fleet: --controller URL is required (or $VIGIL_CONTROLLER)");
    char tok[256], err[512], u[700], url[512];
    if (vg_ctl_pick_leader(so.controller, url, sizeof url, err, sizeof err))   /* URL1,URL2,…: the leader */
        return vg_input_error("audit fleet: --controller: %s", err);
    if (vg_opts_read_token("audit fleet", &so, tok, sizeof tok)) return VG_EXIT_INPUT;
    snprintf(u, sizeof u, "%s/v1/audit", url);
    long st = 0;
    char *body = NULL;
    if (vg_client_get(u, tok, 30000, &st, &body, err, sizeof err) || st != 200) {
        int rc = st ? vg_input_error("audit fleet: %s: HTTP %ld: %s", u, st, body ? vg_trim(body) : "error")
                    : vg_input_error("audit fleet: %s", err);   /* err names the address */
        free(body);
        return rc;
    }
    json_error_t je;
    json_t *doc = json_loads(body, 0, &je);
    free(body);
    struct vg_fleet *fl = vg_fleet_new();
    if (!doc || vg_fleet_load(fl, doc, err, sizeof err)) {
        int rc = vg_input_error("audit fleet: %s: %s", u, doc ? err : je.text);
        json_decref(doc);
        vg_fleet_free(fl);
        return rc;
    }
    json_decref(doc);
    if (!vg_fleet_nodes(fl) && !vg_fleet_unseen(fl)) {
        vg_fleet_free(fl);
        return vg_input_error("audit fleet: no node has sent a report to %s yet", url);
    }
    if (fmt == VG_FMT_JSON) vg_json_print(stdout, vg_fleet_json(fl), 0);
    else vg_fleet_print(fl, stdout, fmt == VG_FMT_MARKDOWN);
    /* a node stale or not reporting: the view is not the whole cluster */
    bool bad = vg_fleet_skewed(fl) > 0 || vg_fleet_unseen(fl) > 0 || (!none && vg_fleet_count_at_least(fl, fail_on));
    vg_fleet_free(fl);
    return bad ? VG_EXIT_FINDINGS : VG_EXIT_OK;
}

int cmd_audit(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "merge")) return audit_merge(argc - 1, argv + 1);
    if (argc > 1 && !strcmp(argv[1], "fleet")) return audit_fleet(argc - 1, argv + 1);
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--security")) return vg_audit_security(argc, argv);
    struct opts o;
    if (parse_opts("audit", argc, argv, &o, false)) return VG_EXIT_INPUT;
    if (o.help) return fputs(usage_text, stdout), VG_EXIT_OK;
    struct vg_audit a = { 0 };
    vg_inventory_init(&a.inv, o.root);
    if (vg_inventory_collect(&a.inv) < 0) {
        vg_input_error("%s", a.inv.err);
        vg_audit_free(&a);
        return VG_EXIT_INPUT;
    }
    if (o.components) {
        if (o.fmt == VG_FMT_JSON) vg_json_print(stdout, vg_audit_components_json(&a.inv), 0);
        else vg_audit_print_components(&a.inv, stdout, o.fmt == VG_FMT_MARKDOWN);
        vg_audit_free(&a);
        return VG_EXIT_OK;
    }
    char *path = o.db ? vg_xstrdup(o.db) : vg_data_path("advisories.json");
    struct vg_advdb *db = NULL;
    char err[512];
    int rc = vg_advdb_load(path, &db, err, sizeof err);
    free(path);
    if (rc < 0) {
        vg_audit_free(&a);
        return vg_input_error("%s", err);
    }
    vg_advdb_set_date(db, o.now);
    vg_strlcpy(a.date, vg_advdb_date(db), sizeof a.date);
    vg_audit_run(&a, db);
    if (o.fmt == VG_FMT_JSON) vg_json_print(stdout, vg_audit_json(&a), 0);
    else vg_audit_print(&a, stdout, o.fmt == VG_FMT_MARKDOWN);
    rc = !o.fail_none && vg_audit_count_at_least(&a, o.fail_on) ? VG_EXIT_FINDINGS : VG_EXIT_OK;
    vg_audit_free(&a);
    vg_advdb_free(db);
    return rc;
}
