/* advisories.c — `vigil advisories`: manage and query the offline advisory
 * database.
 *   import [--manifest FILE] FILE|DIR… [--db PATH] [--out PATH] [--new] [--json] [-v]
 *       merges CSAF 2.0 / OSV / vigil-format files into the database (default
 *       the bundled one; --out defaults to --db; --new starts from empty).
 *   list [--component C] [--db PATH] [--json]
 *   check COMPONENT VERSION [--eco E] [--package P] [--model M] [--date YYYY-MM-DD] [--db PATH] [--json]
 *       the findings for one installed version (exit 1 when there are any).
 *   status [--max-age DAYS] [--date YYYY-MM-DD] [--db PATH] [--json]
 *       per source: records, the newest and its age, the copy's date (exit 1
 *       when a source is older than --max-age, default 90 days). */
#include "advisory/importer.h"
#include "cmd/cmd.h"
#include "report/table.h"
#include "util/datadir.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct opts {
    const char *db, *out, *component, *eco, *package, *date, *distro, *srcpkg, *model, *manifest;
    long max_age;
    bool json, verbose, fresh, help;
    const char *args[256];
    int nargs;
};

#define IMPORT_SYN "vigil advisories import [--manifest FILE] FILE|DIR... [--db PATH] [--out PATH] [--new] [--json] [-v]\n"
#define STATUS_SYN "vigil advisories status [--max-age DAYS] [--date YYYY-MM-DD] [--db PATH] [--json]\n"
#define LIST_SYN "vigil advisories list [--component C] [--db PATH] [--json]\n"
#define CHECK_SYN                                                                                     \
    "vigil advisories check COMPONENT VERSION [--eco E] [--package P] [--source-package S]\n"         \
    "                       [--distro Ubuntu:22.04|Debian:12] [--model M] [--date YYYY-MM-DD] [--db PATH] [--json]\n"
/* Each action's own help (`vigil advisories ACTION --help`). */
static const struct {
    const char *name, *help;
} actions[] = {
    { "import", "usage: " IMPORT_SYN "Merges CSAF 2.0, OSV and vigil-format records into the database (default the bundled\n"
                "one; --out defaults to --db; --new starts from empty).  Exit 0, 2 a file it cannot read.\n" },
    { "status", "usage: " STATUS_SYN "Per source: its records, the newest one's age and the copy's date; a source older than\n"
                "--max-age days (default 90) is stale.  Exit 0 all current, 1 a stale source, 2 bad input.\n" },
    { "list", "usage: " LIST_SYN "The database's advisories (of component C).  Exit 0, 2 bad input.\n" },
    { "check", "usage: " CHECK_SYN "The findings for one installed version as of --date (default the database's\n"
               "date).  Exit 0 none, 1 findings, 2 bad input.\n" },
};

static int usage(void)
{
    return vg_input_error("usage: vigil advisories import [--manifest FILE] FILE|DIR... [--db PATH] [--out PATH] [--new] [--json] [-v]"
                          " | status [--max-age DAYS] [--date YYYY-MM-DD] [--json]"
                          " | list [--component C] [--json] | check COMPONENT VERSION [--eco E] [--package P]"
                          " [--source-package S] [--distro Ubuntu:22.04|Debian:12] [--model M] [--date YYYY-MM-DD] [--json]");
}

/* getopt_long over argv[1…] (argv[1] is the action); the remaining
 * arguments (files, component and version) go to o->args. */
