/* test_amdcve.c — AMD's advisories: the CVE JSON 5 importer on AMD's real
 * records (data/sources/amd-cve/, copied from CVEProject/cvelistV5; sources
 * in data/sources/SOURCES), AMD's free-text fixes ("ROCm 6.3.1" read, "BKC
 * 26", "ROC 6.3", "DME …", "No fix planned" kept undecided with AMD's
 * words), the Instinct part key (™ in any encoding or spacing), and the
 * match per part: a ROCm release affected on MI300X, not on MI250, unknown
 * where AMD names no release or the installed version could not be read. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "advisory/advdb_int.h"
#include "advisory/importer.h"
#include "util/rootfs.h"
#include "util/strutil.h"

#define RECORDS "data/sources/amd-cve"

static void test_fix_text(void **state)
{
    (void)state;
    char v[64];
    assert_true(vg_amd_fix_version("ROCm 6.3.1", v, sizeof v));
    assert_string_equal(v, "6.3.1");
    assert_true(vg_amd_fix_version("ROCm 6.3", v, sizeof v));
    assert_string_equal(v, "6.3");
    const char *no[] = { "ROC 6.3",   "BKC 26",      "No fix planned", "DME v1.4.1.2 and v1.4.0.1", "MI300API 1.0.0.5",
                         "ROCm 6",    "ROCm 6.3.",   "ROCm 6..3",      "ROCm 6.3.1 and later",      "rocm 6.3",
                         "ROCm .6.3", "ROCm 6.3.1 ", "",               "Contact your AMD Customer Engineering representative" };
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        if (vg_amd_fix_version(no[i], v, sizeof v)) fail_msg("'%s' read as a ROCm release", no[i]);
    char tiny[4];
    assert_false(vg_amd_fix_version("ROCm 6.3.1", tiny, sizeof tiny));   /* does not fit: not cut */
}

static void test_part_key(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        { "AMD Instinct™ MI300X", "mi300x" },      { "AMD Instinct™  MI300X", "mi300x" },   /* CVE-2024-21950's double space */
        { "AMD Instinctâ„¢ MI210", "mi210" },        /* the trademark sign encoded twice, as one record version has it */
        { "MI300X-HF", "mi300x" },                  { "AMD Instinct MI350 OAM", "mi350" },
        { "AMD Radeon™ RX 7000 Series Graphics Products", "" }, { "AMD EPYC™ 9004 Processors", "" },
        { "XMI300X", "" },                          { "MI-25", "" },   { "", "" },
    };
    char key[32];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        vg_amd_part_key(cases[i][0], key, sizeof key);
        if (strcmp(key, cases[i][1])) fail_msg("'%s' → '%s', want '%s'", cases[i][0], key, cases[i][1]);
    }
    assert_string_equal(vg_amd_part_for_device(0x74a1), "MI300X");
    assert_string_equal(vg_amd_part_for_device(0x74a9), "MI300X");   /* MI300X-HF */
    assert_string_equal(vg_amd_part_for_device(0x75a3), "MI355X");
    assert_null(vg_amd_part_for_device(0x1002));
}

static struct vg_advdb *imported(struct vg_import_report *rep)
{
    struct vg_advdb *db = vg_advdb_new();
    char err[512] = "";
    memset(rep, 0, sizeof *rep);
    if (vg_import_path(RECORDS, db, rep, err, sizeof err)) fail_msg("%s", err);
    return db;
}

static const struct vg_advisory *find(const struct vg_advdb *db, const char *id)
{
    for (size_t i = 0; i < vg_advdb_count(db); i++)
        if (!strcmp(vg_advdb_get(db, i)->id, id)) return vg_advdb_get(db, i);
    fail_msg("no %s", id);
    return NULL;
}

