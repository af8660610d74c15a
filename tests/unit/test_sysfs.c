/* test_sysfs.c — the sysfs readers on fixture trees copied from an H100 node
 * (tests/fixtures/sysfs/h100, device entries are symlinks as on a live node)
 * and a degraded copy (a port down, a slow port, a GPU at x8 with AER errors). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "signal/sysfs.h"
#include "catalog/catalog.h"

#define H100 "tests/fixtures/sysfs/h100"
#define DEGRADED "tests/fixtures/sysfs/degraded"

static void test_ib_ports_healthy(void **st)
{
    (void)st;
    struct vg_ib_port *p;
    size_t n = vg_ib_ports(H100, &p);
    assert_int_equal(n, 3);
    assert_string_equal(p[0].dev, "mlx5_0");
    assert_int_equal(p[0].port, 1);
    assert_int_equal(p[0].state, 4);
    assert_string_equal(p[0].state_name, "ACTIVE");
    assert_int_equal(p[0].phys_state, 5);
    assert_string_equal(p[0].phys_name, "LinkUp");
    assert_true(p[0].rate_gbps > 399 && p[0].rate_gbps < 401);
    assert_string_equal(p[0].rate, "400 Gb/sec (4X NDR)");
    assert_string_equal(p[0].link_layer, "InfiniBand");
    assert_string_equal(p[0].pci, "0000:1a:00.0");   /* from the symlink into the PCI tree */
    assert_int_equal(p[0].link_downed, 0);
    assert_int_equal(p[0].port_rcv_errors, 14);      /* the real node's counter */
    assert_string_equal(p[2].dev, "mlx5_bond_0");
    assert_string_equal(p[2].link_layer, "Ethernet");
    assert_true(p[2].rate_gbps > 199 && p[2].rate_gbps < 201);
    struct vg_event ev[8];
    int ne = 0;
    for (size_t i = 0; i < n; i++) vg_ib_port_events(&p[i], 0, "n1", ev, &ne, 8);
    assert_int_equal(ne, 0);
    assert_non_null(vg_ib_find(p, n, "mlx5_1:1"));
    assert_non_null(vg_ib_find(p, n, "mlx5_1"));
    assert_null(vg_ib_find(p, n, "mlx5_1:2"));
    assert_null(vg_ib_find(p, n, "mlx5_9"));
    assert_null(vg_ib_find(p, n, "mlx5_1:x"));
    free(p);
}

static void test_ib_ports_degraded(void **st)
{
    (void)st;
    struct vg_ib_port *p;
    size_t n = vg_ib_ports(DEGRADED, &p);
    assert_int_equal(n, 3);
    const struct vg_ib_port *down = vg_ib_find(p, n, "mlx5_1:1");
    assert_non_null(down);
    assert_int_equal(down->state, 1);
    assert_string_equal(down->state_name, "DOWN");
    assert_string_equal(down->phys_name, "Disabled");
    assert_int_equal(down->link_downed, 3);
    struct vg_event ev[8];
    int ne = 0;
    for (size_t i = 0; i < n; i++) vg_ib_port_events(&p[i], 400, "n1", ev, &ne, 8);
    /* mlx5_0 at 200, mlx5_1 down, the 200 Gb/s bond below 400 too. */
    assert_int_equal(ne, 3);
    assert_string_equal(ev[0].kind, "ib-degraded");
    assert_string_equal(ev[0].pci, "0000:1a:00.0");
    assert_string_equal(ev[1].kind, "ib-down");
    assert_string_equal(ev[1].source, "sysfs");
    assert_non_null(strstr(ev[1].raw, "DOWN"));
    free(p);
}

static void test_ib_absent(void **st)
{
    (void)st;
    struct vg_ib_port *p;
    assert_int_equal(vg_ib_ports("tests/fixtures/no-such-root", &p), 0);
    assert_null(p);
}

static void test_pci_devices(void **st)
{
    (void)st;
    struct vg_pci_dev *d;
    size_t n = vg_pci_devices(H100, &d);
    assert_int_equal(n, 5);   /* the bridge is not a GPU or NIC */
    assert_string_equal(d[0].addr, "0000:18:00.0");
    assert_string_equal(d[0].kind, "gpu");
    assert_int_equal(d[0].gen, 5);
    assert_int_equal(d[0].width, 16);
    assert_int_equal(d[0].aer_fatal, 0);
    assert_string_equal(d[1].kind, "nic");
    struct vg_event ev[8];
    int ne = 0;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(d[i].kind, "gpu")) vg_pci_dev_events(&d[i], "n1", ev, &ne, 8);
    assert_int_equal(ne, 0);
    /* The bond NIC runs at gen4 of gen5 (idle links slow down): not a fault. */
    assert_int_equal(d[4].gen, 4);
    assert_int_equal(d[4].gen_max, 5);
    for (size_t i = 0; i < n; i++) vg_pci_dev_events(&d[i], "n1", ev, &ne, 8);
    assert_int_equal(ne, 0);
    free(d);
}

static void test_pci_degraded(void **st)
{
    (void)st;
    struct vg_pci_dev *d;
    size_t n = vg_pci_devices(DEGRADED, &d);
    assert_int_equal(n, 5);
    const struct vg_pci_dev *g = NULL;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(d[i].addr, "0000:2a:00.0")) g = &d[i];
    assert_non_null(g);
    assert_int_equal(g->gen, 4);
    assert_int_equal(g->width, 8);
    assert_int_equal(g->width_max, 16);
    assert_int_equal(g->aer_cor, 12);
    assert_int_equal(g->aer_nonfatal, 2);
    assert_int_equal(g->aer_fatal, 1);
    struct vg_event ev[8];
    int ne = 0;
    vg_pci_dev_events(g, "n1", ev, &ne, 8);
    assert_int_equal(ne, 2);
    assert_string_equal(ev[0].kind, "pcie-degraded");
    assert_int_equal(ev[0].action, VG_ACT_IGNORE);   /* readers report facts; the catalog decides */
    assert_string_equal(ev[1].kind, "aer-fatal");
    assert_int_equal(ev[1].action, VG_ACT_IGNORE);
    /* the one verdict source: the catalog */
    char err[256];
    struct vg_catalog *c = vg_catalog_open(NULL, NULL, NULL, err, sizeof err);
    assert_non_null(c);
    vg_catalog_classify(c, &ev[0]);
    vg_catalog_classify(c, &ev[1]);
    assert_int_equal(ev[0].action, VG_ACT_DRAIN_RMA);
    assert_int_equal(ev[1].action, VG_ACT_REBOOT);
    vg_catalog_free(c);
    free(d);
}

static void test_speed(void **st)
{
    (void)st;
    assert_int_equal(vg_pcie_gen_of_speed("32.0 GT/s PCIe"), 5);
    assert_int_equal(vg_pcie_gen_of_speed("2.5 GT/s"), 1);
    assert_int_equal(vg_pcie_gen_of_speed("8 GT/s"), 3);
    assert_int_equal(vg_pcie_gen_of_speed("Unknown"), -1);
    assert_int_equal(vg_pcie_gen_of_speed("12 GT/s"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ib_ports_healthy), cmocka_unit_test(test_ib_ports_degraded),
        cmocka_unit_test(test_ib_absent),        cmocka_unit_test(test_pci_devices),
        cmocka_unit_test(test_pci_degraded),     cmocka_unit_test(test_speed),
    };
    return cmocka_run_group_tests_name("sysfs", tests, NULL, NULL);
}