static int parse(int argc, char **argv, struct opts *o)
{
    memset(o, 0, sizeof *o);
    o->max_age = 90;
    enum { O_DB = 256, O_OUT, O_COMPONENT, O_ECO, O_PACKAGE, O_DATE, O_JSON, O_NEW, O_VERBOSE, O_DISTRO, O_SOURCE, O_MODEL, O_MANIFEST, O_MAX_AGE };
    static const struct option opts[] = {
        { "db", required_argument, 0, O_DB },           { "out", required_argument, 0, O_OUT },
        { "component", required_argument, 0, O_COMPONENT }, { "eco", required_argument, 0, O_ECO },
        { "package", required_argument, 0, O_PACKAGE }, { "date", required_argument, 0, O_DATE },
        { "json", no_argument, 0, O_JSON },             { "new", no_argument, 0, O_NEW },
        { "verbose", no_argument, 0, O_VERBOSE },       { "distro", required_argument, 0, O_DISTRO },
        { "source-package", required_argument, 0, O_SOURCE }, { "model", required_argument, 0, O_MODEL },
        { "manifest", required_argument, 0, O_MANIFEST }, { "max-age", required_argument, 0, O_MAX_AGE },
        { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 },
    };
    optind = 1;
    opterr = 0;
    int c;
    int64_t day;
    while ((c = getopt_long(argc - 1, argv + 1, ":vh", opts, NULL)) != -1) {
        switch (c) {
        case 'h': o->help = true; break;
        case O_DB: o->db = optarg; break;
        case O_OUT: o->out = optarg; break;
        case O_COMPONENT: o->component = optarg; break;
        case O_ECO: o->eco = optarg; break;
        case O_PACKAGE: o->package = optarg; break;
        case O_DATE:
            if (strlen(optarg) != 10 || !vg_parse_day_or_time(optarg, &day))
                return vg_input_error("advisories: --date '%s': expected a date YYYY-MM-DD", optarg);
            o->date = optarg;
            break;
        case O_DISTRO: o->distro = optarg; break;
        case O_SOURCE: o->srcpkg = optarg; break;
        case O_MODEL: o->model = optarg; break;
        case O_MANIFEST: o->manifest = optarg; break;
        case O_MAX_AGE: {
            char *end;
            o->max_age = strtol(optarg, &end, 10);
            if (end == optarg || *end || o->max_age < 1 || o->max_age > 36500)
                return vg_input_error("--max-age: '%s' is not a number of days (1-36500)", optarg);
            break;
        }
        case O_JSON: o->json = true; break;
        case O_NEW: o->fresh = true; break;
        case 'v':
        case O_VERBOSE: o->verbose = true; break;
        case ':': return vg_input_error("%s: needs a value", argv[optind]);
        default: return vg_input_error("unknown option '%s' (vigil advisories --help)", argv[optind]);
        }
    }
    for (int i = optind + 1; i < argc; i++) {
        if (o->nargs == (int)(sizeof o->args / sizeof o->args[0])) return vg_input_error("too many arguments");
        o->args[o->nargs++] = argv[i];
    }
    return 0;
}

static int load_db(const struct opts *o, struct vg_advdb **db, char **path)
{
    *path = o->db ? vg_xstrdup(o->db) : vg_data_path("advisories.json");
    char err[512];
    if (vg_advdb_load(*path, db, err, sizeof err) < 0) {
        vg_input_error("%s", err);
        return -1;
    }
    if (o->date) vg_advdb_set_date(*db, o->date);   /* the date findings and ages are judged on */
    return 0;
}

static json_t *strlist_json(const struct vg_strlist *l)
{
    json_t *a = json_array();
    for (size_t i = 0; i < l->n; i++) json_array_append_new(a, json_string(l->v[i]));
    return a;
}

static int do_import(const struct opts *o)
{
    if (!o->nargs && !o->manifest) return usage();
    struct vg_advdb *db = NULL;
    char *path = NULL;
    if (o->fresh) path = vg_xstrdup(o->db ? o->db : o->out ? o->out : "advisories.json"), db = vg_advdb_new();
    else if (load_db(o, &db, &path) < 0) {
        free(path);
        return VG_EXIT_INPUT;
    }
    size_t before = vg_advdb_count(db);
    struct vg_import_report rep;
    memset(&rep, 0, sizeof rep);
    char err[1024];
    int rc = 0;
    if (o->manifest) rc = vg_import_manifest(o->manifest, db, &rep, err, sizeof err);
    for (int i = 0; i < o->nargs && !rc; i++) rc = vg_import_path(o->args[i], db, &rep, err, sizeof err);
    const char *out = o->out ? o->out : path;
    if (!rc && vg_advdb_save(db, out, err, sizeof err) < 0) rc = -1;
    if (rc) {
        vg_input_error("%s", err);
    } else if (o->json) {
        json_t *j = json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i}", "database", out, "files",
                              rep.files, "skipped_files", rep.skipped_files, "advisory_records", rep.advisories,
                              "new_advisories", (int)(vg_advdb_count(db) - before), "ranges_added", rep.ranges_added,
                              "duplicates", rep.duplicates, "eol", rep.eol, "minimum", rep.minimum,
                              "products_skipped", rep.products_skipped, "unparsed", (int)rep.unparsed.n);
        json_object_set_new(j, "unparsed_names", strlist_json(&rep.unparsed));
        json_object_set_new(j, "warnings", strlist_json(&rep.warnings));
        if (o->verbose) json_object_set_new(j, "skipped_products", strlist_json(&rep.skipped));
        vg_json_print(stdout, j, 0);
    } else {
        printf("imported %d files (%d skipped) into %s\n", rep.files, rep.skipped_files, out);
        printf("  advisory records %d, new advisories %zu, new ranges %d, duplicates %d\n", rep.advisories,
               vg_advdb_count(db) - before, rep.ranges_added, rep.duplicates);
        printf("  end-of-life entries %d, minimum versions %d\n", rep.eol, rep.minimum);
        printf("  product rows skipped (not tracked / not Linux data-center) %d\n", rep.products_skipped);
        printf("  product names not parsed %zu%s\n", rep.unparsed.n, rep.unparsed.n && !o->verbose ? " (-v lists them)" : "");
        printf("  database now holds %zu advisories\n", vg_advdb_count(db));
        if (o->verbose) {
            for (size_t i = 0; i < rep.unparsed.n; i++) printf("  unparsed: %s\n", rep.unparsed.v[i]);
            for (size_t i = 0; i < rep.skipped.n; i++) printf("  skipped: %s\n", rep.skipped.v[i]);
        }
        for (size_t i = 0; i < rep.warnings.n; i++) vg_warn("%s", rep.warnings.v[i]);
    }
    vg_import_report_free(&rep);
    vg_advdb_free(db);
    free(path);
    return rc ? VG_EXIT_INPUT : VG_EXIT_OK;
}

