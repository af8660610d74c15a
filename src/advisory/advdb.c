/* advdb.c — the advisory database in memory and on disk (data/advisories.json):
 * building it (add with dedup and range merging), loading it with errors that
 * name the file and field, saving it in a stable order.  Matching is in
 * advmatch.c; the file format is described in docs/advisories.md.
 *
 *   {"schema": 1, "generated": "…Z",
 *    "sources":    [{"name", "path", "repository", "commit", "snapshot", "about"}],
 *    "advisories": [{"id", "component", "ecosystem", "severity", "cvss",
 *                    "summary", "url", "published", "distro", "package", "cves", "source",
 *                    "ranges": [{"introduced", "fixed", "last_affected", "models", "undecided"}]}],
 *    "eol":     [{"component", "branch", "below", "date", "url", "note"}],
 *    "minimum": [{"component", "branch", "version", "url", "reason"}]} */
#include "advisory/advdb_int.h"
#include "util/jsonutil.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SCHEMA 1

static const char *const sev_names[] = { "none", "low", "medium", "high", "critical" };

const char *vg_severity_name(enum vg_severity s)
{
    return (unsigned)s <= VG_SEV_CRITICAL ? sev_names[s] : "none";
}

bool vg_severity_parse(const char *s, enum vg_severity *out)
{
    for (int i = 0; s && i <= VG_SEV_CRITICAL; i++)
        if (!strcasecmp(s, sev_names[i])) {
            *out = (enum vg_severity)i;
            return true;
        }
    if (s && !strcasecmp(s, "moderate")) { *out = VG_SEV_MEDIUM; return true; }
    if (s && !strcasecmp(s, "important")) { *out = VG_SEV_HIGH; return true; }
    return false;
}

struct vg_advdb *vg_advdb_new(void)
{
    struct vg_advdb *db = vg_xcalloc(1, sizeof *db);
    vg_advdb_set_date(db, NULL);
    return db;
}

void vg_advdb_free(struct vg_advdb *db)
{
    if (!db) return;
    for (size_t i = 0; i < db->n; i++) {
        free(db->advs[i].summary);
        free(db->advs[i].cves);
        free(db->advs[i].ranges);
    }
    free(db->advs);
    free(db->eol);
    free(db->min);
    free(db->src);
    free(db);
}

size_t vg_advdb_count(const struct vg_advdb *db) { return db ? db->n : 0; }
size_t vg_advdb_eol_count(const struct vg_advdb *db) { return db->neol; }
size_t vg_advdb_minimum_count(const struct vg_advdb *db) { return db->nmin; }

static int adv_order(const void *pa, const void *pb)
{
    const struct vg_advisory *a = pa, *b = pb;
    int r = strcmp(a->component, b->component);
    if (!r) r = strcmp(a->id, b->id);
    if (!r) r = strcmp(a->distro, b->distro);
    return r ? r : strcmp(a->package, b->package);
}

/* Sorting by (component, id) is both the stable output order and the index
 * vg_advdb_match binary-searches. */
void vg_advdb_sort(struct vg_advdb *db)
{
    if (db->sorted) return;
    if (db->n) qsort(db->advs, db->n, sizeof *db->advs, adv_order);
    db->sorted = true;
}

const struct vg_advisory *vg_advdb_get(const struct vg_advdb *db, size_t i)
{
    vg_advdb_sort((struct vg_advdb *)db);
    return i < db->n ? &db->advs[i] : NULL;
}

const struct vg_eol *vg_advdb_eol(const struct vg_advdb *db, size_t i) { return i < db->neol ? &db->eol[i] : NULL; }
const struct vg_minimum *vg_advdb_minimum(const struct vg_advdb *db, size_t i)
{
    return i < db->nmin ? &db->min[i] : NULL;
}

static bool same_range(const struct vg_range *a, const struct vg_range *b)
{
    return !strcmp(a->introduced, b->introduced) && !strcmp(a->fixed, b->fixed) &&
           !strcmp(a->last_affected, b->last_affected) && !strcmp(a->models, b->models) &&
           !strcmp(a->undecided, b->undecided);
}

int vg_advdb_add_source(struct vg_advdb *db, const struct vg_source *s)
{
    for (size_t i = 0; i < db->nsrc; i++)
        if (!strcmp(db->src[i].name, s->name)) {
            db->src[i] = *s;   /* a newer manifest updates the entry */
            return 0;
        }
    db->src = vg_xrealloc(db->src, (db->nsrc + 1) * sizeof *db->src);
    db->src[db->nsrc++] = *s;
    return 1;
}

