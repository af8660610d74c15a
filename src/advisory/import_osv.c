/* import_osv.c — importer for OSV records (https://ossf.github.io/osv-schema/):
 * affected[].package {ecosystem, name} → component (import.c's name table),
 * ranges of type ECOSYSTEM/SEMVER with introduced/fixed/last_affected events,
 * explicit versions[], the CVE id among id/aliases, severity and CVSS from
 * database_specific, the advisory URL from references.  GIT ranges (commit
 * hashes) cannot be compared with installed versions and are skipped.
 * A distribution's record (ecosystem "Debian:12", "Ubuntu:22.04:LTS", …) keeps
 * its own id (DSA/DLA/USN), the release, the source package and the CVE ids it
 * covers; its ranges compare full package versions.  A Red Hat family record
 * (AlmaLinux ALSA, Rocky RLSA: "AlmaLinux:9") lists every binary rpm of the
 * update; the entry named like the component's source rpm is the one that
 * matches (openssh for openssh-server).  Ubuntu Pro-only entries are skipped
 * (their fixes need a subscription).  A release's CVEs are those its entry's
 * cves_map names when it names any, else the record's.  A withdrawn record is
 * skipped.  The Go database's records: "+incompatible" is dropped from
 * versions, a /vN module starts at N.0.0, and an open-ended entry whose fix
 * exists only under a /vN module path (moby/moby/v2) is skipped. */
#include "advisory/importer.h"
#include "util/jsonutil.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool detect(const json_t *doc)
{
    return json_is_object(doc) && json_is_string(json_object_get(doc, "id")) &&
           json_is_array(json_object_get(doc, "affected")) && !json_object_get(doc, "document");
}

static enum vg_ecosystem eco_of(const char *osv_eco)
{
    if (vg_startswith(osv_eco, "Debian") || vg_startswith(osv_eco, "Ubuntu")) return VG_ECO_DPKG;
    if (vg_startswith(osv_eco, "Red Hat") || vg_startswith(osv_eco, "AlmaLinux") || vg_startswith(osv_eco, "Rocky") ||
        vg_startswith(osv_eco, "openSUSE") || vg_startswith(osv_eco, "SUSE"))
        return VG_ECO_RPM;
    return VG_ECO_GENERIC;
}

/* Copies an event's version; Go's "+incompatible" (a module without a
 * go.mod major suffix: github.com/docker/docker 28.3.3+incompatible) is no
 * part of the release number. */
static void bound(char *dst, size_t n, const char *v)
{
    vg_strlcpy(dst, v, n);
    size_t l = strlen(dst);
    if (l > 13 && !strcmp(dst + l - 13, "+incompatible")) dst[l - 13] = 0;
}

/* Appends the ranges one OSV range object describes. */
static void add_ranges(const json_t *range, struct vg_range **rs, size_t *n)
{
    const json_t *events = json_object_get(range, "events");
    struct vg_range cur;
    bool open = false;
    for (size_t i = 0; i < json_array_size(events); i++) {
        const json_t *e = json_array_get(events, i);
        const char *intro = vg_json_str(e, "introduced", NULL), *fixed = vg_json_str(e, "fixed", NULL),
                   *last = vg_json_str(e, "last_affected", NULL), *limit = vg_json_str(e, "limit", NULL);
        if (intro) {
            if (open) {   /* two introduced in a row: the first is open-ended */
                *rs = vg_xrealloc(*rs, (*n + 1) * sizeof **rs);
                (*rs)[(*n)++] = cur;
            }
            memset(&cur, 0, sizeof cur);
            if (strcmp(intro, "0")) bound(cur.introduced, sizeof cur.introduced, intro);
            open = true;
        } else if ((fixed || last || limit) && open) {
            if (fixed) bound(cur.fixed, sizeof cur.fixed, fixed);
            else if (last) bound(cur.last_affected, sizeof cur.last_affected, last);
            else bound(cur.fixed, sizeof cur.fixed, limit);
            *rs = vg_xrealloc(*rs, (*n + 1) * sizeof **rs);
            (*rs)[(*n)++] = cur;
            open = false;
        }
    }
    if (open) {
        *rs = vg_xrealloc(*rs, (*n + 1) * sizeof **rs);
        (*rs)[(*n)++] = cur;
    }
}

/* A distribution's own ecosystem: "Debian:12", "Ubuntu:22.04:LTS", "Red Hat:…". */
static bool distro_eco(const char *osv_eco)
{
    return strchr(osv_eco, ':') && eco_of(osv_eco) != VG_ECO_GENERIC;
}

