/* test_osv.c — the OSV importer: event ranges (introduced/fixed/last_affected,
 * open-ended, several per range), versions[], CVE from aliases, package-name
 * mapping, distro ecosystems (a release's CVEs from its cves_map), and the
 * bundled data/sources/{osv,curated} records checked against every non-NVIDIA CVE row of tests/fixtures/advisories.tsv
 * with a plain range: the introduced (or last affected) version is affected,
 * the fixed version is not; the bundled AlmaLinux records (ALSA) matched with
 * rpm version rules on the node's release and source package. */
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
    int n;
};

static void cb(const struct vg_finding *f, void *ctx)
{
    struct hit *h = ctx;
    if (f->kind == VG_FIND_CVE && !strcmp(f->adv->id, h->id)) h->n++;
}

static int hits(const struct vg_advdb *db, const char *comp, const char *version, enum vg_ecosystem eco,
                const char *id)
{
    struct vg_component c;
    memset(&c, 0, sizeof c);
    vg_strlcpy(c.name, comp, sizeof c.name);
    vg_strlcpy(c.version, version, sizeof c.version);
    vg_strlcpy(c.upstream, version, sizeof c.upstream);
    c.eco = eco;
    struct hit h = { id, 0 };
    vg_advdb_match(db, &c, cb, &h);
    return h.n;
}

/* Findings of USN-1 on a kernel package of release distro. */
static int distro_hits(const struct vg_advdb *db, const char *version, const char *distro)
{
    struct vg_component c;
    memset(&c, 0, sizeof c);
    vg_strlcpy(c.name, "linux-kernel", sizeof c.name);
    vg_strlcpy(c.version, version, sizeof c.version);
    vg_strlcpy(c.package, "linux-image-6.8.0-86-generic", sizeof c.package);
    vg_strlcpy(c.srcpkg, "linux", sizeof c.srcpkg);
    vg_strlcpy(c.distro, distro, sizeof c.distro);
    c.eco = VG_ECO_DPKG;
    struct hit h = { "USN-1", 0 };
    vg_advdb_match(db, &c, cb, &h);
    return h.n;
}

static void import_str(struct vg_advdb *db, struct vg_import_report *rep, const char *text)
{
    json_error_t je;
    json_t *doc = json_loads(text, 0, &je);
    assert_non_null(doc);
    const struct vg_importer *imp = vg_importer_for(doc);
    assert_non_null(imp);
    assert_string_equal(imp->name, "osv");
    char err[256];
    assert_int_equal(imp->import(doc, "mem.json", db, rep, err, sizeof err), 0);
    json_decref(doc);
}

