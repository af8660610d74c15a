/* advmatch.c — matching one installed component against the advisory
 * database: CVE findings (ranges containing the version), end-of-life and
 * below-minimum findings.  Advisories are sorted by component, so a component
 * costs one binary search plus its own advisories.
 *
 * Range semantics (docs/advisories.md): introduced <= v < fixed, or
 * introduced <= v <= last_affected when no fix is known.  Within one advisory
 * a fix on the version's own release line wins over an open-ended range: when
 * ConnectX GA says "< xx.46.1006" and LTS23 says "[xx.39.0, xx.39.5050)",
 * 28.39.6000 is fixed.
 *
 * A distribution package (dpkg/rpm) is judged by the distribution first: its
 * own advisory for the node's release (OSV "Debian:12", "Ubuntu:22.04:LTS",
 * compared with the full package version), then the package's changelog
 * naming the CVE; only when neither speaks is the upstream version compared,
 * and such findings say the fix may have been backported.  When the
 * distribution's records in the database were copied before the CVE was
 * published, their silence proves nothing: such a match is "undecided by the
 * distribution", listed apart and never counted as a finding (a patched
 * Debian host must not fail its audit on a CVE the bundled Debian data is
 * too old to know).
 *
 * A range naming device models (NIC firmware, AMD Instinct parts) is about
 * those models only.  A range whose source names its fix otherwise than by a
 * release (its `undecided` reason) decides nothing: when no range about the
 * model decides, the advisory is an "unknown" finding with that reason, as is
 * every advisory on a component whose version could not be read. */
#include "advisory/advdb_int.h"
#include "util/strutil.h"
#include <stdarg.h>
#include "util/timeutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *vg_finding_kind_name(enum vg_finding_kind k)
{
    switch (k) {
    case VG_FIND_CVE: return "cve";
    case VG_FIND_EOL: return "eol";
    case VG_FIND_DISTRO_FIXED: return "fixed-by-distribution";
    case VG_FIND_UNDECIDED: return "undecided-by-distribution";
    case VG_FIND_UNKNOWN: return "unknown";
    default: return "below-minimum";
    }
}

void vg_advdb_set_date(struct vg_advdb *db, const char *date)
{
    if (!date || !*date) date = getenv("VIGIL_NOW");
    char buf[32];
    int64_t ms;
    if (date && vg_parse_time(date, &ms)) vg_format_time(ms, buf);
    else if (date && strlen(date) == 10 && date[4] == '-' && date[7] == '-') vg_strlcpy(buf, date, sizeof buf);
    else vg_format_time(vg_now_ms(), buf);
    vg_strlcpy(db->date, buf, 11);
}

const char *vg_advdb_date(const struct vg_advdb *db) { return db->date; }

/* Writes bound into out, with a leading "xx." replaced by v's first field. */
static const char *resolve(const char *bound, const char *v, char *out, size_t n)
{
    if (strncmp(bound, "xx.", 3)) return bound;
    size_t f = strcspn(v, ".");
    snprintf(out, n, "%.*s%s", (int)f, v, bound + 2);
    return out;
}

bool vg_range_contains(enum vg_ecosystem eco, const struct vg_range *r, const char *v)
{
    char buf[160];
    if (r->introduced[0] && vg_version_cmp(eco, v, resolve(r->introduced, v, buf, sizeof buf)) < 0) return false;
    if (r->fixed[0]) return vg_version_cmp(eco, v, resolve(r->fixed, v, buf, sizeof buf)) < 0;
    if (r->last_affected[0]) return vg_version_cmp(eco, v, resolve(r->last_affected, v, buf, sizeof buf)) <= 0;
    return true;
}

/* v is on the release line a range starts ("535.0" → 535.*, "xx.39.0" → *.39.*)
 * and at or past that range's fix. */
