/* test_nic.c — the NIC's readings and their judgement: the ports of the H100
 * fixture tree with the GPU beside each HCA and a RoCE port's interface
 * statistics; counters over time (a flap, an error rate above and below its
 * threshold, a counter reset by a driver reload, one that disappears or holds
 * garbage, a port that goes away: said, never a crash or a false fault); the
 * RDMA stack walked through the real dlopen path against the fake verbs
 * library and the real libibverbs of this machine (no device here); and the
 * NIC probe killed at its deadline when a verbs call hangs (nic-hung, naming
 * the device and the call), its verdict from the catalog. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "catalog/catalog.h"
#include "signal/nicprobe.h"
#include "signal/nicrate.h"
#include "signal/probe.h"
#include "signal/sysfs.h"
#include "signal/verbs.h"
#include "util/sbuf.h"
#include "util/timeutil.h"

#define H100 "tests/fixtures/sysfs/h100"

/* mlx5_0 sits under the PCIe switch of GPU 0, mlx5_1 under GPU 1's; the
 * RoCE bond's root complex has no GPU.  The bond port's interface is bond0
 * (its GID table), with its carrier changes and error counts. */
static void test_ports_and_neighbours(void **s)
{
    (void)s;
    struct vg_ib_port *p;
    size_t n = vg_ib_ports(H100, &p);
    assert_int_equal(n, 3);
    assert_int_equal(p[0].gpu, 0);
    assert_string_equal(p[0].gpu_pci, "0000:18:00.0");
    assert_int_equal(p[1].gpu, 1);
    assert_string_equal(p[1].gpu_pci, "0000:2a:00.0");
    assert_int_equal(p[2].gpu, -1);
    assert_string_equal(p[2].netdev, "bond0");
    assert_int_equal(p[2].carrier_changes, 4);
    assert_int_equal(p[2].rx_errors, 0);
    assert_string_equal(p[0].netdev, "");   /* an InfiniBand port: no interface */
    assert_int_equal(p[0].carrier_changes, VG_SYSFS_MISSING);
    free(p);
}

static struct vg_ib_port *read_ports(size_t *n)
{
    struct vg_ib_port *p;
    *n = vg_ib_ports(H100, &p);
    assert_int_equal(*n, 3);
    return p;
}

/* One link_downed and two carrier changes are a flap each, named with the
 * port, its PCI address and the GPU beside it; the first reading is only a
 * baseline, an unchanged one is nothing. */
static void test_flaps(void **s)
{
    (void)s;
    size_t n;
    struct vg_ib_port *p = read_ports(&n);
    struct vg_nic_rates *r = vg_nic_rates_new();
    struct vg_event ev[8];
    int ne = 0;
    struct sbuf notes = SBUF_INIT;
    vg_nic_rates_judge(r, p, n, 1000, "n1", ev, &ne, 8, &notes);
    assert_int_equal(ne, 0);
    vg_nic_rates_judge(r, p, n, 6000, "n1", ev, &ne, 8, &notes);
    assert_int_equal(ne, 0);
    p[0].link_downed++;
    p[2].carrier_changes += 2;
    vg_nic_rates_judge(r, p, n, 11000, "n1", ev, &ne, 8, &notes);
    assert_int_equal(ne, 2);
    assert_string_equal(ev[0].kind, "link-flap");
    assert_string_equal(ev[0].source, "sysfs");
    assert_string_equal(ev[0].pci, "0000:1a:00.0");
    assert_int_equal(ev[0].gpu, 0);
    assert_int_equal(ev[0].code, 1);
    assert_int_equal(ev[0].count, 1);
    assert_string_equal(ev[0].raw, "mlx5_0 port 1 (0000:1a:00.0, beside GPU 0 0000:18:00.0): link went down and came "
                                   "back 1 time in 5.0 s (link_downed 0 -> 1)");
    assert_string_equal(ev[1].kind, "link-flap");
    assert_string_equal(ev[1].pci, "0000:9b:00.0");
    assert_int_equal(ev[1].gpu, -1);
    assert_null(notes.s);
    vg_nic_rates_free(r);
    sbuf_free(&notes);
    free(p);
}