size_t vg_advdb_source_count(const struct vg_advdb *db) { return db->nsrc; }
const struct vg_source *vg_advdb_source(const struct vg_advdb *db, size_t i) { return i < db->nsrc ? &db->src[i] : NULL; }
const char *vg_advdb_generated(const struct vg_advdb *db) { return db->generated; }

/* An advisory is identified by (component, id, distro, package): one USN
 * gives each Ubuntu release its own record. */
static struct vg_advisory *find_adv(struct vg_advdb *db, const struct vg_advisory *a)
{
    if (db->sorted) return bsearch(a, db->advs, db->n, sizeof *db->advs, adv_order);
    for (size_t i = 0; i < db->n; i++)
        if (!adv_order(&db->advs[i], a)) return &db->advs[i];
    return NULL;
}

int vg_advdb_add(struct vg_advdb *db, const struct vg_advisory *a)
{
    struct vg_advisory *t = find_adv(db, a);
    if (!t) {
        if (db->n == db->cap) {
            db->cap = db->cap ? db->cap * 2 : 64;
            db->advs = vg_xrealloc(db->advs, db->cap * sizeof *db->advs);
        }
        t = &db->advs[db->n++];
        *t = *a;
        t->summary = vg_xstrdup(a->summary ? a->summary : "");
        t->cves = vg_xstrdup(a->cves ? a->cves : "");
        t->ranges = NULL;
        t->nranges = 0;
        db->sorted = false;
    } else {
        if (a->severity > t->severity) t->severity = a->severity;
        if (a->cvss > t->cvss) t->cvss = a->cvss;
        if (!t->source[0]) vg_strlcpy(t->source, a->source, sizeof t->source);
    }
    int added = 0;
    for (size_t i = 0; i < a->nranges; i++) {
        bool dup = false;
        for (size_t j = 0; j < t->nranges && !dup; j++) dup = same_range(&t->ranges[j], &a->ranges[i]);
        if (dup) continue;
        t->ranges = vg_xrealloc(t->ranges, (t->nranges + 1) * sizeof *t->ranges);
        t->ranges[t->nranges++] = a->ranges[i];
        added++;
    }
    return added;
}

int vg_advdb_add_eol(struct vg_advdb *db, const struct vg_eol *e)
{
    for (size_t i = 0; i < db->neol; i++)
        if (!strcmp(db->eol[i].component, e->component) && !strcmp(db->eol[i].branch, e->branch) &&
            !strcmp(db->eol[i].below, e->below)) {
            db->eol[i] = *e;   /* a newer file updates the entry */
            return 0;
        }
    db->eol = vg_xrealloc(db->eol, (db->neol + 1) * sizeof *db->eol);
    db->eol[db->neol++] = *e;
    return 1;
}

int vg_advdb_add_minimum(struct vg_advdb *db, const struct vg_minimum *m)
{
    for (size_t i = 0; i < db->nmin; i++)
        if (!strcmp(db->min[i].component, m->component) && !strcmp(db->min[i].branch, m->branch)) {
            db->min[i] = *m;
            return 0;
        }
    db->min = vg_xrealloc(db->min, (db->nmin + 1) * sizeof *db->min);
    db->min[db->nmin++] = *m;
    return 1;
}

/* ---- reading ---- */

struct rd {
    const char *file;
    char *err;
    size_t errlen;
    int failed;
};

/* Copies string member key of obj (at where) into dst; a missing member is
 * an error when required.  Over-long values are an error too. */
static void get_str(struct rd *r, const json_t *obj, const char *where, const char *key, char *dst, size_t n,
                    bool required)
{
    dst[0] = 0;
    if (r->failed) return;
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) {
        if (required) {
            snprintf(r->err, r->errlen, "%s: %s.%s: missing", r->file, where, key);
            r->failed = 1;
        }
        return;
    }
    if (!json_is_string(v) || json_string_length(v) >= n) {
        snprintf(r->err, r->errlen, "%s: %s.%s: %s", r->file, where, key,
                 json_is_string(v) ? "too long" : "not a string");
        r->failed = 1;
        return;
    }
    memcpy(dst, json_string_value(v), json_string_length(v) + 1);
}

static const json_t *get_array(struct rd *r, const json_t *doc, const char *key)
{
    json_t *a = json_object_get(doc, key);
    if (a && !json_is_array(a)) {
        snprintf(r->err, r->errlen, "%s: %s: not an array", r->file, key);
        r->failed = 1;
        return NULL;
    }
    return a;
}