static void range_str(const struct vg_advisory *a, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = 0;
    for (size_t i = 0; i < a->nranges && k < n; i++) {
        const struct vg_range *r = &a->ranges[i];
        k += (size_t)snprintf(buf + k, n - k, "%s%s%s%s%s%s%s%s%s", i ? "; " : "", r->introduced[0] ? ">=" : "",
                              r->introduced, r->introduced[0] && (r->fixed[0] || r->last_affected[0]) ? "," : "",
                              r->fixed[0] ? "<" : r->last_affected[0] ? "<=" : "",
                              r->fixed[0] ? r->fixed : r->last_affected, r->models[0] ? " (" : "", r->models,
                              r->models[0] ? ")" : "");
        if (k >= n) k = n - 1;
    }
}

static int do_list(const struct opts *o)
{
    struct vg_advdb *db;
    char *path;
    if (load_db(o, &db, &path) < 0) {
        free(path);
        return VG_EXIT_INPUT;
    }
    json_t *arr = o->json ? json_array() : NULL;
    static const char *const hdr[] = { "COMPONENT", "ID", "SEVERITY", "AFFECTED", "DISTRIBUTION", "URL" };
    struct vg_table *t = vg_table_new(6, hdr);
    for (size_t i = 0; i < vg_advdb_count(db); i++) {
        const struct vg_advisory *a = vg_advdb_get(db, i);
        if (o->component && strcmp(a->component, o->component)) continue;
        char rs[1024];
        range_str(a, rs, sizeof rs);
        char dist[128];
        snprintf(dist, sizeof dist, "%s%s%s", a->distro, a->distro[0] ? " " : "", a->package);
        if (arr)
            json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:f, s:s, s:s, s:s, s:s}", "component", a->component,
                                                 "id", a->id, "severity", vg_severity_name(a->severity), "cvss", a->cvss,
                                                 "affected", rs, "distro", a->distro, "package", a->package, "url",
                                                 a->url));
        else vg_table_rowf(t, "%s\t%s\t%s\t%s\t%s\t%s", a->component, a->id, vg_severity_name(a->severity), rs,
                           a->distro[0] ? dist : "", a->url);
    }
    if (arr) vg_json_print(stdout, json_pack("{s:s, s:o}", "database", path, "advisories", arr), 0);
    else vg_table_print(t, stdout);
    vg_table_free(t);
    vg_advdb_free(db);
    free(path);
    return 0;
}

struct collect {
    json_t *arr;
    struct vg_table *t;
};

static void on_finding(const struct vg_finding *f, void *ctx)
{
    struct collect *c = ctx;
    const char *id = f->adv ? f->adv->id : vg_finding_kind_name(f->kind);
    if (c->arr) {
        json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:s}", "kind", vg_finding_kind_name(f->kind), "id", id,
                              "severity", vg_severity_name(f->severity), "installed", f->comp->version, "fixed",
                              f->fixed, "backport_possible", f->backport_possible, "url", f->url);
        if (f->note[0]) json_object_set_new(j, "note", json_string(f->note));
        json_array_append_new(c->arr, j);
    } else {
        vg_table_rowf(c->t, "%s\t%s\t%s\t%s\t%s\t%s", vg_finding_kind_name(f->kind), id, vg_severity_name(f->severity),
                      f->fixed[0] ? f->fixed : "-", f->url, f->note);
    }
}