static void test_events(void **state)
{
    (void)state;
    struct vg_advdb *db = vg_advdb_new();
    struct vg_import_report rep;
    memset(&rep, 0, sizeof rep);
    import_str(db, &rep,
               "{\"id\":\"GHSA-xxxx\",\"aliases\":[\"CVE-2099-1\"],\"summary\":\"s\",\"published\":\"2025-03-17T00:00:00Z\","
               "\"database_specific\":{\"severity\":\"MODERATE\"},"
               "\"references\":[{\"type\":\"WEB\",\"url\":\"https://w\"},{\"type\":\"ADVISORY\",\"url\":\"https://a\"}],"
               "\"affected\":[{\"package\":{\"ecosystem\":\"Go\",\"name\":\"github.com/containerd/containerd\"},"
               "\"ranges\":[{\"type\":\"SEMVER\",\"events\":[{\"introduced\":\"0\"},{\"fixed\":\"1.6.38\"},"
               "{\"introduced\":\"1.7.0-beta.0\"},{\"fixed\":\"1.7.27\"},{\"introduced\":\"2.2.0\"}]},"
               "{\"type\":\"GIT\",\"repo\":\"r\",\"events\":[{\"introduced\":\"abc\"}]}],"
               "\"versions\":[\"2.1.0\"]},"
               "{\"package\":{\"ecosystem\":\"npm\",\"name\":\"left-pad\"},\"ranges\":[]}]}");
    assert_int_equal(vg_advdb_count(db), 1);
    const struct vg_advisory *a = vg_advdb_get(db, 0);
    assert_string_equal(a->id, "CVE-2099-1");
    assert_string_equal(a->component, "containerd");
    assert_string_equal(a->url, "https://a");
    assert_string_equal(a->published, "2025-03-17");
    assert_int_equal(a->severity, VG_SEV_MEDIUM);
    assert_int_equal(a->nranges, 4);
    assert_int_equal(rep.products_skipped, 1);   /* left-pad */
    assert_int_equal(rep.warnings.n, 1);         /* the GIT range */
    assert_int_equal(hits(db, "containerd", "1.6.37", VG_ECO_GENERIC, "CVE-2099-1"), 1);
    assert_int_equal(hits(db, "containerd", "1.6.38", VG_ECO_GENERIC, "CVE-2099-1"), 0);
    assert_int_equal(hits(db, "containerd", "1.7.0-rc.1", VG_ECO_GENERIC, "CVE-2099-1"), 1);
    assert_int_equal(hits(db, "containerd", "1.7.27", VG_ECO_GENERIC, "CVE-2099-1"), 0);
    assert_int_equal(hits(db, "containerd", "2.1.0", VG_ECO_GENERIC, "CVE-2099-1"), 1);
    assert_int_equal(hits(db, "containerd", "2.1.1", VG_ECO_GENERIC, "CVE-2099-1"), 0);
    assert_int_equal(hits(db, "containerd", "2.3.0", VG_ECO_GENERIC, "CVE-2099-1"), 1);   /* open-ended */
    /* the same record again adds nothing */
    int before = rep.duplicates;
    import_str(db, &rep,
               "{\"id\":\"CVE-2099-1\",\"affected\":[{\"package\":{\"ecosystem\":\"Go\",\"name\":\"containerd\"},"
               "\"ranges\":[{\"type\":\"ECOSYSTEM\",\"events\":[{\"introduced\":\"0\"},{\"fixed\":\"1.6.38\"}]}]}]}");
    assert_int_equal(rep.duplicates, before + 1);
    /* a distro record keeps its id, release, source package and CVEs, and
     * compares distro versions on that release only */
    import_str(db, &rep,
               "{\"id\":\"USN-1\",\"aliases\":[],\"upstream\":[\"UBUNTU-CVE-2099-2\"],\"related\":[\"CVE-2099-3\"],"
               "\"affected\":[{\"package\":{\"ecosystem\":\"Ubuntu:24.04:LTS\","
               "\"name\":\"linux\"},\"ranges\":[{\"type\":\"ECOSYSTEM\",\"events\":[{\"introduced\":\"0\"},"
               "{\"last_affected\":\"6.8.0-86.87\"}]}]},"
               "{\"package\":{\"ecosystem\":\"Ubuntu:Pro:24.04:LTS\",\"name\":\"linux\"},\"ranges\":[]}]}");
    const struct vg_advisory *usn = NULL;
    for (size_t i = 0; i < vg_advdb_count(db); i++)
        if (!strcmp(vg_advdb_get(db, i)->id, "USN-1")) usn = vg_advdb_get(db, i);
    assert_non_null(usn);
    assert_string_equal(usn->distro, "Ubuntu:24.04:LTS");
    assert_string_equal(usn->package, "linux");
    assert_string_equal(usn->cves, "CVE-2099-2 CVE-2099-3");
    assert_int_equal(distro_hits(db, "6.8.0-86.87", "Ubuntu:24.04"), 1);
    assert_int_equal(distro_hits(db, "6.8.0-86.88", "Ubuntu:24.04"), 0);
    assert_int_equal(distro_hits(db, "6.8.0-86.87", "Ubuntu:22.04"), 0);   /* another release */
    assert_int_equal(distro_hits(db, "6.8.0-86.87", "Debian:12"), 0);
    /* a record over several releases: each release's CVEs are those its
     * cves_map names; an entry whose list is empty keeps the record's */
    import_str(db, &rep,
               "{\"id\":\"USN-2\",\"upstream\":[\"UBUNTU-CVE-2099-4\",\"UBUNTU-CVE-2099-5\"],"
               "\"affected\":[{\"package\":{\"ecosystem\":\"Ubuntu:24.04:LTS\",\"name\":\"qemu\"},"
               "\"ranges\":[{\"type\":\"ECOSYSTEM\",\"events\":[{\"introduced\":\"0\"},{\"fixed\":\"1:8.2.2\"}]}],"
               "\"database_specific\":{\"cves_map\":{\"ecosystem\":\"Ubuntu:24.04:LTS\",\"cves\":[{\"id\":\"CVE-2099-5\"}]}}},"
               "{\"package\":{\"ecosystem\":\"Ubuntu:22.04:LTS\",\"name\":\"qemu\"},"
               "\"ranges\":[{\"type\":\"ECOSYSTEM\",\"events\":[{\"introduced\":\"0\"},{\"fixed\":\"1:6.2\"}]}],"
               "\"database_specific\":{\"cves_map\":{\"ecosystem\":\"Ubuntu:22.04:LTS\",\"cves\":[]}}}]}");
    int seen = 0;
    for (size_t i = 0; i < vg_advdb_count(db); i++) {
        const struct vg_advisory *u = vg_advdb_get(db, i);
        if (strcmp(u->id, "USN-2")) continue;
        assert_string_equal(u->component, "qemu");
        if (!strcmp(u->distro, "Ubuntu:24.04:LTS")) {
            assert_string_equal(u->cves, "CVE-2099-5");
            seen |= 1;
        } else {
            assert_string_equal(u->distro, "Ubuntu:22.04:LTS");
            assert_string_equal(u->cves, "CVE-2099-4 CVE-2099-5");
            seen |= 2;
        }
    }
    assert_int_equal(seen, 3);
    vg_import_report_free(&rep);
    vg_advdb_free(db);
}

