/* test_dpkg.c — unit tests for the dpkg status parser (pkgdb_dpkg.c): stanzas,
 * continuation lines, installed-only, and every kind of corrupt file giving
 * an error instead of a crash. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "inventory/inventory.h"
#include "util/strutil.h"

/* Parses text (copied: the parser works in place) into a fresh inventory. */
static int parse(struct vg_inventory *inv, const char *text, size_t len)
{
    vg_inventory_init(inv, "/");
    char *buf = vg_xmalloc(len + 1);
    memcpy(buf, text, len);
    buf[len] = 0;
    inv->bufs = vg_xmalloc(sizeof *inv->bufs);
    inv->bufs[inv->nbufs++] = buf;
    int rc = vg_dpkg_parse(inv, buf, len, "status");
    vg_inventory_sort_pkgs(inv);
    return rc;
}

static const char good[] =
    "Package: zlib1g\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1:1.2.11.dfsg-2ubuntu9.2\n"
    "Description: compression library\n long description\n .\n more\n\n"
    "Package: runc\r\nStatus: install ok installed\r\nVersion:   1.1.7-0ubuntu1~22.04.1  \r\nArchitecture: amd64\r\n\r\n"
    "Package: old-driver\nStatus: deinstall ok config-files\nVersion: 470.1\n\n"
    "Package: held\nStatus: hold ok installed\nVersion: 2.0\nArchitecture: all\n\n"
    "Package: half\nStatus: install reinstreq half-installed\nVersion: 1.0\n\n";

static void test_parse_good(void **state)
{
    (void)state;
    struct vg_inventory inv;
    assert_int_equal(parse(&inv, good, sizeof good - 1), 0);
    assert_int_equal(inv.npkgs, 3);
    /* sorted by name */
    assert_string_equal(inv.pkgs[0].name, "held");
    assert_string_equal(inv.pkgs[1].name, "runc");
    assert_string_equal(inv.pkgs[2].name, "zlib1g");
    const struct vg_pkg *p = vg_inventory_pkg(&inv, "runc");
    assert_non_null(p);
    assert_string_equal(p->version, "1.1.7-0ubuntu1~22.04.1");
    assert_string_equal(p->arch, "amd64");
    assert_int_equal(p->eco, VG_ECO_DPKG);
    assert_string_equal(vg_inventory_pkg(&inv, "zlib1g")->version, "1:1.2.11.dfsg-2ubuntu9.2");
    assert_null(vg_inventory_pkg(&inv, "old-driver"));
    assert_null(vg_inventory_pkg(&inv, "half"));
    assert_null(vg_inventory_pkg(&inv, "zz"));
    vg_inventory_free(&inv);
}

static void expect_error(const char *text, size_t len)
{
    struct vg_inventory inv;
    assert_int_equal(parse(&inv, text, len), -1);
    vg_inventory_free(&inv);
}

static void test_corrupt(void **state)
{
    (void)state;
    /* a stanza without Package */
    const char nopkg[] = "Package: a\nStatus: install ok installed\nVersion: 1\n\nStatus: install ok installed\nVersion: 1\n\n";
    expect_error(nopkg, sizeof nopkg - 1);
    /* truncated mid-stanza, and mid-line */
    size_t cut = strstr(good, "Package: old-driver") - good + 30;
    expect_error(good, cut);
    expect_error(good, strstr(good, "Package: runc") - good + 8);
    /* binary garbage */
    char bin[512];
    for (size_t i = 0; i < sizeof bin; i++) bin[i] = (char)((i * 131 + 7) & 0xff);
    expect_error(bin, sizeof bin);
    const char nul[] = "Package: a\nStatus: install ok installed\nVer\0sion: 1\n\n";
    expect_error(nul, sizeof nul - 1);
    /* a line that is not "Field: value", a continuation outside a stanza */
    const char nocolon[] = "Package: a\nthis is not a field\n\n";
    expect_error(nocolon, sizeof nocolon - 1);
    const char cont[] = " continuation\nPackage: a\n\n";
    expect_error(cont, sizeof cont - 1);
    /* installed without Version; a package without Status */
    const char nover[] = "Package: a\nStatus: install ok installed\n\n";
    expect_error(nover, sizeof nover - 1);
    const char nostatus[] = "Package: a\nVersion: 1\n\n";
    expect_error(nostatus, sizeof nostatus - 1);
    /* a 1 MB line */
    size_t big = 1 << 20;
    char *huge = vg_xmalloc(big + 64);
    strcpy(huge, "Package: a\nDescription: ");
    size_t l = strlen(huge);
    memset(huge + l, 'x', big);
    strcpy(huge + l + big, "\n\n");
    expect_error(huge, strlen(huge));
    free(huge);
}

