/* test_kmsg.c — the kernel-log parser against real-world formats across
 * driver generations and log framings (fixtures in tests/fixtures/logs/),
 * asserted field by field; joining of multi-line records; malformed lines
 * counted; byte-at-a-time feeding gives the same result as one buffer; the
 * framing of every dmesg time format; the recognizers' table.  The NVIDIA
 * recognizer's cases are here, the AER recognizer's in test_kmsg_aer.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "helpers/kmsg_fixture.h"
#include "catalog/catalog.h"
#include "signal/kmsg.h"
#include "signal/kmsg_int.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include "util/timeutil.h"



/* dmesg raw "[ secs]": old BDF without function, fallen-off second line joined; relative time unknown. */
static void test_dmesg_raw(void **s)
{
    (void)s;
    const struct want w[] = {
        { NULL, "0000:3b:00.0", -1, 79, "xid", 2 },
        { NULL, "0000:10:1c.0", -1, 31, "xid", 4 },
    };
    kmsg_fixture_run("dmesg-raw.log", 0, w, 2, 4, 0);
}

/* The same with a boot time: boot-relative seconds become UTC. */
static void test_dmesg_raw_boot(void **s)
{
    (void)s;
    int64_t boot;
    assert_true(vg_parse_time("2024-11-25T00:00:00Z", &boot));
    const struct want w[] = {
        { "2024-11-25T00:20:34.567Z", "0000:3b:00.0", -1, 79, "xid", 2 },
        { "2024-11-25T00:21:40.000Z", "0000:10:1c.0", -1, 31, "xid", 4 },
    };
    kmsg_fixture_run("dmesg-raw.log", boot, w, 2, 4, 0);
}

/* syslog with/without hostname, r340 "Channel ID … intr", "Ch …, engmask", printk stamp, ms fraction. */
static void test_syslog_old(void **s)
{
    (void)s;
    const struct want w[] = {
        { "2024-07-28T09:15:27.000Z", "0000:01:00.0", -1, 32, "xid", 1 },
        { "2024-07-28T09:15:28.000Z", "0000:01:00.0", -1, 31, "xid", 2 },
        { "2024-07-28T09:15:29.123Z", "0000:01:00.0", -1, 13, "xid", 3 },
    };
    kmsg_fixture_run("syslog-old.log", 0, w, 3, 4, 0);
}

/* dmesg -T / --ctime: r418 MMU fault, Xid 154, a German weekday/month, pid/name with dots. */
static void test_dmesg_ctime(void **s)
{
    (void)s;
    const struct want w[] = {
        { "2024-11-25T10:00:00.000Z", "0000:01:00.0", -1, 31, "xid", 1 },
        { "2024-11-25T10:00:01.000Z", "0000:0b:00.0", -1, 154, "xid", 2 },
        { "2024-12-31T23:59:59.000Z", "0000:0b:00.0", -1, 109, "xid", 3 },
    };
    kmsg_fixture_run("dmesg-ctime.log", 0, w, 3, 3, 0);
}

/* /dev/kmsg records: r535 pid=, pid='<unknown>', continuation lines, AER non-fatal, RmInitAdapter. */
static void test_kmsg_records(void **s)
{
    (void)s;
    int64_t boot;
    assert_true(vg_parse_time("2024-11-25T00:00:00Z", &boot));
    const struct want w[] = {
        { "2024-11-25T00:00:05.000Z", "0000:00:05.0", -1, 43, "xid", 1 },
        { "2024-11-25T00:00:05.000Z", "0000:3b:00.0", -1, 48, "xid", 2 },
        { "2024-11-25T00:00:06.000Z", "0000:5e:00.0", -1, -1, "aer-nonfatal", 5 },
        { "2024-11-25T00:00:07.000Z", "0000:86:00.0", -1, -1, "rminit-failed", 8 },
    };
    kmsg_fixture_run("kmsg-records.log", boot, w, 4, 9, 0);
}

/* dmesg --decode iso, bare iso, rsyslog RFC 3339 with offset, journal short-iso, RFC 5424;
 * NVLink5 Xid 145 on PCI domain 0018; r570+ Xid 119 naming GPU0, index carried to a later 64. */
static void test_iso_rfc(void **s)
{
    (void)s;
    const struct want w[] = {
        { "2025-01-21T04:41:44.283Z", "0000:18:00.0", -1, 94, "xid", 1 },
        { "2025-01-21T04:41:45.500Z", "0018:01:00.0", -1, 145, "xid", 2 },
        { "2024-11-25T10:00:00.123Z", "0000:01:00.0", -1, 31, "xid", 3 },
        { "2024-11-25T10:00:02.000Z", "0000:9b:00.0", 0, 119, "xid", 4 },
        { "2024-11-25T10:00:03.250Z", "0000:9b:00.0", 0, 64, "xid", 5 },
    };
    kmsg_fixture_run("iso-rfc.log", 0, w, 5, 5, 0);
}