static void read_advisory(struct rd *r, struct vg_advdb *db, const json_t *o, size_t idx)
{
    char where[48];
    snprintf(where, sizeof where, "advisories[%zu]", idx);
    if (!json_is_object(o)) {
        snprintf(r->err, r->errlen, "%s: %s: not an object", r->file, where);
        r->failed = 1;
        return;
    }
    struct vg_advisory a;
    memset(&a, 0, sizeof a);
    char eco[16], sev[16];
    get_str(r, o, where, "id", a.id, sizeof a.id, true);
    get_str(r, o, where, "component", a.component, sizeof a.component, true);
    get_str(r, o, where, "url", a.url, sizeof a.url, true);
    get_str(r, o, where, "ecosystem", eco, sizeof eco, false);
    get_str(r, o, where, "severity", sev, sizeof sev, false);
    get_str(r, o, where, "published", a.published, sizeof a.published, false);
    get_str(r, o, where, "distro", a.distro, sizeof a.distro, false);
    get_str(r, o, where, "package", a.package, sizeof a.package, false);
    get_str(r, o, where, "source", a.source, sizeof a.source, false);
    if (r->failed) return;
    const json_t *cv_list = json_object_get(o, "cves");
    if (cv_list && !json_is_array(cv_list)) {
        snprintf(r->err, r->errlen, "%s: %s.cves: not an array", r->file, where);
        r->failed = 1;
        return;
    }
    if (eco[0] && !vg_eco_parse(eco, &a.eco)) {
        snprintf(r->err, r->errlen, "%s: %s.ecosystem: unknown '%s'", r->file, where, eco);
        r->failed = 1;
        return;
    }
    if (sev[0] && !vg_severity_parse(sev, &a.severity)) {
        snprintf(r->err, r->errlen, "%s: %s.severity: unknown '%s'", r->file, where, sev);
        r->failed = 1;
        return;
    }
    json_t *cv = json_object_get(o, "cvss");
    a.cvss = json_is_number(cv) ? json_number_value(cv) : 0;
    struct sbuf cves = SBUF_INIT;
    for (size_t i = 0; i < json_array_size(cv_list); i++) {
        const char *c = json_string_value(json_array_get(cv_list, i));
        if (!c || !*c || strchr(c, ' ')) {
            snprintf(r->err, r->errlen, "%s: %s.cves[%zu]: not a CVE id", r->file, where, i);
            r->failed = 1;
            sbuf_free(&cves);
            return;
        }
        sbuf_printf(&cves, "%s%s", cves.len ? " " : "", c);
    }
    a.cves = sbuf_take(&cves);
    a.summary = (char *)vg_json_str(o, "summary", "");
    json_t *rs = json_object_get(o, "ranges");
    if (!json_is_array(rs)) {
        snprintf(r->err, r->errlen, "%s: %s.ranges: %s", r->file, where, rs ? "not an array" : "missing");
        r->failed = 1;
        free(a.cves);
        return;
    }
    size_t nr = json_array_size(rs);
    a.ranges = vg_xcalloc(nr ? nr : 1, sizeof *a.ranges);
    for (size_t i = 0; i < nr && !r->failed; i++) {
        char rw[80];
        snprintf(rw, sizeof rw, "%s.ranges[%zu]", where, i);
        json_t *ro = json_array_get(rs, i);
        if (!json_is_object(ro)) {
            snprintf(r->err, r->errlen, "%s: %s: not an object", r->file, rw);
            r->failed = 1;
            break;
        }
        struct vg_range *g = &a.ranges[a.nranges++];
        get_str(r, ro, rw, "introduced", g->introduced, sizeof g->introduced, false);
        get_str(r, ro, rw, "fixed", g->fixed, sizeof g->fixed, false);
        get_str(r, ro, rw, "last_affected", g->last_affected, sizeof g->last_affected, false);
        get_str(r, ro, rw, "models", g->models, sizeof g->models, false);
        get_str(r, ro, rw, "undecided", g->undecided, sizeof g->undecided, false);
    }
    if (!r->failed) vg_advdb_add(db, &a);
    free(a.ranges);
    free(a.cves);
}