/* Appends to list (space-separated) the CVE named by s: "CVE-…", or a
 * distribution's "UBUNTU-CVE-…" / "DEBIAN-CVE-…". */
static void add_cve(struct sbuf *list, const char *s)
{
    const char *c = strstr(s ? s : "", "CVE-");
    if (!c || (c != s && c[-1] != '-') || strchr(c, ' ')) return;
    char *have = list->s ? list->s : (char *)"";
    if (vg_word_in(have, c)) return;
    sbuf_printf(list, "%s%s", list->len ? " " : "", c);
}

/* The CVE ids a record names: its id, aliases, upstream and related ids;
 * when those name none (Ubuntu's kernel USNs), the ids its details cite. */
static char *record_cves(const json_t *doc)
{
    struct sbuf list = SBUF_INIT;
    add_cve(&list, vg_json_str(doc, "id", ""));
    static const char *const keys[] = { "aliases", "upstream", "related" };
    for (size_t k = 0; k < 3; k++) {
        const json_t *arr = json_object_get(doc, keys[k]);
        for (size_t i = 0; i < json_array_size(arr); i++) add_cve(&list, json_string_value(json_array_get(arr, i)));
    }
    const char *d = list.len ? "" : vg_json_str(doc, "details", "");
    for (const char *p = strstr(d, "CVE-"); p; p = strstr(p + 4, "CVE-")) {
        size_t n = 4 + strspn(p + 4, "0123456789-");
        while (n > 4 && p[n - 1] == '-') n--;
        if (n < 13 || n > 20 || (p > d && isalnum((unsigned char)p[-1]))) continue;
        char id[24];
        snprintf(id, sizeof id, "%.*s", (int)n, p);
        add_cve(&list, id);
    }
    return sbuf_take(&list);
}

/* The CVE ids one affected entry of a distribution's record names for its
 * own release (Ubuntu's database_specific.cves_map: a USN that covers several
 * releases lists per release only the CVEs that affected it); NULL when the
 * entry names none (the kernel USNs leave the list empty). */
static char *entry_cves(const json_t *aff)
{
    const json_t *map = json_object_get(json_object_get(aff, "database_specific"), "cves_map");
    const json_t *arr = json_object_get(map, "cves");
    struct sbuf list = SBUF_INIT;
    for (size_t i = 0; i < json_array_size(arr); i++) add_cve(&list, vg_json_str(json_array_get(arr, i), "id", NULL));
    if (!list.len) {
        sbuf_free(&list);
        return NULL;
    }
    return sbuf_take(&list);
}

/* The distribution's rating: Ubuntu's priority ("severity": [{"type":
 * "Ubuntu", "score": "high"}]), or Red Hat's impact that AlmaLinux and Rocky
 * records carry at the start of their summary ("Important: openssh security
 * update"; Critical, Important, Moderate, Low). */
static const char *distro_severity(const json_t *doc)
{
    const json_t *sv = json_object_get(doc, "severity");
    for (size_t i = 0; i < json_array_size(sv); i++) {
        const json_t *e = json_array_get(sv, i);
        if (!strcmp(vg_json_str(e, "type", ""), "Ubuntu")) return vg_json_str(e, "score", NULL);
    }
    static const struct { const char *impact, *severity; } rh[] = {
        { "Critical: ", "critical" }, { "Important: ", "high" }, { "Moderate: ", "medium" }, { "Low: ", "low" },
    };
    const char *summary = vg_json_str(doc, "summary", "");
    for (size_t i = 0; i < sizeof rh / sizeof rh[0]; i++)
        if (vg_startswith(summary, rh[i].impact)) return rh[i].severity;
    return NULL;
}

/* The record's CVE id, else its GitHub advisory id (a Go database record
 * with no CVE), else its own id. */
static const char *pick_id(const json_t *doc)
{
    const char *id = vg_json_str(doc, "id", "");
    if (vg_startswith(id, "CVE-")) return id;
    static const char *const prefixes[] = { "CVE-", "GHSA-" };
    const json_t *al = json_object_get(doc, "aliases");
    for (size_t p = 0; p < 2; p++)
        for (size_t i = 0; i < json_array_size(al); i++) {
            const json_t *a = json_array_get(al, i);
            if (json_is_string(a) && vg_startswith(json_string_value(a), prefixes[p])) return json_string_value(a);
        }
    return id;
}

