/* test_nvml.c — the NVIDIA vendor (NVML) through the real dlopen path,
 * against the fake libnvidia-ml.so.1 ($FAKE_NVML, via $VIGIL_NVML_LIB):
 * healthy GPUs, ECC DBE, row-remap failure, PCIe x16→x8, NVLink down, GPU
 * lost, an unsupported call, a call that never returns (the probe's
 * deadline), power, clocks and throttle reasons, and an XID event delivered
 * once. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "signal/gpu.h"
#include "signal/gpuprobe.h"
#include "signal/probe.h"
#include "util/strutil.h"
#include "util/timeutil.h"

static char dir[64], state_path[128], events_path[160];

static void write_state(const char *text)
{
    FILE *f = fopen(state_path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **st)
{
    (void)st;
    const char *lib = getenv("FAKE_NVML");
    setenv("VIGIL_NVML_LIB", lib && *lib ? lib : "build/tests/libnvidia-ml.so.1", 1);
    snprintf(dir, sizeof dir, "/tmp/vigil-nvml-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(state_path, sizeof state_path, "%s/state", dir);
    snprintf(events_path, sizeof events_path, "%s/state.events", dir);
    setenv("FAKE_NVML_STATE", state_path, 1);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    unlink(state_path);
    unlink(events_path);
    rmdir(dir);
    return 0;
}

static const struct vg_gpu_vendor *const nvidia_only[] = { &vg_gpu_nvidia, NULL };

/* Reads GPU idx with a fresh open of the vendor; returns the read's result. */
static int read_gpu(int idx, struct vg_gpu_state *s)
{
    struct vg_gpu_set set;
    int n = vg_gpu_open_all(nvidia_only, &set, NULL, NULL);
    if (n < 0) fprintf(stderr, "# open: %s\n", set.vendor[0].error);
    assert_true(n > idx);
    int rc = vg_gpu_set_read(&set, idx, s);
    vg_gpu_close_all(&set);
    return rc;
}

static int events_of(const struct vg_gpu_state *s, struct vg_event *ev)
{
    int n = 0;
    vg_gpu_state_events(s, "n1", ev, &n, 32);
    return n;
}

static void test_healthy(void **st)
{
    (void)st;
    write_state("gpus=8\n");
    char err[256];
    assert_int_equal(vg_gpu_nvidia.open(err, sizeof err), 0);
    assert_int_equal(vg_gpu_nvidia.devices(), 8);
    char drv[80];
    assert_int_equal(vg_gpu_nvidia.driver_version(drv, sizeof drv), 0);   /* nvmlSystemGetDriverVersion */
    assert_string_equal(drv, "535.183.01");
    vg_gpu_nvidia.close();
    assert_int_equal(vg_gpu_nvidia.driver_version(drv, sizeof drv), -1);  /* not initialised */
    struct vg_gpu_state s;
    struct vg_event ev[32];
    assert_int_equal(read_gpu(3, &s), 0);
    assert_string_equal(s.model, "NVIDIA H100 80GB HBM3");
    assert_string_equal(s.vendor, "nvidia");
    assert_string_equal(s.source, "nvml");
    assert_string_equal(s.pci, "0000:5d:00.0");
    assert_int_equal(s.pcie_gen, 5);
    assert_int_equal(s.pcie_width_max, 16);
    assert_int_equal(s.links, 18);
    assert_int_equal(s.link[17], 1);
    assert_int_equal(s.ecc_ue, 0);
    assert_int_equal(s.remap_failure, 0);
    assert_int_equal(s.temp_c, 35);
    assert_int_equal(s.power_mw, 75000);
    assert_int_equal(s.clock_sm_mhz, 1980);
    assert_int_equal(s.clock_mem_mhz, 2619);
    assert_int_equal(s.throttle, 0);
    assert_string_equal(vg_gpu_extra(&s, "clock_reasons"), "0x0");
    assert_false(s.lost);
    assert_string_equal(s.error, "");
    assert_int_equal(events_of(&s, ev), 0);
}

