/* audit.c — `vigil audit`: inventories the node (or --root DIR), matches it
 * against the offline advisory database and reports CVE findings grouped by
 * severity plus outdated (end-of-life, below-minimum) components.
 * `vigil audit merge` combines per-node JSON reports (report/audit_merge.c).
 * Exit: 0 clean, 1 a CVE finding at or above --fail-on (default high),
 * 2 usage or input error (unreadable root, corrupt status file, bad database). */
#include "cmd/cmd.h"
#include "report/audit_report.h"
#include "security/security.h"
#include "util/datadir.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/strutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: vigil audit [--root DIR] [--db FILE] [--json] [--format table|json|markdown]\n"
    "                   [--fail-on none|low|medium|high|critical] [--now YYYY-MM-DD] [--components]\n"
    "       vigil audit --security … (tenant isolation; vigil audit --security --help)\n"
    "       vigil audit merge REPORT.json…|DIR [--json] [--format table|json|markdown] [--fail-on SEV]\n";

enum fmt { FMT_TABLE, FMT_JSON, FMT_MARKDOWN };

struct opts {
    const char *root, *db, *now;
    enum fmt fmt;
    bool components, fail_none;
    enum vg_severity fail_on;
};

static int parse_opts(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){ .root = "/", .fail_on = VG_SEV_HIGH };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = !strcmp(a, "--root") || !strcmp(a, "--db") || !strcmp(a, "--format") || !strcmp(a, "--fail-on") ||
                     !strcmp(a, "--now");
        if (takes && !val) return vg_input_error("audit: %s needs a value", a);
        if (!strcmp(a, "--json")) o->fmt = FMT_JSON;
        else if (!strcmp(a, "--components")) o->components = true;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { fputs(usage_text, stdout); return -1; }
        else if (!strcmp(a, "--root")) o->root = val;
        else if (!strcmp(a, "--db")) o->db = val;
        else if (!strcmp(a, "--now")) {
            if (strlen(val) != 10 || val[4] != '-' || val[7] != '-') return vg_input_error("audit: --now '%s': expected YYYY-MM-DD", val);
            o->now = val;
        } else if (!strcmp(a, "--format")) {
            if (!strcmp(val, "table")) o->fmt = FMT_TABLE;
            else if (!strcmp(val, "json")) o->fmt = FMT_JSON;
            else if (!strcmp(val, "markdown")) o->fmt = FMT_MARKDOWN;
            else return vg_input_error("audit: --format '%s': expected table, json or markdown", val);
        } else if (!strcmp(a, "--fail-on")) {
            o->fail_none = !strcmp(val, "none");
            if (!o->fail_none && !vg_severity_parse(val, &o->fail_on))
                return vg_input_error("audit: --fail-on '%s': expected none, low, medium, high or critical", val);
        } else return vg_input_error("audit: unknown option '%s' (vigil audit --help)", a);
        if (takes) i++;
    }
    return 0;
}

int cmd_audit(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "merge")) return vg_audit_merge(argc - 1, argv + 1);
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--security")) return vg_audit_security(argc, argv);
    struct opts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc) return rc < 0 ? VG_EXIT_OK : VG_EXIT_INPUT;
    struct vg_audit a = { 0 };
    vg_inventory_init(&a.inv, o.root);
    if (vg_inventory_collect(&a.inv) < 0) {
        vg_audit_free(&a);
        return VG_EXIT_INPUT;
    }
    if (o.components) {
        if (o.fmt == FMT_JSON) vg_json_print(stdout, vg_audit_components_json(&a.inv), 0);
        else vg_audit_print_components(&a.inv, stdout, o.fmt == FMT_MARKDOWN);
        vg_audit_free(&a);
        return VG_EXIT_OK;
    }
    char *path = o.db ? vg_xstrdup(o.db) : vg_data_path("advisories.json");
    struct vg_advdb *db = NULL;
    char err[512];
    if (vg_advdb_load(path, &db, err, sizeof err) < 0) {
        vg_input_error("%s", err);
        free(path);
        vg_audit_free(&a);
        return VG_EXIT_INPUT;
    }
    free(path);
    vg_advdb_set_date(db, o.now);
    vg_strlcpy(a.date, vg_advdb_date(db), sizeof a.date);
    vg_audit_run(&a, db);
    if (o.fmt == FMT_JSON) vg_json_print(stdout, vg_audit_json(&a), 0);
    else vg_audit_print(&a, stdout, o.fmt == FMT_MARKDOWN);
    rc = !o.fail_none && vg_audit_count_at_least(&a, o.fail_on) ? VG_EXIT_FINDINGS : VG_EXIT_OK;
    vg_audit_free(&a);
    vg_advdb_free(db);
    return rc;
}
