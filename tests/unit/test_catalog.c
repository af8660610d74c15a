/* test_catalog.c — the fault catalog: every XID 1–172 present, actions follow
 * NVIDIA's buckets by the documented rule, message-decided actions (Xid 154,
 * SXid severity), caused_by links, site policy overrides and bad policy lines. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "catalog/catalog.h"
#include "util/strutil.h"

static struct vg_catalog *cat;

static int setup(void **state)
{
    (void)state;
    char err[256] = "";
    cat = vg_catalog_load(NULL, err, sizeof err);
    if (!cat) fprintf(stderr, "# %s\n", err);
    return cat ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    vg_catalog_free(cat);
    return 0;
}

static void test_all_xids_present(void **state)
{
    (void)state;
    for (int x = 1; x <= 172; x++) {
        const struct vg_catalog_entry *e = vg_catalog_lookup(cat, "xid", x);
        assert_non_null(e);
        assert_int_equal(e->lo, x);
        assert_int_equal(e->hi, x);
        assert_true(e->name[0] != '\0');
    }
    /* An unknown (newer) XID falls back to the "xid *" row: reported, not drained. */
    const struct vg_catalog_entry *u = vg_catalog_lookup(cat, "xid", 999);
    assert_non_null(u);
    assert_int_equal(u->lo, VG_CODE_ANY);
    assert_int_equal(vg_catalog_action(cat, "xid", 999), VG_ACT_RESTART_APP);
    assert_null(vg_catalog_lookup(cat, "no-such-kind", 1));
}

/* The documented mapping rule, applied to every row that has a bucket. */
static void test_bucket_rule(void **state)
{
    (void)state;
    static const struct { const char *bucket; enum vg_action a; } rule[] = {
        { "IGNORE", VG_ACT_IGNORE },           { "RESTART_APP", VG_ACT_RESTART_APP },
        { "RESET_GPU", VG_ACT_RESET_GPU },     { "RESTART_BM", VG_ACT_REBOOT },
        { "RESTART_VM", VG_ACT_REBOOT },       { "CHECK_MECHANICALS", VG_ACT_DRAIN_RMA },
        { "CONTACT_SUPPORT", VG_ACT_RESTART_APP }, { "WORKFLOW_XID_45", VG_ACT_IGNORE },
        { "WORKFLOW_XID_48", VG_ACT_RESET_GPU }, { "WORKFLOW_NVLINK5_ERR", VG_ACT_RESET_GPU },
    };
    int checked = 0;
    for (int x = 1; x <= 172; x++) {
        const struct vg_catalog_entry *e = vg_catalog_lookup(cat, "xid", x);
        for (size_t i = 0; i < sizeof rule / sizeof rule[0]; i++)
            if (strcmp(e->bucket, rule[i].bucket) == 0) {
                if (e->action != rule[i].a) fail_msg("xid %d: bucket %s gave %s", x, e->bucket, vg_action_name(e->action));
                checked++;
            }
    }
    assert_true(checked > 150);
}

/* A sample checked against NVIDIA's catalog (bucket) and vigil's choice. */
static void test_sample_actions(void **state)
{
    (void)state;
    static const struct { int xid; const char *bucket; enum vg_action a; } s[] = {
        { 13, "RESTART_APP", VG_ACT_RESTART_APP }, { 31, "RESTART_APP", VG_ACT_RESTART_APP },
        { 43, "IGNORE", VG_ACT_IGNORE },           { 45, "WORKFLOW_XID_45", VG_ACT_IGNORE },
        { 48, "WORKFLOW_XID_48", VG_ACT_RESET_GPU }, { 54, "CHECK_MECHANICALS", VG_ACT_DRAIN_RMA },
        { 63, "IGNORE", VG_ACT_IGNORE },           { 64, "RESET_GPU", VG_ACT_RESET_GPU },
        { 74, "WORKFLOW_NVLINK_ERR", VG_ACT_RESET_GPU }, { 79, "RESTART_BM", VG_ACT_REBOOT },
        { 92, "IGNORE", VG_ACT_IGNORE },           { 94, "RESTART_APP", VG_ACT_RESTART_APP },
        { 95, "RESET_GPU", VG_ACT_RESET_GPU },     { 109, "RESET_GPU", VG_ACT_RESET_GPU },
        { 119, "RESET_GPU", VG_ACT_RESET_GPU },    { 151, "RESTART_VM", VG_ACT_REBOOT },
        { 154, "XID_154", VG_ACT_RESET_GPU },      { 165, "(none)", VG_ACT_DRAIN_RMA },
    };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
        const struct vg_catalog_entry *e = vg_catalog_lookup(cat, "xid", s[i].xid);
        assert_string_equal(e->bucket, s[i].bucket);
        if (e->action != s[i].a) fail_msg("xid %d: %s", s[i].xid, vg_action_name(e->action));
    }
    static const struct { const char *kind; enum vg_action a; } k[] = {
        { "fallen-off-bus", VG_ACT_REBOOT }, { "aer-fatal", VG_ACT_REBOOT },
        { "aer-corrected", VG_ACT_IGNORE },  { "gsp-timeout", VG_ACT_RESET_GPU },
        { "row-remap-failure", VG_ACT_DRAIN_RMA }, { "ib-down", VG_ACT_DRAIN_RMA },
        { "probe-hung", VG_ACT_REBOOT },     { "rminit-failed", VG_ACT_REBOOT },
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        assert_int_equal(vg_catalog_action(cat, k[i].kind, VG_CODE_ANY), k[i].a);
}