static bool fixed_on_line(enum vg_ecosystem eco, const struct vg_range *r, const char *v)
{
    if (!r->introduced[0] || !r->fixed[0]) return false;
    char buf[160], line[160];
    const char *intro = resolve(r->introduced, v, buf, sizeof buf);
    vg_strlcpy(line, intro, sizeof line);
    line[strcspn(line, "-~+")] = 0;                 /* 1.7.0-beta.0 → 1.7.0 */
    size_t n = strlen(line);
    if (n > 2 && !strcmp(line + n - 2, ".0")) line[n -= 2] = 0;     /* 535.0 → 535, 1.7.0 → 1.7 */
    if (strncmp(v, line, n) || (v[n] && v[n] != '.' && v[n] != '-')) return false;
    return vg_version_cmp(eco, v, resolve(r->fixed, v, buf, sizeof buf)) >= 0;
}

bool vg_range_for_model(const struct vg_range *r, const char *model)
{
    if (!r->models[0] || !model || !*model) return true;
    /* NIC models (ConnectX, BlueField) or AMD Instinct parts, each by its key */
    void (*keyof)(const char *, char *, size_t) = vg_nic_model_key;
    char want[32], key[32], item[64];
    keyof(model, want, sizeof want);
    if (!want[0]) {
        keyof = vg_amd_part_key;
        keyof(model, want, sizeof want);
    }
    if (!want[0]) return true;
    for (const char *p = r->models; *p;) {
        size_t l = strcspn(p, ",");
        snprintf(item, sizeof item, "%.*s", (int)(l < sizeof item ? l : sizeof item - 1), p);
        keyof(item, key, sizeof key);
        size_t kl = strlen(key);
        /* a ConnectX-5 Ex is a ConnectX-5 to the bulletins */
        if (kl && (!strcmp(key, want) ||
                   (keyof == vg_nic_model_key && !strncmp(key, want, kl) && !strcmp(want + kl, "ex"))))
            return true;
        p += l + (p[l] == ',');
        while (*p == ' ') p++;
    }
    return false;
}

/* A range about the device model whose bounds decide. */
static bool decides(const struct vg_range *r, const char *model)
{
    return !r->undecided[0] && vg_range_for_model(r, model);
}

/* The range of a that contains v, or NULL; only the ranges about the
 * component's device model whose bounds decide count.  A range on v's own
 * line is preferred. */
static const struct vg_range *affected(const struct vg_advisory *a, enum vg_ecosystem eco, const char *v,
                                       const char *model)
{
    const struct vg_range *hit = NULL, *lowest = NULL;
    bool trains_only = true;   /* every range for this model is a firmware train with a start */
    size_t applicable = 0;
    char buf[160], lo[160] = "", hit_fixed[160] = "";
    for (size_t i = 0; i < a->nranges; i++) {
        const struct vg_range *r = &a->ranges[i];
        if (!decides(r, model)) continue;
        applicable++;
        if (!r->models[0] || !r->introduced[0] || !r->fixed[0]) trains_only = false;
        else if (!lowest || vg_version_cmp(eco, resolve(r->introduced, v, buf, sizeof buf), lo) < 0) {
            lowest = r;
            vg_strlcpy(lo, resolve(r->introduced, v, buf, sizeof buf), sizeof lo);
        }
        if (!vg_range_contains(eco, r, v)) continue;
        /* a range with a start beats an open one; then the nearest fix (a
         * module listed twice: containerd < 1.7.29 and containerd/v2 < 2.0.7) */
        if (!hit || (!hit->introduced[0] && r->introduced[0]) ||
            (!hit->introduced[0] == !r->introduced[0] && r->fixed[0] && hit->fixed[0] &&
             vg_version_cmp(eco, resolve(r->fixed, v, buf, sizeof buf), hit_fixed) < 0)) {
            hit = r;
            vg_strlcpy(hit_fixed, resolve(r->fixed, v, buf, sizeof buf), sizeof hit_fixed);
        }
    }
    /* a model's firmware older than every train the bulletin lists for it is
     * affected: "All versions prior to 35.8002" is the oldest line's fix */
    if (!hit && applicable && trains_only && lowest && model && *model && vg_version_cmp(eco, v, lo) < 0) hit = lowest;
    if (!hit) return NULL;
    for (size_t i = 0; i < a->nranges; i++)
        if (decides(&a->ranges[i], model) && fixed_on_line(eco, &a->ranges[i], v)) return NULL;
    return hit;
}

