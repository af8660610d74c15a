/* import_csaf.c — importer for CSAF 2.0 security advisories (NVIDIA's
 * bulletins).  The product tree is walked (branches, full_product_names,
 * relationships); each product_version leaf gives a family (its branch name:
 * "Tesla", "NVIDIA Container Toolkit", "ConnectX LTS23"), an architecture
 * ("Linux(R535)", "Linux(OFED 23.10)") and a free-text version ("All driver
 * versions prior to 535.183.01", "All versions up to and including 1.17.7",
 * "0.0 to 4.5.2", "12.0 Update 1", "xx.39.5050 or later").  Each
 * vulnerability's known_affected products become version ranges of the
 * component the family maps to, their fixed/first_fixed siblings (same family
 * and architecture) the fixed version.  Only the Linux data-center ("Tesla")
 * rows feed nvidia-driver: Windows, GeForce/RTX/Quadro, vGPU and Cloud Gaming
 * rows are counted as skipped; product names that cannot be turned into a
 * range are listed in the report's `unparsed`. */
#include "advisory/importer.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct prod {
    const char *id, *family, *arch, *text;
    bool reported;            /* skipped/unparsed already noted */
};

struct tree {
    struct prod *p;
    size_t n;
};

static bool detect(const json_t *doc)
{
    const json_t *d = json_object_get(doc, "document");
    return json_is_object(d) && json_object_get(d, "csaf_version");
}

static void add_prod(struct tree *t, const char *id, const char *family, const char *arch, const char *text)
{
    if (!id) return;
    t->p = vg_xrealloc(t->p, (t->n + 1) * sizeof *t->p);
    t->p[t->n++] = (struct prod){ id, family ? family : "", arch ? arch : "", text ? text : "", false };
}

static void walk(struct tree *t, const json_t *branches, const char *arch, int depth)
{
    if (depth > 32) return;
    for (size_t i = 0; i < json_array_size(branches); i++) {
        const json_t *b = json_array_get(branches, i);
        const char *cat = vg_json_str(b, "category", ""), *name = vg_json_str(b, "name", "");
        const char *a = !strcmp(cat, "architecture") ? name : arch;
        const json_t *prod = json_object_get(b, "product");
        if (prod) add_prod(t, vg_json_str(prod, "product_id", NULL), name, a, vg_json_str(prod, "name", ""));
        walk(t, json_object_get(b, "branches"), a, depth + 1);
    }
}

static const struct prod *find_prod(const struct tree *t, const char *id)
{
    for (size_t i = 0; id && i < t->n; i++)
        if (!strcmp(t->p[i].id, id)) return &t->p[i];
    return NULL;
}

static void build_tree(struct tree *t, const json_t *pt)
{
    walk(t, json_object_get(pt, "branches"), "", 0);
    const json_t *fpn = json_object_get(pt, "full_product_names");
    for (size_t i = 0; i < json_array_size(fpn); i++) {
        const json_t *f = json_array_get(fpn, i);
        const char *name = vg_json_str(f, "name", "");
        add_prod(t, vg_json_str(f, "product_id", NULL), name, "", name);
    }
    const json_t *rel = json_object_get(pt, "relationships");
    for (size_t i = 0; i < json_array_size(rel); i++) {
        const json_t *r = json_array_get(rel, i);
        const struct prod *ref = find_prod(t, vg_json_str(r, "product_reference", NULL));
        const json_t *f = json_object_get(r, "full_product_name");
        if (ref) {
            struct prod copy = *ref;
            add_prod(t, vg_json_str(f, "product_id", NULL), copy.family, copy.arch, copy.text);
        }
    }
}

/* ---- free text → versions ---- */

static bool word_start(const char *base, const char *p) { return p == base || !isalnum((unsigned char)p[-1]); }

/* A version at p: [v]digit… or xx.digit…, then [0-9A-Za-z.-]; a CUDA update
 * after it becomes a further field: "12.0 Update 1", "12.6U1", "12.6 U 1"
 * and "v12.4U1" all name 12.x.N. */