/* Localized month names: German Mär/Okt/Dez, French févr., Spanish dic. */
static void test_syslog_localized(void **s)
{
    (void)s;
    const struct want w[] = {
        { "2024-03-05T10:00:00.000Z", "0000:10:1c.0", -1, 63, "xid", 1 },
        { "2024-10-12T08:30:00.000Z", "0000:10:1c.0", -1, 92, "xid", 2 },
        { "2024-02-14T07:00:00.000Z", "0000:3b:00.0", -1, 95, "xid", 3 },
        { "2024-12-24T18:00:00.000Z", "0000:3b:00.0", -1, 45, "xid", 4 },
        { "2024-12-31T23:59:59.000Z", "0000:10:1c.0", -1, 74, "xid", 5 },
    };
    kmsg_fixture_run("syslog-localized.log", 0, w, 5, 5, 0);
}

/* NVSwitch SXid: fatal with continuation records joined, then a non-fatal one. */
static void test_sxid(void **s)
{
    (void)s;
    const struct want w[] = {
        { "2024-11-25T10:00:00.000Z", "0000:06:00.0", -1, 20034, "sxid", 1 },
        { "2024-11-25T10:00:05.000Z", "0000:05:00.0", -1, 12028, "sxid", 4 },
    };
    kmsg_fixture_run("sxid.log", 0, w, 2, 4, 0);
}

/* Fallen off the bus: multi-line probe message without an Xid, single line, Xid 79 + its second line. */
static void test_fallen_off_bus(void **s)
{
    (void)s;
    const struct want w[] = {
        { "2024-11-25T10:00:00.000Z", "0000:b3:00.0", -1, -1, "fallen-off-bus", 3 },
        { "2024-11-25T10:01:00.000Z", "0000:86:00.0", -1, -1, "fallen-off-bus", 4 },
        { "2024-11-25T10:02:00.000Z", "0000:06:00.0", -1, 79, "xid", 5 },
    };
    kmsg_fixture_run("fallen-off-bus.log", 0, w, 3, 7, 0);
}

/* A real r535 log (GPUd): five Xid 119 with GPU4, the RPC history and stack dump not counted. */
static void test_gpud_xid119(void **s)
{
    (void)s;
    const struct want w[] = {
        { "2025-02-23T16:24:18.000Z", "0000:9b:00.0", 4, 119, "xid", 3 },
        { "2025-02-23T16:24:24.000Z", "0000:9b:00.0", 4, 119, "xid", 38 },
        { "2025-02-23T16:24:30.000Z", "0000:9b:00.0", 4, 119, "xid", 40 },
        { "2025-02-23T16:27:12.000Z", "0000:9b:00.0", 4, 119, "xid", 42 },
        { "2025-02-23T16:30:13.000Z", "0000:9b:00.0", 4, 119, "xid", 43 },
    };
    kmsg_fixture_run("gpud-dmesg-with-xid-119.log", 0, w, 5, 43, 0);
}

/* Real noise (GPUd kmsg, peermem, dmesg iso decode): no events, nothing malformed. */
static void test_gpud_noise(void **s)
{
    (void)s;
    kmsg_fixture_run("gpud-kmsg.1.log", 0, NULL, 0, 47, 0);
    kmsg_fixture_run("gpud-kmsg.2.peermem.log", 0, NULL, 0, 8, 0);
    kmsg_fixture_run("gpud-dmesg.decode.iso.log", 0, NULL, 0, 2, 0);
}

/* Broken kmsg header, broken stamp, non-numeric code, NUL byte, overlong line: skipped and counted. */
static void test_malformed(void **s)
{
    (void)s;
    const struct want w[] = { { "2024-11-25T10:00:00.000Z", "0000:01:00.0", -1, 13, "xid", 5 } };
    kmsg_fixture_run("malformed.log", 0, w, 1, 6, 5);
}

/* dmesg --reltime (-H when piped), util-linux 2.38.1's output of real lines
 * (tests/fixtures/logs/NOTICE): a minute line sets the time (the year is the
 * parser's), each "+delta" adds to it; nothing is malformed; Xid 79 and its
 * "fallen off the bus" line are one event. */
static void test_dmesg_reltime(void **s)
{
    (void)s;
    const struct want w[] = {
        { "2024-12-15T21:51:00.000Z", "0000:09:00.0", -1, 79, "xid", 3 },
        { "2024-12-15T22:25:00.000Z", "0000:00:01.1", -1, -1, "aer-corrected", 6 },
    };
    kmsg_fixture_run("dmesg-reltime.log", 0, w, 2, 7, 0);
}

