/* test_kmsg_amdgpu.c — the amdgpu recognizer on real kernel logs of AMD GPUs
 * (tests/fixtures/logs/NOTICE names their sources): an MI50's uncorrectable
 * error with its reset and the SMU that stopped answering; an MI300X's page
 * fault with its process; an MI300X hive's ATHUB error with the ACA bank
 * dumps of two more GPUs; queues that did not preempt; ring timeouts in the
 * old and new formats (the device of a "[drm:…]" line taken from the line
 * after it); MES; GPU init failures.  The driver's messages no published log
 * shows (retired pages at the threshold, poison, per-block counts) are its
 * printf formats filled in.  Then the catalog's verdicts for them. */
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

static void test_mi50_ue_reset(void **s)
{
    (void)s;
    const struct want w[] = {
        { "2023-01-07T14:25:56.000Z", "0000:e3:00.0", -1, 0x10, "amdgpu-ue", 3 },
        { "2023-01-07T14:25:56.000Z", "0000:e3:00.0", -1, -1, "amdgpu-gpu-reset", 4 },
        { "2023-01-07T14:25:59.000Z", "0000:e3:00.0", -1, -1, "amdgpu-smu", 6 },
    };
    kmsg_fixture_run("amdgpu-mi50-ue-reset.log", 0, w, 3, 12, 0);
}

/* The fault's process joins it (the job it belongs to), and its status. */
static void test_mi300x_page_fault(void **s)
{
    (void)s;
    const struct want w[] = { { NULL, "0000:3d:00.0", -1, -1, "amdgpu-vm-fault", 1 } };
    const char *const fold[] = {
        " | for process python3.12 pid 6071 thread python3.12 pid 6071 | VM_L2_PROTECTION_FAULT_STATUS:0x00000000",
    };
    kmsg_fixture_run_folded("amdgpu-mi300x-page-fault.log", 0, w, fold, 1, 11, 0);
}

/* One RAS event ({1}) across the hive: the ATHUB interrupt on one GPU, the
 * bank dumps on two others, each with its STATUS, ADDR and IPID kept. */
static void test_mi300x_ue_aca(void **s)
{
    (void)s;
    const struct want w[] = {
        { NULL, "0000:1c:00.0", -1, 0x10, "amdgpu-ue", 1 },
        { NULL, "0000:42:00.0", -1, -1, "amdgpu-aca", 2 },
        { NULL, "0000:55:00.0", -1, -1, "amdgpu-aca", 8 },
    };
    const char *const fold[] = {
        NULL,
        " | aca[00] STATUS=0x98000800003e0000 | aca[00] ADDR=0x0000000000000000 | aca[00] IPID=0x0001000138430400",
        " | aca[00] STATUS=0x98000800003e0000 | aca[00] ADDR=0x0000000000000000 | aca[00] IPID=0x0001300136430400",
    };
    kmsg_fixture_run_folded("amdgpu-mi300x-ue-aca.log", 0, w, fold, 3, 13, 0);
}

/* Three queues that did not preempt (the second line of each is the same
 * event), the reset of the first GPU, then the ATHUB error. */
static void test_mi300x_queues_reset_ue(void **s)
{
    (void)s;
    const struct want w[] = {
        { NULL, "0000:9e:00.0", -1, -1, "amdgpu-ring-timeout", 1 },
        { NULL, "0000:9e:00.0", -1, -1, "amdgpu-gpu-reset", 4 },
        { NULL, "0000:1c:00.0", -1, -1, "amdgpu-ring-timeout", 5 },
        { NULL, "0000:c2:00.0", -1, -1, "amdgpu-ring-timeout", 8 },
        { NULL, "0000:e6:00.0", -1, 0x10, "amdgpu-ue", 11 },
    };
    kmsg_fixture_run("amdgpu-mi300x-ue-reset.log", 0, w, 5, 13, 0);
}