static bool version_at(const char *p, char *out, size_t n)
{
    const char *s = p;
    if ((*s == 'v' || *s == 'V') && isdigit((unsigned char)s[1])) s++;
    if (!isdigit((unsigned char)*s) && !(tolower((unsigned char)s[0]) == 'x' && tolower((unsigned char)s[1]) == 'x' &&
                                          s[2] == '.' && isdigit((unsigned char)s[3])))
        return false;
    size_t len = 0;
    while (s[len] && (isalnum((unsigned char)s[len]) || s[len] == '.' || s[len] == '-') && len < n - 1) len++;
    while (len && (s[len - 1] == '.' || s[len - 1] == '-')) len--;
    if (!len || len >= n - 8) return false;
    memcpy(out, s, len);
    out[len] = 0;
    if (out[0] == 'X') out[0] = 'x', out[1] = 'x';
    const char *rest = s + len;
    while (*rest == ' ') rest++;
    char *u_in = strchr(out, 'U');   /* "12.6U1": digits and dots, then U and digits */
    if (u_in && u_in > out && isdigit((unsigned char)u_in[-1]) && isdigit((unsigned char)u_in[1]) &&
        strspn(out, "0123456789.") == (size_t)(u_in - out) && strspn(u_in + 1, "0123456789") == strlen(u_in + 1)) {
        *u_in = '.';
        return true;
    }
    long u = -1;
    if (!strncasecmp(rest, "update ", 7) && isdigit((unsigned char)rest[7])) u = strtol(rest + 7, NULL, 10);
    else if (rest[0] == 'U' && rest[1] == ' ' && isdigit((unsigned char)rest[2])) u = strtol(rest + 2, NULL, 10);
    if (u >= 0 && u < 1000) snprintf(out + len, n - len, ".%ld", u);
    return true;
}

/* The first version at a word start in s (from `from` on). */
static bool first_version(const char *s, const char *from, char *out, size_t n)
{
    for (const char *p = from; *p; p++)
        if (word_start(s, p) && version_at(p, out, n)) return true;
    return false;
}

static bool parse_phrases(const char *text, struct vg_range *r)
{
    memset(r, 0, sizeof *r);
    const char *p;
    if ((p = strcasestr(text, "prior to and including")) &&
        first_version(text, p + 22, r->last_affected, sizeof r->last_affected))
        return true;
    if ((p = strcasestr(text, "prior to")) && first_version(text, p + 8, r->fixed, sizeof r->fixed)) return true;
    if ((p = strcasestr(text, "up to and including")) &&
        first_version(text, p + 19, r->last_affected, sizeof r->last_affected))
        return true;
    /* "up to X": X itself is settled by the fixed sibling (see import_vuln) */
    if ((p = strcasestr(text, "up to")) && first_version(text, p + 5, r->last_affected, sizeof r->last_affected))
        return true;
    char a[64];   /* "X to Y" */
    if ((p = strcasestr(text, " to ")) && version_at(text, a, sizeof a) &&
        first_version(text, p + 4, r->last_affected, sizeof r->last_affected)) {
        if (strcmp(a, "0") && strcmp(a, "0.0")) vg_strlcpy(r->introduced, a, sizeof r->introduced);
        return true;
    }
    return false;
}

/* Turns an affected product name into a range; false when it says nothing
 * usable.  Parenthesised remarks ("(CDI mode only for versions prior to
 * 1.17.5)") are read only when the rest says nothing. */
static bool parse_affected(const char *text, struct vg_range *r)
{
    char bare[512];
    size_t k = 0;
    int depth = 0;
    for (const char *s = text; *s && k < sizeof bare - 1; s++) {
        if (*s == '(') depth++;
        else if (*s == ')' && depth) depth--;
        else if (!depth) bare[k++] = *s;
    }
    bare[k] = 0;
    return parse_phrases(bare, r) || parse_phrases(text, r);
}

/* ---- families → components ---- */

static bool has(const char *s, const char *w) { return strcasestr(s, w) != NULL; }

/* The component a product row belongs to, or NULL with *why set. */
static const char *component_of(const struct prod *p, const char **why)
{
    const char *f = p->family;
    *why = "not a component vigil tracks";
    if (!strcasecmp(f, "Tesla")) {
        if (vg_startswith(p->arch, "Linux")) return "nvidia-driver";
        *why = "Windows driver";
        return NULL;
    }
    if (has(f, "GeForce") || has(f, "RTX") || has(f, "Quadro") || has(f, "Studio") || has(f, "Guest driver") ||
        has(f, "vGPU") || has(f, "Virtual GPU Manager") || has(f, "Cloud Gaming")) {
        *why = "desktop/vGPU/Cloud Gaming driver row (only Linux data-center rows feed nvidia-driver)";
        return NULL;
    }
    if (vg_startswith(f, "ConnectX")) return "connectx-firmware";
    if (vg_startswith(f, "BlueField")) return "bluefield-firmware";
    return vg_component_for_name(f);
}

