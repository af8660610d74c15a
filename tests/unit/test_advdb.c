/* test_advdb.c — the advisory database: load errors naming file and field,
 * save/load round trip, dedup and range merging, matching (ranges, lines,
 * distro packages and the backport flag, distro-native advisories),
 * end-of-life as of an audit date, minimum recommended versions, and the
 * bundled data/advisories.json (every LIFECYCLE row of the TSV). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "advisory/advisory.h"
#include "util/strutil.h"

struct got {
    int n, cve, eol, min;
    struct vg_finding last[16];
};

static void collect(const struct vg_finding *f, void *ctx)
{
    struct got *g = ctx;
    if (g->n < 16) g->last[g->n] = *f;
    g->n++;
    if (f->kind == VG_FIND_CVE) g->cve++;
    else if (f->kind == VG_FIND_EOL) g->eol++;
    else g->min++;
}

static struct got match(const struct vg_advdb *db, const char *name, const char *version, enum vg_ecosystem eco,
                        const char *package)
{
    struct vg_component c;
    memset(&c, 0, sizeof c);
    vg_strlcpy(c.name, name, sizeof c.name);
    vg_strlcpy(c.version, version, sizeof c.version);
    c.eco = eco;
    if (package) vg_strlcpy(c.package, package, sizeof c.package);
    vg_version_upstream(eco, version, c.upstream, sizeof c.upstream);
    struct got g;
    memset(&g, 0, sizeof g);
    int n = vg_advdb_match(db, &c, collect, &g);
    assert_int_equal(n, g.n);
    return g;
}

static void expect_error(const char *file, const char *want)
{
    struct vg_advdb *db = (struct vg_advdb *)1;
    char err[512];
    assert_int_equal(vg_advdb_load(file, &db, err, sizeof err), -1);
    assert_null(db);
    if (!strstr(err, want)) fail_msg("error '%s' lacks '%s'", err, want);
}

static void test_load_errors(void **state)
{
    (void)state;
    expect_error("tests/fixtures/advdb/missing-url.json", "missing-url.json: advisories[1].url: missing");
    expect_error("tests/fixtures/advdb/syntax.json", "syntax.json:3:");
    expect_error("tests/fixtures/advdb/bad-severity.json", "advisories[0].severity: unknown 'awful'");
    expect_error("tests/fixtures/advdb/schema2.json", "schema: unsupported");
    expect_error("tests/fixtures/advdb/does-not-exist.json", "does-not-exist.json");
}

static struct vg_advdb *sample(void)
{
    struct vg_advdb *db = vg_advdb_new();
    struct vg_range r1[] = { { .introduced = "", .fixed = "1.1.12", .last_affected = "" }, { .introduced = "1.2.0", .fixed = "1.2.8", .last_affected = "" } };
    struct vg_advisory a = { .id = "CVE-2024-21626", .component = "runc", .eco = VG_ECO_GENERIC, .severity = VG_SEV_HIGH,
                             .cvss = 8.6, .summary = "leaky fd", .url = "https://x/runc", .published = "2024-01-31",
                             .ranges = r1, .nranges = 2 };
    assert_int_equal(vg_advdb_add(db, &a), 2);
    assert_int_equal(vg_advdb_add(db, &a), 0);   /* duplicate */
    struct vg_range r2[] = { { .introduced = "1.3.0", .fixed = "1.3.3", .last_affected = "" } };
    a.ranges = r2;
    a.nranges = 1;
    assert_int_equal(vg_advdb_add(db, &a), 1);   /* merged into the same advisory */
    struct vg_range r3[] = { { .introduced = "535.0", .fixed = "535.183.01", .last_affected = "" }, { .introduced = "550.0", .fixed = "550.90.07", .last_affected = "" } };
    struct vg_advisory d = { .id = "CVE-2024-0090", .component = "nvidia-driver", .eco = VG_ECO_NVIDIA,
                             .severity = VG_SEV_HIGH, .cvss = 7.8, .summary = "oob", .url = "https://x/5551",
                             .published = "2024-06-06", .ranges = r3, .nranges = 2 };
    vg_advdb_add(db, &d);
    struct vg_range r4[] = { { .introduced = "", .fixed = "6.8.0-87.88", .last_affected = "" } };
    struct vg_advisory k = { .id = "CVE-2025-40300", .component = "linux-kernel", .eco = VG_ECO_DPKG,
                             .severity = VG_SEV_HIGH, .summary = "usn", .url = "https://x/usn", .published = "2025-11-06",
                             .ranges = r4, .nranges = 1 };
    vg_advdb_add(db, &k);
    struct vg_eol e = { "nvidia-driver", "535", "", "2026-06-30", "https://x/eol", "move to R580" };
    vg_advdb_add_eol(db, &e);
    struct vg_eol e2 = { "nvidia-driver", "", "535", "", "https://x/eol", "old branches" };
    vg_advdb_add_eol(db, &e2);
    struct vg_minimum m = { "runc", "", "1.3.6", "https://x/min", "newest fix" };
    struct vg_minimum m4 = { "runc", "1.4", "1.4.3", "https://x/min", "1.4 line" };
    vg_advdb_add_minimum(db, &m);
    vg_advdb_add_minimum(db, &m4);
    vg_advdb_set_date(db, "2026-01-15");
    return db;
}

