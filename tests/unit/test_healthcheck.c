/* test_healthcheck.c — the drain/resume decisions of `vigil check --drain`:
 * drain a failing node, resume only vigil's own drain, never touch a node
 * someone else drained or downed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include "orch/healthcheck.h"
#include "helpers/fake_orch.h"

static struct vg_orch_node node(const char *state, const char *reason, bool drain, bool down)
{
    struct vg_orch_node s;
    memset(&s, 0, sizeof s);
    strcpy(s.name, "n2");
    strcpy(s.state, state);
    strcpy(s.reason, reason);
    s.drain = drain;
    s.down = down;
    s.responding = true;
    return s;
}

static void test_decide(void **st)
{
    (void)st;
    const char *why = "vigil: gpu ecc_dbe: GPU 2 (0000:3a:00.0): 1 volatile double-bit ECC errors";
    struct vg_orch_node idle = node("IDLE", "", false, false);
    struct vg_orch_node ours = node("IDLE+DRAIN", why, true, false);
    struct vg_orch_node ours_old = node("IDLE+DRAIN", "vigil: ib mlx5_0:1 state: DOWN", true, false);
    struct vg_orch_node admin = node("IDLE+DRAIN", "bad DIMM, ticket 4711", true, false);
    struct vg_orch_node admin_down = node("DOWN", "maintenance", false, true);
    struct vg_orch_node lost = node("DOWN+NOT_RESPONDING", "", false, true);
    struct vg_orch_node mixed = node("MIXED+DRAIN", why, true, false);
    /* Failing. */
    assert_int_equal(vg_hc_decide(false, &idle, why), VG_HC_DRAIN);
    assert_int_equal(vg_hc_decide(false, &ours, why), VG_HC_NONE);       /* already drained for this */
    assert_int_equal(vg_hc_decide(false, &ours_old, why), VG_HC_DRAIN);  /* vigil's reason updated */
    assert_int_equal(vg_hc_decide(false, &admin, why), VG_HC_FOREIGN);
    assert_int_equal(vg_hc_decide(false, &admin_down, why), VG_HC_FOREIGN);
    assert_int_equal(vg_hc_decide(false, &lost, why), VG_HC_DRAIN);
    /* Passing. */
    assert_int_equal(vg_hc_decide(true, &idle, ""), VG_HC_NONE);
    assert_int_equal(vg_hc_decide(true, &ours, ""), VG_HC_RESUME);
    assert_int_equal(vg_hc_decide(true, &mixed, ""), VG_HC_RESUME);
    assert_int_equal(vg_hc_decide(true, &admin, ""), VG_HC_FOREIGN);
    assert_int_equal(vg_hc_decide(true, &admin_down, ""), VG_HC_FOREIGN);
    assert_int_equal(vg_hc_decide(true, &lost, ""), VG_HC_NONE);
    assert_string_equal(vg_hc_action_name(VG_HC_FOREIGN), "left-alone");
    assert_string_equal(vg_hc_action_name(VG_HC_DRAIN), "drain");
}

static void test_apply_without_scheduler(void **st)
{
    (void)st;
    /* No scheduler reachable: an error, never a crash or a silent success. */
    char err[256];
    struct vg_orch *o = vg_orch_open_ops(&fake_orch_ops, NULL, err, sizeof err);
    fake_reset();
    fake_add_node("n2", "");
    fake.down = true;
    assert_int_equal(vg_hc_apply(o, "n2", false, "vigil: test"), -1);
    assert_non_null(strstr(o->err, "Unable to contact"));
    /* back: a failing node is drained with vigil's reason, then resumed */
    fake.down = false;
    assert_int_equal(vg_hc_apply(o, "n2", false, "vigil: test"), VG_HC_DRAIN);
    assert_true(fake_node("n2")->drain);
    assert_int_equal(vg_hc_apply(o, "n2", true, ""), VG_HC_RESUME);
    assert_false(fake_node("n2")->drain);
    assert_int_equal(vg_hc_apply(o, "n9", false, "vigil: test"), -1);   /* unknown node */
    vg_orch_close(o);
    /* the real Slurm backend with no slurmctld behind its config: an error too */
    struct vg_orch_conf c = { .config = "/nonexistent/slurm.conf", .timeout_ms = 3000 };
    assert_null(vg_orch_open("slurm", &c, err, sizeof err));
    assert_non_null(strstr(err, "/nonexistent/slurm.conf"));
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_decide), cmocka_unit_test(test_apply_without_scheduler) };
    return cmocka_run_group_tests_name("healthcheck", tests, NULL, NULL);
}