static void ev(struct vg_event *e, const char *kind, int code, const char *raw)
{
    vg_event_init(e);
    vg_strlcpy(e->kind, kind, sizeof e->kind);
    e->code = code;
    vg_strlcpy(e->raw, raw, sizeof e->raw);
}

static void test_message_decides(void **state)
{
    (void)state;
    struct vg_event e;
    ev(&e, "xid", 154, "NVRM: Xid (PCI:0000:0b:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)");
    vg_catalog_classify(cat, &e);
    assert_int_equal(e.action, VG_ACT_REBOOT);
    ev(&e, "xid", 154, "NVRM: Xid (PCI:0000:0b:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)");
    vg_catalog_classify(cat, &e);
    assert_int_equal(e.action, VG_ACT_RESET_GPU);
    ev(&e, "xid", 154, "NVRM: Xid (PCI:0000:0b:00): 154, GPU recovery action changed from 0x1 (GPU Reset Required) to 0x0 (None)");
    vg_catalog_classify(cat, &e);
    assert_int_equal(e.action, VG_ACT_IGNORE);
    ev(&e, "sxid", 20034, "nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 48 LTSSM Fault Up");
    vg_catalog_classify(cat, &e);
    assert_int_equal(e.action, VG_ACT_REBOOT);
    ev(&e, "sxid", 12028, "nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress non-posted PRIV error");
    vg_catalog_classify(cat, &e);
    assert_int_equal(e.action, VG_ACT_IGNORE);
}

static void test_caused_by(void **state)
{
    (void)state;
    struct vg_event a;
    const struct vg_catalog_entry *x45 = vg_catalog_lookup(cat, "xid", 45);
    ev(&a, "xid", 149, "");
    assert_true(vg_catalog_is_cause(x45, &a));
    ev(&a, "xid", 48, "");
    assert_true(vg_catalog_is_cause(x45, &a));
    ev(&a, "xid", 8, "");
    assert_false(vg_catalog_is_cause(x45, &a));
    ev(&a, "xid", 148, ""); /* 148 must not match the prefix of "xid:14" or similar */
    assert_true(vg_catalog_is_cause(x45, &a));
    ev(&a, "xid", 14, "");
    assert_false(vg_catalog_is_cause(x45, &a));
    const struct vg_catalog_entry *x154 = vg_catalog_lookup(cat, "xid", 154);
    ev(&a, "sxid", 1, "");
    assert_true(vg_catalog_is_cause(x154, &a));
    const struct vg_catalog_entry *x79 = vg_catalog_lookup(cat, "xid", 79);
    ev(&a, "aer-fatal", -1, "");
    assert_true(vg_catalog_is_cause(x79, &a));
    ev(&a, "aer-corrected", -1, "");
    assert_false(vg_catalog_is_cause(x79, &a));
    assert_false(vg_catalog_is_cause(vg_catalog_lookup(cat, "xid", 13), &a));
}