/* symbol_error at 300 in 5 s (60/s) is above 10/s; at 20 in 5 s (4/s) it is
 * not; link_error_recovery at 1 in 5 s is 12/min, above 5/min; a single
 * excessive buffer overrun is an error. */
static void test_error_rates(void **s)
{
    (void)s;
    size_t n;
    struct vg_ib_port *p = read_ports(&n);
    struct vg_nic_rates *r = vg_nic_rates_new();
    struct vg_event ev[8];
    int ne = 0;
    struct sbuf notes = SBUF_INIT;
    vg_nic_rates_judge(r, p, n, 0, "n1", ev, &ne, 8, &notes);
    p[1].symbol_error += 20;
    vg_nic_rates_judge(r, p, n, 5000, "n1", ev, &ne, 8, &notes);
    assert_int_equal(ne, 0);
    p[1].symbol_error += 300;
    p[1].link_error_recovery += 1;
    vg_nic_rates_judge(r, p, n, 10000, "n1", ev, &ne, 8, &notes);
    assert_int_equal(ne, 1);
    assert_string_equal(ev[0].kind, "ib-errors");
    assert_string_equal(ev[0].pci, "0000:2b:00.0");
    assert_int_equal(ev[0].gpu, 1);
    assert_string_equal(ev[0].raw, "mlx5_1 port 1 (0000:2b:00.0, beside GPU 1 0000:2a:00.0): symbol_error +300 in "
                                   "5.0 s = 60.0/s (above 10/s), link_error_recovery +1 in 5.0 s = 12.0/min (above "
                                   "5/min)");
    ne = 0;
    p[0].excessive_buffer_overrun_errors += 1;
    vg_nic_rates_judge(r, p, n, 15000, "n1", ev, &ne, 8, &notes);
    assert_int_equal(ne, 1);
    assert_non_null(strstr(ev[0].raw, "excessive_buffer_overrun_errors +1 in 5.0 s"));
    vg_nic_rates_free(r);
    sbuf_free(&notes);
    free(p);
}

/* A driver reload resets the counters: the lower reading is the new
 * baseline, said, not a fault; a counter that disappears, one that holds
 * garbage, a port that goes away: said once, no event; they are judged again
 * once readable. */
static void test_bad_counters(void **s)
{
    (void)s;
    size_t n;
    struct vg_ib_port *p = read_ports(&n);
    struct vg_nic_rates *r = vg_nic_rates_new();
    struct vg_event ev[8];
    int ne = 0;
    struct sbuf notes = SBUF_INIT;
    vg_nic_rates_judge(r, p, n, 0, "n1", ev, &ne, 8, &notes);
    p[1].port_rcv_errors = 3;   /* was 14 on the real node */
    p[0].symbol_error = VG_SYSFS_GARBAGE;
    p[2].carrier_changes = VG_SYSFS_MISSING;
    vg_nic_rates_judge(r, p, n, 5000, "n1", ev, &ne, 8, &notes);
    assert_int_equal(ne, 0);
    assert_string_equal(notes.s,
                        "mlx5_0 port 1 (0000:1a:00.0, beside GPU 0 0000:18:00.0): symbol_error holds no number: not "
                        "judged until it does\n"
                        "mlx5_1 port 1 (0000:2b:00.0, beside GPU 1 0000:2a:00.0): port_rcv_errors went back from 14 to "
                        "3 (its counters were reset: a driver reload?): the new baseline, nothing judged\n"
                        "mlx5_bond_0 port 1 (0000:9b:00.0): carrier_changes disappeared: not judged\n");
    sbuf_free(&notes);
    vg_nic_rates_judge(r, p, n, 10000, "n1", ev, &ne, 8, &notes);   /* nothing new to say */
    assert_null(notes.s);
    p[0].symbol_error = 5;          /* readable again: a baseline, not a jump from garbage */
    p[1].port_rcv_errors = 4000;    /* judged from the new baseline of 3 */
    vg_nic_rates_judge(r, p, n, 15000, "n1", ev, &ne, 8, &notes);
    assert_int_equal(ne, 1);
    assert_non_null(strstr(ev[0].raw, "port_rcv_errors +3997 in 5.0 s"));
    ne = 0;
    vg_nic_rates_judge(r, p, 2, 20000, "n1", ev, &ne, 8, &notes);   /* the bond went away */
    assert_int_equal(ne, 0);
    assert_string_equal(notes.s, "mlx5_bond_0 port 1 is gone from /sys/class/infiniband: its counters are forgotten\n");
    vg_nic_rates_free(r);
    sbuf_free(&notes);
    free(p);
}