/* The same lines as dmesg -T -d, -d -x (--show-delta, --decode) and --time-format delta. */
static void test_dmesg_delta(void **s)
{
    (void)s;
    const struct want ct[] = {
        { "2026-12-15T21:51:17.000Z", "0000:09:00.0", -1, 79, "xid", 3 },
        { "2026-12-15T22:25:08.000Z", "0000:00:01.1", -1, -1, "aer-corrected", 6 },
    };
    kmsg_fixture_run("dmesg-ctime-delta.log", 0, ct, 2, 7, 0);
    int64_t boot;
    assert_true(vg_parse_time("2024-11-25T00:00:00Z", &boot));
    const struct want dx[] = {
        { "2024-12-07T13:14:16.074Z", "0000:09:00.0", -1, 79, "xid", 3 },
        { "2024-12-07T13:48:07.613Z", "0000:00:01.1", -1, -1, "aer-corrected", 6 },
    };
    kmsg_fixture_run("dmesg-decode-delta.log", boot, dx, 2, 7, 0);
    const struct want d[] = {
        { NULL, "0000:09:00.0", -1, 79, "xid", 3 },
        { NULL, "0000:00:01.1", -1, -1, "aer-corrected", 6 },
    };
    kmsg_fixture_run("dmesg-delta.log", 0, d, 2, 7, 0);
}

/* One line through the framing: its message, its times. */
static void frame(const char *line, const char *msg, const char *abs, int64_t rel_us)
{
    struct vg_kmsg *k = malloc(sizeof *k);
    struct vg_kmsg_opts o = { 0, 2024, NULL };
    vg_kmsg_init(k, &o, NULL, NULL);
    struct vg_kmsg_msg m;
    if (vg_kmsg_frame(k, line, &m)) fail_msg("malformed: %s", line);
    assert_string_equal(m.msg, msg);
    char t[32] = "";
    if (m.abs_ms) vg_format_time(m.abs_ms, t);
    assert_string_equal(t, abs ? abs : "");
    assert_int_equal(m.rel_us, rel_us);
    free(k);
}

/* Real lines of the time formats dmesg prints, alone and several at once
 * (util-linux issues #2020 and #2770, pull request #2648). */
static void test_frame_formats(void **s)
{
    (void)s;
    frame("[17159596.699613] [Fri Dec 22 12:26:24 2023] [  +0.000000] 2023-12-22T12:26:24,559615-08:00 device "
          "vethab20cf5 entered promiscuous mode",
          "device vethab20cf5 entered promiscuous mode", "2023-12-22T12:26:24.000Z", 17159596699613LL);
    frame("[17159596.699613 <    0.000000>] [Fri Dec 22 12:26:24 2023] [  +0.000000] "
          "2023-12-22T12:26:24,559613-08:00 device vethab20cf5 entered promiscuous mode",
          "device vethab20cf5 entered promiscuous mode", "2023-12-22T12:26:24.000Z", 17159596699613LL);
    frame("kern  :info  : [245941.414414 <    0,000000>] bash (104225): drop_caches: 3",
          "bash (104225): drop_caches: 3", NULL, 245941414414LL);
    frame("[mar. janv. 17 02:59:56 2023] kernel: microcode: microcode updated early to revision 0xf0, date = 2021-11-12",
          "kernel: microcode: microcode updated early to revision 0xf0, date = 2021-11-12", "2023-01-17T02:59:56.000Z",
          -1);
    /* a delta with no minute line before it: no time, not malformed */
    frame("[  +0.000844] nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)",
          "nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)", NULL, -1);
}

/* The table: each recognizer is complete, its kinds have catalog rows, its
 * state fits, and the fast path can scan for every marker. */