static void test_ring_timeouts(void **s)
{
    (void)s;
    const struct want a[] = {
        { "2024-10-07T12:58:23.000Z", "0000:0a:00.0", -1, -1, "amdgpu-ring-timeout", 1 },
        { "2024-10-07T12:58:23.000Z", "0000:0a:00.0", -1, -1, "amdgpu-gpu-reset", 3 },
        { "2024-10-07T12:58:23.000Z", "", -1, -1, "amdgpu-mes", 4 },
    };
    const char *const fa[] = { " | Process information: process  pid 0 thread  pid 0", NULL, NULL };
    kmsg_fixture_run_folded("amdgpu-ring-timeout-syslog.log", 0, a, fa, 3, 7, 0);
    const struct want b[] = {
        { NULL, "0000:28:00.0", -1, -1, "amdgpu-ring-timeout", 1 },
        { NULL, "0000:28:00.0", -1, -1, "amdgpu-gpu-reset", 5 },
    };
    const char *const fb[] = { " | Process cosmic-comp pid 2288 thread cosmic-com:cs0 pid 2316", NULL };
    kmsg_fixture_run_folded("amdgpu-ring-reset.log", 0, b, fb, 2, 9, 0);
    /* "[drm:amdgpu_job_timedout …]" names no device: the line after it does */
    const struct want c[] = {
        { "2024-11-14T10:46:51.000Z", "0000:0c:00.0", -1, -1, "amdgpu-ring-timeout", 1 },
        { "2024-11-14T10:46:51.000Z", "0000:0c:00.0", -1, -1, "amdgpu-gpu-reset", 3 },
    };
    const char *const fc[] = { " | Process information: process picom pid 37593 thread picom:cs0 pid 37625", NULL };
    kmsg_fixture_run_folded("amdgpu-ring-timeout-mode2.log", 0, c, fc, 2, 6, 0);
}

static void test_vm_faults_and_smu(void **s)
{
    (void)s;
    const struct want a[] = { { NULL, "0000:c6:00.0", -1, -1, "amdgpu-vm-fault", 1 } };
    const char *const fa[] = {
        " | for process pt_main_thread pid 12924 thread pt_main_thread pid 12924 | VM_L2_PROTECTION_FAULT_STATUS:0x00301031",
    };
    kmsg_fixture_run_folded("amdgpu-vm-fault.log", 0, a, fa, 1, 10, 0);
    /* the status lines before their header (RDNA's GCVM_ form): no event of their own */
    const struct want b[] = { { NULL, "0000:2b:00.0", -1, -1, "amdgpu-vm-fault", 3 } };
    kmsg_fixture_run("amdgpu-gcvm-fault.log", 0, b, 1, 4, 0);
    const struct want c[] = {
        { "2022-06-08T16:34:49.000Z", "0000:03:00.0", -1, -1, "amdgpu-gpu-reset", 2 },
        { "2022-06-08T16:35:03.000Z", "0000:03:00.0", -1, -1, "amdgpu-smu", 11 },
    };
    kmsg_fixture_run("amdgpu-smu.log", 0, c, 2, 12, 0);
}

static void test_init_failed(void **s)
{
    (void)s;
    const struct want a[] = { { NULL, "0000:83:00.0", -1, -1, "amdgpu-init-failed", 4 } };
    kmsg_fixture_run("amdgpu-init-failed.log", 0, a, 1, 5, 0);
    /* "amdgpu_device_ip_init failed" then "Fatal error during GPU init": one event */
    const struct want b[] = { { NULL, "0000:43:00.0", -1, -1, "amdgpu-init-failed", 5 } };
    kmsg_fixture_run("amdgpu-init-ip-failed.log", 0, b, 1, 8, 0);
}

struct got {
    struct vg_event ev[8];
    int n;
};
static void collect(const struct vg_event *e, void *arg)
{
    struct got *g = arg;
    if (g->n < 8) g->ev[g->n] = *e;
    g->n++;
}