static void test_policy_overrides(void **state)
{
    (void)state;
    char err[256];
    const char *pol = "# site policy\n"
                      "xid 63 action=drain-rma\n"
                      "  kind ib-down action=reboot   \n"
                      "\n"
                      "xid 144-150 action=ignore\n"
                      "sxid 20034 action=restart-app\n"
                      "xid 500 action=reboot\n"
                      "kind thermal-slowdown action=ignore\r\n";
    assert_int_equal(vg_catalog_apply_policy_text(cat, pol, strlen(pol), "policy.tsv", err, sizeof err), 0);
    assert_int_equal(vg_catalog_action(cat, "xid", 63), VG_ACT_DRAIN_RMA);
    assert_int_equal(vg_catalog_action(cat, "ib-down", VG_CODE_ANY), VG_ACT_REBOOT);
    assert_int_equal(vg_catalog_action(cat, "xid", 145), VG_ACT_IGNORE);
    assert_int_equal(vg_catalog_action(cat, "xid", 143), VG_ACT_RESET_GPU);
    assert_int_equal(vg_catalog_action(cat, "xid", 500), VG_ACT_REBOOT);
    assert_int_equal(vg_catalog_action(cat, "xid", 501), VG_ACT_RESTART_APP);
    assert_int_equal(vg_catalog_action(cat, "thermal-slowdown", VG_CODE_ANY), VG_ACT_IGNORE);
    assert_true(vg_catalog_lookup(cat, "xid", 63)->overridden);
    struct vg_event e;
    ev(&e, "sxid", 20034, "nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 48 LTSSM Fault Up");
    vg_catalog_classify(cat, &e);
    assert_int_equal(e.action, VG_ACT_RESTART_APP); /* the site's exact row beats the severity word */
    /* A policy on 154 beats the message's own action. */
    const char *p154 = "xid 154 action=ignore\n";
    assert_int_equal(vg_catalog_apply_policy_text(cat, p154, strlen(p154), "p", err, sizeof err), 0);
    ev(&e, "xid", 154, "NVRM: Xid (PCI:0000:0b:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)");
    vg_catalog_classify(cat, &e);
    assert_int_equal(e.action, VG_ACT_IGNORE);
}

/* Every bundled row has a category; a site maps a category to an action for
 * NVIDIA's and AMD's rows alike, and a later line still beats it for one kind. */
static void test_categories(void **state)
{
    (void)state;
    char err[256];
    struct vg_catalog *cat = vg_catalog_load(NULL, err, sizeof err);   /* as bundled: no other test's policy */
    assert_non_null(cat);
    for (size_t i = 0; i < vg_catalog_count(cat); i++) {
        const struct vg_catalog_entry *e = vg_catalog_at(cat, i);
        if (!e->category[0]) fail_msg("row %s %d has no category", e->kind, e->lo);
    }
    assert_string_equal(vg_catalog_lookup(cat, "xid", 48)->category, "memory-ue");
    assert_string_equal(vg_catalog_lookup(cat, "xid", 92)->category, "memory-ce");
    assert_string_equal(vg_catalog_lookup(cat, "xid", 74)->category, "interconnect");
    assert_string_equal(vg_catalog_lookup(cat, "xid", 79)->category, "pcie");
    assert_string_equal(vg_catalog_lookup(cat, "xid", 119)->category, "firmware");
    assert_string_equal(vg_catalog_lookup(cat, "amdgpu-ue", 1)->category, "memory-ue");
    const char *pol = "category memory-ue action=drain-rma\n"
                      "category interconnect action=reboot\n"
                      "kind amd-bad-pages action=ignore\n";
    assert_int_equal(vg_catalog_apply_policy_text(cat, pol, strlen(pol), "policy.tsv", err, sizeof err), 0);
    assert_int_equal(vg_catalog_action(cat, "xid", 48), VG_ACT_DRAIN_RMA);
    assert_int_equal(vg_catalog_action(cat, "ecc-dbe", VG_CODE_ANY), VG_ACT_DRAIN_RMA);
    assert_int_equal(vg_catalog_action(cat, "amdgpu-ue", 1), VG_ACT_DRAIN_RMA);   /* an HBM UE */
    assert_int_equal(vg_catalog_action(cat, "amdgpu-ue", 0x10), VG_ACT_REBOOT);  /* ATHUB: gpu-hw, untouched */
    assert_int_equal(vg_catalog_action(cat, "amdgpu-poison", 0), VG_ACT_DRAIN_RMA);
    assert_int_equal(vg_catalog_action(cat, "amd-bad-pages", VG_CODE_ANY), VG_ACT_IGNORE);   /* the later line */
    assert_int_equal(vg_catalog_action(cat, "xid", 74), VG_ACT_REBOOT);
    assert_int_equal(vg_catalog_action(cat, "amd-xgmi-down", 2), VG_ACT_REBOOT);
    assert_int_equal(vg_catalog_action(cat, "nvlink-down", VG_CODE_ANY), VG_ACT_REBOOT);
    assert_int_equal(vg_catalog_action(cat, "xid", 13), VG_ACT_RESTART_APP);   /* software: untouched */
    const char *bad = "category memory action=ignore\n";
    assert_int_equal(vg_catalog_apply_policy_text(cat, bad, strlen(bad), "pol", err, sizeof err), -1);
    assert_string_equal(err, "pol:1: unknown category 'memory'");
    const char *t = "xid\t1\tignore\tIGNORE\t\tone\tnotes\tsrc\tmemroy-ue\n";
    assert_null(vg_catalog_parse(t, strlen(t), "c.tsv", err, sizeof err));
    assert_string_equal(err, "c.tsv:1: unknown category 'memroy-ue'");
    vg_catalog_free(cat);
}