/* True when some range of a is about the model. */
static bool about_model(const struct vg_advisory *a, const char *model)
{
    for (size_t i = 0; i < a->nranges; i++)
        if (vg_range_for_model(&a->ranges[i], model)) return true;
    return false;
}

/* The undecided range of a about the model when none of its ranges about the
 * model decides (a decided one has spoken: affected, or not), else NULL. */
static const struct vg_range *undecided(const struct vg_advisory *a, const char *model)
{
    const struct vg_range *u = NULL;
    for (size_t i = 0; i < a->nranges; i++) {
        if (decides(&a->ranges[i], model)) return NULL;
        if (!u && a->ranges[i].undecided[0] && vg_range_for_model(&a->ranges[i], model)) u = &a->ranges[i];
    }
    return u;
}

/* Formats the finding's note; long texts are cut at the field's size. */
static void __attribute__((format(printf, 2, 3))) set_note(struct vg_finding *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->note, sizeof f->note, fmt, ap);
    va_end(ap);
}

static bool on_branch(const char *v, const char *branch)
{
    size_t n = strlen(branch);
    return !n || (!strncmp(v, branch, n) && (!v[n] || v[n] == '.' || v[n] == '-'));
}

static void count_only(const struct vg_finding *f, void *ctx)
{
    (void)f;
    (void)ctx;
}

const char *vg_evidence_name(enum vg_find_evidence e)
{
    switch (e) {
    case VG_EV_DISTRO_ADVISORY: return "distro-advisory";
    case VG_EV_CHANGELOG: return "changelog";
    default: return "upstream";
    }
}

bool vg_word_in(const char *list, const char *w)
{
    size_t wl = strlen(w);
    for (const char *p = list; p && *p;) {
        size_t l = strcspn(p, " ");
        if (l == wl && !strncmp(p, w, wl)) return true;
        p += l + (p[l] == ' ');
    }
    return false;
}

/* A distribution advisory (a->distro "Ubuntu:22.04:LTS") applies to the
 * component when it is about the node's release ("Ubuntu:22.04") and the
 * component's source or binary package. */
static bool distro_applies(const struct vg_advisory *a, const struct vg_component *c)
{
    size_t n = strlen(c->distro);
    if (!a->distro[0] || !n || strncmp(a->distro, c->distro, n) || (a->distro[n] && a->distro[n] != ':')) return false;
    if (a->eco != c->eco) return false;
    return !a->package[0] || !strcmp(a->package, c->srcpkg) || !strcmp(a->package, c->package);
}

/* The distribution advisory of this component's release that covers cve, or NULL. */
static const struct vg_advisory *distro_cover(const struct vg_advdb *db, size_t lo, const struct vg_component *c,
                                              const char *cve)
{
    for (size_t i = lo; i < db->n && !strcmp(db->advs[i].component, c->name); i++)
        if (distro_applies(&db->advs[i], c) && (!strcmp(db->advs[i].id, cve) || vg_word_in(db->advs[i].cves, cve)))
            return &db->advs[i];
    return NULL;
}

/* The date the distribution's records were copied (the newest snapshot among
 * the sources that hold any record of the distribution, any release: "Debian"
 * of "Debian:12"; a copy older than a release holds none of it, and that says
 * nothing either), "" when the database holds none or their copy carries no date. */
