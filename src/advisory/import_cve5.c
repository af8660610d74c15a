/* import_cve5.c — importer for CVE JSON 5 records (the CVE Program's
 * cvelistV5, https://github.com/CVEProject/cve-schema) whose CNA is AMD:
 * AMD publishes no CSAF or OSV feed, its records are the machine-readable
 * form of its bulletins.  Each affected[] entry of an AMD Instinct product
 * ("AMD Instinct™ MI300X"; the part read by vg_amd_part_key, whatever the
 * trademark sign's encoding or spacing) becomes a range of the `rocm`
 * component about that part.  AMD writes the fix as free text under
 * status "unaffected": "ROCm 6.3.1" and "ROCm 6.3" are read as the first
 * fixed release; anything else ("BKC 26", "DME v1.4.1.2 and v1.4.0.1", a
 * firmware bundle, "ROC 6.3", "No fix planned", "Contact your AMD Customer
 * Engineering representative") names no ROCm release, and the range is kept
 * undecided with AMD's own words: the audit says the status is unknown for
 * that part, never a pass.  Other products (Radeon, EPYC, Ryzen) and other
 * CNAs' records are skipped and counted.  Severity and CVSS come from the
 * CNA's cvssV4_0, else cvssV3_1/3_0; the URL from its first reference (AMD's
 * bulletin). */
#include "advisory/importer.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool detect(const json_t *doc)
{
    const char *type = vg_json_str(doc, "dataType", NULL), *ver = vg_json_str(doc, "dataVersion", NULL);
    return type && !strcmp(type, "CVE_RECORD") && ver && ver[0] == '5';
}

bool vg_amd_fix_version(const char *text, char *ver, size_t n)
{
    if (!text || strncmp(text, "ROCm ", 5)) return false;
    const char *v = text + 5;
    size_t l = strspn(v, "0123456789.");
    /* digits separated by single dots, at least "X.Y", nothing after */
    if (l < 3 || v[l] || !isdigit((unsigned char)v[0]) || v[l - 1] == '.' || strstr(v, "..") || !strchr(v, '.') ||
        l >= n)
        return false;
    memcpy(ver, v, l);
    ver[l] = 0;
    return true;
}

/* The CNA's score: cvssV4_0, else cvssV3_1, else cvssV3_0. */
static void score(const json_t *cna, struct vg_advisory *a)
{
    static const char *const keys[] = { "cvssV4_0", "cvssV3_1", "cvssV3_0" };
    const json_t *metrics = json_object_get(cna, "metrics");
    a->severity = VG_SEV_MEDIUM;   /* unscored */
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        for (size_t i = 0; i < json_array_size(metrics); i++) {
            const json_t *m = json_object_get(json_array_get(metrics, i), keys[k]);
            if (!json_is_object(m)) continue;
            const char *sev = vg_json_str(m, "baseSeverity", NULL);
            char low[16];
            vg_strlcpy(low, sev ? sev : "", sizeof low);
            for (char *p = low; *p; p++) *p = (char)tolower((unsigned char)*p);
            if (sev && vg_severity_parse(low, &a->severity)) a->cvss = json_number_value(json_object_get(m, "baseScore"));
            return;
        }
}

/* A range's free text without the characters the index keeps its fields
 * apart with. */
static void plain(char *dst, size_t n, const char *fmt, const char *part, const char *text)
{
    char buf[256];
    snprintf(buf, sizeof buf, fmt, part, text);
    size_t k = 0;
    for (const char *p = buf; *p && k < n - 1; p++)
        if (!strchr("|;\t\n\\", *p)) dst[k++] = *p;
    dst[k] = 0;
}