static void test_policy_malformed(void **state)
{
    (void)state;
    static const struct { const char *text; const char *want; } bad[] = {
        { "xid 63 action=explode\n", "pol:1: unknown action 'explode'" },
        { "# ok\nxid sixty action=ignore\n", "pol:2: bad code 'sixty'" },
        { "xid 63\n", "pol:1: expected" },
        { "xid 63 ignore\n", "pol:1: expected action=ACTION" },
        { "\n\nkind IB! action=ignore\n", "pol:3: bad kind 'IB!'" },
        { "gpu 1 action=ignore\n", "pol:1: expected" },
        { "xid 9-3 action=ignore\n", "pol:1: bad code '9-3'" },
        { "kind a b c d e f\n", "pol:1: too many fields" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char err[256] = "";
        assert_int_equal(vg_catalog_apply_policy_text(cat, bad[i].text, strlen(bad[i].text), "pol", err, sizeof err), -1);
        if (!vg_startswith(err, bad[i].want)) fail_msg("case %zu: got '%s'", i, err);
    }
    char err[256] = "";
    assert_int_equal(vg_catalog_apply_policy(cat, "/nonexistent/policy.tsv", err, sizeof err), -1);
    assert_true(vg_startswith(err, "/nonexistent/policy.tsv: "));
}

static void test_catalog_malformed(void **state)
{
    (void)state;
    char err[256];
    const char *t = "kind\tcode\taction\tnvidia_bucket\tcaused_by\tname\n"
                    "xid\t1\tignore\tIGNORE\t\tone\n"
                    "xid\t2\tnuke\tIGNORE\t\ttwo\n";
    assert_null(vg_catalog_parse(t, strlen(t), "c.tsv", err, sizeof err));
    assert_string_equal(err, "c.tsv:3: bad action 'nuke'");
    const char *t2 = "xid\t1\tignore\n";
    assert_null(vg_catalog_parse(t2, strlen(t2), "c.tsv", err, sizeof err));
    assert_true(vg_startswith(err, "c.tsv:1: expected at least 6"));
    const char *t3 = "xid\t7\tignore\tIGNORE\t\tseven\n";
    struct vg_catalog *c = vg_catalog_parse(t3, strlen(t3), "c.tsv", err, sizeof err);
    assert_non_null(c);
    assert_int_equal(vg_catalog_count(c), 1);
    assert_int_equal(vg_catalog_action(c, "xid", 7), VG_ACT_IGNORE);
    vg_catalog_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_xids_present),  cmocka_unit_test(test_bucket_rule),
        cmocka_unit_test(test_sample_actions),    cmocka_unit_test(test_message_decides),
        cmocka_unit_test(test_caused_by),         cmocka_unit_test(test_catalog_malformed),
        cmocka_unit_test(test_policy_malformed),  cmocka_unit_test(test_policy_overrides),
        cmocka_unit_test(test_categories),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