static void test_match(void **state)
{
    (void)state;
    struct vg_advdb *db = sample();
    assert_int_equal(vg_advdb_count(db), 3);
    struct got g = match(db, "runc", "1.1.11", VG_ECO_GENERIC, NULL);
    assert_int_equal(g.cve, 1);
    assert_string_equal(g.last[0].fixed, "1.1.12");
    assert_false(g.last[0].backport_possible);
    assert_int_equal(g.min, 1);
    g = match(db, "runc", "1.1.12", VG_ECO_GENERIC, NULL);
    assert_int_equal(g.cve, 0);
    g = match(db, "runc", "1.2.7", VG_ECO_GENERIC, NULL);
    assert_int_equal(g.cve, 1);
    assert_string_equal(g.last[0].fixed, "1.2.8");
    g = match(db, "runc", "1.3.2", VG_ECO_GENERIC, NULL);
    assert_string_equal(g.last[0].fixed, "1.3.3");
    g = match(db, "runc", "1.4.1", VG_ECO_GENERIC, NULL);   /* branch minimum wins over the global one */
    assert_int_equal(g.cve, 0);
    assert_int_equal(g.min, 1);
    assert_string_equal(g.last[0].fixed, "1.4.3");
    g = match(db, "runc", "1.4.3", VG_ECO_GENERIC, NULL);
    assert_int_equal(g.n, 0);
    /* a distro package: the upstream number is compared, the finding says so */
    g = match(db, "runc", "1.1.7-0ubuntu1~22.04.2", VG_ECO_DPKG, "runc");
    assert_int_equal(g.cve, 1);
    assert_true(g.last[0].backport_possible);
    assert_non_null(strstr(g.last[0].note, "backported"));
    /* ... and its below-minimum names no upstream version to upgrade to: the
     * minimum ("newest fix") names no CVE the distribution could decide */
    assert_int_equal(g.min, 1);
    assert_int_equal(g.last[1].kind, VG_FIND_BELOW_MIN);
    assert_string_equal(g.last[1].fixed, "");
    assert_non_null(strstr(g.last[1].note, "upgrade through its updates"));
    /* a distro-native advisory compares the full package version ... */
    g = match(db, "linux-kernel", "6.8.0-86.87", VG_ECO_DPKG, "linux-image-6.8.0-86-generic");
    assert_int_equal(g.cve, 1);
    assert_false(g.last[0].backport_possible);
    g = match(db, "linux-kernel", "6.8.0-87.88", VG_ECO_DPKG, "linux-image-6.8.0-87-generic");
    assert_int_equal(g.cve, 0);
    /* ... and is not applied to a version of another kind */
    g = match(db, "linux-kernel", "6.8.0-86-generic", VG_ECO_GENERIC, NULL);
    assert_int_equal(g.cve, 0);
    g = match(db, "nope", "1.0", VG_ECO_GENERIC, NULL);
    assert_int_equal(g.n, 0);
    vg_advdb_free(db);
}

static void test_eol(void **state)
{
    (void)state;
    struct vg_advdb *db = sample();
    struct got g = match(db, "nvidia-driver", "535.183.01", VG_ECO_NVIDIA, NULL);
    assert_int_equal(g.cve, 0);
    assert_int_equal(g.eol, 0);   /* 2026-01-15: R535 still supported */
    vg_advdb_set_date(db, "2026-06-30");
    g = match(db, "nvidia-driver", "535.183.01", VG_ECO_NVIDIA, NULL);
    assert_int_equal(g.eol, 1);
    assert_non_null(strstr(g.last[0].note, "2026-06-30"));
    assert_string_equal(g.last[0].url, "https://x/eol");
    g = match(db, "nvidia-driver", "535.183.00", VG_ECO_NVIDIA, NULL);
    assert_int_equal(g.cve, 1);
    g = match(db, "nvidia-driver", "470.256.02", VG_ECO_NVIDIA, NULL);   /* below every listed branch */
    assert_int_equal(g.eol, 1);
    g = match(db, "nvidia-driver", "5350.1", VG_ECO_NVIDIA, NULL);       /* not branch 535 */
    assert_int_equal(g.eol, 0);
    setenv("VIGIL_NOW", "2027-01-01T00:00:00.000Z", 1);
    vg_advdb_set_date(db, NULL);
    assert_string_equal(vg_advdb_date(db), "2027-01-01");
    unsetenv("VIGIL_NOW");
    vg_advdb_free(db);
}