/* The ranges one Instinct entry's versions[] give (appended to rs). */
static void entry_ranges(const json_t *versions, const char *part, const char *file, struct vg_import_report *rep,
                         struct vg_range **rs, size_t *n)
{
    for (size_t i = 0; i < json_array_size(versions); i++) {
        const json_t *v = json_array_get(versions, i);
        const char *text = vg_json_str(v, "version", ""), *status = vg_json_str(v, "status", "");
        struct vg_range r;
        memset(&r, 0, sizeof r);
        vg_strlcpy(r.models, part, sizeof r.models);
        if (!strcmp(status, "unaffected") && vg_amd_fix_version(text, r.fixed, sizeof r.fixed)) {
            /* fixed from that release on: every earlier release of the part is affected */
        } else if (!strcasecmp(text, "No fix planned")) {
            plain(r.undecided, sizeof r.undecided, "AMD plans no fix for %s (the record says '%s' and names no release)", part,
                  text);
        } else {
            plain(r.undecided, sizeof r.undecided, "AMD names the fix for %s as '%s', not a ROCm release", part, text);
            vg_strlist_add(&rep->unparsed, "%s: %s: \"%s\" (%s)", file, part, text, status);
        }
        *rs = vg_xrealloc(*rs, (*n + 1) * sizeof **rs);
        (*rs)[(*n)++] = r;
    }
}

static int import(const json_t *doc, const char *file, struct vg_advdb *db, struct vg_import_report *rep, char *err,
                  size_t errlen)
{
    const json_t *meta = json_object_get(doc, "cveMetadata"), *cna = json_object_get(json_object_get(doc, "containers"), "cna");
    const char *id = vg_json_str(meta, "cveId", NULL), *state = vg_json_str(meta, "state", "");
    if (!id || strncmp(id, "CVE-", 4) || strlen(id) >= sizeof ((struct vg_advisory *)0)->id) {
        snprintf(err, errlen, "%s: cveMetadata.cveId: missing or not a CVE id", file);
        return -1;
    }
    if (!strcmp(state, "REJECTED")) {
        vg_strlist_add(&rep->skipped, "%s: %s: rejected", file, id);
        return 0;
    }
    if (!json_is_object(cna)) {
        snprintf(err, errlen, "%s: containers.cna: missing", file);
        return -1;
    }
    const char *cna_name = vg_json_str(meta, "assignerShortName", "");
    const json_t *aff = json_object_get(cna, "affected");
    if (strcmp(cna_name, "AMD")) {   /* only AMD's records name Instinct parts as vigil reads them */
        rep->products_skipped += json_array_size(aff);
        vg_strlist_add(&rep->skipped, "%s: %s: CNA '%s', not AMD", file, id, cna_name);
        return 0;
    }
    struct vg_advisory a;
    memset(&a, 0, sizeof a);
    vg_strlcpy(a.id, id, sizeof a.id);
    vg_strlcpy(a.component, "rocm", sizeof a.component);
    a.eco = VG_ECO_GENERIC;
    score(cna, &a);
    const char *pub = vg_json_str(meta, "datePublished", "");
    snprintf(a.published, sizeof a.published, "%.10s", pub);
    const char *url = vg_json_str(json_array_get(json_object_get(cna, "references"), 0), "url", NULL);
    if (url) vg_strlcpy(a.url, url, sizeof a.url);
    else snprintf(a.url, sizeof a.url, "https://www.cve.org/CVERecord?id=%s", id);
    const json_t *descs = json_object_get(cna, "descriptions");
    for (size_t i = 0; i < json_array_size(descs) && !a.summary; i++) {
        const char *lang = vg_json_str(json_array_get(descs, i), "lang", "");
        if (!strncmp(lang, "en", 2)) a.summary = (char *)vg_json_str(json_array_get(descs, i), "value", NULL);
    }
    for (size_t i = 0; i < json_array_size(aff); i++) {
        const json_t *e = json_array_get(aff, i);
        const char *product = vg_json_str(e, "product", "");
        char key[32];
        vg_amd_part_key(product, key, sizeof key);
        if (!strcasestr(product, "Instinct") || !key[0]) {
            rep->products_skipped++;
            vg_strlist_add(&rep->skipped, "%s: %s: not an AMD Instinct GPU", file, product);
            continue;
        }
        char part[16];
        vg_strlcpy(part, key, sizeof part);
        for (char *p = part; *p; p++) *p = (char)toupper((unsigned char)*p);   /* "mi300x" → "MI300X" */
        entry_ranges(json_object_get(e, "versions"), part, file, rep, &a.ranges, &a.nranges);
    }
    if (a.nranges) vg_import_add(db, rep, &a);
    free(a.ranges);
    return 0;
}

const struct vg_importer vg_importer_cve5 = { "cve5", detect, import, NULL, NULL };