static void test_recognizers(void **s)
{
    (void)s;
    char err[256];
    struct vg_catalog *cat = vg_catalog_load(NULL, err, sizeof err);
    assert_non_null(cat);
    struct vg_kmsg *k = malloc(sizeof *k);
    vg_kmsg_init(k, NULL, NULL, NULL);
    int n = 0, markers = 0;
    for (; vg_kmsg_recognizers[n]; n++) {
        const struct vg_kmsg_recognizer *r = vg_kmsg_recognizers[n];
        assert_non_null(r->name);
        assert_non_null(r->line);
        assert_true(r->state_size <= VG_KMSG_STATE_MAX);
        for (int j = 0; j < n; j++) assert_string_not_equal(vg_kmsg_recognizers[j]->name, r->name);
        assert_non_null(r->markers[0]);
        for (const char *const *m = r->markers; *m; m++, markers++)
            if (strlen(*m) < 3) fail_msg("%s: marker '%s' shorter than 3 bytes", r->name, *m);
        assert_non_null(r->kinds[0]);
        for (const char *const *kd = r->kinds; *kd; kd++)
            if (!vg_catalog_lookup(cat, *kd, VG_CODE_ANY)) fail_msg("%s: kind %s has no catalog row", r->name, *kd);
    }
    assert_true(n <= VG_KMSG_REC_MAX);
    assert_int_equal(k->nmarkers, markers);    /* every marker indexed … */
    assert_true(k->npairs <= VG_KMSG_PAIRS);   /* … and each one's first two bytes scanned for */
    for (int i = 0; i < k->nmarkers; i++) {
        bool found = false;
        for (int j = 0; j < k->npairs; j++)
            found |= k->pair0[j] == (unsigned char)k->marker[i].s[0] && k->pair1[j] == (unsigned char)k->marker[i].s[1];
        if (!found) fail_msg("marker %s not scanned for", k->marker[i].s);
    }
    free(k);
    vg_catalog_free(cat);
}

static void count_event(const struct vg_event *e, void *arg)
{
    (void)e;
    ++*(int *)arg;
}

/* Both fast paths (the nibble lookup on x86 with SSSE3, the compare loop
 * elsewhere) find a marker at every offset of a 16-byte block: lines whose
 * message starts 1 to 40 bytes into the line (the host name's length), an
 * NVRM Xid, an mlx5 command timeout and a bond member lost each. */
static void test_fast_paths_agree(void **s)
{
    (void)s;
    static const char *const msgs[] = {
        "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.",
        "mlx5_core 0000:1a:00.0: wait_func:1207:(pid 1): ACCESS_REG(0x805) timeout. Will cause a leak of a "
        "command resource",
        "bond0: (slave ens1f0np0): link status definitely down, disabling slave",
    };
    char *buf = malloc(64 * 1024), host[48];
    size_t len = 0;
    for (int h = 1; h <= 40; h++) {
        memset(host, 'h', (size_t)h);
        host[h] = 0;
        for (int m = 0; m < 3; m++)
            len += (size_t)snprintf(buf + len, 64 * 1024 - len, "Nov 25 10:00:%02d %s kernel: %s\n", h, host, msgs[m]);
    }
    for (int nib = 0; nib < 2; nib++) {
        int n = 0;
        struct vg_kmsg *k = malloc(sizeof *k);
        struct vg_kmsg_opts o = { 0, 2024, "node1" };
        vg_kmsg_init(k, &o, count_event, &n);
        if (!nib) k->nibbles = false;
        vg_kmsg_feed(k, buf, len);
        vg_kmsg_finish(k);
        if (n != 120) fail_msg("%s fast path: %d events of 120", nib ? "the CPU's" : "the portable", n);
        assert_int_equal(k->lines, 120);
        free(k);
    }
    free(buf);
}

static void test_pci_normalize(void **s)
{
    (void)s;
    char o[16];
    assert_true(vg_pci_normalize("PCI:0000:3b:00", 14, o));
    assert_string_equal(o, "0000:3b:00.0");
    assert_true(vg_pci_normalize("3B:00.1", 7, o));
    assert_string_equal(o, "0000:3b:00.1");
    assert_true(vg_pci_normalize("0018:01:00.0", 12, o));
    assert_string_equal(o, "0018:01:00.0");
    assert_false(vg_pci_normalize("0000:3b", 7, o));
    assert_false(vg_pci_normalize("zz:00.0", 7, o));
    assert_false(vg_pci_normalize("0000:3b:40.0", 12, o)); /* device > 0x1f */
    assert_false(vg_pci_normalize("", 0, o));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dmesg_raw),        cmocka_unit_test(test_dmesg_raw_boot),
        cmocka_unit_test(test_syslog_old),       cmocka_unit_test(test_dmesg_ctime),
        cmocka_unit_test(test_kmsg_records),     cmocka_unit_test(test_iso_rfc),
        cmocka_unit_test(test_syslog_localized), cmocka_unit_test(test_sxid),
        cmocka_unit_test(test_fallen_off_bus),
        cmocka_unit_test(test_gpud_xid119),      cmocka_unit_test(test_gpud_noise),
        cmocka_unit_test(test_malformed),        cmocka_unit_test(test_pci_normalize),
        cmocka_unit_test(test_dmesg_reltime),    cmocka_unit_test(test_dmesg_delta),
        cmocka_unit_test(test_frame_formats),    cmocka_unit_test(test_recognizers),
        cmocka_unit_test(test_fast_paths_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
