/* test_changelog_rpm.c — unit tests for the rpm changelog reader
 * (src/inventory/changelog_rpm.c): the real RHEL 9 openssh changelog of the
 * rhel9-rpm fixture (tests/fixtures/rhel9-rpm.changelogs/README.md), the
 * header forms other published spec files use (the kernel's bracketed
 * version, on the alma9-rpm fixture's kernel-core), the version filter with the
 * distribution tag left out, and the changelog read through the real rpm
 * program from a database built with make-rpmdb.sh. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "inventory/inventory.h"
#include "util/rootfs.h"
#include "util/spawn.h"
#include "util/strutil.h"

#define OPENSSH_CL "tests/fixtures/rhel9-rpm.changelogs/openssh-server"

static char *read_fixture(size_t *len)
{
    char *text = NULL;
    assert_int_equal(vg_read_file(NULL, OPENSSH_CL, 1 << 20, &text, len), 0);
    return text;
}

/* openssh 8.7p1-43.el9: each CVE with the oldest entry naming it. */
static void test_rhel9_openssh(void **state)
{
    (void)state;
    size_t len;
    char *text = read_fixture(&len);
    struct vg_changelog cl = { 0 };
    vg_rpm_changelog_parse(text, len, "8.7p1-43.el9", &cl);
    assert_int_equal(cl.n, 5);
    assert_string_equal(vg_changelog_names(&cl, "CVE-2024-6409"), "8.7p1-43");
    assert_string_equal(vg_changelog_names(&cl, "CVE-2024-6387"), "8.7p1-42");
    assert_string_equal(vg_changelog_names(&cl, "CVE-2023-48795"), "8.7p1-36");   /* named by 38, 37 and 36 */
    assert_string_equal(vg_changelog_names(&cl, "CVE-2023-51385"), "8.7p1-36");
    assert_string_equal(vg_changelog_names(&cl, "CVE-2023-38408"), "8.7p1-34");
    assert_null(vg_changelog_names(&cl, "CVE-2025-26465"));
    vg_changelog_free(&cl);

    /* an older instance (rpm -q prints every installed one): 42 and 43 do not count */
    vg_rpm_changelog_parse(text, len, "8.7p1-41.el9", &cl);
    assert_null(vg_changelog_names(&cl, "CVE-2024-6387"));
    assert_null(vg_changelog_names(&cl, "CVE-2024-6409"));
    assert_string_equal(vg_changelog_names(&cl, "CVE-2023-48795"), "8.7p1-36");
    vg_changelog_free(&cl);

    /* no installed version: every entry counts */
    vg_rpm_changelog_parse(text, len, NULL, &cl);
    assert_int_equal(cl.n, 5);
    vg_changelog_free(&cl);
    free(text);
}

/* Header forms of published spec files: an epoch-less "- V-R" with a second
 * version after " + " (RHEL openssh 8.7p1-20), no " - " before the version
 * (Rocky's openssh security build), and Rocky LTS's CVE-2024-6387 entry. */