static void test_ecc_dbe(void **st)
{
    (void)st;
    write_state("gpus=2\ngpu1.ecc_dbe_volatile=2\ngpu1.ecc_dbe_aggregate=7\ngpu1.retired_dbe=3\n");
    struct vg_gpu_state s;
    struct vg_event ev[32];
    assert_int_equal(read_gpu(1, &s), 0);
    assert_int_equal(s.ecc_ue, 2);
    assert_int_equal(s.ecc_ue_total, 7);
    assert_int_equal(s.retired_ue, 3);
    assert_int_equal(s.retired_ce, 0);
    assert_int_equal(events_of(&s, ev), 1);
    assert_string_equal(ev[0].kind, "ecc-dbe");
    assert_int_equal(ev[0].gpu, 1);
    assert_string_equal(ev[0].pci, "0000:2a:00.0");
    assert_string_equal(ev[0].source, "nvml");
    /* The other GPU is clean. */
    assert_int_equal(read_gpu(0, &s), 0);
    assert_int_equal(events_of(&s, ev), 0);
}

static void test_row_remap_failure(void **st)
{
    (void)st;
    write_state("gpus=4\ngpu3.remap_failure=1\ngpu3.remap_uncorrectable=512\n");
    struct vg_gpu_state s;
    struct vg_event ev[32];
    assert_int_equal(read_gpu(3, &s), 0);
    assert_int_equal(s.remap_failure, 1);
    assert_int_equal(s.remap_ue, 512);
    assert_int_equal(events_of(&s, ev), 1);
    assert_string_equal(ev[0].kind, "row-remap-failure");
    assert_int_equal(ev[0].action, VG_ACT_IGNORE);   /* readers report facts; the catalog decides */
}

static void test_pcie_x8(void **st)
{
    (void)st;
    write_state("gpus=4\ngpu2.pcie_width=8\n");
    struct vg_gpu_state s;
    struct vg_event ev[32];
    assert_int_equal(read_gpu(2, &s), 0);
    assert_int_equal(s.pcie_width, 8);
    assert_int_equal(s.pcie_width_max, 16);
    assert_int_equal(events_of(&s, ev), 1);
    assert_string_equal(ev[0].kind, "pcie-degraded");
    assert_non_null(strstr(ev[0].raw, "x8"));
    /* A link that only slowed down (an idle GPU saves power) is not degraded. */
    write_state("gpus=4\ngpu1.pcie_gen=1\n");
    assert_int_equal(read_gpu(1, &s), 0);
    assert_int_equal(s.pcie_gen, 1);
    assert_int_equal(events_of(&s, ev), 0);
}

static void test_nvlink_down(void **st)
{
    (void)st;
    write_state("gpus=2\ngpu*.nvlinks=12\ngpu1.nvlink_down=3,7\n");
    struct vg_gpu_state s;
    struct vg_event ev[32];
    assert_int_equal(read_gpu(1, &s), 0);
    assert_int_equal(s.links, 12);
    assert_int_equal(s.link[3], 0);
    assert_int_equal(s.link[4], 1);
    assert_int_equal(events_of(&s, ev), 2);
    assert_string_equal(ev[0].kind, "nvlink-down");
    assert_int_equal(ev[0].code, 3);
    assert_int_equal(ev[1].code, 7);
    assert_string_equal(ev[1].raw, "GPU 1: NVLink 7 down");
    assert_int_equal(read_gpu(0, &s), 0);
    assert_int_equal(s.links, 12);
    assert_int_equal(events_of(&s, ev), 0);
}

static void test_throttle(void **st)
{
    (void)st;
    /* 0x40 HW thermal slowdown and 0x4 software power cap, in NVML's bits */
    write_state("gpus=2\ngpu1.clock_reasons=0x44\ngpu1.temp=91\ngpu0.clock_reasons=0x4\n");
    struct vg_gpu_state s;
    struct vg_event ev[32];
    assert_int_equal(read_gpu(1, &s), 0);
    assert_int_equal(s.throttle, VG_THROTTLE_HW_THERMAL | VG_THROTTLE_POWER_CAP);
    assert_string_equal(vg_gpu_extra(&s, "clock_reasons"), "0x44");
    assert_int_equal(events_of(&s, ev), 1);
    assert_string_equal(ev[0].kind, "thermal-slowdown");
    assert_string_equal(ev[0].raw, "GPU 1: clocks slowed (power-cap,hw-thermal, 91 C)");
    /* A power cap alone is the operator's setting, not a fault. */
    assert_int_equal(read_gpu(0, &s), 0);
    assert_int_equal(s.throttle, VG_THROTTLE_POWER_CAP);
    assert_int_equal(events_of(&s, ev), 0);
}