static const char *distro_data_end(const struct vg_advdb *db, const struct vg_component *c)
{
    size_t n = strcspn(c->distro, ":");
    const char *end = "";
    if (!n) return end;
    for (size_t i = 0; i < db->n; i++) {
        const struct vg_advisory *a = &db->advs[i];
        if (!a->distro[0] || strncmp(a->distro, c->distro, n) || (a->distro[n] && a->distro[n] != ':')) continue;
        for (size_t k = 0; k < vg_advdb_source_count(db); k++) {
            const struct vg_source *s = vg_advdb_source(db, k);
            if (!strcmp(s->name, a->source) && strcmp(s->snapshot, end) > 0) end = s->snapshot;
        }
    }
    return end;
}

/* A package built this long before a CVE was published cannot carry its fix
 * (an embargoed fix ships days to weeks before the disclosure, not months). */
#define PREDATES_DAYS 90

/* Days from date a to date b (both "YYYY-MM-DD"), or -1 when either is unknown. */
static long days_before(const char *a, const char *b)
{
    int64_t x, y;
    if (!a[0] || !b[0] || !vg_parse_day_or_time(a, &x) || !vg_parse_day_or_time(b, &y)) return -1;
    return (long)((y - x) / 86400000);
}

/* The highest fixed version among the ranges (what the distribution shipped). */
static const char *max_fixed(const struct vg_advisory *a)
{
    const char *best = "";
    for (size_t i = 0; i < a->nranges; i++)
        if (a->ranges[i].fixed[0] && (!best[0] || vg_version_cmp(a->eco, a->ranges[i].fixed, best) > 0))
            best = a->ranges[i].fixed;
    return best;
}

/* What the distribution says of the CVE ids a text names (a minimum's
 * reason): fixed (its record for the node's release, or the package's
 * changelog), to fix (its record gives the fixed package version: the
 * highest goes to fix), or undecided (listed in open). */
struct min_cves {
    int named, fixed, tofix, undecided;
    char fix[64], open[160];
};

static void minimum_cves(const struct vg_advdb *db, size_t lo, const struct vg_component *c, const char *text,
                         struct min_cves *m)
{
    memset(m, 0, sizeof *m);
    for (const char *p = strstr(text, "CVE-"); p; p = strstr(p + 4, "CVE-")) {
        char id[24];
        size_t l = strspn(p + 4, "0123456789-");
        if (l < 6 || l + 5 > sizeof id) continue;
        snprintf(id, sizeof id, "CVE-%.*s", (int)l, p + 4);
        if (id[strlen(id) - 1] == '-') id[strlen(id) - 1] = 0;
        m->named++;
        bool in_changelog = vg_changelog_names(&c->changelog, id) != NULL;
        const struct vg_advisory *d = in_changelog ? NULL : distro_cover(db, lo, c, id);
        const struct vg_range *r = d ? affected(d, d->eco, c->version, c->model) : NULL;
        if (in_changelog || (d && !r)) {
            m->fixed++;
        } else if (r) {
            m->tofix++;
            if (r->fixed[0] && (!m->fix[0] || vg_version_cmp(d->eco, r->fixed, m->fix) > 0))
                vg_strlcpy(m->fix, r->fixed, sizeof m->fix);
        } else {
            m->undecided++;
            size_t k = strlen(m->open);
            snprintf(m->open + k, sizeof m->open - k, "%s%s", k ? ", " : "", id);
        }
    }
}