/* Lines in dmesg raw form through the parser: the events. */
static int parse(const char *const *lines, struct got *g, uint64_t *malformed)
{
    struct vg_kmsg *k = malloc(sizeof *k);
    vg_kmsg_init(k, NULL, collect, g);
    g->n = 0;
    for (size_t i = 0; lines[i]; i++) vg_kmsg_line(k, lines[i], strlen(lines[i]));
    vg_kmsg_finish(k);
    if (malformed) *malformed = k->malformed;
    free(k);
    return g->n;
}

/* The driver's formats for which no published log line was found, filled in
 * (amdgpu_ras.c "%ld uncorrectable hardware errors detected in %s block",
 * the RAS core's "{%llu} socket: %d, die: %d, %u new uncorrectable hardware
 * errors detected in %s block" and "... in total in ...", amdgpu_ras_eeprom.c
 * "Saved bad pages %d reaches threshold value %d", "RAS records:%u exceeds
 * 90%% of threshold:%d", "Please consult AMD Service Action Guide (SAG) for
 * appropriate service procedures.", the RAS manager's "{%llu} RAS poison is
 * created, no user action is needed.", amdkfd's "poison is consumed by client
 * %d, kick off gpu reset flow"). */
static void test_driver_formats(void **s)
{
    (void)s;
    const char *const l[] = {
        "[  100.000001] amdgpu 0000:0c:00.0: amdgpu: 2 uncorrectable hardware errors detected in umc block",
        "[  100.000002] amdgpu 0000:0c:00.0: amdgpu: 0 uncorrectable hardware errors detected in gfx block",
        "[  100.000003] amdgpu 0000:1c:00.0: amdgpu: {7} socket: 0, die: 1, 1 new uncorrectable hardware errors detected in xgmi_wafl block",
        "[  100.000004] amdgpu 0000:1c:00.0: amdgpu: {7} socket: 0, die: 1, 3 uncorrectable hardware errors detected in total in xgmi_wafl block",
        "[  100.000005] amdgpu 0000:3d:00.0: amdgpu: 5 correctable hardware errors detected in umc block",
        "[  100.000006] amdgpu 0000:3d:00.0: amdgpu: 1 uncorrectable hardware errors detected in nonsense block",
        "[  100.000007] amdgpu 0000:42:00.0: amdgpu: Saved bad pages 8 reaches threshold value 8",
        "[  100.000008] amdgpu 0000:42:00.0: amdgpu: Please consult AMD Service Action Guide (SAG) for appropriate service procedures.",
        "[  100.000009] amdgpu 0000:55:00.0: amdgpu: RAS records:7 exceeds 90% of threshold:8",
        "[  100.000010] amdgpu 0000:9e:00.0: amdgpu: {9} RAS poison is created, no user action is needed.",
        "[  100.000011] amdgpu 0000:9e:00.0: amdgpu: poison is consumed by client 12, kick off gpu reset flow",
        "[  100.000012] amdgpu 0000:c2:00.0: {2}[Hardware Error]: aca entry[00].STATUS=0x98000800",
        "[  100.000013] amdgpu 0000:c2:00.0: {2}[Hardware Error]: aca entry[0x].STATUS",
        NULL,
    };
    struct got g;
    uint64_t malformed;
    assert_int_equal(parse(l, &g, &malformed), 8);
    assert_string_equal(g.ev[0].kind, "amdgpu-ue");
    assert_int_equal(g.ev[0].code, 0x1);   /* UMC; a count of 0 is no event */
    assert_string_equal(g.ev[1].kind, "amdgpu-ue");
    assert_int_equal(g.ev[1].code, 0x80);  /* the running total is not news */
    assert_string_equal(g.ev[2].kind, "amdgpu-ce");
    assert_string_equal(g.ev[3].kind, "amdgpu-ue");
    assert_int_equal(g.ev[3].code, -1);    /* a block the driver has not: still an uncorrectable error */
    assert_string_equal(g.ev[4].kind, "amdgpu-bad-pages");
    assert_int_equal(g.ev[4].code, -1);    /* and the SAG line after it is the same event */
    assert_string_equal(g.ev[5].kind, "amdgpu-bad-pages");
    assert_int_equal(g.ev[5].code, 90);
    assert_string_equal(g.ev[6].kind, "amdgpu-poison");
    assert_int_equal(g.ev[6].code, 0);
    assert_string_equal(g.ev[7].kind, "amdgpu-poison");
    assert_int_equal(g.ev[7].code, 1);
    /* a bank register cut short is kept; one that is not a register is malformed */
    assert_int_equal(malformed, 1);
}

