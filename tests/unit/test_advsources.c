/* test_advsources.c — where the advisory database's records come from and how
 * current they are: the sources manifest (its errors name file and line),
 * the Debian security tracker's DSA/DLA lists (data/sources/debian, real),
 * the Go database's OSV records (data/sources/osv/go, real: a withdrawn
 * record, moby's fixes that exist only in the moby/moby/v2 module series,
 * containerd listed as two modules), and `advisories status` per source. */
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

static int parse(const char *text, struct vg_source **src, size_t *n, char *err, size_t errlen)
{
    char *buf = vg_xstrdup(text);
    int rc = vg_manifest_parse(buf, strlen(buf), "MANIFEST", src, n, err, errlen);
    free(buf);
    return rc;
}

static void test_manifest(void **state)
{
    (void)state;
    struct vg_source *src;
    size_t n;
    char err[256];
    assert_int_equal(parse("# comment\n\ngo-vulndb\tosv/go\tgithub.com/golang/vulndb\ta752ea54\t2026-08-21\tGo records\n"
                           "curated\tcurated\t-\t-\t-\twritten here\n",
                           &src, &n, err, sizeof err),
                     0);
    assert_int_equal(n, 2);
    assert_string_equal(src[0].name, "go-vulndb");
    assert_string_equal(src[0].path, "osv/go");
    assert_string_equal(src[0].snapshot, "2026-08-21");
    assert_string_equal(src[1].repository, "");   /* "-" is empty */
    assert_string_equal(src[1].snapshot, "");
    free(src);
    static const struct { const char *text, *msg; } bad[] = {
        { "a\tb\tc\n", "MANIFEST:1: expected 6 tab-separated fields" },
        { "# x\nGo\tp\tr\t-\t-\tabout\n", "MANIFEST:2: name:" },
        { "a\t../etc\tr\t-\t-\tabout\n", "MANIFEST:1: path:" },
        { "a\t/abs\tr\t-\t-\tabout\n", "MANIFEST:1: path:" },
        { "a\tp\tr\tnothex!\t-\tabout\n", "MANIFEST:1: commit:" },
        { "a\tp\tr\t-\t2026-13-01\tabout\n", "MANIFEST:1: snapshot:" },
        { "a\tp\tr\t-\t-\tabout\na\tq\tr\t-\t-\tagain\n", "MANIFEST:2: name: listed twice" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(parse(bad[i].text, &src, &n, err, sizeof err), -1);
        if (!strstr(err, bad[i].msg)) fail_msg("%s: got '%s'", bad[i].msg, err);
        assert_null(src);
    }
    char bin[] = "a\tp\0";
    assert_int_equal(vg_manifest_parse(bin, sizeof bin - 1, "M", &src, &n, err, sizeof err), -1);
}

struct hit {
    const char *id;
    enum vg_finding_kind kind;
    char fixed[64], ref[64];
    int found;
};

static void on_finding(const struct vg_finding *f, void *ctx)
{
    struct hit *h = ctx;
    const char *id = f->adv ? f->adv->id : "";
    if ((f->kind == VG_FIND_CVE || f->kind == VG_FIND_DISTRO_FIXED) &&
        (!strcmp(id, h->id) || (f->adv->cves && vg_word_in(f->adv->cves, h->id)))) {
        h->found++;
        h->kind = f->kind;
        vg_strlcpy(h->fixed, f->fixed, sizeof h->fixed);
        vg_strlcpy(h->ref, f->evidence_ref, sizeof h->ref);
    }
}

static struct hit match(const struct vg_advdb *db, const char *comp, enum vg_ecosystem eco, const char *version,
                        const char *pkg, const char *distro, const char *id)
{
    struct vg_component c;
    memset(&c, 0, sizeof c);
    vg_strlcpy(c.name, comp, sizeof c.name);
    vg_strlcpy(c.version, version, sizeof c.version);
    c.eco = eco;
    vg_version_upstream(eco, version, c.upstream, sizeof c.upstream);
    if (pkg) vg_strlcpy(c.package, pkg, sizeof c.package), vg_strlcpy(c.srcpkg, pkg, sizeof c.srcpkg);
    if (distro) vg_strlcpy(c.distro, distro, sizeof c.distro);
    c.changelog.read = true;   /* no changelog on this node: the records decide */
    struct hit h = { id, VG_FIND_CVE, "", "", 0 };
    vg_advdb_match(db, &c, on_finding, &h);
    return h;
}

/* Debian's own lists decide a Debian package: DSA-5059-1 fixed CVE-2021-4034
 * (PwnKit) in bullseye's policykit-1 0.105-31+deb11u1 and buster's
 * 0.105-25+deb10u1, although upstream 0.105 is below the fix 0.120. */
static void test_debian_lists(void **state)
{
    (void)state;
    struct vg_advdb *db = vg_advdb_new();
    struct vg_import_report rep;
    memset(&rep, 0, sizeof rep);
    char err[512];
    assert_int_equal(vg_import_path("data/sources/debian", db, &rep, err, sizeof err), 0);
    assert_int_equal(rep.files, 2);
    assert_true(rep.advisories > 300);
    assert_int_equal(vg_import_path("data/sources/curated/polkit-CVE-2021-4034.json", db, &rep, err, sizeof err), 0);
    const struct vg_advisory *dsa = NULL;
    for (size_t i = 0; i < vg_advdb_count(db); i++) {
        const struct vg_advisory *a = vg_advdb_get(db, i);
        if (!strcmp(a->id, "DSA-5059-1") && !strcmp(a->distro, "Debian:11")) dsa = a;
    }
    assert_non_null(dsa);
    assert_string_equal(dsa->component, "polkit");
    assert_string_equal(dsa->package, "policykit-1");
    assert_string_equal(dsa->cves, "CVE-2021-4034");
    assert_string_equal(dsa->published, "2022-01-25");
    assert_string_equal(dsa->source, "debian");
    assert_string_equal(dsa->url, "https://security-tracker.debian.org/tracker/DSA-5059-1");
    /* the fixed package: fixed by the distribution, with Debian's record as evidence */
    struct hit h = match(db, "polkit", VG_ECO_DPKG, "0.105-31+deb11u1", "policykit-1", "Debian:11", "CVE-2021-4034");
    assert_int_equal(h.found, 1);
    assert_int_equal(h.kind, VG_FIND_DISTRO_FIXED);
    assert_string_equal(h.ref, "DSA-5059-1");
    /* the package before it: a finding of Debian's record, fixed in Debian's version */
    h = match(db, "polkit", VG_ECO_DPKG, "0.105-31", "policykit-1", "Debian:11", "CVE-2021-4034");
    assert_int_equal(h.found, 1);
    assert_int_equal(h.kind, VG_FIND_CVE);
    assert_string_equal(h.fixed, "0.105-31+deb11u1");
    /* buster has its own record; a release the lists do not name is decided upstream */
    h = match(db, "polkit", VG_ECO_DPKG, "0.105-25+deb10u1", "policykit-1", "Debian:10", "CVE-2021-4034");
    assert_int_equal(h.kind, VG_FIND_DISTRO_FIXED);
    h = match(db, "polkit", VG_ECO_DPKG, "0.105-31+deb11u1", "policykit-1", "Debian:12", "CVE-2021-4034");
    assert_int_equal(h.kind, VG_FIND_CVE);
    assert_string_equal(h.ref, "");
    vg_import_report_free(&rep);
    vg_advdb_free(db);

    /* malformed text: warnings, no crash, nothing invented */
    db = vg_advdb_new();
    memset(&rep, 0, sizeof rep);
    static const char junk[] = "[01 Jul 2024] DSA-5724-1 openssh - security update\n\t{CVE-2024-6387\n"
                               "\t[bookworm] - openssh\n\t[nosuch] - openssh 1:9.2p1-2+deb12u3\n"
                               "[99 Foo 2024] junk\n\t[bookworm] - openssh 1:9.2p1-2+deb12u3\n";
    assert_true(vg_debian_list_detect(junk, sizeof junk - 1));
    assert_int_equal(vg_debian_list_import(junk, sizeof junk - 1, "junk.list", db, &rep, err, sizeof err), 0);
    assert_int_equal(vg_advdb_count(db), 0);   /* no version, an unknown release, a line outside an entry */
    assert_int_equal(rep.skipped.n, 1);        /* the unknown release, named */
    assert_false(vg_debian_list_detect("{\"id\": 1}", 9));
    vg_import_report_free(&rep);
    vg_advdb_free(db);
}

/* The Go database's records: a withdrawn one is skipped; moby's 2026 records
 * are fixed only in github.com/moby/moby/v2 (2.0.0-beta.N, no Docker Engine
 * release), so their open-ended github.com/docker/docker entries are not
 * taken as "every Docker version"; containerd listed as two modules gets the
 * nearest fix. */
static void test_go_records(void **state)
{
    (void)state;
    struct vg_advdb *db = vg_advdb_new();
    struct vg_import_report rep;
    memset(&rep, 0, sizeof rep);
    char err[512];
    assert_int_equal(vg_import_path("data/sources/osv/go", db, &rep, err, sizeof err), 0);
    assert_int_equal(rep.skipped_files, 1);
    bool warned = false;
    for (size_t i = 0; i < rep.warnings.n; i++) warned |= strstr(rep.warnings.v[i], "GO-2025-3543.json: withdrawn") != NULL;
    assert_true(warned);
    for (size_t i = 0; i < vg_advdb_count(db); i++) assert_string_not_equal(vg_advdb_get(db, i)->id, "CVE-2025-27612");
    /* CVE-2026-41567 (GO-2026-5746): no docker advisory at all */
    struct hit h = match(db, "docker", VG_ECO_GENERIC, "29.9.0", NULL, NULL, "CVE-2026-41567");
    assert_int_equal(h.found, 0);
    bool told = false;
    for (size_t i = 0; i < rep.skipped.n; i++)
        told |= strstr(rep.skipped.v[i], "GO-2026-5746.json") && strstr(rep.skipped.v[i], "fixed only in github.com/moby/moby/v2");
    assert_true(told);
    /* CVE-2024-41110 (GO-2024-3005), "+incompatible" versions: 27.1.0 affected, fixed in 27.1.1 */
    h = match(db, "docker", VG_ECO_GENERIC, "27.1.0", NULL, NULL, "CVE-2024-41110");
    assert_int_equal(h.found, 1);
    assert_string_equal(h.fixed, "27.1.1");
    assert_int_equal(match(db, "docker", VG_ECO_GENERIC, "27.1.1", NULL, NULL, "CVE-2024-41110").found, 0);
    /* CVE-2025-64329 (GO-2025-4108): containerd < 1.7.29 and containerd/v2 < 2.0.7, 2.1 < 2.1.5 */
    h = match(db, "containerd", VG_ECO_GENERIC, "1.7.28", NULL, NULL, "CVE-2025-64329");
    assert_string_equal(h.fixed, "1.7.29");
    h = match(db, "containerd", VG_ECO_GENERIC, "2.0.6", NULL, NULL, "CVE-2025-64329");
    assert_string_equal(h.fixed, "2.0.7");
    h = match(db, "containerd", VG_ECO_GENERIC, "2.1.4", NULL, NULL, "CVE-2025-64329");
    assert_string_equal(h.fixed, "2.1.5");
    h = match(db, "containerd", VG_ECO_GENERIC, "2.0.0-rc.1", NULL, NULL, "CVE-2025-64329");
    assert_string_equal(h.fixed, "2.0.7");
    /* the v2 module's "introduced: 0" starts at 2.0.0: containerd 1.6.38 has CVE-2024-40635 fixed */
    assert_int_equal(match(db, "containerd", VG_ECO_GENERIC, "1.6.38", NULL, NULL, "CVE-2024-40635").found, 0);
    assert_int_equal(match(db, "containerd", VG_ECO_GENERIC, "1.6.37", NULL, NULL, "CVE-2024-40635").found, 1);
    /* CVE-2026-53488 (GO-2026-5758): containerd 1.7.32 affected, 2.2.5 fixed */
    h = match(db, "containerd", VG_ECO_GENERIC, "1.7.32", NULL, NULL, "CVE-2026-53488");
    assert_string_equal(h.fixed, "1.7.33");
    assert_int_equal(match(db, "containerd", VG_ECO_GENERIC, "2.2.5", NULL, NULL, "CVE-2026-53488").found, 0);
    /* a record with no CVE is named by its GitHub advisory */
    bool ghsa = false;
    for (size_t i = 0; i < vg_advdb_count(db); i++) ghsa |= !strcmp(vg_advdb_get(db, i)->id, "GHSA-7ww5-4wqc-m92c");
    assert_true(ghsa);
    vg_import_report_free(&rep);
    vg_advdb_free(db);
}

/* Status per source: the newest record and its age, the copy's age deciding
 * staleness when the manifest dates it. */
static void test_status(void **state)
{
    (void)state;
    struct vg_advdb *db = vg_advdb_new();
    struct vg_import_report rep;
    memset(&rep, 0, sizeof rep);
    char err[512];
    assert_int_equal(vg_import_manifest("data/sources/MANIFEST", db, &rep, err, sizeof err), 0);
    assert_int_equal(vg_advdb_source_count(db), 8);
    vg_advdb_set_date(db, "2026-09-01");
    struct vg_source_status *rows;
    size_t n = vg_advdb_status(db, 90, &rows);
    const struct vg_source_status *go = NULL, *csaf = NULL, *deb = NULL, *amd = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(rows[i].name, "go-vulndb")) go = &rows[i];
        if (!strcmp(rows[i].name, "nvidia-csaf")) csaf = &rows[i];
        if (!strcmp(rows[i].name, "debian")) deb = &rows[i];
        if (!strcmp(rows[i].name, "amd-cve")) amd = &rows[i];
    }
    assert_non_null(go);
    assert_non_null(csaf);
    assert_non_null(deb);
    assert_true(csaf->records > 150);
    assert_string_equal(csaf->newest, "2026-07-28");   /* bulletin 5857 */
    assert_int_equal(csaf->age_days, 35);
    assert_int_equal(csaf->snapshot_age_days, 14);
    assert_false(csaf->stale);
    assert_true(go->undated > 0);                       /* the Go database's files carry no dates */
    assert_true(go->age_from_snapshot);
    assert_int_equal(go->age_days, 11);
    assert_false(go->stale);
    assert_true(deb->stale);                            /* copied 2023-04-02 */
    assert_non_null(amd);                               /* AMD's six CVE records, the newest of 2026-05-15 */
    assert_int_equal(amd->records, 6);
    assert_string_equal(amd->newest, "2026-05-15");
    free(rows);
    vg_advdb_set_date(db, "2026-12-03");
    n = vg_advdb_status(db, 90, &rows);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(rows[i].name, "nvidia-csaf")) assert_true(rows[i].stale);   /* 107 days after its copy */
    free(rows);
    assert_int_equal(vg_days_between("2026-01-01", "2026-03-01"), 59);
    assert_int_equal(vg_days_between("2026-03-01", "2026-01-01"), 0);
    assert_int_equal(vg_days_between("2026-1-01", "2026-03-01"), -1);
    vg_import_report_free(&rep);
    vg_advdb_free(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_manifest),
        cmocka_unit_test(test_debian_lists),
        cmocka_unit_test(test_go_records),
        cmocka_unit_test(test_status),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