/* A counter file holding text reads as garbage, an absent one as missing. */
static void test_garbage_file(void **s)
{
    (void)s;
    char dir[] = "/tmp/vigil-nic-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    const char *mk[] = { "/sys", "/sys/class", "/sys/class/infiniband", "/sys/class/infiniband/mlx5_0",
                         "/sys/class/infiniband/mlx5_0/ports", "/sys/class/infiniband/mlx5_0/ports/1",
                         "/sys/class/infiniband/mlx5_0/ports/1/counters" };
    for (size_t i = 0; i < sizeof mk / sizeof mk[0]; i++) {
        snprintf(path, sizeof path, "%s%s", dir, mk[i]);
        assert_int_equal(mkdir(path, 0755), 0);
    }
    snprintf(path, sizeof path, "%s/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error", dir);
    FILE *f = fopen(path, "w");
    fputs("N/A\n", f);
    fclose(f);
    struct vg_ib_port *p;
    assert_int_equal(vg_ib_ports(dir, &p), 1);
    assert_int_equal(p[0].symbol_error, VG_SYSFS_GARBAGE);
    assert_int_equal(p[0].link_downed, VG_SYSFS_MISSING);
    assert_int_equal(p[0].gpu, -1);
    free(p);
    unlink(path);
    for (size_t i = sizeof mk / sizeof mk[0]; i-- > 0;) {
        snprintf(path, sizeof path, "%s%s", dir, mk[i]);
        rmdir(path);
    }
    rmdir(dir);
}

static void no_step(void *arg, const char *step, const char *dev, int port)
{
    (void)arg, (void)step, (void)dev, (void)port;
}

static char state_file[64];

