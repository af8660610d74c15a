/* test_csaf.c — the CSAF 2.0 importer: product-name patterns on a small
 * hand-made document, missing fields, and the whole bundled NVIDIA corpus
 * (data/sources/nvidia-csaf) checked against the sourced facts in
 * tests/fixtures/advisories.tsv.
 *
 * Sample: EVERY row of the TSV whose component is the Linux data-center
 * driver and a CVE id (127 rows; the 6 LIFECYCLE rows are tested in
 * test_advdb.c), plus every NVIDIA Container Toolkit / GPU Operator row.
 * For each row: the version just below the fixed one on that branch (last
 * field minus one) must be affected by that CVE with that fixed version, and
 * the fixed version itself must not be. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "advisory/importer.h"
#include "util/strutil.h"

struct hit {
    const char *id;
    char fixed[64];
    int found;
};

static void on_finding(const struct vg_finding *f, void *ctx)
{
    struct hit *h = ctx;
    if (f->kind == VG_FIND_CVE && !strcmp(f->adv->id, h->id)) {
        h->found++;
        vg_strlcpy(h->fixed, f->fixed, sizeof h->fixed);
    }
}

static int affected_model(const struct vg_advdb *db, const char *comp, enum vg_ecosystem eco, const char *version,
                          const char *model, const char *id, char *fixed)
{
    struct vg_component c;
    memset(&c, 0, sizeof c);
    vg_strlcpy(c.model, model ? model : "", sizeof c.model);
    vg_strlcpy(c.name, comp, sizeof c.name);
    vg_strlcpy(c.version, version, sizeof c.version);
    vg_strlcpy(c.upstream, version, sizeof c.upstream);
    c.eco = eco;
    struct hit h = { id, "", 0 };
    vg_advdb_match(db, &c, on_finding, &h);
    if (fixed) strcpy(fixed, h.fixed);
    return h.found;
}

static int affected_by(const struct vg_advdb *db, const char *comp, enum vg_ecosystem eco, const char *version,
                       const char *id, char *fixed)
{
    return affected_model(db, comp, eco, version, NULL, id, fixed);
}

/* "535.183.01" → "535.183.00"; "535.183.00" → "535.182.99". */
static void just_below(const char *v, char *out, size_t n)
{
    vg_strlcpy(out, v, n);
    char *dot = strrchr(out, '.');
    if (!dot) return;
    long last = strtol(dot + 1, NULL, 10);
    if (last > 0) {
        snprintf(dot + 1, n - (size_t)(dot + 1 - out), "%0*ld", (int)strlen(dot + 1), last - 1);
        return;
    }
    *dot = 0;
    char *prev = strrchr(out, '.');
    long p = strtol(prev ? prev + 1 : out, NULL, 10);
    char *tail = prev ? prev + 1 : out;
    snprintf(tail, n - (size_t)(tail - out), "%ld.99", p - 1);
}

static struct vg_advdb *corpus;
static struct vg_import_report corpus_rep;