static bool is_firmware(const char *comp) { return vg_endswith(comp, "-firmware"); }

/* Firmware "39.5050" → "xx.39.5050" (any device family on that train). */
static void firmware_version(char *v, size_t n)
{
    int dots = 0;
    for (const char *s = v; *s; s++) dots += *s == '.';
    if (dots == 1 && isdigit((unsigned char)v[0])) {
        char tmp[64];
        snprintf(tmp, sizeof tmp, "xx.%s", v);
        vg_strlcpy(v, tmp, n);
    }
}

/* The release line a fixed version starts: "xx.39.5050" → "xx.39.0". */
static void line_start(const char *v, char *out, size_t n)
{
    const char *d1 = strchr(v, '.');
    const char *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
    if (!d2) { out[0] = 0; return; }
    snprintf(out, n, "%.*s.0", (int)(d2 - v), v);
}

/* Fills the range's lower bound from the product's branch: driver branch
 * "Linux(R535)" → 535.0, "Linux(OFED 23.10)" → 23.10, firmware LTS trains. */
static void set_lower_bound(const char *comp, const struct prod *p, struct vg_range *r)
{
    if (r->introduced[0]) return;
    const char *par = strchr(p->arch, '(');
    if (!strcmp(comp, "nvidia-driver")) {
        const char *R = par ? strchr(par, 'R') : NULL;
        long br = R ? strtol(R + 1, NULL, 10) : 0;
        const char *v = r->fixed[0] ? r->fixed : r->last_affected;
        if (br <= 0) br = strtol(v, NULL, 10);
        if (br > 0) snprintf(r->introduced, sizeof r->introduced, "%ld.0", br);
    } else if (par && (!strcmp(comp, "mlnx-ofed") || !strcmp(comp, "doca-ofed"))) {
        const char *s = par + 1;
        while (*s && !isdigit((unsigned char)*s)) s++;
        version_at(s, r->introduced, sizeof r->introduced);
    } else if (is_firmware(comp)) {
        firmware_version(r->fixed, sizeof r->fixed);
        firmware_version(r->last_affected, sizeof r->last_affected);
        if (!has(p->family, " GA")) line_start(r->fixed[0] ? r->fixed : r->last_affected, r->introduced, sizeof r->introduced);
    }
}

/* ---- document ---- */

struct ctx {
    const char *file;
    struct vg_advdb *db;
    struct vg_import_report *rep;
    struct tree t;
    char star_only[256];      /* "* These products are only affected by CVE-…": those CVEs */
};

/* ---- device models (NIC firmware) ---- */

/* The CVE ids a document note gives for the products its architecture lists
 * with a '*' ("* These products are only affected by CVE-2025-23351."), into
 * out (space-separated); "" when no note says so. */
static void star_only(const json_t *notes, char *out, size_t n)
{
    out[0] = 0;
    size_t k = 0;
    for (size_t i = 0; i < json_array_size(notes); i++) {
        const char *t = vg_json_str(json_array_get(notes, i), "text", "");
        for (const char *star = strchr(t, '*'); star; star = strchr(star + 1, '*')) {
            const char *only = strcasestr(star, "only affected by");
            if (!only || only - star > 200) continue;
            const char *end = only + 16;
            end += strcspn(end, ".<\n");
            for (const char *c = strstr(only, "CVE-"); c && c < end; c = strstr(c + 4, "CVE-")) {
                size_t l = 4 + strspn(c + 4, "0123456789-");
                while (l > 4 && c[l - 1] == '-') l--;
                if (l >= 13 && l < 24 && k + l + 2 < n) k += (size_t)snprintf(out + k, n - k, "%s%.*s", k ? " " : "", (int)l, c);
            }
            return;
        }
    }
}

/* The models a firmware product row is about, for one CVE: the names its
 * architecture lists ("ConnectX-5*, ConnectX-6 DX, ConnectX-7";
 * "BlueField-2(46)"), less the starred ones when the document says those
 * are affected only by other CVEs; else the row's family when it names a
 * model ("ConnectX-4 LX" under "N/A(32)").  "" = every model. */
