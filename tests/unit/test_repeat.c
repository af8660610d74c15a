/* test_repeat.c — the catalog's repeat rules (catalog/repeat.h): the rule's
 * kind comes on the Nth event within the window and not before, per device,
 * an event's count counts, the count starts again after it fired, old
 * events fall out of the window; the catalog's `after` column and the site
 * policy's after= are read and refused with the line at fault. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include "catalog/catalog.h"
#include "catalog/repeat.h"

#define HOUR 3600000LL

static struct vg_catalog *bundled(void)
{
    char err[256];
    struct vg_catalog *c = vg_catalog_load("data/fault-catalog.tsv", err, sizeof err);
    if (!c) fail_msg("%s", err);
    return c;
}

static struct vg_event ev(const char *kind, const char *pci, int64_t t)
{
    struct vg_event e;
    vg_event_init(&e);
    snprintf(e.node, sizeof e.node, "n1");
    snprintf(e.kind, sizeof e.kind, "%s", kind);
    snprintf(e.pci, sizeof e.pci, "%s", pci);
    snprintf(e.raw, sizeof e.raw, "mlx5_core %s enp1s0f0np0: Link down", pci);
    e.time_ms = t;
    return e;
}

/* 3 link drops within 3 h on one NIC: the third brings nic-link-flapping
 * (a drain); one or two do not, another NIC's do not count, and the count
 * starts again after the rule fired. */
static void test_third_in_window(void **s)
{
    (void)s;
    struct vg_catalog *c = bundled();
    struct vg_repeat *r = vg_repeat_new(c);
    struct vg_event out[4], a = ev("nic-link-down", "0000:01:00.0", 10 * HOUR);
    assert_int_equal(vg_repeat_add(r, &a, out, 4), 0);
    struct vg_event other = ev("nic-link-down", "0000:01:00.1", 10 * HOUR + 1000);
    assert_int_equal(vg_repeat_add(r, &other, out, 4), 0);
    a.time_ms += HOUR;
    assert_int_equal(vg_repeat_add(r, &a, out, 4), 0);
    a.time_ms += HOUR;
    assert_int_equal(vg_repeat_add(r, &a, out, 4), 1);
    assert_string_equal(out[0].kind, "nic-link-flapping");
    assert_string_equal(out[0].pci, "0000:01:00.0");
    assert_string_equal(out[0].node, "n1");
    assert_string_equal(out[0].cause, "nic-link-down:-1@0000:01:00.0");
    assert_non_null(strstr(out[0].raw, "3 nic-link-down events on 0000:01:00.0 within 3h: mlx5_core"));
    vg_catalog_classify(c, &out[0]);
    assert_int_equal(out[0].action, VG_ACT_RESTART_APP);
    a.time_ms += 1000;   /* the count started again */
    assert_int_equal(vg_repeat_add(r, &a, out, 4), 0);
    vg_repeat_free(r);
    vg_catalog_free(c);
}

/* Drops further apart than the window never add up. */
static void test_window_slides(void **s)
{
    (void)s;
    struct vg_catalog *c = bundled();
    struct vg_repeat *r = vg_repeat_new(c);
    struct vg_event out[4], a = ev("link-flap", "0000:1a:00.0", 0);
    for (int i = 0; i < 10; i++) {
        a.time_ms = (int64_t)i * 2 * HOUR;   /* one every 2 h: at most 2 within 3 h */
        assert_int_equal(vg_repeat_add(r, &a, out, 4), 0);
    }
    vg_repeat_free(r);
    vg_catalog_free(c);
}

/* An event standing for several (a counter that rose by 3 in one period) counts as that many. */
static void test_count(void **s)
{
    (void)s;
    struct vg_catalog *c = bundled();
    struct vg_repeat *r = vg_repeat_new(c);
    struct vg_event out[4], a = ev("link-flap", "0000:1a:00.0", HOUR);
    a.count = 3;
    assert_int_equal(vg_repeat_add(r, &a, out, 4), 1);
    assert_string_equal(out[0].kind, "link-flapping");
    vg_repeat_free(r);
    vg_catalog_free(c);
}

/* The table of counts is bounded: many devices reuse the oldest slots and
 * every rule still fires for a device counted without a break. */
