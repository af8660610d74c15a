/* audit_report.c — renders the result of `vigil audit` (advisory/audit.h):
 * one JSON document, or a table grouped by severity (terminal or Markdown)
 * with "Fixed by the distribution", "Not decided by the distribution",
 * "Outdated (not a CVE)" and "Advisory status unknown" sections.
 * Rendering only: the matching is in src/advisory/. */
#include "report/audit_report.h"
#include "report/escape.h"
#include "report/table.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdlib.h>
#include <string.h>

json_t *vg_audit_components_json(const struct vg_inventory *inv)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < inv->n; i++) {
        const struct vg_component *c = &inv->items[i];
        json_t *o = json_object();
        vg_json_set_str(o, "name", c->name);
        vg_json_set_str(o, "version", c->version);
        vg_json_set_str(o, "upstream", c->upstream);
        vg_json_set_str(o, "ecosystem", vg_eco_name(c->eco));
        vg_json_set_str(o, "package", c->package);
        if (c->srcpkg[0] && strcmp(c->srcpkg, c->package)) vg_json_set_str(o, "source_package", c->srcpkg);
        if (c->distro[0]) vg_json_set_str(o, "distro", c->distro);
        if (c->changelog.path[0]) vg_json_set_str(o, "changelog", c->changelog.path);
        vg_json_set_str(o, "source", c->source);
        vg_json_set_str(o, "detail", c->detail);
        if (c->model[0]) vg_json_set_str(o, "model", c->model);
        json_array_append_new(arr, o);
    }
    return arr;
}

/* The CVE ids a finding is about: the advisory's id, or the ones a
 * distribution record lists (into buf, comma-separated, shortened). */
static const char *finding_cves(const struct vg_finding *f, char *buf, size_t n)
{
    const struct vg_advisory *a = f->adv;
    if (!a->distro[0] || !a->cves || !*a->cves) return a->id;
    size_t words = 1;
    for (const char *p = a->cves; *p; p++) words += *p == ' ';
    size_t first = strcspn(a->cves, " ");
    if (words == 1) snprintf(buf, n, "%s", a->cves);
    else snprintf(buf, n, "%.*s +%zu", (int)first, a->cves, words - 1);
    return buf;
}

static json_t *finding_json(const struct vg_finding *f)
{
    json_t *o = json_object();
    if (f->adv) vg_json_set_str(o, "id", f->adv->id);
    if (f->kind != VG_FIND_CVE && f->kind != VG_FIND_DISTRO_FIXED && f->kind != VG_FIND_UNDECIDED)
        vg_json_set_str(o, "kind", vg_finding_kind_name(f->kind));
    if (f->comp->model[0]) vg_json_set_str(o, "model", f->comp->model);
    if (f->adv && f->adv->cves && *f->adv->cves) {
        json_t *cl = json_array();
        for (const char *p = f->adv->cves; *p;) {
            size_t l = strcspn(p, " ");
            json_array_append_new(cl, json_stringn(p, l));
            p += l + (p[l] == ' ');
        }
        json_object_set_new(o, "cves", cl);
    }
    if (f->adv) {
        vg_json_set_str(o, "evidence", vg_evidence_name(f->evidence));
        vg_json_set_str(o, "evidence_ref", f->evidence_ref);
    }
    vg_json_set_str(o, "component", f->comp->name);
    vg_json_set_str(o, "installed", f->comp->version);
    vg_json_set_str(o, "source", f->comp->source);
    vg_json_set_str(o, "severity", vg_severity_name(f->severity));
    if (f->adv && f->adv->cvss > 0) json_object_set_new(o, "cvss", json_real(f->adv->cvss));
    vg_json_set_str(o, "fixed", f->fixed);
    json_object_set_new(o, "backport_possible", json_boolean(f->backport_possible));
    vg_json_set_str(o, "url", f->url[0] ? f->url : f->adv ? f->adv->url : "");
    if (f->adv) vg_json_set_str(o, "summary", f->adv->summary);
    vg_json_set_str(o, "note", f->note);
    return o;
}