int vg_advdb_merge_json(struct vg_advdb *db, const json_t *doc, const char *file, char *err, size_t errlen)
{
    struct rd r = { file, err, errlen, 0 };
    if (!json_is_object(doc)) {
        snprintf(err, errlen, "%s: not a JSON object", file);
        return -1;
    }
    json_t *schema = json_object_get(doc, "schema");
    if (schema && (!json_is_integer(schema) || json_integer_value(schema) != SCHEMA)) {
        snprintf(err, errlen, "%s: schema: unsupported (this vigil reads schema %d)", file, SCHEMA);
        return -1;
    }
    const char *gen = vg_json_str(doc, "generated", NULL);
    if (gen && !db->generated[0]) vg_strlcpy(db->generated, gen, sizeof db->generated);
    const json_t *srcs = get_array(&r, doc, "sources");
    for (size_t i = 0; srcs && i < json_array_size(srcs) && !r.failed; i++) {
        const json_t *o = json_array_get(srcs, i);
        char where[32];
        snprintf(where, sizeof where, "sources[%zu]", i);
        struct vg_source sr;
        get_str(&r, o, where, "name", sr.name, sizeof sr.name, true);
        get_str(&r, o, where, "path", sr.path, sizeof sr.path, false);
        get_str(&r, o, where, "repository", sr.repository, sizeof sr.repository, false);
        get_str(&r, o, where, "commit", sr.commit, sizeof sr.commit, false);
        get_str(&r, o, where, "snapshot", sr.snapshot, sizeof sr.snapshot, false);
        get_str(&r, o, where, "about", sr.about, sizeof sr.about, false);
        if (!r.failed) vg_advdb_add_source(db, &sr);
    }
    const json_t *advs = get_array(&r, doc, "advisories");
    for (size_t i = 0; advs && i < json_array_size(advs) && !r.failed; i++)
        read_advisory(&r, db, json_array_get(advs, i), i);
    const json_t *eol = get_array(&r, doc, "eol");
    for (size_t i = 0; eol && i < json_array_size(eol) && !r.failed; i++) {
        const json_t *o = json_array_get(eol, i);
        char where[32];
        snprintf(where, sizeof where, "eol[%zu]", i);
        struct vg_eol e;
        get_str(&r, o, where, "component", e.component, sizeof e.component, true);
        get_str(&r, o, where, "branch", e.branch, sizeof e.branch, false);
        get_str(&r, o, where, "below", e.below, sizeof e.below, false);
        get_str(&r, o, where, "date", e.date, sizeof e.date, false);
        get_str(&r, o, where, "url", e.url, sizeof e.url, true);
        get_str(&r, o, where, "note", e.note, sizeof e.note, false);
        if (!r.failed) vg_advdb_add_eol(db, &e);
    }
    const json_t *min = get_array(&r, doc, "minimum");
    for (size_t i = 0; min && i < json_array_size(min) && !r.failed; i++) {
        const json_t *o = json_array_get(min, i);
        char where[32];
        snprintf(where, sizeof where, "minimum[%zu]", i);
        struct vg_minimum m;
        get_str(&r, o, where, "component", m.component, sizeof m.component, true);
        get_str(&r, o, where, "branch", m.branch, sizeof m.branch, false);
        get_str(&r, o, where, "version", m.version, sizeof m.version, true);
        get_str(&r, o, where, "url", m.url, sizeof m.url, true);
        get_str(&r, o, where, "reason", m.reason, sizeof m.reason, false);
        if (!r.failed) vg_advdb_add_minimum(db, &m);
    }
    vg_advdb_sort(db);
    return r.failed ? -1 : 0;
}

/* "X.json" → "X.idx", when path ends in ".json". */
static bool index_path(const char *path, char *idx, size_t n)
{
    size_t l = strlen(path);
    if (l < 5 || strcmp(path + l - 5, ".json") || l + 1 > n) return false;
    snprintf(idx, n, "%.*s.idx", (int)(l - 5), path);
    return true;
}

int vg_advdb_load(const char *path, struct vg_advdb **out, char *err, size_t errlen)
{
    *out = NULL;
    char idx[4096], stamp[64];
    struct stat st;
    if (index_path(path, idx, sizeof idx) && stat(idx, &st) == 0 && vg_advdb_stamp(path, stamp, sizeof stamp) == 0) {
        int rc = vg_advdb_load_index(idx, stamp, out, err, errlen);
        if (rc <= 0) return rc;   /* loaded, or a broken index; 1: stale, read the JSON */
    }
    json_error_t je;
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!doc) {
        if (je.line > 0) snprintf(err, errlen, "%s:%d:%d: %s", path, je.line, je.column, je.text);
        else snprintf(err, errlen, "%s: %s", path, je.text);
        return -1;
    }
    struct vg_advdb *db = vg_advdb_new();
    if (vg_advdb_merge_json(db, doc, path, err, errlen) < 0 ||
        (!json_object_get(doc, "advisories") && (snprintf(err, errlen, "%s: advisories: missing", path), 1))) {
        json_decref(doc);
        vg_advdb_free(db);
        return -1;
    }
    json_decref(doc);
    *out = db;
    return 0;
}

/* ---- writing ---- */

static void set_opt(json_t *o, const char *key, const char *s)
{
    if (s && *s) json_object_set_new(o, key, json_string(s));
}

