/* test_gpu.c — the GPU vendors table and vg_gpu_open_all: every vendor of the
 * table is complete and each of its kinds has a catalog row; vendors that are
 * absent, answer "no device", fail to open or have devices are told apart;
 * devices are numbered per vendor and tagged with it; the probe over several
 * vendors (the real NVIDIA backend against the fake libnvidia-ml, and a
 * second vendor defined here, as a new backend would be) names the vendor
 * whose call hung; events carry the vendor's source and kinds; the extras
 * tail is bounded. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "catalog/catalog.h"
#include "signal/gpu.h"
#include "signal/gpuprobe.h"
#include "signal/probe.h"
#include "util/strutil.h"
#include "util/timeutil.h"

static char dir[64], state_path[128];

/* ---- a second vendor, as a backend file would define it ---- */
static int two_open(char *err, size_t n) { (void)err, (void)n; return 0; }
static int two_devices(void) { return 2; }
static int two_read(int index, struct vg_gpu_state *st)
{
    vg_gpu_state_init(st, index);
    if (index == 1 && getenv("TEST_GPU_HANG"))
        for (;;) pause();   /* a wedged driver */
    snprintf(st->model, sizeof st->model, "Two %d", index);
    snprintf(st->pci, sizeof st->pci, "0000:c%d:00.0", index);
    st->links = 2;
    st->link[0] = (signed char)(index == 1 ? 0 : 1);
    st->link[1] = 1;
    st->throttle = VG_THROTTLE_HW_THERMAL;
    vg_gpu_extra_set(st, "hive", "0x%x", 0xabc);
    return 0;
}
static void two_close(void) {}
static bool yes(void) { return true; }
static bool no(void) { return false; }
static int fail_open(char *err, size_t n) { snprintf(err, n, "init failed (status 8)"); return -1; }
static int absent_open(char *err, size_t n) { (void)err, (void)n; return VG_GPU_ABSENT; }

static const struct vg_gpu_vendor two = {
    .name = "two", .source = "twosmi", .label = "TwoSMI", .link_name = "XLink",
    .kinds = { .lost = "gpu-lost", .link_down = "two-link-down" },   /* no thermal kind: not reported */
    .probe = yes, .open = two_open, .devices = two_devices, .read = two_read, .close = two_close,
};
static const struct vg_gpu_vendor absent = {
    .name = "absent", .source = "x", .label = "X", .probe = no, .open = fail_open, .devices = two_devices,
    .read = two_read, .close = two_close,
};
static const struct vg_gpu_vendor broken = {
    .name = "broken", .source = "x", .label = "X", .probe = yes, .open = fail_open, .devices = two_devices,
    .read = two_read, .close = two_close,
};
static const struct vg_gpu_vendor nodev = {
    .name = "nodev", .source = "x", .label = "X", .probe = yes, .open = absent_open, .devices = two_devices,
    .read = two_read, .close = two_close,
};
static const struct vg_gpu_vendor *const mixed[] = { &absent, &vg_gpu_nvidia, &nodev, &broken, &two, NULL };