static void write_state(const char *text)
{
    FILE *f = fopen(state_file, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* The fake library's two devices and their ports, as the RDMA stack answers. */
static void test_verbs_fake(void **s)
{
    (void)s;
    write_state("devices=mlx5_0,mlx5_1\nmlx5_1.ports=2\nmlx5_1.state=1\n");
    struct vg_verbs_port v[8];
    int n = 0;
    char err[256];
    assert_int_equal(vg_verbs_walk(no_step, NULL, v, 8, &n, err, sizeof err), 0);
    assert_int_equal(n, 3);
    assert_string_equal(v[0].dev, "mlx5_0");
    assert_int_equal(v[0].state, 4);
    assert_string_equal(v[2].dev, "mlx5_1");
    assert_int_equal(v[2].port, 2);
    assert_string_equal(vg_verbs_state_name(v[2].state), "DOWN");
}

/* The NIC probe's verbs call that never returns: killed at the deadline,
 * nic-hung naming the device, the call and the port, a reboot by the
 * catalog; the ports read before it still come back. */
static void test_probe_hung(void **s)
{
    (void)s;
    write_state("devices=mlx5_0\nmlx5_0.hang=query\n");
    struct vg_probe p;
    assert_int_equal(vg_nic_probe_start(&p, H100), 0);
    vg_probe_wait(&p, 1, vg_mono_ms() + 500);
    struct vg_nic_probe_result r;
    vg_nic_probe_collect(&p, &r);
    vg_probe_free(&p);
    assert_true(r.hung || r.starved);   /* a loaded test machine may starve it: then no verdict */
    if (r.starved) {
        vg_nic_probe_free(&r);
        skip();
    }
    assert_true(r.ports_read);
    assert_int_equal(r.nports, 3);
    struct vg_event ev[2];
    int n = 0;
    vg_nic_probe_events(&r, "n1", ev, &n, 2);
    assert_int_equal(n, 1);
    assert_string_equal(ev[0].kind, "nic-hung");
    assert_string_equal(ev[0].source, "probe");
    assert_string_equal(ev[0].pci, "0000:1a:00.0");
    assert_non_null(strstr(ev[0].raw, "mlx5_0 unresponsive: ibv_query_port (port 1) did not answer within"));
    char err[256];
    struct vg_catalog *c = vg_catalog_load("data/fault-catalog.tsv", err, sizeof err);
    vg_catalog_classify(c, &ev[0]);
    assert_int_equal(ev[0].action, VG_ACT_REBOOT);
    vg_catalog_free(c);
    vg_nic_probe_free(&r);
    vg_probe_reap();
}

/* A healthy NIC answers: the probe is done, nothing hung, no event. */
static void test_probe_healthy(void **s)
{
    (void)s;
    write_state("devices=mlx5_0,mlx5_1\n");
    struct vg_probe p;
    assert_int_equal(vg_nic_probe_start(&p, H100), 0);
    vg_probe_wait(&p, 1, vg_mono_ms() + 10000);
    struct vg_nic_probe_result r;
    vg_nic_probe_collect(&p, &r);
    vg_probe_free(&p);
    assert_true(r.done);
    assert_false(r.hung);
    assert_int_equal(r.verbs_rc, 0);
    assert_int_equal(r.nverbs, 2);
    struct vg_event ev[2];
    int n = 0;
    vg_nic_probe_events(&r, "n1", ev, &n, 2);
    assert_int_equal(n, 0);
    vg_nic_probe_free(&r);
}

/* This machine's real libibverbs: no RDMA subsystem here, so its device
 * list fails with ENOSYS — no RDMA stack to probe, which is no fault (as a
 * machine without the library); a named library that is missing is one. */
static void test_verbs_real(void **s)
{
    (void)s;
    unsetenv("VIGIL_VERBS_LIB");
    struct vg_verbs_port v[8];
    int n = -1;
    char err[256];
    int rc = vg_verbs_walk(no_step, NULL, v, 8, &n, err, sizeof err);
    assert_int_equal(n, 0);
    if (rc == 0) return;   /* a kernel with an RDMA subsystem and no device */
    assert_int_equal(rc, VG_VERBS_ABSENT);
    assert_true(strstr(err, "Function not implemented") || strstr(err, "cannot load libibverbs.so.1"));
}

static void test_verbs_missing(void **s)
{
    (void)s;
    setenv("VIGIL_VERBS_LIB", "/nonexistent/libibverbs.so.1", 1);
    struct vg_verbs_port v[8];
    int n = 0;
    char err[256];
    assert_int_equal(vg_verbs_walk(no_step, NULL, v, 8, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot load /nonexistent/libibverbs.so.1"));
}

static int setup(void **s)
{
    (void)s;
    const char *lib = getenv("FAKE_VERBS");
    setenv("VIGIL_VERBS_LIB", lib && *lib ? lib : "build/tests/libibverbs.so.1", 1);
    snprintf(state_file, sizeof state_file, "/tmp/vigil-verbs-%d", (int)getpid());
    setenv("FAKE_VERBS_STATE", state_file, 1);
    return 0;
}

static int teardown(void **s)
{
    (void)s;
    unlink(state_file);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ports_and_neighbours), cmocka_unit_test(test_flaps),
        cmocka_unit_test(test_error_rates),          cmocka_unit_test(test_bad_counters),
        cmocka_unit_test(test_garbage_file),         cmocka_unit_test(test_verbs_fake),
        cmocka_unit_test(test_probe_hung),           cmocka_unit_test(test_probe_healthy),
        cmocka_unit_test(test_verbs_missing),        cmocka_unit_test(test_verbs_real),
    };
    return cmocka_run_group_tests_name("nic", tests, setup, teardown);
}