static void test_headers(void **state)
{
    (void)state;
    static const char rhel[] =
        "* Tue Jul 26 2022 Zoltan Fridrich <zfridric@redhat.com> - 8.7p1-20 + 0.10.4-5\n"
        "- Fix openssh-8.7p1-scp-clears-file.patch\n"
        "  Related: rhbz#2056884\n\n"
        "* Fri Oct 01 2021 Dmitry Belyavskiy <dbelyavs@redhat.com> - 8.7p1-2\n"
        "- Upstream fix for CVE-2021-41617\n"
        "  Related: rhbz#2008886\n";
    struct vg_changelog cl = { 0 };
    vg_rpm_changelog_parse(rhel, sizeof rhel - 1, "8.7p1-20.el9", &cl);
    assert_int_equal(cl.n, 1);
    assert_string_equal(vg_changelog_names(&cl, "CVE-2021-41617"), "8.7p1-2");
    vg_changelog_free(&cl);

    static const char rocky_lts[] =
        "* Mon Jul 01 2024 Solar Designer <solar@openwall.com> - 8.7p1-38.0.1.0.1\n"
        "- Fix CVE-2024-6387 regreSSHion\n\n"
        "* Fri Jan 05 2024 Dmitry Belyavskiy <dbelyavs@redhat.com> - 8.7p1-38\n"
        "- Fix Terrapin attack\n"
        "  Resolves: CVE-2023-48795\n";
    vg_rpm_changelog_parse(rocky_lts, sizeof rocky_lts - 1, "8.7p1-38.0.1.0.1", &cl);
    assert_string_equal(vg_changelog_names(&cl, "CVE-2024-6387"), "8.7p1-38.0.1.0.1");
    assert_string_equal(vg_changelog_names(&cl, "CVE-2023-48795"), "8.7p1-38");
    vg_changelog_free(&cl);

    static const char rocky_sec[] =
        "* Sat Oct 07 2023 Solar Designer <solar@openwall.com> 8.7p1-30.el9.security.0.2\n"
        "- Load libsystemd.so.0, not libsystemd.so, as the latter is only provided by\n"
        "  systemd-devel\n";
    vg_rpm_changelog_parse(rocky_sec, sizeof rocky_sec - 1, "8.7p1-30.el9_2.security.0.2", &cl);
    assert_int_equal(cl.n, 0);
    vg_changelog_free(&cl);

    /* a line that is not a header (no "* " in column 0) never starts an entry */
    static const char no_header[] = "*Tue Jul 09 2024 x - 1.0-1\n- CVE-2024-0001\n";
    vg_rpm_changelog_parse(no_header, sizeof no_header - 1, NULL, &cl);
    assert_int_equal(cl.n, 0);
    vg_changelog_free(&cl);
}

/* The kernel's changelog (alma9-rpm fixture: Red Hat's RHEL 9.4 entries,
 * tests/fixtures/alma9-rpm.changelogs/README.md) writes the version in
 * brackets after the mail address: "<mail> [5.14.0-424.el9]". */
static void test_kernel(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len;
    assert_int_equal(vg_read_file(NULL, "tests/fixtures/alma9-rpm.changelogs/kernel-core", 1 << 20, &text, &len), 0);
    struct vg_changelog cl = { 0 };
    vg_rpm_changelog_parse(text, len, "5.14.0-427.13.1.el9_4", &cl);
    assert_int_equal(cl.n, 3);
    assert_string_equal(vg_changelog_names(&cl, "CVE-2024-1086"), "5.14.0-424.el9");
    assert_string_equal(vg_changelog_names(&cl, "CVE-2024-1085"), "5.14.0-424.el9");
    assert_string_equal(vg_changelog_names(&cl, "CVE-2023-6622"), "5.14.0-424.el9");
    vg_changelog_free(&cl);
    /* an older kernel installed beside it (9.3's): both entries are newer */
    vg_rpm_changelog_parse(text, len, "5.14.0-362.8.1.el9_3", &cl);
    assert_int_equal(cl.n, 0);
    vg_changelog_free(&cl);
    free(text);

    /* a bracket that is not closed, or holds no version, names no version */
    static const char bad[] = "* Mon Feb 19 2024 A <a@b> [5.14.0-424.el9\n- x {CVE-2024-1086}\n\n"
                              "* Mon Feb 19 2024 A <a@b> [RHEL]\n- x {CVE-2024-1085}\n";
    vg_rpm_changelog_parse(bad, sizeof bad - 1, NULL, &cl);
    assert_int_equal(cl.n, 0);
    vg_changelog_free(&cl);
}

/* The entry's version against the installed one: rpm order, epoch and
 * distribution tags left out (an entry is written without %{dist}; a
 * z-stream build has the tag inside its release, 38.el9_4.1). */