json_t *vg_audit_json(const struct vg_audit *a)
{
    const struct vg_inventory *inv = &a->inv;
    json_t *doc = json_object();
    vg_json_set_str(doc, "node", inv->hostname);
    vg_json_set_str(doc, "root", inv->root);
    json_object_set_new(doc, "generated", vg_json_time(a->generated_ms));
    vg_json_set_str(doc, "date", a->date);
    json_t *os = json_object();
    vg_json_set_str(os, "id", inv->os_id);
    vg_json_set_str(os, "version_id", inv->os_version_id);
    vg_json_set_str(os, "pretty", inv->os_pretty);
    json_object_set_new(doc, "os", os);
    vg_json_set_str(doc, "kernel", inv->kernel);
    vg_json_set_str(doc, "package_db", inv->pkgdb_source);
    json_object_set_new(doc, "components", vg_audit_components_json(inv));
    json_t *fa = json_array(), *oa = json_array(), *xa = json_array(), *ua = json_array(), *ka = json_array();
    for (size_t i = 0; i < a->nfindings; i++) json_array_append_new(fa, finding_json(&a->findings[i]));
    for (size_t i = 0; i < a->noutdated; i++) json_array_append_new(oa, finding_json(&a->outdated[i]));
    for (size_t i = 0; i < a->nfixed; i++) json_array_append_new(xa, finding_json(&a->fixed[i]));
    for (size_t i = 0; i < a->nundecided; i++) json_array_append_new(ua, finding_json(&a->undecided[i]));
    for (size_t i = 0; i < a->nunknown; i++) json_array_append_new(ka, finding_json(&a->unknown[i]));
    json_object_set_new(doc, "findings", fa);
    json_object_set_new(doc, "outdated", oa);
    json_object_set_new(doc, "fixed_by_distribution", xa);
    json_object_set_new(doc, "undecided_by_distribution", ua);
    json_object_set_new(doc, "unknown", ka);
    json_t *sum = json_object();
    for (int s = VG_SEV_CRITICAL; s >= VG_SEV_LOW; s--) {
        size_t n = 0;
        for (size_t i = 0; i < a->nfindings; i++) n += a->findings[i].severity == (enum vg_severity)s;
        json_object_set_new(sum, vg_severity_name((enum vg_severity)s), json_integer((json_int_t)n));
    }
    json_object_set_new(sum, "outdated", json_integer((json_int_t)a->noutdated));
    json_object_set_new(sum, "fixed_by_distribution", json_integer((json_int_t)a->nfixed));
    json_object_set_new(sum, "undecided_by_distribution", json_integer((json_int_t)a->nundecided));
    json_object_set_new(sum, "unknown", json_integer((json_int_t)a->nunknown));
    json_object_set_new(sum, "components", json_integer((json_int_t)inv->n));
    json_object_set_new(doc, "summary", sum);
    return doc;
}

static void print_table(const struct vg_table *t, FILE *f, bool markdown)
{
    if (markdown) vg_table_print_markdown(t, f);
    else vg_table_print(t, f);
}

static void heading(FILE *f, bool markdown, const char *fmt, const char *a, size_t n)
{
    fputs(markdown ? "\n### " : "\n", f);
    fprintf(f, fmt, a, n);
    fputs(markdown ? "\n\n" : "\n", f);
}

void vg_audit_print_components(const struct vg_inventory *inv, FILE *f, bool markdown)
{
    static const char *const h[] = { "COMPONENT", "VERSION", "SOURCE", "DETAIL" };
    struct vg_table *t = vg_table_new(4, h);
    for (size_t i = 0; i < inv->n; i++) {
        const struct vg_component *c = &inv->items[i];
        char src[400];
        bool pkg = c->package[0] && (vg_startswith(c->source, "dpkg:") || vg_startswith(c->source, "rpm:"));
        snprintf(src, sizeof src, "%s%s%s%s", c->source, pkg ? " (" : "", pkg ? c->package : "", pkg ? ")" : "");
        const char *cells[] = { c->name, c->version, src, c->detail[0] ? c->detail : NULL };
        vg_table_row(t, cells);
    }
    print_table(t, f, markdown);
    vg_table_free(t);
}