int vg_advdb_match(const struct vg_advdb *db, const struct vg_component *c, vg_finding_cb cb, void *ctx)
{
    if (!cb) cb = count_only;
    vg_advdb_sort((struct vg_advdb *)db);
    bool distro = c->package[0] && (c->eco == VG_ECO_DPKG || c->eco == VG_ECO_RPM);
    char up[128];
    if (c->upstream[0]) vg_strlcpy(up, c->upstream, sizeof up);
    else vg_version_upstream(c->eco, c->version, up, sizeof up);
    int count = 0;

    /* first advisory of this component */
    size_t lo = 0, hi = db->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (strcmp(db->advs[mid].component, c->name) < 0) lo = mid + 1;
        else hi = mid;
    }
    for (size_t i = lo; i < db->n && !strcmp(db->advs[i].component, c->name); i++) {
        const struct vg_advisory *a = &db->advs[i];
        struct vg_finding f;
        memset(&f, 0, sizeof f);
        f.comp = c;
        f.adv = a;
        f.severity = a->severity;
        vg_strlcpy(f.url, a->url, sizeof f.url);
        if (a->distro[0]) {                       /* the distribution's own record */
            const struct vg_range *r = distro && distro_applies(a, c) ? affected(a, a->eco, c->version, c->model) : NULL;
            if (!r) continue;
            f.kind = VG_FIND_CVE;
            f.evidence = VG_EV_DISTRO_ADVISORY;
            for (size_t j = lo; j < db->n && !strcmp(db->advs[j].component, c->name); j++)   /* the upstream rating */
                if (!db->advs[j].distro[0] && db->advs[j].severity > f.severity && vg_word_in(a->cves, db->advs[j].id))
                    f.severity = db->advs[j].severity;
            vg_strlcpy(f.evidence_ref, a->id, sizeof f.evidence_ref);
            vg_strlcpy(f.fixed, r->fixed, sizeof f.fixed);
            cb(&f, ctx);
            count++;
            continue;
        }
        if (!strcmp(c->version, "unknown")) {   /* a collector could not read it: nothing to compare */
            if (!about_model(a, c->model)) continue;
            f.kind = VG_FIND_UNKNOWN;
            set_note(&f, "%s: the installed version could not be read", a->id);
            cb(&f, ctx);
            count++;
            continue;
        }
        /* an advisory in the package's own ecosystem compares the full version */
        bool native = a->eco == c->eco && (a->eco == VG_ECO_DPKG || a->eco == VG_ECO_RPM);
        if (!native && (a->eco == VG_ECO_DPKG || a->eco == VG_ECO_RPM)) continue;   /* another kind of version */
        const struct vg_range *r = affected(a, a->eco, native ? c->version : up, c->model);
        if (!r) {
            const struct vg_range *u = undecided(a, c->model);
            if (!u) continue;
            f.kind = VG_FIND_UNKNOWN;   /* about this model, but nothing installed decides it */
            set_note(&f, "%s: %s", a->id, u->undecided);
            cb(&f, ctx);
            count++;
            continue;
        }
        f.kind = VG_FIND_CVE;
        vg_strlcpy(f.fixed, r->fixed, sizeof f.fixed);
        if (vg_startswith(f.fixed, "xx.")) resolve(r->fixed, up, f.fixed, sizeof f.fixed);
        if (distro && !native) {
            const struct vg_advisory *d = distro_cover(db, lo, c, a->id);
            const char *cl = d ? NULL : vg_changelog_names(&c->changelog, a->id);
            if (d && affected(d, d->eco, c->version, c->model)) continue;   /* reported from the distribution's record */
            if (d || cl) {
                f.kind = VG_FIND_DISTRO_FIXED;
                f.evidence = d ? VG_EV_DISTRO_ADVISORY : VG_EV_CHANGELOG;
                vg_strlcpy(f.evidence_ref, d ? d->id : cl, sizeof f.evidence_ref);
                vg_strlcpy(f.fixed, d ? max_fixed(d) : cl, sizeof f.fixed);
                if (d) set_note(&f, "fixed by the distribution (%s %s)", d->id, f.fixed);
                else set_note(&f, "fixed by the distribution (changelog %s, %s)", cl, c->changelog.path);
                cb(&f, ctx);
                count++;
                continue;
            }
            f.backport_possible = true;
            const char *end = distro_data_end(db, c);
            long before = days_before(c->changelog.newest, a->published);
            if (before > PREDATES_DAYS) {
                f.backport_possible = false;
                set_note(&f, "the package's newest changelog entry (%s) is %ld days older than this CVE (published %s): "
                         "no fix can be in it (upstream %s is affected)", c->changelog.newest, before, a->published, up);
            } else if (end[0] && a->published[0] && strcmp(a->published, end) > 0) {
                f.kind = VG_FIND_UNDECIDED;
                set_note(&f, "%.*s's security data here was copied on %s, before this CVE (published %s), and the "
                         "package's changelog does not name it: not decided (upstream %s is affected)",
                         (int)strcspn(c->distro, ":"), c->distro, end, a->published, up);
            } else
                set_note(&f, "upstream %s compared; the distribution may have backported the fix to %s", up, c->version);
        } else if (c->upstream_why[0]) {
            set_note(&f, "upstream %s compared: %s", up, c->upstream_why);
        }
        cb(&f, ctx);
        count++;
    }

    for (size_t i = 0; i < db->neol; i++) {
        const struct vg_eol *e = &db->eol[i];
        if (strcmp(e->component, c->name) || !on_branch(up, e->branch)) continue;
        if (e->below[0] && vg_version_cmp(VG_ECO_GENERIC, up, e->below) >= 0) continue;
        if (e->date[0] && strcmp(db->date, e->date) < 0) continue;
        struct vg_finding f;
        memset(&f, 0, sizeof f);
        f.kind = VG_FIND_EOL;
        f.comp = c;
        f.severity = VG_SEV_MEDIUM;
        set_note(&f, "%s%s%s end of life%s%s%s%s", e->branch[0] ? "branch " : "",
                 e->branch[0] ? e->branch : "release line", e->branch[0] ? " reached" : " is past its",
                 e->date[0] ? " on " : "", e->date, e->note[0] ? "; " : "", e->note);
        vg_strlcpy(f.url, e->url, sizeof f.url);
        cb(&f, ctx);
        count++;
    }

    const struct vg_minimum *best = NULL;
    for (size_t i = 0; i < db->nmin; i++) {
        const struct vg_minimum *m = &db->min[i];
        if (strcmp(m->component, c->name) || !on_branch(up, m->branch)) continue;
        if (!best || strlen(m->branch) > strlen(best->branch)) best = m;
    }
    enum vg_ecosystem meco = c->eco == VG_ECO_NVIDIA ? VG_ECO_NVIDIA : VG_ECO_GENERIC;
    if (best && vg_version_cmp(meco, up, best->version) < 0) {
        struct vg_finding f;
        memset(&f, 0, sizeof f);
        f.kind = VG_FIND_BELOW_MIN;
        f.comp = c;
        f.severity = VG_SEV_LOW;
        vg_strlcpy(f.url, best->url, sizeof f.url);
        const char *sep = best->reason[0] ? ": " : "";
        if (!distro) {
            vg_strlcpy(f.fixed, best->version, sizeof f.fixed);
            set_note(&f, "below the recommended minimum %s%s%s", best->version, sep, best->reason);
        } else {
            /* A distribution's package is upgraded to the distribution's package,
             * never to an upstream version it will not ship: the minimum counts
             * through the CVEs it is for, as the distribution decides them. */
            const char *rel = c->distro[0] ? c->distro : "the distribution";
            struct min_cves m;
            minimum_cves(db, lo, c, best->reason, &m);
            if (m.named && !m.tofix && !m.undecided) return count;   /* every one fixed by the distribution */
            vg_strlcpy(f.fixed, m.fix, sizeof f.fixed);
            f.backport_possible = !m.named || m.undecided;
            if (!m.named)
                set_note(&f, "upstream's recommended minimum is %s%s%s; this is %s's package: upgrade through its updates", best->version,
                         sep, best->reason, rel);
            else if (!m.undecided)
                set_note(&f, "below the recommended minimum %s%s%s; %s's fix is package version %s", best->version, sep,
                         best->reason, rel, m.fix);
            else
                set_note(&f, "below the recommended minimum %s%s%s; %s not shown fixed by %s's records or the package's "
                         "changelog: upgrade to %s's package that fixes it, not to upstream %s",
                         best->version, sep, best->reason, m.open, rel, rel, best->version);
        }
        cb(&f, ctx);
        count++;
    }
    return count;
}
