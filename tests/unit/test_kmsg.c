/* test_kmsg.c — the kernel-log parser against real-world formats across
 * driver generations and log framings (fixtures in tests/fixtures/logs/),
 * asserted field by field; joining of multi-line records; malformed lines
 * counted; byte-at-a-time feeding gives the same result as one buffer. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "signal/kmsg.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include "util/timeutil.h"

#define MAXEV 16
struct got {
    struct vg_event ev[MAXEV];
    int n;
};

static void collect(const struct vg_event *e, void *arg)
{
    struct got *g = arg;
    if (g->n < MAXEV) g->ev[g->n] = *e;
    g->n++;
}

struct want {
    const char *time;  /* RFC 3339, or NULL for unknown */
    const char *pci;
    int gpu, code;
    const char *kind;
    int line;          /* raw = this line of the fixture (1-based) */
};

static char *fixture(const char *name, size_t *len)
{
    char path[256], *text = NULL;
    snprintf(path, sizeof path, "tests/fixtures/logs/%s", name);
    if (vg_read_file(NULL, path, 1 << 20, &text, len)) fail_msg("cannot read %s", path);
    assert_non_null(text);
    return text;
}

static void nth_line(const char *text, size_t tlen, int n, char *out, size_t outlen)
{
    const char *p = text, *end = text + tlen;
    for (int i = 1; i < n && p; i++) {
        p = memchr(p, '\n', (size_t)(end - p));
        if (p) p++;
    }
    assert_non_null(p);
    const char *e = memchr(p, '\n', (size_t)(end - p));
    size_t len = e ? (size_t)(e - p) : (size_t)(end - p);
    if (len >= outlen) len = outlen - 1;
    memcpy(out, p, len);
    out[len] = '\0';
}

static void run(const char *name, int64_t boot_ms, const struct want *w, int nw, uint64_t lines,
                uint64_t malformed)
{
    size_t len;
    char *text = fixture(name, &len);
    struct got g = { .n = 0 };
    struct vg_kmsg *k = malloc(sizeof *k);
    struct vg_kmsg_opts o = { boot_ms, 2024, "node1" };
    vg_kmsg_init(k, &o, collect, &g);
    vg_kmsg_feed(k, text, len);
    vg_kmsg_finish(k);
    if (g.n != nw) fail_msg("%s: %d events, want %d", name, g.n, nw);
    assert_int_equal(k->lines, lines);
    assert_int_equal(k->malformed, malformed);
    assert_int_equal(k->events, (uint64_t)nw);
    for (int i = 0; i < nw; i++) {
        const struct vg_event *e = &g.ev[i];
        char t[32] = "", raw[512];
        if (e->time_ms) vg_format_time(e->time_ms, t);
        if (strcmp(t, w[i].time ? w[i].time : "") != 0) fail_msg("%s #%d: time %s", name, i, t);
        if (strcmp(e->pci, w[i].pci) != 0) fail_msg("%s #%d: pci '%s'", name, i, e->pci);
        if (e->gpu != w[i].gpu) fail_msg("%s #%d: gpu %d", name, i, e->gpu);
        if (e->code != w[i].code) fail_msg("%s #%d: code %d", name, i, e->code);
        if (strcmp(e->kind, w[i].kind) != 0) fail_msg("%s #%d: kind %s", name, i, e->kind);
        nth_line(text, len, w[i].line, raw, sizeof raw);
        if (strcmp(e->raw, raw) != 0) fail_msg("%s #%d: raw '%s'", name, i, e->raw);
        assert_string_equal(e->source, "kmsg");
        assert_string_equal(e->node, "node1");
        assert_int_equal(e->count, 1);
    }
    /* Byte-at-a-time feeding must give the same events. */
    struct got g2 = { .n = 0 };
    vg_kmsg_init(k, &o, collect, &g2);
    for (size_t i = 0; i < len; i++) vg_kmsg_feed(k, text + i, 1);
    vg_kmsg_finish(k);
    assert_int_equal(g2.n, g.n);
    assert_int_equal(k->lines, lines);
    assert_int_equal(k->malformed, malformed);
    for (int i = 0; i < g.n && i < MAXEV; i++) {
        assert_string_equal(g2.ev[i].raw, g.ev[i].raw);
        assert_string_equal(g2.ev[i].pci, g.ev[i].pci);
        assert_int_equal(g2.ev[i].time_ms, g.ev[i].time_ms);
    }
    free(k);
    free(text);
}

