/* test_fleet.c — unit tests for the fleet view's node coverage
 * (src/report/fleet_nodes.c): stale reports and known nodes without one, the
 * JSON fields, the document read back as `vigil audit fleet` reads the
 * controller's (vg_fleet_load), and what that reader refuses. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/audit_report.h"
#include "util/timeutil.h"

#define HOUR_MS (3600 * 1000LL)

/* A node's report with one component at a version. */
static void add(struct vg_fleet *fl, const char *node, const char *version)
{
    json_t *doc = json_pack("{s:s, s:[{s:s, s:s}], s:[]}", "node", node, "components", "name", "runc", "version",
                            version, "findings");
    char err[256];
    assert_int_equal(vg_fleet_add_json(fl, doc, node, err, sizeof err), 0);
    json_decref(doc);
}

static const char *name_at(const json_t *doc, const char *key, size_t i)
{
    return json_string_value(json_array_get(json_object_get(doc, key), i));
}

static void test_coverage(void **state)
{
    (void)state;
    int64_t now = 1796000000000LL;
    struct vg_fleet *fl = vg_fleet_new();
    add(fl, "n1", "1.2.8");
    add(fl, "n2", "1.2.8");
    add(fl, "n3", "1.1.12");
    vg_fleet_reported(fl, "n1", now - 1 * HOUR_MS);
    vg_fleet_reported(fl, "n2", now - 49 * HOUR_MS);   /* older than 48 h */
    vg_fleet_reported(fl, "n3", now - 47 * HOUR_MS);
    vg_fleet_reported(fl, "n2", now - 50 * HOUR_MS);   /* an older time does not replace a newer one */
    const char *known[] = { "n4", "n1", "n5", "n4", "n3", "" };   /* scheduler + heartbeats, overlapping */
    vg_fleet_coverage(fl, known, 6, now, 48 * HOUR_MS);
    assert_int_equal(vg_fleet_unseen(fl), 3);
    json_t *doc = vg_fleet_json(fl);
    assert_int_equal(json_integer_value(json_object_get(doc, "stale_after_s")), 48 * 3600);
    assert_int_equal(json_array_size(json_object_get(doc, "stale")), 1);
    assert_string_equal(name_at(doc, "stale", 0), "n2");
    assert_int_equal(json_array_size(json_object_get(doc, "not_reporting")), 2);
    assert_string_equal(name_at(doc, "not_reporting", 0), "n4");
    assert_string_equal(name_at(doc, "not_reporting", 1), "n5");
    assert_int_equal(json_object_size(json_object_get(doc, "reported")), 3);
    json_t *sum = json_object_get(doc, "summary");
    assert_int_equal(json_integer_value(json_object_get(sum, "stale")), 1);
    assert_int_equal(json_integer_value(json_object_get(sum, "not_reporting")), 2);
    assert_int_equal(json_integer_value(json_object_get(sum, "skewed_components")), 1);

    /* read back as `vigil audit fleet` reads the controller's document */
    struct vg_fleet *back = vg_fleet_new();
    char err[256];
    assert_int_equal(vg_fleet_load(back, doc, err, sizeof err), 0);
    assert_int_equal(vg_fleet_nodes(back), 3);
    assert_int_equal(vg_fleet_unseen(back), 3);
    assert_int_equal(vg_fleet_skewed(back), 1);
    json_t *again = vg_fleet_json(back);
    json_object_del(again, "generated");
    json_object_del(doc, "generated");
    assert_true(json_equal(doc, again));
    json_decref(again);
    vg_fleet_free(back);
    json_decref(doc);
    vg_fleet_free(fl);
}

/* Files merged without a controller: no coverage fields at all. */
static void test_no_coverage(void **state)
{
    (void)state;
    struct vg_fleet *fl = vg_fleet_new();
    add(fl, "a", "1.0");
    json_t *doc = vg_fleet_json(fl);
    assert_null(json_object_get(doc, "reported"));
    assert_null(json_object_get(doc, "stale"));
    assert_null(json_object_get(doc, "not_reporting"));
    assert_int_equal(vg_fleet_unseen(fl), 0);
    json_decref(doc);
    vg_fleet_free(fl);
}