/* AMD's verdicts, through the bundled catalog: an uncorrectable error takes
 * the node out, a page fault is the job's and drains nothing, the bad-page
 * threshold is an RMA, the SMU a power cycle (reboot), a failed init DOWN;
 * a ring timeout requeues; repeats of a counter follow their log line. */
static void test_verdicts(void **s)
{
    (void)s;
    char err[256];
    struct vg_catalog *c = vg_catalog_load(NULL, err, sizeof err);
    assert_non_null(c);
    static const struct { const char *kind; int code; enum vg_action a; const char *category; } v[] = {
        { "amdgpu-ue", 0x10, VG_ACT_REBOOT, "gpu-hw" },        { "amdgpu-ue", 1, VG_ACT_REBOOT, "memory-ue" },
        { "amdgpu-ue", 0x80, VG_ACT_REBOOT, "interconnect" },  { "amdgpu-aca", -1, VG_ACT_REBOOT, "gpu-hw" },
        { "amdgpu-poison", 1, VG_ACT_IGNORE, "memory-ue" },    { "amdgpu-bad-pages", -1, VG_ACT_DRAIN_RMA, "memory-ue" },
        { "amdgpu-bad-pages", 90, VG_ACT_IGNORE, "memory-ue" }, { "amdgpu-vm-fault", -1, VG_ACT_IGNORE, "software" },
        { "amdgpu-ring-timeout", -1, VG_ACT_RESET_GPU, "gpu-hang" }, { "amdgpu-smu", -1, VG_ACT_REBOOT, "firmware" },
        { "amdgpu-init-failed", -1, VG_ACT_REBOOT, "gpu-init" }, { "amd-ras-ue", -1, VG_ACT_REBOOT, "gpu-hw" },
        { "amd-bad-pages", -1, VG_ACT_DRAIN_RMA, "memory-ue" }, { "amd-xgmi-down", 3, VG_ACT_REBOOT, "interconnect" },
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        const struct vg_catalog_entry *e = vg_catalog_lookup(c, v[i].kind, v[i].code);
        if (!e) fail_msg("%s %d: no catalog row", v[i].kind, v[i].code);
        if (e->action != v[i].a) fail_msg("%s %d: %s", v[i].kind, v[i].code, vg_action_name(e->action));
        assert_string_equal(e->category, v[i].category);
    }
    struct vg_event ue = { .kind = "amdgpu-ue", .code = 0x10 }, counter = { .kind = "amd-ras-ue", .code = -1 };
    assert_true(vg_catalog_is_cause(vg_catalog_lookup(c, counter.kind, -1), &ue));
    vg_catalog_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mi50_ue_reset),   cmocka_unit_test(test_mi300x_page_fault),
        cmocka_unit_test(test_mi300x_ue_aca),   cmocka_unit_test(test_mi300x_queues_reset_ue),
        cmocka_unit_test(test_ring_timeouts),   cmocka_unit_test(test_vm_faults_and_smu),
        cmocka_unit_test(test_init_failed),     cmocka_unit_test(test_driver_formats),
        cmocka_unit_test(test_verdicts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
