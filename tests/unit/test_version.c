/* test_version.c — version comparison per ecosystem: Debian policy and dpkg's
 * own test vectors, rpmvercmp's (rpm's tests/rpmvercmp.at), NVIDIA driver
 * numbers and semver-like upstream versions; plus upstream extraction. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include "core/version.h"

struct vec {
    const char *a, *b;
    int want;   /* sign of cmp(a, b) */
};

static void run(enum vg_ecosystem eco, const struct vec *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int got = vg_version_cmp(eco, v[i].a, v[i].b);
        int back = vg_version_cmp(eco, v[i].b, v[i].a);
        got = (got > 0) - (got < 0);
        back = (back > 0) - (back < 0);
        if (got != v[i].want || back != -v[i].want)
            fail_msg("%s: cmp(%s, %s) = %d / reverse %d, want %d", vg_eco_name(eco), v[i].a, v[i].b, got,
                     back, v[i].want);
        assert_int_equal(vg_version_cmp(eco, v[i].a, v[i].a), 0);
    }
}

static void test_dpkg(void **state)
{
    (void)state;
    static const struct vec v[] = {
        { "1.0", "1.0", 0 },
        { "1.0", "1.1", -1 },
        { "1.0-1", "1.0-2", -1 },
        { "1:1.0", "2.0", 1 },
        { "0:1.0", "1.0", 0 },
        { "1.0~rc1", "1.0", -1 },
        { "1.0~~", "1.0~", -1 },
        { "1.0~", "1.0", -1 },
        { "1.0", "1.0+b1", -1 },
        { "1.0a", "1.0", 1 },
        { "1.0a", "1.0+", -1 },          /* letters sort before non-letters */
        { "1.0-0ubuntu1", "1.0-1", -1 },
        { "1.7.2-0ubuntu1~22.04.1", "1.7.2-0ubuntu1", -1 },
        { "1.7.2-0ubuntu1~22.04.1", "1.7.2-0ubuntu1~20.04.1", 1 },
        { "2:9.6p1-3ubuntu13.5", "1:9.7p1-1", 1 },
        { "1.2.3", "1.2.10", -1 },
        { "1.02", "1.2", 0 },
        { "10", "9", 1 },
        { "1.0.0", "1.0", 1 },           /* dpkg: an extra field is newer */
        { "99999999999999999999", "99999999999999999998", 1 },
        { "1.0-", "1.0", 0 },
        { "", "0", 0 },
        { "a:1.0", "1.0", 1 },           /* non-numeric "epoch" is part of the upstream */
    };
    run(VG_ECO_DPKG, v, sizeof v / sizeof v[0]);
}

static void test_rpm(void **state)
{
    (void)state;
    static const struct vec v[] = {
        { "1.0", "1.0", 0 },
        { "1.0", "2.0", -1 },
        { "2.0.1", "2.0", 1 },
        { "2.0.1a", "2.0.1", 1 },
        { "5.5p1", "5.5p2", -1 },
        { "5.5p10", "5.5p1", 1 },
        { "10xyz", "10.1xyz", -1 },
        { "xyz10", "xyz10.1", -1 },
        { "xyz.4", "8", -1 },
        { "1.0aa", "1.0a", 1 },
        { "2a", "2.0", -1 },
        { "1.0", "1.fc4", 1 },           /* numeric segment newer than alpha */
        { "3.0.0_fc", "3.0.0.fc", 0 },
        { "1++", "1_", 0 },
        { "1.0~rc1", "1.0", -1 },
        { "1.0~rc1", "1.0~rc2", -1 },
        { "1.0~rc1~git123", "1.0~rc1", -1 },
        { "1.0^", "1.0", 1 },
        { "1.0^git1", "1.0", 1 },
        { "1.0^git1", "1.01", -1 },
        { "1.0^20160101", "1.0.1", -1 },
        { "1.0^git1~pre", "1.0^git1", -1 },
        { "1:1.0", "2.0", 1 },
        { "2.28-225.el8_8.6", "2.28-225.el8", 1 },
        { "2.34-60.el9_2.7", "2.34-60.el9", 1 },
        { "2.34-60.el9", "2.34", 0 },     /* no release on one side: versions decide */
        { "1.0-1", "1.0-2", -1 },
        { "0001", "1", 0 },
    };
    run(VG_ECO_RPM, v, sizeof v / sizeof v[0]);
}

static void test_nvidia(void **state)
{
    (void)state;
    static const struct vec v[] = {
        { "535.183.01", "535.54.03", 1 },
        { "535.54.03", "535.54.3", 0 },
        { "535.183.01", "535.183.06", -1 },
        { "550.54.14", "535.309.01", 1 },
        { "570.133.07", "570.133.20", -1 },
        { "580.126.09", "580.95.05", 1 },
        { "535.0", "535", 0 },
        { "470.256.02", "470.256.02", 0 },
        { "525.105.17", "525.125.06", -1 },
    };
    run(VG_ECO_NVIDIA, v, sizeof v / sizeof v[0]);
}