static void models_of(const struct prod *p, const char *cve, const char *only, char *out, size_t n)
{
    size_t k = 0;
    out[0] = 0;
    bool named = false;
    for (const char *s = p->arch; *s;) {
        size_t l = strcspn(s, ",");
        char tok[64], key[32];
        size_t t = 0;
        bool star = false;
        int depth = 0;
        for (size_t i = 0; i < l && t + 1 < sizeof tok; i++) {
            char ch = s[i];
            if (ch == '(') depth++;
            else if (ch == ')' && depth) depth--;
            else if (ch == '*') star = true;
            else if (!depth && ch != '|' && ch != ';') tok[t++] = ch;
        }
        while (t && tok[t - 1] == ' ') t--;
        tok[t] = 0;
        const char *name = tok + strspn(tok, " ");
        vg_nic_model_key(name, key, sizeof key);
        if (key[0]) {
            named = true;
            if (!(star && only[0] && cve && !vg_word_in(only, cve)) && k + strlen(name) + 3 < n)
                k += (size_t)snprintf(out + k, n - k, "%s%s", k ? ", " : "", name);
        }
        s += l + (s[l] == ',');
    }
    if (named) {
        if (!k) vg_strlcpy(out, "none", n);   /* every listed model is excluded for this CVE */
        return;
    }
    char key[32];
    vg_nic_model_key(p->family, key, sizeof key);
    if (key[0]) {
        for (const char *f = p->family; *f && k + 1 < n; f++)
            if (*f != '|' && *f != ';') out[k++] = *f;
        out[k] = 0;
    }
}

static const char *note_text(const json_t *notes, const char *category)
{
    for (size_t i = 0; i < json_array_size(notes); i++) {
        const json_t *n = json_array_get(notes, i);
        if (!strcmp(vg_json_str(n, "category", ""), category)) return vg_json_str(n, "text", NULL);
    }
    return NULL;
}

static void scores(const json_t *v, struct vg_advisory *a)
{
    const json_t *sc = json_object_get(v, "scores");
    a->severity = VG_SEV_MEDIUM;   /* unscored */
    bool seen = false;
    for (size_t i = 0; i < json_array_size(sc); i++) {
        const json_t *c = json_object_get(json_array_get(sc, i), "cvss_v3");
        if (!c) continue;
        const json_t *bs = json_object_get(c, "baseScore");
        enum vg_severity sev;
        if (json_is_number(bs) && json_number_value(bs) > a->cvss) a->cvss = json_number_value(bs);
        if (vg_severity_parse(vg_json_str(c, "baseSeverity", NULL), &sev) && (!seen || sev > a->severity)) {
            a->severity = sev;
            seen = true;
        }
    }
}

/* The fixed sibling of an affected product in this vulnerability. */
static const struct prod *fixed_sibling(struct ctx *c, const json_t *status, const struct prod *aff)
{
    static const char *const keys[] = { "first_fixed", "fixed" };
    for (size_t k = 0; k < 2; k++) {
        const json_t *ids = json_object_get(status, keys[k]);
        for (size_t i = 0; i < json_array_size(ids); i++) {
            const struct prod *q = find_prod(&c->t, json_string_value(json_array_get(ids, i)));
            if (q && !strcmp(q->family, aff->family) && !strcmp(q->arch, aff->arch)) return q;
        }
    }
    return NULL;
}

static void import_vuln(struct ctx *c, const json_t *v, const struct vg_advisory *base)
{
    struct vg_advisory per[16];
    size_t nper = 0;
    const json_t *status = json_object_get(v, "product_status");
    const json_t *aff = json_object_get(status, "known_affected");
    for (size_t i = 0; i < json_array_size(aff); i++) {
        struct prod *p = (struct prod *)find_prod(&c->t, json_string_value(json_array_get(aff, i)));
        if (!p) {
            vg_strlist_add(&c->rep->warnings, "%s: known_affected[%zu]: product id not in the product tree", c->file, i);
            continue;
        }
        const char *why, *comp = component_of(p, &why);
        if (!comp) {
            if (!p->reported) {
                c->rep->products_skipped++;
                vg_strlist_add(&c->rep->skipped, "%s: %s (%s): %s", c->file, p->family, p->arch, why);
                p->reported = true;
            }
            continue;
        }
        struct vg_range r;
        if (!parse_affected(p->text, &r)) {
            if (!p->reported) {
                vg_strlist_add(&c->rep->unparsed, "%s: %s (%s): \"%s\"", c->file, p->family, p->arch, p->text);
                p->reported = true;
            }
            continue;
        }
        const struct prod *q = r.fixed[0] ? NULL : fixed_sibling(c, status, p);
        if (q) first_version(q->text, q->text, r.fixed, sizeof r.fixed);
        if (r.fixed[0] && !strcmp(r.fixed, r.last_affected)) r.last_affected[0] = 0;   /* "up to X", fixed X */
        set_lower_bound(comp, p, &r);
        if (is_firmware(comp)) {
            models_of(p, base->id[0] ? base->id : NULL, c->star_only, r.models, sizeof r.models);
            if (!strcmp(r.models, "none")) continue;   /* this row's models are not affected by this CVE */
        }
        size_t k = 0;
        while (k < nper && strcmp(per[k].component, comp)) k++;
        if (k == nper) {
            if (nper == sizeof per / sizeof per[0]) continue;
            per[nper] = *base;
            vg_strlcpy(per[nper].component, comp, sizeof per[nper].component);
            per[nper].eco = !strcmp(comp, "nvidia-driver") ? VG_ECO_NVIDIA : VG_ECO_GENERIC;
            per[nper].ranges = NULL;
            per[nper].nranges = 0;
            nper++;
        }
        per[k].ranges = vg_xrealloc(per[k].ranges, (per[k].nranges + 1) * sizeof r);
        per[k].ranges[per[k].nranges++] = r;
    }
    for (size_t k = 0; k < nper; k++) {
        vg_import_add(c->db, c->rep, &per[k]);
        free(per[k].ranges);
    }
}