/* NVML's fabric info (nvmlDeviceGetGpuFabricInfoV): a GB200 tray whose four
 * GPUs registered in one NVLink domain (cluster UUID and clique), one whose
 * registration finished with an error (fabric-degraded), one still running
 * it (fabric-pending); an H100 without such a fabric has none and no event;
 * the domain of a node is its GPUs' one domain, none when they disagree. */
static void test_fabric(void **st)
{
    (void)st;
    write_state("gpus=4\ngpu*.fabric=completed\ngpu*.fabric_cluster=3d5e9c1a-7b20-4f1e-9a4c-55d1e2f0a7b3\n"
                "gpu*.fabric_clique=32766\n");
    struct vg_gpu_state s[4];
    struct vg_event ev[32];
    for (int i = 0; i < 4; i++) assert_int_equal(read_gpu(i, &s[i]), 0);
    assert_int_equal(s[0].fabric, VG_FABRIC_OK);
    assert_string_equal(s[0].fabric_domain, "3d5e9c1a-7b20-4f1e-9a4c-55d1e2f0a7b3/32766");
    assert_int_equal(events_of(&s[0], ev), 0);
    char dom[64];
    bool conflict;
    vg_gpu_fabric_domain(s, 4, dom, &conflict);
    assert_string_equal(dom, "3d5e9c1a-7b20-4f1e-9a4c-55d1e2f0a7b3/32766");
    assert_false(conflict);
    /* the JSON form (the probe child's) keeps it */
    json_t *j = vg_gpu_state_to_json(&s[2]);
    struct vg_gpu_state back;
    assert_int_equal(vg_gpu_state_from_json(j, NULL, &back), 0);
    json_decref(j);
    assert_int_equal(back.fabric, VG_FABRIC_OK);
    assert_string_equal(back.fabric_domain, s[2].fabric_domain);
    write_state("gpus=4\ngpu*.fabric=completed\ngpu*.fabric_clique=7\ngpu1.fabric_status=15\n"
                "gpu2.fabric=in_progress\ngpu3.fabric_clique=8\n");
    for (int i = 0; i < 4; i++) assert_int_equal(read_gpu(i, &s[i]), 0);
    assert_int_equal(s[1].fabric, VG_FABRIC_FAILED);
    assert_int_equal(events_of(&s[1], ev), 1);
    assert_string_equal(ev[0].kind, "fabric-degraded");
    assert_string_equal(ev[0].raw, "GPU 1: NVLink fabric registration failed: GPU is lost (15)");
    assert_int_equal(s[2].fabric, VG_FABRIC_PENDING);
    assert_int_equal(events_of(&s[2], ev), 1);
    assert_string_equal(ev[0].kind, "fabric-pending");
    vg_gpu_fabric_domain(s, 4, dom, &conflict);   /* clique 7 and clique 8: no one domain */
    assert_string_equal(dom, "");
    assert_true(conflict);
    write_state("gpus=1\n");   /* an H100: NOT_SUPPORTED */
    assert_int_equal(read_gpu(0, &s[0]), 0);
    assert_int_equal(s[0].fabric, -1);
    assert_int_equal(events_of(&s[0], ev), 0);
    vg_gpu_fabric_domain(s, 1, dom, &conflict);
    assert_string_equal(dom, "");
    assert_false(conflict);
}

static void test_gpu_lost(void **st)
{
    (void)st;
    write_state("gpus=8\ngpu5.lost=1\n");
    struct vg_gpu_state s;
    struct vg_event ev[32];
    assert_int_equal(read_gpu(5, &s), -1);
    assert_true(s.lost);
    assert_non_null(strstr(s.error, "GPU is lost"));
    assert_int_equal(events_of(&s, ev), 1);
    assert_string_equal(ev[0].kind, "gpu-lost");
    assert_int_equal(ev[0].gpu, 5);
}