static void test_import(void **state)
{
    (void)state;
    struct vg_import_report rep;
    struct vg_advdb *db = imported(&rep);
    assert_int_equal(rep.files, 6);
    assert_int_equal(vg_advdb_count(db), 6);
    assert_int_equal(rep.ranges_added, 27);
    assert_int_equal(rep.products_skipped, 4);   /* the Radeon rows of CVE-2023-31324 and CVE-2024-36323 */
    assert_int_equal(rep.unparsed.n, 12);        /* BKC 26, ROC 6.3 (2), DME (9) */
    const struct vg_advisory *a = find(db, "CVE-2026-0428");
    assert_string_equal(a->component, "rocm");
    assert_int_equal(a->severity, VG_SEV_LOW);
    assert_true(a->cvss > 1.79 && a->cvss < 1.81);
    assert_string_equal(a->url, "https://www.amd.com/en/resources/product-security/bulletin/AMD-SB-6027.html");
    assert_string_equal(a->published, "2026-05-15");
    assert_true(vg_startswith(a->summary, "Insufficient parameter sanitization in TEE SOC Driver"));
    assert_int_equal(a->nranges, 4);
    int seen = 0;
    for (size_t i = 0; i < a->nranges; i++) {
        const struct vg_range *r = &a->ranges[i];
        if (!strcmp(r->models, "MI300A")) {
            assert_string_equal(r->fixed, "");
            assert_string_equal(r->undecided, "AMD names the fix for MI300A as 'BKC 26', not a ROCm release");
            seen |= 1;
        } else if (!strcmp(r->models, "MI308X")) {
            assert_string_equal(r->fixed, "6.4.2");
            seen |= 2;
        } else {
            assert_string_equal(r->fixed, "6.3.1");   /* MI300X, MI325X */
            assert_string_equal(r->undecided, "");
            seen |= 4;
        }
    }
    assert_int_equal(seen, 7);
    a = find(db, "CVE-2023-31313");   /* CVSS 3.1 only */
    assert_int_equal(a->severity, VG_SEV_HIGH);
    a = find(db, "CVE-2024-21950");
    assert_string_equal(a->ranges[0].undecided,
                        "AMD plans no fix for MI300X (the record says 'No fix planned' and names no release)");
    vg_import_report_free(&rep);
    vg_advdb_free(db);
}

/* Records that are not AMD's, rejected or broken. */
static void test_import_other(void **state)
{
    (void)state;
    char *text, err[512];
    size_t len;
    assert_int_equal(vg_read_file(NULL, RECORDS "/CVE-2026-0428.json", 1 << 20, &text, &len), 0);
    json_error_t je;
    json_t *doc = json_loads(text, 0, &je);
    free(text);
    assert_non_null(doc);
    const struct vg_importer *imp = vg_importer_for(doc);
    assert_non_null(imp);
    assert_string_equal(imp->name, "cve5");
    json_t *meta = json_object_get(doc, "cveMetadata");
    struct vg_import_report rep;
    memset(&rep, 0, sizeof rep);
    struct vg_advdb *db = vg_advdb_new();
    json_object_set_new(meta, "assignerShortName", json_string("mitre"));   /* another CNA's record */
    assert_int_equal(imp->import(doc, "x.json", db, &rep, err, sizeof err), 0);
    assert_int_equal(vg_advdb_count(db), 0);
    assert_string_equal(rep.skipped.v[0], "x.json: CVE-2026-0428: CNA 'mitre', not AMD");
    json_object_set_new(meta, "assignerShortName", json_string("AMD"));
    json_object_set_new(meta, "state", json_string("REJECTED"));
    assert_int_equal(imp->import(doc, "x.json", db, &rep, err, sizeof err), 0);
    assert_int_equal(vg_advdb_count(db), 0);
    json_object_set_new(meta, "state", json_string("PUBLISHED"));
    json_object_del(meta, "cveId");
    assert_int_equal(imp->import(doc, "x.json", db, &rep, err, sizeof err), -1);
    assert_string_equal(err, "x.json: cveMetadata.cveId: missing or not a CVE id");
    json_object_set_new(meta, "cveId", json_string("CVE-2026-0428"));
    json_object_del(json_object_get(doc, "containers"), "cna");
    assert_int_equal(imp->import(doc, "x.json", db, &rep, err, sizeof err), -1);
    assert_string_equal(err, "x.json: containers.cna: missing");
    json_decref(doc);
    vg_import_report_free(&rep);
    vg_advdb_free(db);
}

struct got {
    char cves[256], unknown[512];
};

static void on_finding(const struct vg_finding *f, void *ctx)
{
    struct got *g = ctx;
    char *dst = f->kind == VG_FIND_UNKNOWN ? g->unknown : g->cves;
    size_t cap = f->kind == VG_FIND_UNKNOWN ? sizeof g->unknown : sizeof g->cves, l = strlen(dst);
    if (f->kind == VG_FIND_UNKNOWN) snprintf(dst + l, cap - l, "%s[%s] ", f->adv->id, f->note);
    else snprintf(dst + l, cap - l, "%s<%s ", f->adv->id, f->fixed);
}