static void test_many_devices(void **s)
{
    (void)s;
    struct vg_catalog *c = bundled();
    struct vg_repeat *r = vg_repeat_new(c);
    struct vg_event out[4];
    char pci[16];
    int fired = 0;
    for (int i = 0; i < 3 * VG_REPEAT_SLOTS; i++) {
        snprintf(pci, sizeof pci, "0000:%02x:%02x.0", i / 32, i % 32);
        struct vg_event a = ev("nic-tx-timeout", pci, HOUR + i);
        fired += vg_repeat_add(r, &a, out, 4);
    }
    assert_int_equal(fired, 0);
    for (int k = 0; k < 3; k++) {
        struct vg_event a = ev("nic-tx-timeout", "0000:ff:00.0", 2 * HOUR + k);
        fired += vg_repeat_add(r, &a, out, 4);
    }
    assert_int_equal(fired, 1);
    vg_repeat_free(r);
    vg_catalog_free(c);
}

/* The column (the tenth, after category, which a row may leave empty) and
 * the policy: a site sets its own count and window; a bad rule, a rule with
 * nothing to count and after= on a kind that has no rule are refused naming
 * the line. */
static void test_parse(void **s)
{
    (void)s;
    char err[256];
    const char *ok = "kind\tcode\taction\tb\tcaused_by\tname\tnotes\tsource\tcategory\tafter\n"
                     "a\t*\tignore\t(none)\t\tA\t\t\tnetwork\n"
                     "b\t*\treboot\t(none)\ta\tB\t\t\tnetwork\t2/10m\n";
    struct vg_catalog *c = vg_catalog_parse(ok, strlen(ok), "t.tsv", err, sizeof err);
    assert_non_null(c);
    const struct vg_catalog_entry *b = vg_catalog_lookup(c, "b", VG_CODE_ANY);
    assert_int_equal(b->after_n, 2);
    assert_int_equal(b->after_ms, 600000);
    const char *pol = "kind b after=5/1h\n";
    assert_int_equal(vg_catalog_apply_policy_text(c, pol, strlen(pol), "p", err, sizeof err), 0);
    assert_int_equal(b->after_n, 5);
    assert_int_equal(b->after_ms, 3600000);
    pol = "kind a after=5/1h\n";
    assert_int_equal(vg_catalog_apply_policy_text(c, pol, strlen(pol), "p", err, sizeof err), -1);
    assert_string_equal(err, "p:1: not a repeat rule (after= sets one's count and window) 'a'");
    pol = "kind b after=1/1h\n";
    assert_int_equal(vg_catalog_apply_policy_text(c, pol, strlen(pol), "p", err, sizeof err), -1);
    assert_string_equal(err, "p:1: bad repeat rule (after=N/WINDOW, N in 2..64) '1/1h'");
    pol = "kind zz after=3/1h\n";
    assert_int_equal(vg_catalog_apply_policy_text(c, pol, strlen(pol), "p", err, sizeof err), -1);
    assert_string_equal(err, "p:1: no repeat rule of that kind 'zz'");
    vg_catalog_free(c);
    const char *bad[] = {
        "b\t*\treboot\t(none)\ta\tB\t\t\t\t3/never\n",
        "b\t*\treboot\t(none)\ta\tB\t\t\t\t65/1h\n",
        "b\t*\treboot\t(none)\t\tB\t\t\t\t3/1h\n",
        "b\t*\treboot\t(none)\ta\tB\t\t\t3/1h\n",   /* a rule in the category's column */
    };
    const char *why[] = { "t.tsv:1: bad repeat rule (N/WINDOW, N in 2..64) '3/never'",
                          "t.tsv:1: bad repeat rule (N/WINDOW, N in 2..64) '65/1h'",
                          "t.tsv:1: a repeat rule needs the kinds it counts in caused_by 'b'",
                          "t.tsv:1: unknown category '3/1h'" };
    for (int i = 0; i < 4; i++) {
        assert_null(vg_catalog_parse(bad[i], strlen(bad[i]), "t.tsv", err, sizeof err));
        assert_string_equal(err, why[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_third_in_window), cmocka_unit_test(test_window_slides), cmocka_unit_test(test_count),
        cmocka_unit_test(test_many_devices),    cmocka_unit_test(test_parse),
    };
    return cmocka_run_group_tests_name("repeat", tests, NULL, NULL);
}