/* "upstream", "USN-6859-1", "changelog 2.36-9+deb12u3" */
static void evidence_cell(const struct vg_finding *x, char *buf, size_t n)
{
    if (x->evidence == VG_EV_UPSTREAM) snprintf(buf, n, "upstream");
    else if (x->evidence == VG_EV_CHANGELOG) snprintf(buf, n, "changelog %s", x->evidence_ref);
    else snprintf(buf, n, "%s", x->evidence_ref);
}

/* The upstream advisory's fix for the version's line: "9.9p2", "after 9.7p1"
 * (only the last affected version is known), "none known". */
static const char *upstream_fix(const struct vg_finding *x, char *buf, size_t n)
{
    for (size_t i = 0; i < x->adv->nranges; i++) {
        const struct vg_range *r = &x->adv->ranges[i];
        if (!vg_range_contains(x->adv->eco, r, x->comp->upstream[0] ? x->comp->upstream : x->comp->version)) continue;
        if (r->fixed[0]) return r->fixed;
        if (r->last_affected[0]) return snprintf(buf, n, "after %s", r->last_affected), buf;
        break;
    }
    return "none known";
}

void vg_audit_print(const struct vg_audit *a, FILE *f, bool markdown)
{
    const struct vg_inventory *inv = &a->inv;
    /* the host's own words (os-release, the kernel's) are text from the audited root: escaped */
    fputs(markdown ? "## vigil audit — " : "vigil audit — ", f);
    vg_put_text(f, inv->hostname[0] ? inv->hostname : "?", markdown);
    fputs(" (root ", f);
    vg_put_text(f, inv->root, markdown);
    fputs("), ", f);
    vg_put_text(f, inv->os_pretty[0] ? inv->os_pretty : "unknown OS", markdown);
    fputs(", kernel ", f);
    vg_put_text(f, inv->kernel[0] ? inv->kernel : "?", markdown);
    fprintf(f, ", %zu components, advisories as of %s\n", inv->n, a->date);
    static const char *const h[] = { "COMPONENT", "INSTALLED", "SOURCE", "CVE", "FIXED", "EVIDENCE", "ADVISORY" };
    bool any_backport = false;
    for (int s = VG_SEV_CRITICAL; s >= VG_SEV_NONE; s--) {
        struct vg_table *t = vg_table_new(7, h);
        for (size_t i = 0; i < a->nfindings; i++) {
            const struct vg_finding *x = &a->findings[i];
            if (x->severity != (enum vg_severity)s) continue;
            char inst[160];
            snprintf(inst, sizeof inst, "%s%s", x->comp->version, x->backport_possible ? " *" : "");
            any_backport |= x->backport_possible;
            char ids[64], ev[96];
            evidence_cell(x, ev, sizeof ev);
            const char *cells[] = { x->comp->name, inst, x->comp->source, finding_cves(x, ids, sizeof ids),
                                    x->fixed[0] ? x->fixed : "none known", ev, x->url[0] ? x->url : x->adv->url };
            vg_table_row(t, cells);
        }
        if (vg_table_rows(t)) {
            char up[16];
            vg_strlcpy(up, vg_severity_name((enum vg_severity)s), sizeof up);
            for (char *p = up; *p; p++) *p = (char)(*p - 32 * (*p >= 'a' && *p <= 'z'));
            heading(f, markdown, "%s (%zu)", up, (size_t)vg_table_rows(t));
            print_table(t, f, markdown);
        }
        vg_table_free(t);
    }
    if (any_backport)
        fprintf(f, "\n* distribution package: only the upstream version was compared; the fix may be backported by the distribution.\n");
    if (a->nfixed) {
        static const char *const hx[] = { "COMPONENT", "INSTALLED", "CVE", "UPSTREAM FIX", "EVIDENCE" };
        struct vg_table *t = vg_table_new(5, hx);
        for (size_t i = 0; i < a->nfixed; i++) {
            const struct vg_finding *x = &a->fixed[i];
            char ev[96], fix[80];
            evidence_cell(x, ev, sizeof ev);
            const char *cells[] = { x->comp->name, x->comp->version, x->adv->id, upstream_fix(x, fix, sizeof fix), ev };
            vg_table_row(t, cells);
        }
        heading(f, markdown, "%sFixed by the distribution (%zu)", "", a->nfixed);
        print_table(t, f, markdown);
        vg_table_free(t);
    }
    if (a->nundecided) {
        static const char *const hu[] = { "COMPONENT", "INSTALLED", "CVE", "SEVERITY", "WHY" };
        struct vg_table *t = vg_table_new(5, hu);
        for (size_t i = 0; i < a->nundecided; i++) {
            const struct vg_finding *x = &a->undecided[i];
            const char *cells[] = { x->comp->name, x->comp->version, x->adv->id, vg_severity_name(x->severity), x->note };
            vg_table_row(t, cells);
        }
        heading(f, markdown, "%sNot decided by the distribution (%zu): not findings; update the advisory data "
                             "(`vigil advisories status`)", "", a->nundecided);
        print_table(t, f, markdown);
        vg_table_free(t);
    }
    if (a->noutdated) {
        static const char *const ho[] = { "COMPONENT", "INSTALLED", "WHY", "UPGRADE TO", "REFERENCE" };
        struct vg_table *t = vg_table_new(5, ho);
        for (size_t i = 0; i < a->noutdated; i++) {
            const struct vg_finding *x = &a->outdated[i];
            const char *cells[] = { x->comp->name, x->comp->version, x->note[0] ? x->note : vg_finding_kind_name(x->kind),
                                    x->fixed[0] ? x->fixed : NULL, x->url[0] ? x->url : NULL };
            vg_table_row(t, cells);
        }
        heading(f, markdown, "%sOutdated (not a CVE) (%zu)", "", a->noutdated);
        print_table(t, f, markdown);
        vg_table_free(t);
    }
    if (a->nunknown) {
        static const char *const hk[] = { "COMPONENT", "INSTALLED", "MODEL", "WHY UNKNOWN", "ADVISORY" };
        struct vg_table *t = vg_table_new(5, hk);
        for (size_t i = 0; i < a->nunknown; i++) {
            const struct vg_finding *x = &a->unknown[i];
            const char *cells[] = { x->comp->name, x->comp->version, x->comp->model[0] ? x->comp->model : "?", x->note,
                                    x->url };
            vg_table_row(t, cells);
        }
        heading(f, markdown, "%sAdvisory status unknown (%zu)", "", a->nunknown);
        print_table(t, f, markdown);
        vg_table_free(t);
    }
    if (!a->nfindings && !a->noutdated && !a->nunknown) fprintf(f, "\nNo known vulnerabilities or outdated components.\n");
    fprintf(f, "\nsummary: %zu critical, %zu high, %zu medium, %zu low, %zu outdated, %zu fixed by the distribution, "
               "%zu not decided by it, %zu unknown\n",
            vg_audit_count_at_least(a, VG_SEV_CRITICAL), vg_audit_count_at_least(a, VG_SEV_HIGH) - vg_audit_count_at_least(a, VG_SEV_CRITICAL),
            vg_audit_count_at_least(a, VG_SEV_MEDIUM) - vg_audit_count_at_least(a, VG_SEV_HIGH),
            vg_audit_count_at_least(a, VG_SEV_LOW) - vg_audit_count_at_least(a, VG_SEV_MEDIUM), a->noutdated, a->nfixed,
            a->nundecided, a->nunknown);
}