static struct got match(const struct vg_advdb *db, const char *version, const char *model)
{
    struct vg_component c;
    memset(&c, 0, sizeof c);
    vg_strlcpy(c.name, "rocm", sizeof c.name);
    vg_strlcpy(c.version, version, sizeof c.version);
    vg_strlcpy(c.model, model, sizeof c.model);
    c.eco = VG_ECO_GENERIC;
    struct got g = { "", "" };
    vg_advdb_match(db, &c, on_finding, &g);
    return g;
}

static void test_match_per_part(void **state)
{
    (void)state;
    struct vg_import_report rep;
    struct vg_advdb *db = imported(&rep);
    struct got g = match(db, "6.1.2", "MI300X");
    assert_string_equal(g.cves, "CVE-2023-31324<6.4 CVE-2024-36323<6.3 CVE-2026-0428<6.3.1 ");
    assert_string_equal(g.unknown,
                        "CVE-2024-21950[CVE-2024-21950: AMD plans no fix for MI300X (the record says 'No fix planned' "
                        "and names no release)] CVE-2026-0481[CVE-2026-0481: AMD names the fix for MI300X as 'DME "
                        "v1.4.1.2 and v1.4.0.1', not a ROCm release] ");
    g = match(db, "6.4.2", "MI300X");   /* past every ROCm fix AMD names for MI300X */
    assert_string_equal(g.cves, "");
    g = match(db, "6.3.1", "MI250");    /* CVE-2026-0428 is not about MI250; 31313 and 31324 are */
    assert_string_equal(g.cves, "CVE-2023-31313<6.4.2 CVE-2023-31324<6.4 ");
    g = match(db, "6.2.0", "MI325X");   /* 36323 names 'ROC 6.3' for MI325X: undecided, never a pass */
    assert_string_equal(g.cves, "CVE-2026-0428<6.3.1 ");
    assert_non_null(strstr(g.unknown, "CVE-2024-36323: AMD names the fix for MI325X as 'ROC 6.3', not a ROCm release"));
    g = match(db, "unknown", "MI355X");   /* an unreadable install: every advisory about the part is unknown */
    assert_string_equal(g.cves, "");
    assert_string_equal(g.unknown, "CVE-2026-0481[CVE-2026-0481: the installed version could not be read] ");
    g = match(db, "6.1.2", "");   /* the node's part unknown (an image): every part's ranges count */
    assert_non_null(strstr(g.cves, "CVE-2026-0428<"));
    assert_non_null(strstr(g.cves, "CVE-2023-31313<6.4.2"));
    vg_import_report_free(&rep);
    vg_advdb_free(db);
}

/* models and the undecided reason survive the JSON file and the index. */
static void test_round_trip(void **state)
{
    (void)state;
    struct vg_import_report rep;
    struct vg_advdb *db = imported(&rep), *back;
    char dir[] = "/tmp/vigil-amdcve-XXXXXX", json[64], idx[64], err[512];
    assert_non_null(mkdtemp(dir));
    snprintf(json, sizeof json, "%s/db.json", dir);
    snprintf(idx, sizeof idx, "%s/db.idx", dir);
    assert_int_equal(vg_advdb_save(db, json, err, sizeof err), 0);
    for (int via = 0; via < 2; via++) {   /* the index beside it, then the JSON alone */
        if (via) unlink(idx);
        assert_int_equal(vg_advdb_load(json, &back, err, sizeof err), 0);
        struct got g = match(back, "6.1.2", "MI300X");
        assert_string_equal(g.cves, "CVE-2023-31324<6.4 CVE-2024-36323<6.3 CVE-2026-0428<6.3.1 ");
        assert_non_null(strstr(g.unknown, "'DME v1.4.1.2 and v1.4.0.1'"));
        vg_advdb_free(back);
    }
    unlink(json);
    rmdir(dir);
    vg_import_report_free(&rep);
    vg_advdb_free(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fix_text),        cmocka_unit_test(test_part_key),       cmocka_unit_test(test_import),
        cmocka_unit_test(test_import_other),    cmocka_unit_test(test_match_per_part), cmocka_unit_test(test_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