static int setup(void **state)
{
    (void)state;
    char err[512];
    corpus = vg_advdb_new();
    if (vg_import_path("data/sources/nvidia-csaf", corpus, &corpus_rep, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    vg_advdb_free(corpus);
    vg_import_report_free(&corpus_rep);
    return 0;
}

static void test_corpus_counts(void **state)
{
    (void)state;
    assert_int_equal(corpus_rep.files, 181);
    assert_int_equal(corpus_rep.skipped_files, 0);
    assert_int_equal(corpus_rep.unparsed.n, 0);
    assert_true(corpus_rep.products_skipped > 100);   /* Windows, GeForce, vGPU, Triton, … */
    assert_true(vg_advdb_count(corpus) > 150);
}

/* Every CUDA "Update" form in the bundled bulletins, one case per form: the
 * last affected update is affected, the fixed update is not. */
static void test_update_forms(void **state)
{
    (void)state;
    static const struct { const char *form, *id, *affected, *fixed; } cases[] = {
        { "All versions prior to CUDA Toolkit 11.6 Update 2 / 11.6 Update 2 (5334)", "CVE-2022-21821", "11.6.1", "11.6.2" },
        { "All versions prior to 12.0 Update 1 / 12.0 Update 1 (5456)", "CVE-2023-25513", "12.0.0", "12.0.1" },
        { "All versions prior to 12.1 Update 1 / 12.1 Update 1 (5456)", "CVE-2023-25510", "12.1.0", "12.1.1" },
        { "CUDA Toolkit 12.6U1 fixed (5564)", "CVE-2024-0110", "12.6.0", "12.6.1" },
        { "up to and including CUDA Toolkit 12.6U1 / CUDA Toolkit 12.6U2 (5577)", "CVE-2024-0123", "12.6.1", "12.6.2" },
        { "up to and including CUDA Toolkit 12.5U1 (5548)", "CVE-2024-0102", "12.5.1", "12.6" },
        { "All versions prior to CUDA Toolkit 12.9 Update 1 (5661)", "CVE-2025-23272", "12.9.0", "12.9.1" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char fixed[64];
        if (affected_by(corpus, "cuda-toolkit", VG_ECO_GENERIC, cases[i].affected, cases[i].id, fixed) != 1)
            fail_msg("%s: %s should be affected by %s", cases[i].form, cases[i].affected, cases[i].id);
        if (strcmp(fixed, cases[i].fixed)) fail_msg("%s: fixed %s, expected %s", cases[i].form, fixed, cases[i].fixed);
        if (affected_by(corpus, "cuda-toolkit", VG_ECO_GENERIC, cases[i].fixed, cases[i].id, NULL) != 0)
            fail_msg("%s: %s is the fix", cases[i].form, cases[i].fixed);
    }
    /* "v12.4U1" (5517) is the fixed product of CVE-2024-0072, "prior to v12.4" its affected one */
    assert_int_equal(affected_by(corpus, "cuda-toolkit", VG_ECO_GENERIC, "12.3.2", "CVE-2024-0072", NULL), 1);
    assert_int_equal(affected_by(corpus, "cuda-toolkit", VG_ECO_GENERIC, "12.4.1", "CVE-2024-0072", NULL), 0);
}

/* Bulletin 5699 (CVE-2025-23350, CVE-2025-23351): the product tree lists
 * ConnectX-5* and ConnectX-6* on the LTS trains, and the notes say "* These
 * products are only affected by CVE-2025-23351"; ConnectX-4 and ConnectX-4 Lx
 * have rows of their own (trains 28 and 32) under CVE-2025-23351 only.  Each
 * model is flagged for the CVEs it has, with a fixed version of its own train.
 * The firmware versions are ones the bulletins name (5562's fixes
 * 16.35.4030, 14.32.1900, 20.39.3560, 28.41.1000). */
static void test_models(void **state)
{
    (void)state;
    char got[64];
    const char *x0 = "CVE-2025-23350", *x1 = "CVE-2025-23351";
    /* ConnectX-5 on LTS22: CVE-2025-23351 only */
    assert_int_equal(affected_model(corpus, "connectx-firmware", VG_ECO_NVIDIA, "16.35.4030", "ConnectX-5", x0, NULL), 0);
    assert_int_equal(affected_model(corpus, "connectx-firmware", VG_ECO_NVIDIA, "16.35.4030", "ConnectX-5", x1, got), 1);
    assert_string_equal(got, "16.35.8002");
    /* a ConnectX-5 Ex is a ConnectX-5 to the bulletin */
    assert_int_equal(affected_model(corpus, "connectx-firmware", VG_ECO_NVIDIA, "16.35.4030", "ConnectX-5 Ex", x1, got), 1);
    /* ConnectX-4 Lx: not the GA line's 14.46.3008, which does not exist for it */
    assert_int_equal(affected_model(corpus, "connectx-firmware", VG_ECO_NVIDIA, "14.32.1900", "ConnectX-4 Lx", x0, NULL), 0);
    assert_int_equal(affected_model(corpus, "connectx-firmware", VG_ECO_NVIDIA, "14.32.1900", "ConnectX-4 Lx", x1, got), 1);
    assert_string_equal(got, "14.32.1908");
    assert_int_equal(affected_model(corpus, "connectx-firmware", VG_ECO_NVIDIA, "14.32.1908", "ConnectX-4 Lx", x1, NULL), 0);
    /* ConnectX-6 (starred) on LTS23: CVE-2025-23351 only */
    assert_int_equal(affected_model(corpus, "connectx-firmware", VG_ECO_NVIDIA, "20.39.3560", "ConnectX-6", x0, NULL), 0);
    assert_int_equal(affected_model(corpus, "connectx-firmware", VG_ECO_NVIDIA, "20.39.3560", "ConnectX-6", x1, got), 1);
    assert_string_equal(got, "20.39.8002");
    /* ConnectX-6 Dx is listed without a star: both */
    assert_int_equal(affected_model(corpus, "connectx-firmware", VG_ECO_NVIDIA, "22.39.3560", "ConnectX-6 Dx", x0, got), 1);
    assert_string_equal(got, "22.39.8002");
    /* ConnectX-7 on the GA line 41: both, fixed on the GA line */
    assert_int_equal(affected_model(corpus, "connectx-firmware", VG_ECO_NVIDIA, "28.41.1000", "ConnectX-7", x0, got), 1);
    assert_string_equal(got, "28.46.3008");
    assert_int_equal(affected_model(corpus, "connectx-firmware", VG_ECO_NVIDIA, "28.41.1000", "ConnectX-7", x1, got), 1);
    /* a ConnectX-5 train older than LTS22 is older than every fixed train: affected, fixed on LTS22 */
    assert_int_equal(affected_model(corpus, "connectx-firmware", VG_ECO_NVIDIA, "16.34.1002", "ConnectX-5", x1, got), 1);
    assert_string_equal(got, "16.35.8002");
    assert_int_equal(affected_model(corpus, "connectx-firmware", VG_ECO_NVIDIA, "16.34.1002", "ConnectX-5", x0, NULL), 0);
    /* an unknown model: every row counts, as before */
    assert_int_equal(affected_model(corpus, "connectx-firmware", VG_ECO_NVIDIA, "16.35.4030", "", x0, NULL), 1);
    /* BlueField-3 on the GA line */
    assert_int_equal(affected_model(corpus, "bluefield-firmware", VG_ECO_NVIDIA, "32.38.3056", "BlueField-3", x0, got), 1);
    assert_string_equal(got, "32.46.3008");
    /* the model keys */
    char k[32];
    vg_nic_model_key("ConnectX 6 DX", k, sizeof k);
    assert_string_equal(k, "cx6dx");
    vg_nic_model_key("ConnectX6-DX ", k, sizeof k);
    assert_string_equal(k, "cx6dx");
    vg_nic_model_key("onnectX-5", k, sizeof k);   /* as bulletin 5459 writes it */
    assert_string_equal(k, "cx5");
    vg_nic_model_key("ConnectX LTS22", k, sizeof k);
    assert_string_equal(k, "");
    vg_nic_model_key("BlueField-2", k, sizeof k);
    assert_string_equal(k, "bf2");
    vg_nic_model_key("BludField-3", k, sizeof k);   /* as bulletin 5684 writes it */
    assert_string_equal(k, "bf3");
    /* 5684's GA row lists "BlueField-2, BludField-3": a BlueField-3 on train 38 is fixed on the GA line */
    assert_int_equal(affected_model(corpus, "bluefield-firmware", VG_ECO_NVIDIA, "32.38.3056", "BlueField-3", "CVE-2025-23299", got), 1);
    assert_string_equal(got, "32.46.1006");
}

static int import_text(const char *json, struct vg_advdb *db, struct vg_import_report *rep);

/* "U N" with a space (not in the bundled bulletins, but the same family of
 * names): "12.6 U 1" = 12.6.1. */
static void test_update_space_form(void **state)
{
    (void)state;
    static const char doc[] =
        "{\"document\":{\"csaf_version\":\"2.0\",\"publisher\":{\"name\":\"NVIDIA\"},\"tracking\":{\"id\":\"9998\","
        "\"initial_release_date\":\"2026-01-02T00:00:00Z\"}},"
        "\"product_tree\":{\"branches\":[{\"category\":\"vendor\",\"name\":\"NVIDIA\",\"branches\":["
        "{\"category\":\"architecture\",\"name\":\"Linux\",\"branches\":["
        "{\"category\":\"product_version\",\"name\":\"NVIDIA CUDA Toolkit\",\"product\":{\"name\":\"All versions prior to 12.6 U 1\",\"product_id\":\"a\"}},"
        "{\"category\":\"product_version\",\"name\":\"NVIDIA CUDA Toolkit\",\"product\":{\"name\":\"12.6 U 1\",\"product_id\":\"f\"}}]}]}]},"
        "\"vulnerabilities\":[{\"cve\":\"CVE-2099-0009\",\"product_status\":{\"known_affected\":[\"a\"],\"fixed\":[\"f\"]}}]}";
    struct vg_advdb *db = vg_advdb_new();
    struct vg_import_report rep;
    memset(&rep, 0, sizeof rep);
    assert_int_equal(import_text(doc, db, &rep), 0);
    assert_int_equal(rep.unparsed.n, 0);
    char fixed[64];
    assert_int_equal(affected_by(db, "cuda-toolkit", VG_ECO_GENERIC, "12.6.0", "CVE-2099-0009", fixed), 1);
    assert_string_equal(fixed, "12.6.1");
    assert_int_equal(affected_by(db, "cuda-toolkit", VG_ECO_GENERIC, "12.6.1", "CVE-2099-0009", NULL), 0);
    vg_import_report_free(&rep);
    vg_advdb_free(db);
}

/* Splits a TSV line in place; returns the field count. */
static int fields(char *line, char **f, int max)
{
    line[strcspn(line, "\r\n")] = 0;
    return vg_split(line, "\t", f, max);
}

static void check_rows(const char *component_prefix, const char *comp, enum vg_ecosystem eco, int min_rows)
{
    FILE *fp = fopen("tests/fixtures/advisories.tsv", "r");
    assert_non_null(fp);
    char line[8192];
    int rows = 0;
    while (fgets(line, sizeof line, fp)) {
        char *f[12];
        if (fields(line, f, 12) < 9 || !vg_startswith(f[0], component_prefix) || !vg_startswith(f[2], "CVE-")) continue;
        const char *id = f[2], *fixed = f[7];
        char below[64], got[64];
        if (vg_startswith(f[6], "<=")) {   /* "<=1.16.1": the last affected version itself */
            vg_strlcpy(below, f[6] + 2, sizeof below);
        } else just_below(fixed, below, sizeof below);
        if (affected_by(corpus, comp, eco, below, id, got) != 1)
            fail_msg("%s %s: %s should be affected (row range %s)", comp, id, below, f[6]);
        if (vg_version_cmp(eco, got, fixed) != 0) fail_msg("%s %s at %s: fixed %s, TSV says %s", comp, id, below, got, fixed);
        if (affected_by(corpus, comp, eco, fixed, id, NULL) != 0)
            fail_msg("%s %s: fixed version %s reported affected", comp, id, fixed);
        rows++;
    }
    fclose(fp);
    if (rows < min_rows) fail_msg("%s: only %d rows checked", comp, rows);
}

static void test_driver_rows(void **state)
{
    (void)state;
    check_rows("NVIDIA GPU display driver (Linux, data center)", "nvidia-driver", VG_ECO_NVIDIA, 120);
}

static void test_container_rows(void **state)
{
    (void)state;
    check_rows("NVIDIA Container Toolkit", "nvidia-container-toolkit", VG_ECO_GENERIC, 5);
    check_rows("NVIDIA GPU Operator", "gpu-operator", VG_ECO_GENERIC, 8);
}

static void test_branches_and_trains(void **state)
{
    (void)state;
    /* a branch the bulletin does not name is not claimed */
    assert_int_equal(affected_by(corpus, "nvidia-driver", VG_ECO_NVIDIA, "545.29.06", "CVE-2024-0090", NULL), 0);
    /* ConnectX: the LTS23 fix counts although the GA line's fix is higher */
    char got[64];
    assert_int_equal(affected_by(corpus, "connectx-firmware", VG_ECO_GENERIC, "28.39.3000", "CVE-2024-0105", got), 1);
    assert_string_equal(got, "28.39.3560");
    assert_int_equal(affected_by(corpus, "connectx-firmware", VG_ECO_GENERIC, "28.39.3560", "CVE-2024-0105", NULL), 0);
    assert_int_equal(affected_by(corpus, "connectx-firmware", VG_ECO_GENERIC, "28.40.1000", "CVE-2024-0105", got), 1);
    assert_string_equal(got, "28.41.1000");
    /* OFED lines: 23.10 has its own fix */
    assert_int_equal(affected_by(corpus, "mlnx-ofed", VG_ECO_GENERIC, "23.10-4.0.9.0", "CVE-2025-23263", got), 1);
    assert_string_equal(got, "23.10-5.1.4.0");
    assert_int_equal(affected_by(corpus, "mlnx-ofed", VG_ECO_GENERIC, "23.10-5.1.4.0", "CVE-2025-23263", NULL), 0);
    /* "12.0 Update 1" = 12.0.1 */
    assert_int_equal(affected_by(corpus, "cuda-toolkit", VG_ECO_GENERIC, "12.0", "CVE-2023-25513", got), 1);
    assert_string_equal(got, "12.0.1");
    assert_int_equal(affected_by(corpus, "cuda-toolkit", VG_ECO_GENERIC, "12.0.1", "CVE-2023-25513", NULL), 0);
}

static int import_text(const char *json, struct vg_advdb *db, struct vg_import_report *rep)
{
    json_error_t je;
    json_t *doc = json_loads(json, 0, &je);
    assert_non_null(doc);
    const struct vg_importer *imp = vg_importer_for(doc);
    assert_non_null(imp);
    assert_string_equal(imp->name, "csaf");
    char err[256];
    int rc = imp->import(doc, "mem.json", db, rep, err, sizeof err);
    json_decref(doc);
    return rc;
}

static void test_patterns(void **state)
{
    (void)state;
    static const char doc[] =
        "{\"document\":{\"csaf_version\":\"2.0\",\"publisher\":{\"name\":\"NVIDIA\"},\"tracking\":{\"id\":\"9999\","
        "\"initial_release_date\":\"2026-01-02T00:00:00Z\"}},"
        "\"product_tree\":{\"branches\":[{\"category\":\"vendor\",\"name\":\"NVIDIA\",\"branches\":["
        "{\"category\":\"architecture\",\"name\":\"Linux(R570)\",\"branches\":["
        "{\"category\":\"product_version\",\"name\":\"Tesla\",\"product\":{\"name\":\"All driver version prior to 570.172.08\",\"product_id\":\"a1\"}},"
        "{\"category\":\"product_version\",\"name\":\"Tesla\",\"product\":{\"name\":\"570.172.08\",\"product_id\":\"f1\"}},"
        "{\"category\":\"product_version\",\"name\":\"GeForce\",\"product\":{\"name\":\"All driver version prior to 570.172.08\",\"product_id\":\"g1\"}}]},"
        "{\"category\":\"architecture\",\"name\":\"Linux\",\"branches\":["
        "{\"category\":\"product_version\",\"name\":\"NVIDIA Container Toolkit\",\"product\":{\"name\":\"All versions up to and including v1.16.1 (CDI mode only for versions prior to 1.10)\",\"product_id\":\"a2\"}},"
        "{\"category\":\"product_version\",\"name\":\"NVIDIA Container Toolkit\",\"product\":{\"name\":\"v1.16.2\",\"product_id\":\"f2\"}},"
        "{\"category\":\"product_version\",\"name\":\"DCGM\",\"product\":{\"name\":\"0.0  to 4.5.2\",\"product_id\":\"a3\"}},"
        "{\"category\":\"product_version\",\"name\":\"DCGM\",\"product\":{\"name\":\"4.5.3\",\"product_id\":\"f3\"}},"
        "{\"category\":\"product_version\",\"name\":\"NVIDIA CUDA Toolkit\",\"product\":{\"name\":\"whatever came first\",\"product_id\":\"a4\"}}]}]}]},"
        "\"vulnerabilities\":[{\"cve\":\"CVE-2099-0001\",\"notes\":[{\"category\":\"summary\",\"text\":\"sum\"}],"
        "\"scores\":[{\"cvss_v3\":{\"baseScore\":7.8,\"baseSeverity\":\"HIGH\"}}],"
        "\"product_status\":{\"known_affected\":[\"a1\",\"g1\",\"a2\",\"a3\",\"a4\",\"nope\"],\"fixed\":[\"f1\",\"f2\",\"f3\"]}}]}";
    struct vg_advdb *db = vg_advdb_new();
    struct vg_import_report rep;
    memset(&rep, 0, sizeof rep);
    assert_int_equal(import_text(doc, db, &rep), 0);
    assert_int_equal(vg_advdb_count(db), 3);   /* driver, toolkit, dcgm */
    assert_int_equal(rep.unparsed.n, 1);
    assert_non_null(strstr(rep.unparsed.v[0], "whatever came first"));
    assert_int_equal(rep.products_skipped, 1);  /* the GeForce row */
    assert_int_equal(rep.warnings.n, 1);        /* "nope" is not in the tree */
    char got[64];
    assert_int_equal(affected_by(db, "nvidia-driver", VG_ECO_NVIDIA, "570.172.07", "CVE-2099-0001", got), 1);
    assert_string_equal(got, "570.172.08");
    assert_int_equal(affected_by(db, "nvidia-driver", VG_ECO_NVIDIA, "565.57.01", "CVE-2099-0001", NULL), 0);
    assert_int_equal(affected_by(db, "nvidia-container-toolkit", VG_ECO_GENERIC, "1.16.1", "CVE-2099-0001", got), 1);
    assert_string_equal(got, "1.16.2");
    assert_int_equal(affected_by(db, "nvidia-container-toolkit", VG_ECO_GENERIC, "1.16.2", "CVE-2099-0001", NULL), 0);
    assert_int_equal(affected_by(db, "dcgm", VG_ECO_GENERIC, "3.3.9", "CVE-2099-0001", NULL), 1);
    assert_int_equal(affected_by(db, "dcgm", VG_ECO_GENERIC, "4.5.3", "CVE-2099-0001", NULL), 0);
    const struct vg_advisory *a = vg_advdb_get(db, 0);
    assert_string_equal(a->url, "https://nvidia.custhelp.com/app/answers/detail/a_id/9999");
    assert_string_equal(a->published, "2026-01-02");
    assert_int_equal(a->severity, VG_SEV_HIGH);
    vg_import_report_free(&rep);
    vg_advdb_free(db);
}

static void test_missing_fields(void **state)
{
    (void)state;
    struct vg_advdb *db = vg_advdb_new();
    struct vg_import_report rep;
    memset(&rep, 0, sizeof rep);
    assert_int_equal(import_text("{\"document\":{\"csaf_version\":\"2.0\"}}", db, &rep), 0);
    assert_int_equal(rep.skipped_files, 1);
    assert_int_equal(rep.warnings.n, 1);
    assert_non_null(strstr(rep.warnings.v[0], "product_tree"));
    /* wrong types everywhere: nothing imported, nothing crashes */
    assert_int_equal(import_text("{\"document\":{\"csaf_version\":2},\"product_tree\":{\"branches\":7},"
                                 "\"vulnerabilities\":[1,{\"product_status\":{\"known_affected\":[3]}}]}", db, &rep), 0);
    assert_int_equal(vg_advdb_count(db), 0);
    vg_import_report_free(&rep);
    vg_advdb_free(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus_counts),   cmocka_unit_test(test_driver_rows),
        cmocka_unit_test(test_container_rows),  cmocka_unit_test(test_branches_and_trains), cmocka_unit_test(test_models),
        cmocka_unit_test(test_patterns),        cmocka_unit_test(test_missing_fields),
        cmocka_unit_test(test_update_forms),    cmocka_unit_test(test_update_space_form),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