json_t *vg_advdb_to_json(const struct vg_advdb *db)
{
    vg_advdb_sort((struct vg_advdb *)db);
    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_integer(SCHEMA));
    json_object_set_new(doc, "generated", db->generated[0] ? json_string(db->generated) : vg_json_time(vg_now_ms()));
    json_t *srcs = json_array();
    for (size_t i = 0; i < db->nsrc; i++) {
        const struct vg_source *sr = &db->src[i];
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(sr->name));
        set_opt(o, "path", sr->path);
        set_opt(o, "repository", sr->repository);
        set_opt(o, "commit", sr->commit);
        set_opt(o, "snapshot", sr->snapshot);
        set_opt(o, "about", sr->about);
        json_array_append_new(srcs, o);
    }
    json_object_set_new(doc, "sources", srcs);
    json_t *advs = json_array();
    for (size_t i = 0; i < db->n; i++) {
        const struct vg_advisory *a = &db->advs[i];
        json_t *o = json_object();
        json_object_set_new(o, "id", json_string(a->id));
        json_object_set_new(o, "component", json_string(a->component));
        json_object_set_new(o, "ecosystem", json_string(vg_eco_name(a->eco)));
        json_object_set_new(o, "severity", json_string(vg_severity_name(a->severity)));
        if (a->cvss > 0) json_object_set_new(o, "cvss", json_real(a->cvss));
        set_opt(o, "summary", a->summary);
        json_object_set_new(o, "url", json_string(a->url));
        set_opt(o, "published", a->published);
        set_opt(o, "distro", a->distro);
        set_opt(o, "package", a->package);
        if (a->cves && *a->cves) {
            json_t *cl = json_array();
            for (const char *p = a->cves; *p;) {
                size_t l = strcspn(p, " ");
                json_array_append_new(cl, json_stringn(p, l));
                p += l + (p[l] == ' ');
            }
            json_object_set_new(o, "cves", cl);
        }
        set_opt(o, "source", a->source);
        json_t *rs = json_array();
        for (size_t j = 0; j < a->nranges; j++) {
            json_t *r = json_object();
            set_opt(r, "introduced", a->ranges[j].introduced);
            set_opt(r, "fixed", a->ranges[j].fixed);
            set_opt(r, "last_affected", a->ranges[j].last_affected);
            set_opt(r, "models", a->ranges[j].models);
            set_opt(r, "undecided", a->ranges[j].undecided);
            json_array_append_new(rs, r);
        }
        json_object_set_new(o, "ranges", rs);
        json_array_append_new(advs, o);
    }
    json_object_set_new(doc, "advisories", advs);
    json_t *eol = json_array();
    for (size_t i = 0; i < db->neol; i++) {
        const struct vg_eol *e = &db->eol[i];
        json_t *o = json_object();
        json_object_set_new(o, "component", json_string(e->component));
        set_opt(o, "branch", e->branch);
        set_opt(o, "below", e->below);
        set_opt(o, "date", e->date);
        json_object_set_new(o, "url", json_string(e->url));
        set_opt(o, "note", e->note);
        json_array_append_new(eol, o);
    }
    json_object_set_new(doc, "eol", eol);
    json_t *min = json_array();
    for (size_t i = 0; i < db->nmin; i++) {
        const struct vg_minimum *m = &db->min[i];
        json_t *o = json_object();
        json_object_set_new(o, "component", json_string(m->component));
        set_opt(o, "branch", m->branch);
        json_object_set_new(o, "version", json_string(m->version));
        json_object_set_new(o, "url", json_string(m->url));
        set_opt(o, "reason", m->reason);
        json_array_append_new(min, o);
    }
    json_object_set_new(doc, "minimum", min);
    return doc;
}

int vg_advdb_save(const struct vg_advdb *db, const char *path, char *err, size_t errlen)
{
    char now[40];
    vg_format_time(vg_now_ms(), now);   /* the stamp of what is written now, in the file and its index */
    vg_strlcpy(((struct vg_advdb *)db)->generated, now, sizeof db->generated);
    json_t *doc = vg_advdb_to_json(db);
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int rc = json_dump_file(doc, tmp, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(3));
    json_decref(doc);
    if (rc < 0 || rename(tmp, path) < 0) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    char stamp[64];
    if (!index_path(path, tmp, sizeof tmp)) return 0;
    if (vg_advdb_stamp(path, stamp, sizeof stamp) < 0) return snprintf(err, errlen, "%s: %s", path, strerror(errno)), -1;
    return vg_advdb_save_index(db, stamp, tmp, err, errlen);
}