static void test_roundtrip(void **state)
{
    (void)state;
    struct vg_advdb *db = sample();
    char path[] = "/tmp/vigil-advdb-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    char err[256];
    assert_int_equal(vg_advdb_save(db, path, err, sizeof err), 0);
    struct vg_advdb *back;
    assert_int_equal(vg_advdb_load(path, &back, err, sizeof err), 0);
    unlink(path);
    assert_int_equal(vg_advdb_count(back), 3);
    assert_int_equal(vg_advdb_eol_count(back), 2);
    assert_int_equal(vg_advdb_minimum_count(back), 2);
    const struct vg_advisory *a = vg_advdb_get(back, 2);   /* sorted: linux-kernel, nvidia-driver, runc */
    assert_string_equal(a->component, "runc");
    assert_int_equal(a->nranges, 3);
    assert_int_equal(a->severity, VG_SEV_HIGH);
    assert_string_equal(a->published, "2024-01-31");
    assert_int_equal(vg_advdb_get(back, 0)->eco, VG_ECO_DPKG);
    vg_advdb_free(back);
    vg_advdb_free(db);
}

/* The compact index: written beside X.json, loaded instead of it while its
 * stamp matches, the same database either way; a stale index is passed over,
 * a malformed one is an error naming its line. */
static void test_index(void **state)
{
    (void)state;
    struct vg_advdb *db = sample();
    struct vg_advisory usn = { .id = "USN-6859-1", .component = "openssh", .eco = VG_ECO_DPKG, .severity = VG_SEV_MEDIUM,
                               .summary = "tab\there\nnewline \\ done", .url = "https://x/usn", .published = "2024-07-01",
                               .distro = "Ubuntu:22.04:LTS", .package = "openssh", .cves = "CVE-2024-6387" };
    struct vg_range ur[] = { { .introduced = "", .fixed = "1:8.9p1-3ubuntu0.10", .last_affected = "" } };
    usn.ranges = ur;
    usn.nranges = 1;
    vg_advdb_add(db, &usn);
    /* a source, a tagged record and a range about some models survive the index too */
    struct vg_source src = { .name = "nvidia-csaf", .path = "nvidia-csaf", .repository = "github.com/NVIDIA/product-security",
                             .commit = "dbb4ada053156ea7f41a15229c7b85e2380b3b87", .snapshot = "2026-08-18",
                             .about = "NVIDIA's CSAF bulletins" };
    vg_advdb_add_source(db, &src);
    struct vg_range fr[] = { { .introduced = "xx.35.0", .fixed = "xx.35.8002", .models = "ConnectX-5, ConnectX-6 DX" } };
    struct vg_advisory fw = { .id = "CVE-2025-23351", .component = "connectx-firmware", .eco = VG_ECO_NVIDIA,
                              .severity = VG_SEV_CRITICAL, .url = "https://x/5699", .source = "nvidia-csaf",
                              .ranges = fr, .nranges = 1 };
    vg_advdb_add(db, &fw);
    char dir[] = "/tmp/vigil-advidx-XXXXXX", json[128], idx[128], err[512];
    assert_non_null(mkdtemp(dir));
    snprintf(json, sizeof json, "%s/db.json", dir);
    snprintf(idx, sizeof idx, "%s/db.idx", dir);
    assert_int_equal(vg_advdb_save(db, json, err, sizeof err), 0);
    assert_int_equal(access(idx, R_OK), 0);
    char stamp[64];
    assert_int_equal(vg_advdb_stamp(json, stamp, sizeof stamp), 0);
    struct vg_advdb *viaidx, *viajson;
    assert_int_equal(vg_advdb_load_index(idx, stamp, &viaidx, err, sizeof err), 0);
    json_t *a = vg_advdb_to_json(db), *b = vg_advdb_to_json(viaidx);
    json_object_del(a, "generated");
    json_object_del(b, "generated");
    assert_true(json_equal(a, b));
    json_decref(b);
    /* a JSON file changed after the index was written: the index is passed over */
    FILE *f = fopen(json, "a");
    assert_non_null(f);
    fputs("\n", f);
    fclose(f);
    assert_int_equal(vg_advdb_load_index(idx, "1-0", &viajson, err, sizeof err), 1);
    assert_int_equal(vg_advdb_load(json, &viajson, err, sizeof err), 0);
    b = vg_advdb_to_json(viajson);
    json_object_del(b, "generated");
    assert_true(json_equal(a, b));
    json_decref(a);
    json_decref(b);
    vg_advdb_free(viajson);
    const struct vg_advisory *u = NULL;
    for (size_t i = 0; i < vg_advdb_count(viaidx); i++)
        if (!strcmp(vg_advdb_get(viaidx, i)->id, "USN-6859-1")) u = vg_advdb_get(viaidx, i);
    assert_non_null(u);
    assert_string_equal(u->summary, "tab\there\nnewline \\ done");
    assert_string_equal(u->distro, "Ubuntu:22.04:LTS");
    assert_string_equal(u->cves, "CVE-2024-6387");
    vg_advdb_free(viaidx);
    /* an index of another format version (1: ranges without models, no source) is stale, read the JSON */
    char v1[] = "#vigil-advisory-index 1 -\nA\tCVE-1\trunc\tgeneric\thigh\t0.0\tu\t\t\t\t\t\t|1.0|\n";
    assert_int_equal(vg_advdb_parse_index(v1, sizeof v1 - 1, "v1.idx", NULL, &viaidx, err, sizeof err), 1);
    assert_null(viaidx);
    /* malformed: the message names the index and the line */
    char bad[] = "#vigil-advisory-index 3 -\nA\tonly\ttwo\n";
    assert_int_equal(vg_advdb_parse_index(bad, sizeof bad - 1, "x.idx", NULL, &viaidx, err, sizeof err), -1);
    assert_non_null(strstr(err, "x.idx:2:"));
    /* the format before (source and models, no undecided reason) is stale too */
    char v2[] = "#vigil-advisory-index 2 -\nA\tCVE-1\trunc\tgeneric\thigh\t0.0\tu\t\t\t\t\t\t\t|1.0||\n";
    assert_int_equal(vg_advdb_parse_index(v2, sizeof v2 - 1, "v2.idx", NULL, &viaidx, err, sizeof err), 1);
    assert_null(viaidx);
    char order[] = "#vigil-advisory-index 3 -\n"
                   "A\tCVE-1\trunc\tgeneric\thigh\t0.0\tu\t\t\t\t\t\t\t|1.0|||\n"
                   "A\tCVE-2\tapptainer\tgeneric\thigh\t0.0\tu\t\t\t\t\t\t\t|1.0|||\n";
    assert_int_equal(vg_advdb_parse_index(order, sizeof order - 1, "y.idx", NULL, &viaidx, err, sizeof err), -1);
    assert_non_null(strstr(err, "y.idx:3:"));
    unlink(json);
    unlink(idx);
    rmdir(dir);
    vg_advdb_free(db);
}