static int do_check(const struct opts *o)
{
    if (o->nargs != 2) return usage();
    struct vg_component comp;
    memset(&comp, 0, sizeof comp);
    vg_strlcpy(comp.name, o->args[0], sizeof comp.name);
    vg_strlcpy(comp.version, o->args[1], sizeof comp.version);
    comp.eco = !strcmp(comp.name, "nvidia-driver") ? VG_ECO_NVIDIA : VG_ECO_GENERIC;
    if (o->eco && !vg_eco_parse(o->eco, &comp.eco))
        return vg_input_error("--eco: unknown ecosystem '%s' (generic, dpkg, rpm, nvidia)", o->eco);
    if (o->package) vg_strlcpy(comp.package, o->package, sizeof comp.package);
    if (o->package) vg_strlcpy(comp.srcpkg, o->srcpkg ? o->srcpkg : o->package, sizeof comp.srcpkg);
    if (o->distro) vg_strlcpy(comp.distro, o->distro, sizeof comp.distro);
    if (o->model) vg_strlcpy(comp.model, o->model, sizeof comp.model);
    vg_version_upstream(comp.eco, comp.version, comp.upstream, sizeof comp.upstream);
    vg_strlcpy(comp.source, "command line", sizeof comp.source);
    struct vg_advdb *db;
    char *path;
    if (load_db(o, &db, &path) < 0) {
        free(path);
        return VG_EXIT_INPUT;
    }
    static const char *const hdr[] = { "KIND", "ID", "SEVERITY", "FIXED", "URL", "NOTE" };
    struct collect c = { o->json ? json_array() : NULL, vg_table_new(6, hdr) };
    int n = vg_advdb_match(db, &comp, on_finding, &c);
    if (c.arr)
        vg_json_print(stdout,
                      json_pack("{s:s, s:s, s:s, s:s, s:o}", "component", comp.name, "version", comp.version, "date",
                                vg_advdb_date(db), "database", path, "findings", c.arr),
                      0);
    else if (n) vg_table_print(c.t, stdout);
    else printf("%s %s: no known advisories (as of %s)\n", comp.name, comp.version, vg_advdb_date(db));
    vg_table_free(c.t);
    vg_advdb_free(db);
    free(path);
    return n ? VG_EXIT_FINDINGS : VG_EXIT_OK;
}

static void age_cell(long days, char *buf, size_t n)
{
    if (days < 0) snprintf(buf, n, "unknown");
    else snprintf(buf, n, "%ld d", days);
}

/* Per source: records, the newest record and its age, the copy's date and
 * age; a warning for each source older than --max-age; exit 1 when any is. */