static void test_generic(void **state)
{
    (void)state;
    static const struct vec v[] = {
        { "1.2.3", "1.2.3", 0 },
        { "v1.2.3", "1.2.3", 0 },
        { "1.2.3", "1.2.10", -1 },
        { "1.1.12", "1.1.9", 1 },
        { "1.0.0-rc93", "1.0.0", -1 },
        { "1.0.0-rc93", "1.0.0-rc3", 1 },
        { "1.0.0-rc93", "0.1.1", 1 },
        { "1.4.0-rc.3", "1.4.0-rc.1", 1 },
        { "1.4.0-rc.3", "1.4.0", -1 },
        { "2.9.0~rc1", "2.9.0", -1 },
        { "2.9.0~rc1", "2.9.0-rc1", 0 },
        { "1.7.0-beta.0", "1.7.0", -1 },
        { "1.7.0-beta.0", "1.6.38", 1 },
        { "1.0.0-alpha", "1.0.0-beta", -1 },
        { "1.0.0-alpha", "1.0.0-alpha.1", -1 },
        { "1.2.3+build.5", "1.2.3", 0 },
        { "12.6", "12.6.0", 0 },
        { "12.6", "12.6.1", -1 },
        { "13.0", "12.9.1", 1 },
        { "23.10-1.1.9.0", "23.10-5.1.4.0", -1 },
        { "23.10-5.1.4.0", "23.10", 1 },
        { "5.8-7.0.6.1", "5.8-6.0.4.2", 1 },
        { "24.10-3.2.5.0", "24.10-4.1.4.0", -1 },
        { "3.0.0-058001", "3.0.0", 1 },
        { "2.5.3-0.1.2", "2.5.3-0.1.10", -1 },
        { "9.8p1", "9.7p1", 1 },
        { "9.8p1", "9.8", 1 },
        { "8.9p1", "8.5p1", 1 },
        { "1.9.17p1", "1.9.17", 1 },
        { "1.9.17p1", "1.9.16p2", 1 },
        { "22.05.11", "22.05.8", 1 },
        { "23.02.7", "23.11.0", -1 },
        { "0.5.18", "0.5.9", 1 },
        { "27.1.1", "27.1.0", 1 },
        { "", "0", 0 },
        { "", "1", -1 },
        { "V2", "v2.0", 0 },
        { "2.30.7-1", "2.30.7", 1 },
        { "18446744073709551617", "18446744073709551616", 1 },
    };
    run(VG_ECO_GENERIC, v, sizeof v / sizeof v[0]);
}

static void test_upstream(void **state)
{
    (void)state;
    char buf[64];
    vg_version_upstream(VG_ECO_DPKG, "1:1.7.2-0ubuntu1~22.04.1", buf, sizeof buf);
    assert_string_equal(buf, "1.7.2");
    vg_version_upstream(VG_ECO_DPKG, "1:9.6p1-3ubuntu13.5", buf, sizeof buf);
    assert_string_equal(buf, "9.6p1");
    vg_version_upstream(VG_ECO_DPKG, "2.9.0~rc1", buf, sizeof buf);
    assert_string_equal(buf, "2.9.0~rc1");
    vg_version_upstream(VG_ECO_DPKG, "1.2-3-4", buf, sizeof buf);
    assert_string_equal(buf, "1.2-3");
    vg_version_upstream(VG_ECO_RPM, "2.34-60.el9_2.7", buf, sizeof buf);
    assert_string_equal(buf, "2.34");
    vg_version_upstream(VG_ECO_RPM, "1:1.6.28-3.1.el9", buf, sizeof buf);
    assert_string_equal(buf, "1.6.28");
    vg_version_upstream(VG_ECO_NVIDIA, "535.183.01", buf, sizeof buf);
    assert_string_equal(buf, "535.183.01");
    vg_version_upstream(VG_ECO_DPKG, "1.2.3456789", buf, 5);
    assert_string_equal(buf, "1.2.");
}

static void test_eco_names(void **state)
{
    (void)state;
    for (int i = 0; i < VG_ECO_COUNT; i++) {
        enum vg_ecosystem e;
        assert_true(vg_eco_parse(vg_eco_name((enum vg_ecosystem)i), &e));
        assert_int_equal(e, i);
    }
    enum vg_ecosystem e;
    assert_false(vg_eco_parse("pip", &e));
    assert_false(vg_eco_parse(NULL, &e));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dpkg),     cmocka_unit_test(test_rpm),      cmocka_unit_test(test_nvidia),
        cmocka_unit_test(test_generic),  cmocka_unit_test(test_upstream), cmocka_unit_test(test_eco_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