static int import(const json_t *doc, const char *file, struct vg_advdb *db, struct vg_import_report *rep, char *err,
                  size_t errlen)
{
    (void)err;
    (void)errlen;
    const json_t *d = json_object_get(doc, "document");
    const json_t *pt = json_object_get(doc, "product_tree");
    const json_t *vulns = json_object_get(doc, "vulnerabilities");
    if (!json_is_object(pt) || !json_is_array(vulns)) {
        vg_strlist_add(&rep->warnings, "%s: %s: missing; document skipped", file,
                       json_is_object(pt) ? "vulnerabilities" : "product_tree");
        rep->skipped_files++;
        return 0;
    }
    struct ctx c = { file, db, rep, { NULL, 0 }, "" };
    build_tree(&c.t, pt);
    star_only(json_object_get(d, "notes"), c.star_only, sizeof c.star_only);
    const json_t *tr = json_object_get(d, "tracking");
    const char *bid = vg_json_str(tr, "id", "");
    struct vg_advisory base;
    memset(&base, 0, sizeof base);
    vg_strlcpy(base.published, vg_json_str(tr, "initial_release_date", ""), sizeof base.published);
    if (strlen(base.published) > 10) base.published[10] = 0;
    const json_t *refs = json_object_get(d, "references");
    for (size_t i = 0; i < json_array_size(refs) && !base.url[0]; i++)
        if (!strcmp(vg_json_str(json_array_get(refs, i), "category", ""), "self"))
            vg_strlcpy(base.url, vg_json_str(json_array_get(refs, i), "url", ""), sizeof base.url);
    if (!base.url[0] && vg_startswith(vg_json_str(json_object_get(d, "publisher"), "name", ""), "NVIDIA") && *bid)
        snprintf(base.url, sizeof base.url, "https://nvidia.custhelp.com/app/answers/detail/a_id/%s", bid);
    if (!base.url[0]) vg_strlcpy(base.url, vg_json_str(json_object_get(d, "publisher"), "namespace", ""), sizeof base.url);
    for (size_t i = 0; i < json_array_size(vulns); i++) {
        const json_t *v = json_array_get(vulns, i);
        struct vg_advisory a = base;
        const char *cve = vg_json_str(v, "cve", NULL);
        if (cve) vg_strlcpy(a.id, cve, sizeof a.id);
        else snprintf(a.id, sizeof a.id, "NVIDIA-%s-%zu", bid, i + 1);
        const json_t *notes = json_object_get(v, "notes");
        const char *sum = note_text(notes, "summary");
        if (!sum) sum = note_text(notes, "description");
        if (!sum) sum = vg_json_str(v, "title", vg_json_str(d, "title", ""));
        a.summary = (char *)sum;
        scores(v, &a);
        if (!a.url[0]) {
            vg_strlist_add(&rep->warnings, "%s: document: no URL for the bulletin; vulnerability %zu skipped", file, i);
            continue;
        }
        import_vuln(&c, v, &a);
    }
    free(c.t.p);
    return 0;
}

const struct vg_importer vg_importer_csaf = { "csaf", detect, import, NULL, NULL };