static void test_empty_and_missing(void **state)
{
    (void)state;
    struct vg_inventory inv;
    assert_int_equal(parse(&inv, "", 0), 0);
    assert_int_equal(inv.npkgs, 0);
    vg_inventory_free(&inv);
    /* a root without a dpkg database is not an error */
    vg_inventory_init(&inv, "tests/fixtures/roots/multi-cuda");
    assert_int_equal(vg_pkgdb_dpkg_load(&inv), 0);
    assert_int_equal(inv.npkgs, 0);
    assert_string_equal(inv.pkgdb_source, "");
    vg_inventory_free(&inv);
    /* a status "file" that is a directory is */
    char tmpl[] = "/tmp/vg-dpkg-XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    char path[128];
    snprintf(path, sizeof path, "%s/var/lib/dpkg/status", tmpl);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", path);
    assert_int_equal(system(cmd), 0);
    vg_inventory_init(&inv, tmpl);
    assert_int_equal(vg_pkgdb_dpkg_load(&inv), -1);
    vg_inventory_free(&inv);
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpl);
    assert_int_equal(system(cmd), 0);
}

/* The changelog of a backported package: CVEs per entry, the oldest entry
 * naming a CVE wins, entries above the installed version do not count, and
 * the real Debian 12 changelog in the fixture root is read through gzip. */
static void test_changelog(void **state)
{
    (void)state;
    static const char text[] =
        "slurm-wlm (22.05.8-4+deb12u2) bookworm-security; urgency=medium\n\n"
        "  * Fix CVE-2023-49933, CVE-2023-49935,\n        CVE-2023-49938 (Closes: #1058720)\n\n"
        " -- Someone <a@b>  Mon, 25 Dec 2023 09:26:16 +0100\n\n"
        "slurm-wlm (22.05.8-4+deb12u1) bookworm-security; urgency=medium\n\n"
        "  * Fix CVE-2023-41914; regression of CVE-2023-49933 noted\n"
        "  * not ids: XCVE-2020-1234 CVE-20-1 CVE-2021-12\n\n"
        " -- Someone <a@b>  Thu, 12 Oct 2023 20:09:40 +0200\n";
    struct vg_changelog cl = { 0 };
    vg_deb_changelog_parse(text, sizeof text - 1, "22.05.8-4+deb12u2", &cl);
    assert_int_equal(cl.n, 4);
    assert_string_equal(vg_changelog_names(&cl, "CVE-2023-49935"), "22.05.8-4+deb12u2");
    assert_string_equal(vg_changelog_names(&cl, "CVE-2023-49938"), "22.05.8-4+deb12u2");   /* continuation line */
    assert_string_equal(vg_changelog_names(&cl, "CVE-2023-41914"), "22.05.8-4+deb12u1");
    assert_string_equal(vg_changelog_names(&cl, "CVE-2023-49933"), "22.05.8-4+deb12u1");   /* oldest entry */
    assert_null(vg_changelog_names(&cl, "CVE-2020-1234"));
    vg_changelog_free(&cl);
    vg_deb_changelog_parse(text, sizeof text - 1, "22.05.8-4+deb12u1", &cl);   /* deb12u2 not installed */
    assert_null(vg_changelog_names(&cl, "CVE-2023-49935"));
    assert_non_null(vg_changelog_names(&cl, "CVE-2023-41914"));
    vg_changelog_free(&cl);

    char err[512];
    const char *root = "tests/fixtures/roots/debian12-backport";
    assert_int_equal(vg_deb_changelog_load(root, "libc6", "2.36-9+deb12u14", &cl, err, sizeof err), 0);
    assert_string_equal(cl.path, "/usr/share/doc/libc6/changelog.Debian.gz");
    assert_string_equal(vg_changelog_names(&cl, "CVE-2023-4911"), "2.36-9+deb12u3");
    vg_changelog_free(&cl);
    assert_int_equal(vg_deb_changelog_load(root, "no-such-package", "1", &cl, err, sizeof err), 0);
    assert_int_equal(cl.n, 0);
    assert_string_equal(cl.path, "");
}

static void test_load_fixture(void **state)
{
    (void)state;
    struct vg_inventory inv;
    vg_inventory_init(&inv, "tests/fixtures/roots/ubuntu2204-h100-run535");
    assert_int_equal(vg_pkgdb_dpkg_load(&inv), 0);
    assert_int_equal(inv.npkgs, 22); /* 23 stanzas, one removed (config-files) */
    assert_string_equal(inv.pkgdb_source, "dpkg:/var/lib/dpkg/status");
    for (size_t i = 1; i < inv.npkgs; i++) assert_true(strcmp(inv.pkgs[i - 1].name, inv.pkgs[i].name) < 0);
    assert_null(vg_inventory_pkg(&inv, "nvidia-driver-470"));
    size_t it = 0;
    const struct vg_pkg *p = vg_inventory_pkg_prefix(&inv, "libnvidia-container", &it);
    assert_string_equal(p->name, "libnvidia-container-tools");
    p = vg_inventory_pkg_prefix(&inv, "libnvidia-container", &it);
    assert_string_equal(p->name, "libnvidia-container1");
    assert_null(vg_inventory_pkg_prefix(&inv, "libnvidia-container", &it));
    vg_inventory_free(&inv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_good),
        cmocka_unit_test(test_corrupt),
        cmocka_unit_test(test_empty_and_missing),
        cmocka_unit_test(test_load_fixture),
        cmocka_unit_test(test_changelog),
    };
    return cmocka_run_group_tests_name("dpkg", tests, NULL, NULL);
}
