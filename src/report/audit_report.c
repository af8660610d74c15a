/* audit_report.c — runs the match of an inventory against the advisory
 * database and renders the result: one JSON document, or a table grouped by
 * severity (terminal or Markdown) with an "Outdated (not a CVE)" section. */
#include "report/audit_report.h"
#include "report/table.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdlib.h>
#include <string.h>

static void on_finding(const struct vg_finding *f, void *ctx)
{
    struct vg_audit *a = ctx;
    bool cve = f->kind == VG_FIND_CVE;
    struct vg_finding **v = cve ? &a->findings : &a->outdated;
    size_t *n = cve ? &a->nfindings : &a->noutdated, *cap = cve ? &a->cap_f : &a->cap_o;
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        *v = vg_xrealloc(*v, *cap * sizeof **v);
    }
    (*v)[(*n)++] = *f;
}

static int finding_cmp(const void *x, const void *y)
{
    const struct vg_finding *a = x, *b = y;
    if (a->severity != b->severity) return a->severity > b->severity ? -1 : 1;
    int c = strcmp(a->comp->name, b->comp->name);
    if (c) return c;
    if (a->comp != b->comp) return a->comp < b->comp ? -1 : 1;
    return strcmp(a->adv ? a->adv->id : "", b->adv ? b->adv->id : "");
}

void vg_audit_run(struct vg_audit *a, const struct vg_advdb *db)
{
    for (size_t i = 0; i < a->inv.n; i++) vg_advdb_match(db, &a->inv.items[i], on_finding, a);
    if (a->nfindings > 1) qsort(a->findings, a->nfindings, sizeof *a->findings, finding_cmp);
    if (a->noutdated > 1) qsort(a->outdated, a->noutdated, sizeof *a->outdated, finding_cmp);
    if (!a->generated_ms) a->generated_ms = vg_now_ms();
}

void vg_audit_free(struct vg_audit *a)
{
    free(a->findings);
    free(a->outdated);
    vg_inventory_free(&a->inv);
}

size_t vg_audit_count_at_least(const struct vg_audit *a, enum vg_severity sev)
{
    size_t n = 0;
    for (size_t i = 0; i < a->nfindings; i++) n += a->findings[i].severity >= sev;
    return n;
}

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
        vg_json_set_str(o, "source", c->source);
        vg_json_set_str(o, "detail", c->detail);
        json_array_append_new(arr, o);
    }
    return arr;
}

static json_t *finding_json(const struct vg_finding *f)
{
    json_t *o = json_object();
    if (f->kind == VG_FIND_CVE) vg_json_set_str(o, "id", f->adv->id);
    else vg_json_set_str(o, "kind", vg_finding_kind_name(f->kind));
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
    json_t *fa = json_array(), *oa = json_array();
    for (size_t i = 0; i < a->nfindings; i++) json_array_append_new(fa, finding_json(&a->findings[i]));
    for (size_t i = 0; i < a->noutdated; i++) json_array_append_new(oa, finding_json(&a->outdated[i]));
    json_object_set_new(doc, "findings", fa);
    json_object_set_new(doc, "outdated", oa);
    json_t *sum = json_object();
    for (int s = VG_SEV_CRITICAL; s >= VG_SEV_LOW; s--) {
        size_t n = 0;
        for (size_t i = 0; i < a->nfindings; i++) n += a->findings[i].severity == (enum vg_severity)s;
        json_object_set_new(sum, vg_severity_name((enum vg_severity)s), json_integer((json_int_t)n));
    }
    json_object_set_new(sum, "outdated", json_integer((json_int_t)a->noutdated));
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

void vg_audit_print(const struct vg_audit *a, FILE *f, bool markdown)
{
    const struct vg_inventory *inv = &a->inv;
    fprintf(f, "%svigil audit — %s (root %s), %s, kernel %s, %zu components, advisories as of %s\n",
            markdown ? "## " : "", inv->hostname[0] ? inv->hostname : "?", inv->root,
            inv->os_pretty[0] ? inv->os_pretty : "unknown OS", inv->kernel[0] ? inv->kernel : "?", inv->n, a->date);
    static const char *const h[] = { "COMPONENT", "INSTALLED", "SOURCE", "CVE", "FIXED", "ADVISORY" };
    bool any_backport = false;
    for (int s = VG_SEV_CRITICAL; s >= VG_SEV_NONE; s--) {
        struct vg_table *t = vg_table_new(6, h);
        for (size_t i = 0; i < a->nfindings; i++) {
            const struct vg_finding *x = &a->findings[i];
            if (x->severity != (enum vg_severity)s) continue;
            char inst[160];
            snprintf(inst, sizeof inst, "%s%s", x->comp->version, x->backport_possible ? " *" : "");
            any_backport |= x->backport_possible;
            const char *cells[] = { x->comp->name, inst, x->comp->source, x->adv->id,
                                    x->fixed[0] ? x->fixed : "none known", x->url[0] ? x->url : x->adv->url };
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
    if (!a->nfindings && !a->noutdated) fprintf(f, "\nNo known vulnerabilities or outdated components.\n");
    fprintf(f, "\nsummary: %zu critical, %zu high, %zu medium, %zu low, %zu outdated\n",
            vg_audit_count_at_least(a, VG_SEV_CRITICAL), vg_audit_count_at_least(a, VG_SEV_HIGH) - vg_audit_count_at_least(a, VG_SEV_CRITICAL),
            vg_audit_count_at_least(a, VG_SEV_MEDIUM) - vg_audit_count_at_least(a, VG_SEV_HIGH),
            vg_audit_count_at_least(a, VG_SEV_LOW) - vg_audit_count_at_least(a, VG_SEV_MEDIUM), a->noutdated);
}