static int do_status(const struct opts *o)
{
    if (o->nargs) return usage();
    struct vg_advdb *db;
    char *path;
    if (load_db(o, &db, &path) < 0) {
        free(path);
        return VG_EXIT_INPUT;
    }
    struct vg_source_status *rows;
    size_t n = vg_advdb_status(db, o->max_age, &rows);
    size_t stale = 0;
    for (size_t i = 0; i < n; i++) stale += rows[i].stale;
    if (o->json) {
        json_t *arr = json_array();
        for (size_t i = 0; i < n; i++) {
            const struct vg_source_status *r = &rows[i];
            json_t *j = json_object();
            vg_json_set_str(j, "name", r->name);
            json_object_set_new(j, "records", json_integer((json_int_t)r->records));
            json_object_set_new(j, "undated", json_integer((json_int_t)r->undated));
            json_object_set_new(j, "newest", r->newest[0] ? json_string(r->newest) : json_null());
            json_object_set_new(j, "newest_id", r->newest_id[0] ? json_string(r->newest_id) : json_null());
            json_object_set_new(j, "age_days", r->age_days >= 0 ? json_integer(r->age_days) : json_null());
            json_object_set_new(j, "age_from_snapshot", json_boolean(r->age_from_snapshot));
            json_object_set_new(j, "snapshot", r->src && r->src->snapshot[0] ? json_string(r->src->snapshot) : json_null());
            json_object_set_new(j, "snapshot_age_days", r->snapshot_age_days >= 0 ? json_integer(r->snapshot_age_days) : json_null());
            if (r->src) {
                vg_json_set_str(j, "repository", r->src->repository);
                vg_json_set_str(j, "commit", r->src->commit);
                vg_json_set_str(j, "about", r->src->about);
            }
            json_object_set_new(j, "stale", json_boolean(r->stale));
            json_array_append_new(arr, j);
        }
        json_t *doc = json_pack("{s:s, s:s, s:s, s:i, s:i, s:i, s:i, s:o, s:b}", "database", path, "generated",
                                vg_advdb_generated(db), "date", vg_advdb_date(db), "max_age_days", (int)o->max_age,
                                "advisories", (int)vg_advdb_count(db), "eol", (int)vg_advdb_eol_count(db), "minimum",
                                (int)vg_advdb_minimum_count(db), "sources", arr, "stale", stale > 0);
        vg_json_print(stdout, doc, 0);
    } else {
        printf("advisory database %s, generated %s; %zu advisories, %zu end-of-life entries, %zu minimum versions; "
               "ages as of %s\n\n",
               path, vg_advdb_generated(db)[0] ? vg_advdb_generated(db) : "(no stamp)", vg_advdb_count(db),
               vg_advdb_eol_count(db), vg_advdb_minimum_count(db), vg_advdb_date(db));
        static const char *const hdr[] = { "SOURCE", "RECORDS", "NEWEST", "AGE", "SNAPSHOT", "SNAPSHOT AGE", "REPOSITORY", "" };
        struct vg_table *t = vg_table_new(8, hdr);
        for (size_t i = 0; i < n; i++) {
            const struct vg_source_status *r = &rows[i];
            char recs[24], newest[80], age[32], sage[32];
            snprintf(recs, sizeof recs, "%zu", r->records);
            if (r->undated) snprintf(newest, sizeof newest, "(%zu of %zu records carry no date)", r->undated, r->records);
            else if (r->newest[0]) snprintf(newest, sizeof newest, "%s %s", r->newest, r->newest_id);
            else snprintf(newest, sizeof newest, "-");
            age_cell(r->age_days, age, sizeof age);
            if (r->age_from_snapshot) vg_strlcpy(age, "see snapshot", sizeof age);
            age_cell(r->snapshot_age_days, sage, sizeof sage);
            const char *snap = r->src && r->src->snapshot[0] ? r->src->snapshot : "-";
            vg_table_rowf(t, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", r->name, recs, newest, age, snap,
                          r->snapshot_age_days >= 0 ? sage : "-", r->src && r->src->repository[0] ? r->src->repository : "-",
                          r->stale ? "STALE" : "");
        }
        vg_table_print(t, stdout);
        vg_table_free(t);
        for (size_t i = 0; i < n; i++) {
            const struct vg_source_status *r = &rows[i];
            if (!r->stale) continue;
            if (r->snapshot_age_days >= 0)
                printf("warning: %s: copied %ld days ago (%s), past the %ld-day limit: run data/regenerate on a newer copy\n",
                       r->name, r->snapshot_age_days, r->src->snapshot, o->max_age);
            else if (r->age_days >= 0)
                printf("warning: %s: newest record %ld days old (%s), past the %ld-day limit, and no snapshot date says "
                       "whether the source published nothing since\n",
                       r->name, r->age_days, r->newest, o->max_age);
            else printf("warning: %s: %zu records and no date to tell their age\n", r->name, r->records);
        }
        if (!stale) printf("\nevery source is within %ld days\n", o->max_age);
    }
    free(rows);
    vg_advdb_free(db);
    free(path);
    return stale ? VG_EXIT_FINDINGS : VG_EXIT_OK;
}

int cmd_advisories(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        if (argc >= 2) {
            fputs("usage: " IMPORT_SYN "       " STATUS_SYN "       " LIST_SYN "       " CHECK_SYN "(see docs/advisories.md)\n", stdout);
            return 0;
        }
        return usage();
    }
    struct opts o;
    if (parse(argc, argv, &o)) return VG_EXIT_INPUT;
    for (size_t i = 0; o.help && i < sizeof actions / sizeof actions[0]; i++)
        if (!strcmp(argv[1], actions[i].name)) return fputs(actions[i].help, stdout), VG_EXIT_OK;
    if (!strcmp(argv[1], "import")) return do_import(&o);
    if (!strcmp(argv[1], "list")) return do_list(&o);
    if (!strcmp(argv[1], "check")) return do_check(&o);
    if (!strcmp(argv[1], "status")) return do_status(&o);
    return vg_input_error("advisories: unknown action '%s' (import, list, check, status)", argv[1]);
}