static void test_counts(void **state)
{
    (void)state;
    assert_true(vg_rpm_changelog_counts("8.7p1-42", "8.7p1-43.el9"));
    assert_true(vg_rpm_changelog_counts("8.7p1-43", "8.7p1-43.el9"));
    assert_false(vg_rpm_changelog_counts("8.7p1-43", "8.7p1-42.el9"));
    assert_true(vg_rpm_changelog_counts("8.7p1-38.1", "8.7p1-38.el9_4.1"));
    assert_false(vg_rpm_changelog_counts("8.7p1-38.2", "8.7p1-38.el9_4.1"));
    assert_true(vg_rpm_changelog_counts("2.34-100.2", "2.34-100.el9_4.2"));
    assert_true(vg_rpm_changelog_counts("4:1.1.12-4", "4:1.1.12-4.el9"));
    assert_true(vg_rpm_changelog_counts("1.1.12-4", "4:1.1.12-4.el9"));   /* changelogs often drop the epoch */
    assert_true(vg_rpm_changelog_counts("1.9.5p2-10", "1.9.5p2-10.el9_3"));
    assert_true(vg_rpm_changelog_counts("8.7p1", "8.7p1-43.el9"));         /* no release: any */
    assert_true(vg_rpm_changelog_counts("1.0-1", NULL));
    assert_true(vg_rpm_changelog_counts("1.0-1", ""));
}

/* The changelog read through the real rpm program, from a database built
 * with make-rpmdb.sh: one rpm run, each package's part to its component. */
static void test_rpm_load(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/vg-rpmcl-XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    const char *const cp[] = { "cp", "-r", "tests/fixtures/roots/rhel9-rpm/.", tmpl, NULL };
    struct vg_spawn_result r;
    assert_int_equal(vg_spawn(cp, NULL, NULL, 10000, &r), 0);
    assert_int_equal(r.status, 0);
    vg_spawn_result_free(&r);
    const char *const mk[] = { "sh", "tests/fixtures/make-rpmdb.sh", tmpl, "tests/fixtures/rhel9-rpm.packages", NULL };
    assert_int_equal(vg_spawn(mk, NULL, NULL, 120000, &r), 0);
    int st = r.status;
    vg_spawn_result_free(&r);
    const char *const rm[] = { "rm", "-rf", tmpl, NULL };
    if (st == 77) {
        vg_spawn(rm, NULL, NULL, 10000, &r);
        vg_spawn_result_free(&r);
        skip();
    }
    assert_int_equal(st, 0);
    struct vg_inventory inv;
    vg_inventory_init(&inv, tmpl);
    assert_int_equal(vg_inventory_collect(&inv), 0);
    assert_string_equal(inv.rpm_db, "/var/lib/rpm");
    struct vg_component *ssh = vg_inventory_find(&inv, "openssh"), *sudo = vg_inventory_find(&inv, "sudo");
    assert_non_null(ssh);
    assert_non_null(sudo);
    assert_string_equal(ssh->version, "8.7p1-43.el9");
    assert_false(ssh->changelog.read);   /* collecting reads no changelog */
    struct vg_component *want[] = { ssh, sudo };
    vg_inventory_changelogs(&inv, want, 2);
    assert_true(ssh->changelog.read);
    assert_string_equal(ssh->changelog.path, "rpm -q --changelog openssh-server");
    assert_string_equal(vg_changelog_names(&ssh->changelog, "CVE-2024-6387"), "8.7p1-42");
    assert_int_equal(ssh->changelog.n, 5);
    assert_true(sudo->changelog.read);
    assert_int_equal(sudo->changelog.n, 0);     /* built without a %changelog */
    assert_string_equal(sudo->changelog.path, "");
    vg_inventory_free(&inv);
    vg_spawn(rm, NULL, NULL, 10000, &r);
    vg_spawn_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rhel9_openssh),
        cmocka_unit_test(test_headers),
        cmocka_unit_test(test_kernel),
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_rpm_load),
    };
    return cmocka_run_group_tests_name("changelog_rpm", tests, NULL, NULL);
}
