/* test_kmsg_aer.c — the PCIe AER recognizer on real kernel logs
 * (tests/fixtures/logs/NOTICE names their sources): one event per AER
 * message, tied to the device the error was found in; the old requester-ID
 * form ("id=00e5") tied to its PCI address; a fatal error in dmesg -H's
 * relative stamps; messages apart in time kept apart. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "helpers/kmsg_fixture.h"
#include "signal/kmsg.h"

/* dmesg -H of a host whose GPU's root port saw a fatal completion timeout
 * (rwth-i6/returnn#1500): the recovery lines around it are no events, the
 * message is one, on the port that received it; nothing is malformed. */
static void test_fatal_reltime(void **s)
{
    (void)s;
    const struct want w[] = { { NULL, "0000:00:03.0", -1, -1, "aer-fatal", 4 } };
    kmsg_fixture_run("aer-reltime-returnn.log", 0, w, 1, 12, 0);
}

/* Kernels before 4.19 name the source by requester ID: id=00e5 is bus 00,
 * device 1c, function 5, in the domain of the port that printed it.  A
 * message whose source was not found ("can't find device") is an event of
 * its own; one with its detail line is one event. */
static void test_requester_id(void **s)
{
    (void)s;
    const struct want w[] = {
        { NULL, "0000:00:1c.5", -1, -1, "aer-corrected", 3 },
        { NULL, "0000:00:1c.5", -1, -1, "aer-corrected", 5 },
        { "2024-01-29T20:50:17.000Z", "0000:00:1c.5", -1, -1, "aer-corrected", 9 },
    };
    kmsg_fixture_run("aer-old-id.log", 0, w, 3, 12, 0);
}

/* The header names 0000:00:00.0 (a link error's requester) and the detail
 * line the port whose registers hold the error: one event per message, on
 * the port — three messages, three events, not six. */
static void test_port_and_source(void **s)
{
    (void)s;
    const struct want w[] = {
        { "2024-09-19T16:18:02.000Z", "0000:00:03.1", -1, -1, "aer-corrected", 1 },
        { "2024-09-19T16:18:02.000Z", "0000:00:03.1", -1, -1, "aer-corrected", 5 },
        { "2024-09-19T16:18:02.000Z", "0000:00:03.1", -1, -1, "aer-corrected", 9 },
        { NULL, "0000:00:01.1", -1, -1, "aer-corrected", 11 },
    };
    kmsg_fixture_run("aer-port-source.log", 0, w, 4, 12, 0);
}

/* A fatal message with its detail lines joined; a detail line seconds after
 * a header of the same severity is another message, and a detail line alone
 * is an event (aer-gsp.log's lines 5-6); the GSP timeout is NVIDIA's. */
static void test_apart_in_time(void **s)
{
    (void)s;
    const struct want w[] = {
        { "2024-11-25T10:00:00.000Z", "0000:3b:00.0", -1, -1, "aer-fatal", 1 },
        { "2024-11-25T10:00:10.000Z", "0000:c1:00.0", -1, -1, "aer-corrected", 5 },
        { "2024-11-25T10:00:20.000Z", "0000:00:03.0", -1, -1, "aer-corrected", 6 },
        { "2024-11-25T10:00:40.000Z", "", 1, -1, "gsp-timeout", 8 },
    };
    kmsg_fixture_run("aer-gsp.log", 0, w, 4, 8, 0);
}

/* The header and its detail read apart (the agent emits what it holds at
 * the end of each read): still one event. */
static void collect(const struct vg_event *e, void *arg)
{
    (void)e;
    (*(int *)arg)++;
}

static void test_split_reads(void **s)
{
    (void)s;
    struct vg_kmsg *k = malloc(sizeof *k);
    int n = 0;
    vg_kmsg_init(k, NULL, collect, &n);
    const char *h = "[1086487.613065] pcieport 0000:00:01.1: AER: Corrected error received: 0000:00:00.0\n";
    const char *d = "[1086487.613071] pcieport 0000:00:01.1: AER: PCIe Bus Error: severity=Corrected, type=Data "
                    "Link Layer, (Receiver ID)\n";
    vg_kmsg_feed(k, h, strlen(h));
    vg_kmsg_finish(k);
    assert_int_equal(n, 1);
    vg_kmsg_feed(k, d, strlen(d));
    vg_kmsg_finish(k);
    assert_int_equal(n, 1);
    free(k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fatal_reltime),   cmocka_unit_test(test_requester_id),
        cmocka_unit_test(test_port_and_source), cmocka_unit_test(test_apart_in_time),
        cmocka_unit_test(test_split_reads),
    };
    return cmocka_run_group_tests_name("kmsg_aer", tests, NULL, NULL);
}
