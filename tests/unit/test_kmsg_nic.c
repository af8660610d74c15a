/* test_kmsg_nic.c — the NIC recognizer on real kernel logs
 * (tests/fixtures/logs/NOTICE names their sources): mlx5 command timeouts
 * one event per device and burst, firmware gone, the watchdog in its old
 * and new forms, links down after an NVSwitch SXid with the bond that lost a member,
 * bnxt_re, ionic, transceivers and slot power, AER on a NIC function, and
 * the verdicts the catalog gives them; a NIC's routine lines are no events. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "catalog/catalog.h"
#include "helpers/kmsg_fixture.h"
#include "signal/kmsg.h"

/* Eight lines of one burst of command timeouts ("No done completion", then
 * the leak) on one function: one event, on the address in mlx5's prefix
 * behind pdsh's "b1360: ". */
static void test_cmd_timeout(void **s)
{
    (void)s;
    const struct want w[] = { { NULL, "0000:61:00.0", -1, -1, "nic-cmd-timeout", 1 } };
    kmsg_fixture_run("nic-mlx5-cmd-timeout.log", 0, w, 1, 8, 0);
}

/* The case: the NIC links that go down and the bond member disabled
 * after an NVSwitch SXid are all reported; the link back up, the i40e and
 * ixgbe news and the SXid's detail lines are not events. */
static void test_after_sxid(void **s)
{
    (void)s;
    const struct want w[] = {
        { NULL, "0000:06:00.0", -1, 20034, "sxid", 1 },
        { NULL, "0000:05:00.0", -1, 20034, "sxid", 2 },
        { NULL, "0000:01:00.0", -1, -1, "nic-link-down", 6 },
        { NULL, "0000:01:00.1", -1, -1, "nic-link-down", 7 },
        { NULL, "", -1, -1, "bond-slave-down", 9 },
    };
    kmsg_fixture_run("nic-after-sxid.log", 0, w, 5, 12, 0);
}

/* NVSentinel's NIC patterns: the health poller's lines one fault, the
 * watchdog's old format (no address), the slot, the transceiver; the
 * ACCESS_REG noise of restricted functions is no event. */
static void test_nvsentinel_lines(void **s)
{
    (void)s;
    const struct want w[] = {
        { NULL, "0000:03:00.0", -1, -1, "nic-cmd-timeout", 1 },
        { NULL, "0000:41:00.0", -1, -1, "nic-fw-fatal", 2 },
        { NULL, "", -1, -1, "nic-tx-timeout", 4 },
        { NULL, "0000:01:00.0", -1, -1, "nic-power-low", 5 },
        { NULL, "0000:5c:00.0", -1, -1, "nic-overtemp", 6 },
        { NULL, "0000:63:00.1", -1, -1, "nic-module", 8 },
    };
    kmsg_fixture_run("nic-nvsentinel.log", 0, w, 6, 8, 0);
}

/* bnxt_re's refused command (its "Failed to allocate HW AH" is the same
 * fault's consequence), ionic's stalled heartbeat, an AER error on an alx
 * function (a NIC's: nic-aer-corrected, on the function), a transceiver
 * unplugged; mlx5's renames and link up are no events. */
static void test_drivers(void **s)
{
    (void)s;
    const struct want w[] = {
        { NULL, "0000:19:00.0", -1, -1, "nic-cmd-error", 1 },
        { NULL, "0000:24:00.0", -1, -1, "nic-fw-fatal", 3 },
        { NULL, "0000:07:00.0", -1, -1, "nic-aer-corrected", 4 },
        { NULL, "0000:41:00.1", -1, -1, "nic-module", 8 },
        { NULL, "0000:5c:00.0", -1, -1, "nic-power-low", 11 },
    };
    kmsg_fixture_run("nic-drivers.log", 0, w, 5, 11, 0);
}

/* The watchdog with its oops: one event; the driver's own "TX timeout
 * detected" after the trace is the same fault. */
static void test_watchdog(void **s)
{
    (void)s;
    const struct want w[] = { { NULL, "", -1, -1, "nic-tx-timeout", 2 } };
    kmsg_fixture_run("nic-netdev-watchdog.log", 0, w, 1, 16, 0);
}

/* The watchdog's newer format, through the driver's own prefix ("ice
 * 0000:b1:00.0 ens801f0np0: NETDEV WATCHDOG: CPU: 38: transmit queue 14 timed
 * out 80692736 ms", Linux 6.8), in dmesg -H: the event is on the function;
 * the driver's tx_timeout lines after it are no events. */
static void test_watchdog_ms(void **s)
{
    (void)s;
    const struct want w[] = { { "2024-03-15T18:17:00.000Z", "0000:b1:00.0", -1, -1, "nic-tx-timeout", 3 } };
    kmsg_fixture_run("nic-watchdog-ms.log", 0, w, 1, 6, 0);
}

/* The verdicts: a wedged command interface or dead firmware takes the node
 * out, a link drop or a transmit timeout is recorded and their repeat rules
 * drain, an AER error on a NIC is judged like one on a GPU. */
static void test_verdicts(void **s)
{
    (void)s;
    char err[256];
    struct vg_catalog *c = vg_catalog_load("data/fault-catalog.tsv", err, sizeof err);
    assert_non_null(c);
    static const struct { const char *kind; enum vg_action a; int after_n; } v[] = {
        { "nic-cmd-timeout", VG_ACT_REBOOT, 0 },       { "nic-fw-fatal", VG_ACT_REBOOT, 0 },
        { "nic-link-down", VG_ACT_IGNORE, 0 },         { "nic-link-flapping", VG_ACT_RESTART_APP, 3 },
        { "nic-tx-timeout", VG_ACT_IGNORE, 0 },        { "nic-tx-timeout-repeat", VG_ACT_RESTART_APP, 3 },
        { "bond-slave-down", VG_ACT_IGNORE, 0 },       { "nic-aer-fatal", VG_ACT_REBOOT, 0 },
        { "nic-aer-corrected", VG_ACT_IGNORE, 0 },     { "nic-overtemp", VG_ACT_IGNORE, 0 },
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        const struct vg_catalog_entry *e = vg_catalog_lookup(c, v[i].kind, VG_CODE_ANY);
        if (!e) fail_msg("%s: no catalog row", v[i].kind);
        if (e->action != v[i].a || e->after_n != v[i].after_n) fail_msg("%s: %s after %d", v[i].kind,
                                                                          vg_action_name(e->action), e->after_n);
    }
    vg_catalog_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cmd_timeout), cmocka_unit_test(test_after_sxid),
        cmocka_unit_test(test_nvsentinel_lines), cmocka_unit_test(test_drivers),
        cmocka_unit_test(test_watchdog),
        cmocka_unit_test(test_watchdog_ms),
        cmocka_unit_test(test_verdicts),
    };
    return cmocka_run_group_tests_name("kmsg_nic", tests, NULL, NULL);
}