static void test_unsupported_is_unknown(void **st)
{
    (void)st;
    write_state("gpus=1\ngpu0.unsupported=nvmlDeviceGetRemappedRows,nvmlDeviceGetNvLinkState\n");
    struct vg_gpu_state s;
    struct vg_event ev[32];
    assert_int_equal(read_gpu(0, &s), 0);
    assert_int_equal(s.remap_failure, -1);
    assert_int_equal(s.remap_pending, -1);
    assert_int_equal(s.links, 0);
    assert_int_equal(s.ecc_ue, 0);
    assert_string_equal(s.error, "");
    assert_int_equal(events_of(&s, ev), 0);
}

static void test_missing_library(void **st)
{
    (void)st;
    const char *lib = getenv("VIGIL_NVML_LIB");
    char *saved = strdup(lib);
    setenv("VIGIL_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
    char err[256] = "";
    assert_int_equal(vg_gpu_nvidia.open(err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot load"));
    assert_int_equal(vg_gpu_nvidia.devices(), -1);
    setenv("VIGIL_NVML_LIB", saved, 1);
    free(saved);
    write_state("init=fail\n");
    assert_int_equal(vg_gpu_nvidia.open(err, sizeof err), -1);
    assert_non_null(strstr(err, "Driver Not Loaded"));
}

static void test_probe_all_gpus(void **st)
{
    (void)st;
    write_state("gpus=4\ngpu2.ecc_dbe_volatile=1\ndriver=550.54.15\n");
    struct vg_gpu_probe_result r;
    vg_gpu_probe(nvidia_only, 10000, &r);
    assert_false(r.hung);
    assert_string_equal(r.error, "");
    assert_string_equal(vg_gpu_probe_vendor(&r, "nvidia")->driver, "550.54.15");
    assert_int_equal(r.count, 4);
    assert_int_equal(r.n, 4);
    assert_string_equal(r.gpus[3].pci, "0000:5d:00.0");
    struct vg_event ev[32];
    int n = 0;
    vg_gpu_probe_events(&r, "n1", ev, &n, 32);
    assert_int_equal(n, 1);
    assert_string_equal(ev[0].kind, "ecc-dbe");
    assert_int_equal(ev[0].gpu, 2);
    vg_gpu_probe_free(&r);
}

static void test_hung_call(void **st)
{
    (void)st;
    write_state("gpus=4\ngpu1.hang=nvmlDeviceGetTotalEccErrors\n");
    struct vg_gpu_probe_result r;
    int64_t t0 = vg_mono_ms();
    vg_gpu_probe(nvidia_only, 800, &r);
    int64_t took = vg_mono_ms() - t0;
    assert_true(took >= 700);
    assert_true(took < 3000);   /* the deadline holds although the call never returns */
    assert_true(r.hung);
    assert_int_equal(r.hung_gpu, 1);
    assert_ptr_equal(r.hung_vendor, &vg_gpu_nvidia);
    assert_int_equal(r.count, 4);
    assert_int_equal(r.n, 1);   /* GPU 0 was read before the hang */
    struct vg_event ev[32];
    int n = 0;
    vg_gpu_probe_events(&r, "n1", ev, &n, 32);
    assert_int_equal(n, 1);
    assert_string_equal(ev[0].kind, "probe-hung");
    assert_string_equal(ev[0].source, "probe");
    assert_int_equal(ev[0].gpu, 1);
    assert_true(vg_startswith(ev[0].raw, "GPU 1 unresponsive: NVML did not answer within "));
    vg_gpu_probe_free(&r);
    /* The next cycle is not blocked by the killed child. */
    write_state("gpus=4\n");
    t0 = vg_mono_ms();
    vg_gpu_probe(nvidia_only, 5000, &r);
    assert_true(vg_mono_ms() - t0 < 2000);
    assert_false(r.hung);
    assert_int_equal(r.n, 4);
    vg_gpu_probe_free(&r);
    for (int i = 0; i < 100 && vg_probe_reap() > 0; i++) vg_sleep_ms(10);
    assert_int_equal(vg_probe_reap(), 0);
}

static void test_hung_init(void **st)
{
    (void)st;
    write_state("hang=nvmlInit_v2\n");
    struct vg_gpu_probe_result r;
    vg_gpu_probe(nvidia_only, 300, &r);
    assert_true(r.hung);
    assert_int_equal(r.hung_gpu, -1);
    assert_string_equal(r.hung_call, "open");
    assert_int_equal(r.n, 0);
    vg_gpu_probe_free(&r);
}

static void test_xid_event(void **st)
{
    (void)st;
    write_state("gpus=4\n");
    unlink(events_path);
    char err[256];
    assert_int_equal(vg_gpu_nvidia.open(err, sizeof err), 0);
    struct vg_event ev[8];
    assert_int_equal(vg_gpu_nvidia.events(50, ev, 8), 0);
    FILE *f = fopen(events_path, "a");
    assert_non_null(f);
    fputs("event=79 gpu=2\n", f);
    fclose(f);
    assert_int_equal(vg_gpu_nvidia.events(2000, ev, 8), 1);
    assert_string_equal(ev[0].kind, "xid");
    assert_int_equal(ev[0].code, 79);
    assert_int_equal(ev[0].gpu, 2);
    assert_string_equal(ev[0].pci, "0000:3a:00.0");
    /* Delivered once. */
    assert_int_equal(vg_gpu_nvidia.events(50, ev, 8), 0);
    f = fopen(events_path, "a");
    fputs("event=48 gpu=0 type=dbe\nevent=94 gpu=1\n", f);
    fclose(f);
    assert_int_equal(vg_gpu_nvidia.events(2000, ev, 8), 2);
    assert_string_equal(ev[0].kind, "ecc-dbe");
    assert_int_equal(ev[1].code, 94);
    vg_gpu_nvidia.close();
}

static void test_state_json_and_pci(void **st)
{
    (void)st;
    char out[16];
    assert_true(vg_gpu_pci_id("00000000:18:00.0", out));
    assert_string_equal(out, "0000:18:00.0");
    assert_true(vg_gpu_pci_id("0000:DB:00.0", out));
    assert_string_equal(out, "0000:db:00.0");
    assert_false(vg_gpu_pci_id("0000:18", out));
    assert_false(vg_gpu_pci_id("zz:00.0", out));
    struct vg_gpu_state a, b;
    vg_gpu_state_init(&a, 6);
    strcpy(a.pci, "0000:ba:00.0");
    strcpy(a.vendor, "nvidia");
    a.ecc_ue = 4;
    a.links = 2;
    a.link[0] = 1;
    a.link[1] = 0;
    assert_true(vg_gpu_extra_set(&a, "clock_reasons", "0x%x", 0x40));
    json_t *j = vg_gpu_state_to_json(&a);
    assert_int_equal(vg_gpu_state_from_json(j, NULL, &b), 0);
    assert_ptr_equal(b.v, &vg_gpu_nvidia);
    json_decref(j);
    assert_int_equal(b.index, 6);
    assert_string_equal(b.pci, "0000:ba:00.0");
    assert_string_equal(b.vendor, "nvidia");
    assert_int_equal(b.ecc_ue, 4);
    assert_int_equal(b.ecc_ce, -1);
    assert_int_equal(b.power_mw, -1);
    assert_int_equal(b.link[1], 0);
    assert_int_equal(b.link[2], -1);
    assert_string_equal(vg_gpu_extra(&b, "clock_reasons"), "0x40");
    assert_null(vg_gpu_extra(&b, "hive"));
    assert_int_equal(vg_gpu_state_from_json(json_null(), NULL, &b), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_healthy),
        cmocka_unit_test(test_ecc_dbe),
        cmocka_unit_test(test_row_remap_failure),
        cmocka_unit_test(test_pcie_x8),
        cmocka_unit_test(test_nvlink_down),
        cmocka_unit_test(test_throttle),
        cmocka_unit_test(test_gpu_lost),
        cmocka_unit_test(test_unsupported_is_unknown),
        cmocka_unit_test(test_missing_library),
        cmocka_unit_test(test_probe_all_gpus),
        cmocka_unit_test(test_hung_call),
        cmocka_unit_test(test_hung_init),
        cmocka_unit_test(test_xid_event),
        cmocka_unit_test(test_fabric),
        cmocka_unit_test(test_state_json_and_pci),
    };
    return cmocka_run_group_tests_name("nvml", tests, setup, teardown);
}