/* The bundled database: the TSV's driver LIFECYCLE rows become EOL findings. */
static void test_bundled(void **state)
{
    (void)state;
    struct vg_advdb *db;
    char err[512];
    assert_int_equal(vg_advdb_load("data/advisories.json", &db, err, sizeof err), 0);
    assert_true(vg_advdb_count(db) > 150);
    vg_advdb_set_date(db, "2026-07-01");
    static const struct { const char *v; int eol; } rows[] = {
        { "535.309.01", 1 }, { "580.159.03", 0 }, { "595.71.05", 0 }, { "610.10.01", 0 }, { "620.1.1", 0 },
        { "550.163.01", 1 }, { "570.211.01", 1 }, { "575.51.02", 1 }, { "590.48.01", 1 }, { "470.256.02", 1 },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct got g = match(db, "nvidia-driver", rows[i].v, VG_ECO_NVIDIA, NULL);
        if (g.eol != rows[i].eol) fail_msg("%s: eol %d, want %d", rows[i].v, g.eol, rows[i].eol);
        assert_int_equal(g.cve, 0);   /* these are each branch's latest fix */
    }
    vg_advdb_set_date(db, "2026-09-01");
    assert_int_equal(match(db, "nvidia-driver", "610.10.01", VG_ECO_NVIDIA, NULL).eol, 1);
    struct got g = match(db, "mlnx-ofed", "23.10-5.1.4.0", VG_ECO_GENERIC, NULL);
    assert_int_equal(g.eol, 1);
    assert_int_equal(g.cve, 0);
    assert_int_equal(match(db, "mlnx-ofed", "24.10-3.2.5.0", VG_ECO_GENERIC, NULL).eol, 0);
    /* every shipped entry keeps its source URL */
    for (size_t i = 0; i < vg_advdb_count(db); i++) assert_true(vg_advdb_get(db, i)->url[0] != 0);
    vg_advdb_free(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_errors), cmocka_unit_test(test_match),   cmocka_unit_test(test_eol),
        cmocka_unit_test(test_roundtrip),   cmocka_unit_test(test_bundled),     cmocka_unit_test(test_index),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