static void pick_url(const json_t *doc, const char *id, char *url, size_t n)
{
    const json_t *refs = json_object_get(doc, "references");
    const char *first = NULL;
    char page[64];   /* a distribution's own page of the record: ALSA-2024:4312 → …/ALSA-2024-4312.html */
    vg_strlcpy(page, vg_json_str(doc, "id", ""), sizeof page);
    for (char *c = strchr(page, ':'); c; c = strchr(c, ':')) *c = '-';
    for (size_t i = 0; page[0] && strchr(vg_json_str(doc, "id", ""), ':') && i < json_array_size(refs); i++) {
        const char *u = vg_json_str(json_array_get(refs, i), "url", "");
        if (strstr(u, page)) {
            vg_strlcpy(url, u, n);
            return;
        }
    }
    for (size_t i = 0; i < json_array_size(refs); i++) {   /* the project's own advisory page first */
        const char *u = vg_json_str(json_array_get(refs, i), "url", "");
        if (strstr(u, "/security/advisories/GHSA-")) {
            vg_strlcpy(url, u, n);
            return;
        }
    }
    for (size_t i = 0; i < json_array_size(refs); i++) {
        const json_t *r = json_array_get(refs, i);
        const char *u = vg_json_str(r, "url", NULL);
        if (!u) continue;
        if (!first) first = u;
        if (!strcmp(vg_json_str(r, "type", ""), "ADVISORY")) {
            vg_strlcpy(url, u, n);
            return;
        }
    }
    if (first) vg_strlcpy(url, first, n);
    else snprintf(url, n, "https://osv.dev/vulnerability/%s", id);
}

static void pick_severity(const json_t *doc, const json_t *aff, struct vg_advisory *a)
{
    const json_t *ds = json_object_get(doc, "database_specific");
    const char *sev = vg_json_str(ds, "severity", NULL);
    if (!sev) sev = vg_json_str(json_object_get(aff, "ecosystem_specific"), "severity", NULL);
    if (!sev) sev = distro_severity(doc);
    if (!sev || !vg_severity_parse(sev, &a->severity)) a->severity = VG_SEV_MEDIUM;   /* unscored */
    const json_t *cv = json_object_get(ds, "cvss_score");
    if (!cv) cv = json_object_get(ds, "cvss");
    if (json_is_number(cv)) a->cvss = json_number_value(cv);
}

/* N for a Go module path of major version N >= 2 (".../v2"), else 0. */
static int go_major(const char *name)
{
    const char *v = strrchr(name, '/');
    if (!v || v[1] != 'v' || v[2] < '2' || v[2] > '9' || strspn(v + 2, "0123456789") != strlen(v + 2)) return 0;
    return (int)strtol(v + 2, NULL, 10);
}

/* True when an affected entry names a fix (a "fixed", "last_affected" or
 * "limit" event). */
static bool entry_has_fix(const json_t *aff)
{
    const json_t *ranges = json_object_get(aff, "ranges");
    for (size_t j = 0; j < json_array_size(ranges); j++) {
        const json_t *ev = json_object_get(json_array_get(ranges, j), "events");
        for (size_t k = 0; k < json_array_size(ev); k++) {
            const json_t *e = json_array_get(ev, k);
            if (json_object_get(e, "fixed") || json_object_get(e, "last_affected") || json_object_get(e, "limit")) return true;
        }
    }
    return json_array_size(json_object_get(aff, "versions")) > 0;
}

/* In the Go database, an entry open from the beginning with no fix while
 * another entry of the record is fixed under a major-version module path
 * (".../v2"): the fix exists only in that module's version series, which
 * are not the component's releases (its moby records: github.com/docker/docker
 * open-ended, the fix in github.com/moby/moby/v2 2.0.0-beta.N, no Docker
 * Engine version).  Returns that path, or NULL. */
static const char *fix_elsewhere(const json_t *affected, size_t i)
{
    const json_t *aff = json_array_get(affected, i);
    if (strcmp(vg_json_str(json_object_get(aff, "package"), "ecosystem", ""), "Go") || entry_has_fix(aff)) return NULL;
    for (size_t j = 0; j < json_array_size(affected); j++) {
        const json_t *o = json_array_get(affected, j);
        const char *name = vg_json_str(json_object_get(o, "package"), "name", "");
        if (j != i && entry_has_fix(o) && go_major(name)) return name;
    }
    return NULL;
}