static int setup(void **st)
{
    (void)st;
    const char *lib = getenv("FAKE_NVML");
    setenv("VIGIL_NVML_LIB", lib && *lib ? lib : "build/tests/libnvidia-ml.so.1", 1);
    snprintf(dir, sizeof dir, "/tmp/vigil-gpu-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(state_path, sizeof state_path, "%s/state", dir);
    FILE *f = fopen(state_path, "w");
    if (!f) return -1;
    fputs("gpus=3\n", f);
    fclose(f);
    setenv("FAKE_NVML_STATE", state_path, 1);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    unlink(state_path);
    rmdir(dir);
    return 0;
}

static void test_table(void **st)
{
    (void)st;
    char err[256];
    struct vg_catalog *cat = vg_catalog_load(NULL, err, sizeof err);
    assert_non_null(cat);
    size_t n = 0;
    for (; vg_gpu_vendors[n]; n++) {
        const struct vg_gpu_vendor *v = vg_gpu_vendors[n];
        assert_non_null(v->name);
        assert_true(v->source && *v->source && strlen(v->source) < sizeof ((struct vg_event *)0)->source);
        assert_non_null(v->label);
        assert_non_null(v->hint);
        assert_true(v->open && v->devices && v->read && v->close);
        assert_ptr_equal(vg_gpu_vendor_find(NULL, v->name), v);
        for (size_t k = 0; k < n; k++) assert_string_not_equal(vg_gpu_vendors[k]->name, v->name);
        /* each kind the vendor reports has its verdict in the catalog */
        const char *const *kinds = (const char *const *)&v->kinds;
        for (size_t k = 0; k < sizeof v->kinds / sizeof(const char *); k++)
            if (kinds[k] && !vg_catalog_lookup(cat, kinds[k], VG_CODE_ANY))
                fail_msg("%s: kind %s has no row in the fault catalog", v->name, kinds[k]);
        assert_non_null(v->kinds.lost);
    }
    assert_true(n >= 1 && n < VG_GPU_VENDORS_MAX);
    assert_null(vg_gpu_vendor_find(NULL, "two"));
    assert_ptr_equal(vg_gpu_vendor_find(mixed, "two"), &two);
    vg_catalog_free(cat);
}

static void test_open_all(void **st)
{
    (void)st;
    struct vg_gpu_set set;
    assert_int_equal(vg_gpu_open_all(mixed, &set, NULL, NULL), 5);
    assert_int_equal(set.nvendors, 5);
    assert_false(set.vendor[0].present);   /* absent: not even tried */
    assert_string_equal(set.vendor[0].error, "");
    assert_true(set.vendor[1].opened);
    assert_int_equal(set.vendor[1].count, 3);
    assert_string_equal(set.vendor[1].driver, "535.183.01");
    assert_false(set.vendor[2].present);   /* its library says it has no device here */
    assert_string_equal(set.vendor[2].error, "");
    assert_true(set.vendor[3].present);
    assert_false(set.vendor[3].opened);
    assert_string_equal(set.vendor[3].error, "init failed (status 8)");
    assert_int_equal(set.vendor[4].count, 2);
    int index;
    assert_ptr_equal(vg_gpu_set_device(&set, 2, &index), &vg_gpu_nvidia);
    assert_int_equal(index, 2);
    assert_ptr_equal(vg_gpu_set_device(&set, 3, &index), &two);
    assert_int_equal(index, 0);
    assert_null(vg_gpu_set_device(&set, 5, &index));
    struct vg_gpu_state s;
    assert_int_equal(vg_gpu_set_read(&set, 4, &s), 0);
    assert_int_equal(s.index, 1);
    assert_ptr_equal(s.v, &two);
    assert_string_equal(s.vendor, "two");
    assert_string_equal(s.source, "twosmi");
    assert_string_equal(s.model, "Two 1");
    assert_int_equal(vg_gpu_set_read(&set, 0, &s), 0);
    assert_string_equal(s.vendor, "nvidia");
    assert_string_equal(s.source, "nvml");
    assert_int_equal(vg_gpu_set_read(&set, 9, &s), -1);
    vg_gpu_close_all(&set);
    /* No vendor opens: -1, and each says why. */
    const struct vg_gpu_vendor *const none[] = { &absent, &broken, NULL };
    assert_int_equal(vg_gpu_open_all(none, &set, NULL, NULL), -1);
    assert_string_equal(set.vendor[1].error, "init failed (status 8)");
}

static void test_probe_vendors(void **st)
{
    (void)st;
    struct vg_gpu_probe_result r;
    vg_gpu_probe(mixed, 10000, &r);
    assert_false(r.hung);
    assert_int_equal(r.count, 5);
    assert_int_equal(r.n, 5);
    /* a present vendor that does not open is a fault, even beside one that does */
    assert_string_equal(r.error, "broken: init failed (status 8)");
    assert_false(vg_gpu_probe_vendor(&r, "absent")->present);
    assert_true(vg_gpu_probe_vendor(&r, "two")->opened);
    assert_string_equal(vg_gpu_probe_vendor(&r, "nvidia")->driver, "535.183.01");
    assert_ptr_equal(r.gpus[4].v, &two);
    assert_string_equal(vg_gpu_extra(&r.gpus[4], "hive"), "0xabc");
    struct vg_event ev[16];
    int n = 0;
    vg_gpu_probe_events(&r, "n1", ev, &n, 16);
    /* two's GPU 1 has XLink 0 down; its thermal slowdown is not a kind it reports */
    assert_int_equal(n, 1);
    assert_string_equal(ev[0].kind, "two-link-down");
    assert_string_equal(ev[0].source, "twosmi");
    assert_string_equal(ev[0].raw, "GPU 1: XLink 0 down");
    assert_string_equal(ev[0].pci, "0000:c1:00.0");
    assert_int_equal(ev[0].gpu, 1);
    vg_gpu_probe_free(&r);
    /* Nothing present at all. */
    const struct vg_gpu_vendor *const only_absent[] = { &absent, &nodev, NULL };
    vg_gpu_probe(only_absent, 10000, &r);
    assert_int_equal(r.count, -1);
    assert_string_equal(r.error, "no GPU driver loaded (looked for absent nodev)");
    vg_gpu_probe_free(&r);
}

static void test_probe_hang_names_vendor(void **st)
{
    (void)st;
    setenv("TEST_GPU_HANG", "1", 1);
    struct vg_gpu_probe_result r;
    vg_gpu_probe(mixed, 600, &r);
    unsetenv("TEST_GPU_HANG");
    assert_true(r.hung);
    assert_ptr_equal(r.hung_vendor, &two);
    assert_int_equal(r.hung_gpu, 1);
    assert_string_equal(r.hung_call, "read");
    assert_int_equal(r.n, 4);   /* NVIDIA's three and two's GPU 0 */
    assert_int_equal(r.count, 5);
    assert_string_equal(r.error, "");
    char text[160];
    assert_true(vg_startswith(vg_gpu_probe_hung_text(&r, text, sizeof text),
                              "GPU 1 unresponsive: TwoSMI did not answer within "));
    vg_gpu_probe_free(&r);
    for (int i = 0; i < 100 && vg_probe_reap() > 0; i++) vg_sleep_ms(10);
}

static void test_state_without_vendor(void **st)
{
    (void)st;
    struct vg_gpu_state s;
    vg_gpu_state_init(&s, 2);
    s.lost = true;
    s.ecc_ue = 3;
    struct vg_event ev[4];
    int n = 0;
    vg_gpu_state_events(&s, "n1", ev, &n, 4);
    assert_int_equal(n, 1);   /* a lost GPU is a lost GPU whoever made it */
    assert_string_equal(ev[0].kind, "gpu-lost");
    s.lost = false;
    n = 0;
    vg_gpu_state_events(&s, "n1", ev, &n, 4);
    assert_int_equal(n, 0);   /* what its counters mean is the vendor's to say */
}

static void test_extras_bounded(void **st)
{
    (void)st;
    struct vg_gpu_state s;
    vg_gpu_state_init(&s, 0);
    char key[16];
    for (int i = 0; i < VG_GPU_EXTRA_MAX; i++) {
        snprintf(key, sizeof key, "k%d", i);
        assert_true(vg_gpu_extra_set(&s, key, "%d", i));
    }
    assert_false(vg_gpu_extra_set(&s, "one-more", "x"));
    assert_true(vg_gpu_extra_set(&s, "k3", "replaced"));
    assert_string_equal(vg_gpu_extra(&s, "k3"), "replaced");
    assert_int_equal(s.nextra, VG_GPU_EXTRA_MAX);
    char buf[80];
    assert_string_equal(vg_gpu_throttle_names(VG_THROTTLE_POWER_BRAKE | VG_THROTTLE_SW_THERMAL, buf, sizeof buf),
                        "sw-thermal,power-brake");
    assert_string_equal(vg_gpu_throttle_names(0, buf, sizeof buf), "none");
    assert_string_equal(vg_gpu_throttle_names(0x100, buf, sizeof buf), "other");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_open_all),
        cmocka_unit_test(test_probe_vendors),
        cmocka_unit_test(test_probe_hang_names_vendor),
        cmocka_unit_test(test_state_without_vendor),
        cmocka_unit_test(test_extras_bounded),
    };
    return cmocka_run_group_tests_name("gpu", tests, setup, teardown);
}