/* dmesg raw "[ secs]": old BDF without function, fallen-off second line joined; relative time unknown. */
static void test_dmesg_raw(void **s)
{
    (void)s;
    const struct want w[] = {
        { NULL, "0000:3b:00.0", -1, 79, "xid", 2 },
        { NULL, "0000:10:1c.0", -1, 31, "xid", 4 },
    };
    run("dmesg-raw.log", 0, w, 2, 4, 0);
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
    run("dmesg-raw.log", boot, w, 2, 4, 0);
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
    run("syslog-old.log", 0, w, 3, 4, 0);
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
    run("dmesg-ctime.log", 0, w, 3, 3, 0);
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
    run("kmsg-records.log", boot, w, 4, 9, 0);
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
    run("iso-rfc.log", 0, w, 5, 5, 0);
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
    run("syslog-localized.log", 0, w, 5, 5, 0);
}

/* NVSwitch SXid: fatal with continuation records joined, then a non-fatal one. */
static void test_sxid(void **s)
{
    (void)s;
    const struct want w[] = {
        { "2024-11-25T10:00:00.000Z", "0000:06:00.0", -1, 20034, "sxid", 1 },
        { "2024-11-25T10:00:05.000Z", "0000:05:00.0", -1, 12028, "sxid", 4 },
    };
    run("sxid.log", 0, w, 2, 4, 0);
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
    run("fallen-off-bus.log", 0, w, 3, 7, 0);
}

/* AER: fatal record with its detail lines joined, corrected (new and old kernels); GSP timeout without Xid. */
static void test_aer_gsp(void **s)
{
    (void)s;
    const struct want w[] = {
        { "2024-11-25T10:00:00.000Z", "0000:3b:00.0", -1, -1, "aer-fatal", 1 },
        { "2024-11-25T10:00:10.000Z", "0000:c1:00.0", -1, -1, "aer-corrected", 5 },
        { "2024-11-25T10:00:20.000Z", "0000:00:03.0", -1, -1, "aer-corrected", 6 },
        { "2024-11-25T10:00:40.000Z", "", 1, -1, "gsp-timeout", 8 },
    };
    run("aer-gsp.log", 0, w, 4, 8, 0);
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
    run("gpud-dmesg-with-xid-119.log", 0, w, 5, 43, 0);
}

/* Real noise (GPUd kmsg, peermem, dmesg iso decode): no events, nothing malformed. */
static void test_gpud_noise(void **s)
{
    (void)s;
    run("gpud-kmsg.1.log", 0, NULL, 0, 47, 0);
    run("gpud-kmsg.2.peermem.log", 0, NULL, 0, 8, 0);
    run("gpud-dmesg.decode.iso.log", 0, NULL, 0, 2, 0);
}

/* Broken kmsg header, broken stamp, non-numeric code, NUL byte, overlong line: skipped and counted. */
static void test_malformed(void **s)
{
    (void)s;
    const struct want w[] = { { "2024-11-25T10:00:00.000Z", "0000:01:00.0", -1, 13, "xid", 5 } };
    run("malformed.log", 0, w, 1, 6, 5);
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
        cmocka_unit_test(test_fallen_off_bus),   cmocka_unit_test(test_aer_gsp),
        cmocka_unit_test(test_gpud_xid119),      cmocka_unit_test(test_gpud_noise),
        cmocka_unit_test(test_malformed),        cmocka_unit_test(test_pci_normalize),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