static int import(const json_t *doc, const char *file, struct vg_advdb *db, struct vg_import_report *rep, char *err,
                  size_t errlen)
{
    (void)err;
    (void)errlen;
    const char *id = pick_id(doc);
    char *cves = NULL;
    if (vg_json_str(doc, "withdrawn", NULL)) {
        vg_strlist_add(&rep->warnings, "%s: withdrawn on %s; record skipped", file, vg_json_str(doc, "withdrawn", ""));
        rep->skipped_files++;
        return 0;
    }
    if (!*id || strlen(id) >= sizeof ((struct vg_advisory *)0)->id) {
        vg_strlist_add(&rep->warnings, "%s: id: empty or too long; record skipped", file);
        rep->skipped_files++;
        return 0;
    }
    const json_t *affected = json_object_get(doc, "affected");
    for (size_t i = 0; i < json_array_size(affected); i++) {
        const json_t *aff = json_array_get(affected, i);
        const json_t *pkg = json_object_get(aff, "package");
        const char *name = vg_json_str(pkg, "name", ""), *eco = vg_json_str(pkg, "ecosystem", "");
        bool distro = distro_eco(eco);
        const char *comp = distro ? vg_component_for_distro_package(name) : vg_component_for_name(name);
        if (comp && distro && strstr(eco, ":Pro:")) comp = NULL;   /* fixes that need a subscription */
        if (!comp) {
            rep->products_skipped++;
            vg_strlist_add(&rep->skipped, "%s: affected[%zu] %s/%s: package not tracked by vigil", file, i, eco, name);
            continue;
        }
        const char *other = fix_elsewhere(affected, i);
        if (other) {
            rep->products_skipped++;
            vg_strlist_add(&rep->skipped, "%s: affected[%zu] %s/%s: no fix in its own versions (fixed only in %s)", file,
                           i, eco, name, other);
            continue;
        }
        struct vg_advisory a;
        memset(&a, 0, sizeof a);
        vg_strlcpy(a.id, distro ? vg_json_str(doc, "id", "") : id, sizeof a.id);
        vg_strlcpy(a.component, comp, sizeof a.component);
        a.eco = eco_of(eco);
        char *own = NULL;
        if (distro) {   /* the distribution's own record: per release and source package */
            vg_strlcpy(a.distro, eco, sizeof a.distro);
            vg_strlcpy(a.package, name, sizeof a.package);
            own = entry_cves(aff);
            if (!own && !cves) cves = record_cves(doc);
            a.cves = own ? own : cves;
        }
        pick_severity(doc, aff, &a);
        a.summary = (char *)vg_json_str(doc, "summary", vg_json_str(doc, "details", ""));
        pick_url(doc, id, a.url, sizeof a.url);
        vg_strlcpy(a.published, vg_json_str(doc, "published", ""), 11);
        if (vg_startswith(a.published, "0001-")) a.published[0] = 0;   /* the Go database's files leave dates to its server */
        const json_t *ranges = json_object_get(aff, "ranges");
        for (size_t j = 0; j < json_array_size(ranges); j++) {
            const json_t *r = json_array_get(ranges, j);
            const char *type = vg_json_str(r, "type", "");
            if (!strcmp(type, "ECOSYSTEM") || !strcmp(type, "SEMVER")) add_ranges(r, &a.ranges, &a.nranges);
            else vg_strlist_add(&rep->warnings, "%s: affected[%zu].ranges[%zu]: type %s skipped", file, i, j, type);
        }
        /* a Go module of major version N (".../v2") has no version below
         * N.0.0: its "introduced: 0" must not reach the component's 1.x */
        int major = !strcmp(eco, "Go") ? go_major(name) : 0;
        for (size_t j = 0; major && j < a.nranges; j++)
            if (!a.ranges[j].introduced[0]) snprintf(a.ranges[j].introduced, sizeof a.ranges[j].introduced, "%d.0.0-alpha", major);
        const json_t *versions = json_object_get(aff, "versions");
        for (size_t j = 0; j < json_array_size(versions) && !(distro && a.nranges); j++) {   /* ranges say it all */
            const json_t *v = json_array_get(versions, j);
            if (!json_is_string(v)) continue;
            a.ranges = vg_xrealloc(a.ranges, (a.nranges + 1) * sizeof *a.ranges);
            struct vg_range *g = &a.ranges[a.nranges++];
            memset(g, 0, sizeof *g);
            vg_strlcpy(g->introduced, json_string_value(v), sizeof g->introduced);
            vg_strlcpy(g->last_affected, json_string_value(v), sizeof g->last_affected);
        }
        if (a.nranges) vg_import_add(db, rep, &a);
        else vg_strlist_add(&rep->warnings, "%s: affected[%zu]: no comparable ranges or versions", file, i);
        free(a.ranges);
        free(own);
    }
    free(cves);
    return 0;
}

const struct vg_importer vg_importer_osv = { "osv", detect, import, NULL, NULL };