static void test_bundled_rows(void **state)
{
    (void)state;
    struct vg_advdb *db = vg_advdb_new();
    struct vg_import_report rep;
    memset(&rep, 0, sizeof rep);
    char err[512];
    assert_int_equal(vg_import_path("data/sources/osv", db, &rep, err, sizeof err), 0);
    assert_int_equal(vg_import_path("data/sources/curated", db, &rep, err, sizeof err), 0);
    assert_int_equal(rep.warnings.n, 1);   /* the Go database's withdrawn GO-2025-3543 */
    assert_non_null(strstr(rep.warnings.v[0], "withdrawn"));
    static const struct { const char *prefix, *comp; } map[] = {
        { "runc", "runc" },       { "containerd", "containerd" }, { "Docker", "docker" },  { "Kubernetes", "kubelet" },
        { "Slurm", "slurm" },     { "MUNGE", "munge" },           { "OpenPMIx", "pmix" },  { "Apptainer", "apptainer" },
        { "OpenSSH", "openssh" }, { "sudo", "sudo" },             { "glibc", "glibc" },    { "Linux kernel\t", "linux-kernel" },
    };
    FILE *fp = fopen("tests/fixtures/advisories.tsv", "r");
    assert_non_null(fp);
    char line[8192];
    int rows = 0;
    while (fgets(line, sizeof line, fp)) {
        const char *comp = NULL;
        for (size_t i = 0; i < sizeof map / sizeof map[0] && !comp; i++)
            if (vg_startswith(line, map[i].prefix)) comp = map[i].comp;
        char *f[12];
        line[strcspn(line, "\r\n")] = 0;
        if (!comp || vg_split(line, "\t", f, 12) < 9 || !vg_startswith(f[2], "CVE-")) continue;
        char range[256];
        vg_strlcpy(range, f[6], sizeof range);
        range[strcspn(range, " (")] = 0;
        char *parts[8];
        int np = vg_split(range, ";", parts, 8);
        for (int p = 0; p < np; p++) {
            char *b[2];
            char *part = vg_trim(parts[p]);
            int nb = vg_split(part, ",", b, 2);
            const char *aff = NULL, *fixed = NULL;
            for (int k = 0; k < nb; k++) {
                if (vg_startswith(b[k], ">=") || (b[k][0] == '=' && b[k][1] != '=')) aff = b[k] + (b[k][0] == '=' ? 1 : 2);
                else if (vg_startswith(b[k], "<=")) aff = b[k] + 2;
                else if (b[k][0] == '<') fixed = b[k] + 1;
            }
            if (aff && hits(db, comp, aff, VG_ECO_GENERIC, f[2]) != 1) fail_msg("%s %s: %s should be affected", comp, f[2], aff);
            if (fixed && hits(db, comp, fixed, VG_ECO_GENERIC, f[2]) != 0) fail_msg("%s %s: %s is fixed", comp, f[2], fixed);
            if (aff || fixed) rows++;
        }
    }
    fclose(fp);
    if (rows < 60) fail_msg("only %d ranges checked", rows);
    vg_import_report_free(&rep);
    vg_advdb_free(db);
}

/* The finding of advisory id (any kind) on an rpm package of release distro,
 * with its evidence; 0 when there is none. */
struct rpm_hit {
    const char *id;
    enum vg_finding_kind kind;
    enum vg_find_evidence ev;
    int n;
};

static void rpm_cb(const struct vg_finding *f, void *ctx)
{
    struct rpm_hit *h = ctx;
    if (strcmp(f->adv->id, h->id) && strcmp(f->evidence_ref, h->id)) return;
    h->kind = f->kind;
    h->ev = f->evidence;
    h->n++;
}