static void test_load_refuses(void **state)
{
    (void)state;
    static const char *const bad[][2] = {
        { "{\"nodes\": [], \"components\": []}", "'nodes'/'components'/'findings'" },
        { "{\"nodes\": [], \"components\": [], \"findings\": [], \"reported\": {\"n1\": \"yesterday\"}}", "'reported.n1'" },
        { "{\"nodes\": [], \"components\": [], \"findings\": [], \"stale_after_s\": 60, \"stale\": [1]}", "'stale'" },
        { "{\"nodes\": [], \"components\": [{\"versions\": []}], \"findings\": []}", "'components[0]'" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *doc = json_loads(bad[i][0], 0, NULL);
        assert_non_null(doc);
        struct vg_fleet *fl = vg_fleet_new();
        char err[256] = "";
        assert_int_equal(vg_fleet_load(fl, doc, err, sizeof err), -1);
        if (!strstr(err, bad[i][1])) fail_msg("case %zu: '%s' does not name %s", i, err, bad[i][1]);
        vg_fleet_free(fl);
        json_decref(doc);
    }
}

/* What a node wrote is shown, never obeyed: the report (a title set
 * and a screen cleared through escape sequences, a forged "ALL NODES
 * PATCHED" line, a right-to-left override, a script tag) printed as a
 * terminal table and as Markdown. */
static void test_hostile_text_shown_as_text(void **state)
{
    (void)state;
    struct vg_fleet *fl = vg_fleet_new();
    json_t *doc = json_pack("{s:[{s:s, s:s}], s:[{s:s, s:s, s:s, s:s}]}", "components", "name",
                            "runc\x1b]0;owned\x07\x1b[2J", "version", "1.1.12\nALL NODES PATCHED \xe2\x80\xae" "21.1.1",
                            "findings", "id", "CVE-2024-21626", "component", "runc", "severity", "high", "url",
                            "<script>alert(1)</script>");
    char err[256];
    assert_int_equal(vg_fleet_add_json(fl, doc, "n1", err, sizeof err), 0);
    json_decref(doc);
    for (int md = 0; md < 2; md++) {
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        vg_fleet_print(fl, f, md);
        fclose(f);
        assert_null(memchr(out, 0x1b, len));
        assert_null(memchr(out, 0x07, len));
        assert_null(strstr(out, "\xe2\x80\xae"));
        assert_null(strstr(out, "\nALL NODES PATCHED"));
        assert_non_null(strstr(out, md ? "runc\\e\\]0;owned\\x07\\e\\[2J" : "runc\\e]0;owned\\x07\\e[2J"));
        assert_non_null(strstr(out, "1.1.12\\nALL NODES PATCHED \\u202e21.1.1"));
        if (md) {
            assert_null(strstr(out, "<script>"));
            assert_non_null(strstr(out, "&lt;script&gt;alert(1)&lt;/script&gt;"));
        }
        free(out);
    }
    vg_fleet_free(fl);
}

/* However many different reports the fleet sends, the merge holds at most
 * VG_FLEET_MAX_ENTRIES of each kind of entry, says how many it left out, and
 * is built in time linear in the reports (60 nodes × 1,000 components each,
 * all different). */
static void test_merge_bounded(void **state)
{
    (void)state;
    struct vg_fleet *fl = vg_fleet_new();
    char err[256], name[32];
    for (int n = 0; n < 60; n++) {
        json_t *comps = json_array();
        for (int c = 0; c < 1000; c++) {
            snprintf(name, sizeof name, "lib%d-%d", n, c);
            json_array_append_new(comps, json_pack("{s:s, s:s}", "name", name, "version", "1.0"));
        }
        json_t *doc = json_pack("{s:o, s:[]}", "components", comps, "findings");
        snprintf(name, sizeof name, "n%d", n);
        assert_int_equal(vg_fleet_add_json(fl, doc, name, err, sizeof err), 0);
        json_decref(doc);
    }
    json_t *j = vg_fleet_json(fl);
    assert_int_equal(json_array_size(json_object_get(j, "components")), VG_FLEET_MAX_ENTRIES);
    assert_int_equal(json_integer_value(json_object_get(j, "truncated")), 60000 - VG_FLEET_MAX_ENTRIES);
    /* read back (as `vigil audit fleet` does), the count of what was left out stays */
    struct vg_fleet *back = vg_fleet_new();
    assert_int_equal(vg_fleet_load(back, j, err, sizeof err), 0);
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    vg_fleet_print(back, f, false);
    fclose(f);
    assert_non_null(strstr(out, "10000 more components, versions or findings left out"));
    free(out);
    vg_fleet_free(back);
    json_decref(j);
    vg_fleet_free(fl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_coverage),
        cmocka_unit_test(test_no_coverage),
        cmocka_unit_test(test_load_refuses),
        cmocka_unit_test(test_hostile_text_shown_as_text),
        cmocka_unit_test(test_merge_bounded),
    };
    return cmocka_run_group_tests_name("fleet", tests, NULL, NULL);
}