static struct rpm_hit rpm_match(const struct vg_advdb *db, const char *comp, const char *pkg, const char *src,
                                const char *version, const char *upstream, const char *distro, const char *id)
{
    struct vg_component c;
    memset(&c, 0, sizeof c);
    vg_strlcpy(c.name, comp, sizeof c.name);
    vg_strlcpy(c.version, version, sizeof c.version);
    vg_strlcpy(c.upstream, upstream, sizeof c.upstream);
    vg_strlcpy(c.package, pkg, sizeof c.package);
    vg_strlcpy(c.srcpkg, src, sizeof c.srcpkg);
    vg_strlcpy(c.distro, distro, sizeof c.distro);
    c.eco = VG_ECO_RPM;
    struct rpm_hit h = { id, 0, 0, 0 };
    vg_advdb_match(db, &c, rpm_cb, &h);
    return h;
}

static void test_almalinux(void **state)
{
    (void)state;
    struct vg_advdb *db = vg_advdb_new();
    struct vg_import_report rep;
    memset(&rep, 0, sizeof rep);
    char err[512];
    assert_int_equal(vg_import_path("data/sources/osv/almalinux", db, &rep, err, sizeof err), 0);
    assert_int_equal(vg_import_path("data/sources/curated", db, &rep, err, sizeof err), 0);
    assert_int_equal(rep.warnings.n, 0);
    const struct vg_advisory *ssh = NULL;
    for (size_t i = 0; i < vg_advdb_count(db); i++)
        if (!strcmp(vg_advdb_get(db, i)->id, "ALSA-2024:4312")) {
            assert_null(ssh);   /* only the entry named like the source rpm maps to openssh */
            ssh = vg_advdb_get(db, i);
        }
    assert_non_null(ssh);
    assert_string_equal(ssh->component, "openssh");
    assert_string_equal(ssh->package, "openssh");
    assert_string_equal(ssh->distro, "AlmaLinux:9");
    assert_string_equal(ssh->cves, "CVE-2024-6387");   /* from "related" */
    assert_int_equal(ssh->severity, VG_SEV_HIGH);       /* "Important: openssh security update" */
    assert_int_equal(ssh->eco, VG_ECO_RPM);
    assert_string_equal(ssh->url, "https://errata.almalinux.org/9/ALSA-2024-4312.html");
    /* 8.7p1-38.el9 (9.4 as released) < 8.7p1-38.el9_4.1 in rpm order: the ALSA is the finding */
    struct rpm_hit h = rpm_match(db, "openssh", "openssh-server", "openssh", "8.7p1-38.el9", "8.7p1", "AlmaLinux:9",
                                 "ALSA-2024:4312");
    assert_int_equal(h.n, 1);
    assert_int_equal(h.kind, VG_FIND_CVE);
    assert_int_equal(h.ev, VG_EV_DISTRO_ADVISORY);
    assert_int_equal(rpm_match(db, "openssh", "openssh-server", "openssh", "8.7p1-38.el9", "8.7p1", "AlmaLinux:9",
                               "CVE-2024-6387").n, 0);   /* not reported twice */
    h = rpm_match(db, "openssh", "openssh-server", "openssh", "8.7p1-38.el9_4.1", "8.7p1", "AlmaLinux:9", "CVE-2024-6387");
    assert_int_equal(h.n, 1);
    assert_int_equal(h.kind, VG_FIND_DISTRO_FIXED);
    /* another release, or the binary package's name without its source: the upstream comparison decides */
    h = rpm_match(db, "openssh", "openssh-server", "openssh", "8.7p1-38.el9", "8.7p1", "Rocky Linux:9", "CVE-2024-6387");
    assert_true(h.n == 1 && h.kind == VG_FIND_CVE && h.ev == VG_EV_UPSTREAM);
    h = rpm_match(db, "openssh", "openssh-server", "openssh-server", "8.7p1-38.el9", "8.7p1", "AlmaLinux:9", "CVE-2024-6387");
    assert_true(h.n == 1 && h.ev == VG_EV_UPSTREAM);
    /* glibc: 2.34-100.el9_4.2 is past 2.34-60.el9_2.7 (release 100 > 60), 2.34-60.el9_2.6 is not */
    h = rpm_match(db, "glibc", "glibc", "glibc", "2.34-100.el9_4.2", "2.34", "AlmaLinux:9", "CVE-2023-4911");
    assert_true(h.n == 1 && h.kind == VG_FIND_DISTRO_FIXED && h.ev == VG_EV_DISTRO_ADVISORY);
    h = rpm_match(db, "glibc", "glibc", "glibc", "2.34-60.el9_2.6", "2.34", "AlmaLinux:9", "ALSA-2023:5453");
    assert_true(h.n == 1 && h.kind == VG_FIND_CVE);
    vg_import_report_free(&rep);
    vg_advdb_free(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_events), cmocka_unit_test(test_bundled_rows),
                                        cmocka_unit_test(test_almalinux) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
