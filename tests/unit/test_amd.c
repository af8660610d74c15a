/* test_amd.c — the AMD GPU vendor through its real paths: the driver's sysfs
 * under --root (a fixture tree of the kernel's documented formats, with a
 * malformed count, a count "currently inaccessible", a malformed bad-page
 * line, a connector and an NVIDIA card beside the GPUs); AMD SMI by dlopen of
 * the fake libamd_smi (RAS counts per block, retired pages at the threshold,
 * an XGMI link down, both amdsmi_version_t layouts, a version whose structs
 * were not validated, a hung call named with its GPU, a reset and a driver
 * reload after which the library is initialised again, a GPU gone); ROCm SMI
 * by dlopen of the same fake under its soname; and the real Debian
 * librocm-smi64 on this GPU-less machine: "no AMD GPU", nothing on stderr,
 * the NVIDIA GPUs read beside it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "signal/amd.h"
#include "signal/gpuprobe.h"
#include "util/rootfs.h"
#include "util/strutil.h"

#define FIXTURE "tests/fixtures/sysfs/amd-mi300x"
#define DEBIAN_RSMI "/usr/lib/librocm_smi64.so.1"

static const struct vg_gpu_vendor *const amd_only[] = { &vg_gpu_amd, NULL };
static char dir[64], state[128];

static const char *lib(const char *env, const char *def)
{
    const char *v = getenv(env);
    return v && *v ? v : def;
}

static void write_state(const char *text)
{
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s.tmp", state);
    FILE *f = fopen(tmp, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(rename(tmp, state), 0);
}

static int setup(void **s)
{
    (void)s;
    snprintf(dir, sizeof dir, "/tmp/vigil-amd-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(state, sizeof state, "%s/amdsmi-state", dir);
    setenv("FAKE_AMDSMI_STATE", state, 1);
    return 0;
}

static int teardown(void **s)
{
    (void)s;
    char p[200];
    snprintf(p, sizeof p, "%s.resets", state);
    unlink(p);
    unlink(state);
    rmdir(dir);
    return 0;
}

/* Each test starts from the live root and the fake AMD SMI. */
static int fresh(void **s)
{
    (void)s;
    vg_gpu_set_root(NULL);
    unsetenv("VIGIL_ROCM_SMI_LIB");
    setenv("VIGIL_AMDSMI_LIB", lib("FAKE_AMDSMI", "build/tests/libamd_smi.so.26"), 1);
    write_state("gpus=8\n");
    return 0;
}

static const struct vg_gpu_state *gpu(const struct vg_gpu_probe_result *r, int index)
{
    for (int i = 0; i < r->n; i++)
        if (r->gpus[i].index == index) return &r->gpus[i];
    fail_msg("GPU %d was not read", index);
    return NULL;
}

/* The events the probe's states imply, as "kind code pci|raw" lines. */
static void events(const struct vg_gpu_probe_result *r, char *out, size_t n)
{
    struct vg_event ev[32];
    int ne = 0;
    vg_gpu_probe_events(r, "n1", ev, &ne, 32);
    out[0] = 0;
    for (int i = 0; i < ne; i++) {
        size_t l = strlen(out);
        snprintf(out + l, n - l, "%s %d %s %s|%s\n", ev[i].kind, ev[i].code, ev[i].pci, ev[i].source, ev[i].raw);
    }
}

static void test_sysfs_fixture(void **s)
{
    (void)s;
    vg_gpu_set_root(FIXTURE);   /* a fixture tree is not the live host: sysfs alone, the library is not asked */
    struct vg_gpu_probe_result r;
    vg_gpu_probe(amd_only, 10000, &r);
    assert_false(r.hung);
    assert_int_equal(r.count, 2);   /* not the connector, not the NVIDIA card */
    assert_string_equal(r.vendors[0].driver, "6.12.12");
    const struct vg_gpu_state *a = gpu(&r, 0), *b = gpu(&r, 1);
    assert_string_equal(a->pci, "0000:0c:00.0");
    assert_string_equal(a->model, "AMD Instinct MI300X");
    assert_string_equal(a->vendor, "amd");
    assert_string_equal(a->source, "sysfs");
    assert_int_equal(a->ecc_ue, 0);
    assert_int_equal(a->remap_failure, 0);
    assert_int_equal(a->pcie_gen, 5);
    assert_int_equal(a->pcie_width, 16);
    assert_int_equal(a->temp_c, 41);
    assert_string_equal(vg_gpu_extra(a, "xgmi_hive"), "0x6500839c9b4fbf19");
    assert_string_equal(a->error, "");
    /* card1: umc ue 1 ce 3; sdma "Query currently inaccessible" (unknown); gfx malformed (named) */
    assert_int_equal(b->ecc_ue, 1);
    assert_int_equal(b->ecc_ce, 3);
    assert_string_equal(vg_gpu_extra(b, "ue_blocks"), "umc:1");
    assert_non_null(strstr(b->error, "card1/device/ras/gfx_err_count"));
    assert_int_equal(b->retired_ue, 3);   /* R, P and F; the malformed line skipped */
    assert_int_equal(b->remap_failure, 1);   /* a page the driver could not reserve */
    assert_string_equal(vg_gpu_extra(b, "bad_pages"), "1 reserved, 1 pending, 1 unreservable");
    char ev[2048];
    events(&r, ev, sizeof ev);
    assert_string_equal(ev,
                        "amd-ras-ue -1 0000:1c:00.0 sysfs|GPU 1: 1 uncorrectable ECC errors since the driver loaded (umc:1)\n"
                        "amd-bad-pages -1 0000:1c:00.0 sysfs|GPU 1: retired pages at the replacement threshold (1 reserved, "
                        "1 pending, 1 unreservable)\n"
                        "pcie-degraded -1 0000:1c:00.0 sysfs|GPU 1: PCIe link gen5 x8, max gen5 x16\n");
    vg_gpu_probe_free(&r);
}

static void test_amdsmi(void **s)
{
    (void)s;
    write_state("gpus=8\ngpu3.ue.umc=2\ngpu3.ue.xgmi_wafl=1\ngpu3.ce.umc=7\ngpu5.xgmi_down=2\n"
                "gpu6.bad_reserved=3\ngpu6.bad_failed=1\ngpu1.bad_reserved=2\ngpu1.bad_page_threshold=2\n"
                "gpu*.xgmi_hive=0x1234\n");
    struct vg_gpu_probe_result r;
    vg_gpu_probe(amd_only, 10000, &r);
    assert_int_equal(r.count, 8);
    assert_int_equal(r.n, 8);
    const struct vg_gpu_state *g0 = gpu(&r, 0), *g3 = gpu(&r, 3), *g5 = gpu(&r, 5);
    assert_string_equal(g0->pci, "0000:0c:00.0");
    assert_string_equal(gpu(&r, 7)->pci, "0000:e6:00.0");
    assert_string_equal(g0->model, "AMD Instinct MI300X");
    assert_string_equal(g0->source, "amdsmi");
    assert_string_equal(g0->uuid, "37ff74a1-0000-1000-80c5-000000000000");
    assert_string_equal(vg_gpu_extra(g0, "amdsmi"), "26.0.2");
    assert_string_equal(vg_gpu_extra(g0, "xgmi_hive"), "0x1234");
    assert_string_equal(vg_gpu_extra(g0, "layer"), "amdsmi");
    assert_int_equal(g0->temp_c, 40);
    assert_int_equal(g3->ecc_ue, 3);
    assert_int_equal(g3->ecc_ce, 7);
    assert_int_equal(g5->links, 8);
    assert_int_equal(g5->link[2], 0);
    assert_int_equal(g5->link[3], 1);
    char ev[2048];
    events(&r, ev, sizeof ev);
    assert_string_equal(ev,
                        "amd-bad-pages -1 0000:1c:00.0 amdsmi|GPU 1: retired pages at the replacement threshold (2 reserved, "
                        "0 pending, 0 unreservable)\n"
                        "amd-ras-ue -1 0000:42:00.0 amdsmi|GPU 3: 3 uncorrectable ECC errors since the driver loaded "
                        "(umc:2,xgmi_wafl:1)\n"
                        "amd-xgmi-down 2 0000:9e:00.0 amdsmi|GPU 5: XGMI 2 down\n"
                        "amd-bad-pages -1 0000:c2:00.0 amdsmi|GPU 6: retired pages at the replacement threshold (3 reserved, "
                        "0 pending, 1 unreservable)\n");
    vg_gpu_probe_free(&r);
}

/* amdsmi_version_t had a `year` before ROCm 7.0: both layouts are read; a
 * generation whose structures were not checked is used for counting only. */
static void test_version_layouts(void **s)
{
    (void)s;
    struct vg_gpu_probe_result r;
    write_state("gpus=2\nversion=24.7.1\n");
    vg_gpu_probe(amd_only, 10000, &r);
    assert_int_equal(r.count, 2);
    assert_string_equal(vg_gpu_extra(gpu(&r, 0), "amdsmi"), "24.7.1");
    assert_string_equal(gpu(&r, 0)->model, "AMD Instinct MI300X");
    vg_gpu_probe_free(&r);
    write_state("gpus=2\nversion=23.1.0\ngpu0.ue.umc=5\n");
    vg_gpu_probe(amd_only, 10000, &r);
    assert_int_equal(r.count, 2);
    assert_string_equal(gpu(&r, 0)->model, "");
    assert_int_equal(gpu(&r, 0)->ecc_ue, -1);   /* not read through an unchecked layout: unknown, never 0 */
    assert_non_null(strstr(gpu(&r, 0)->error, "structures not validated"));
    vg_gpu_probe_free(&r);
}

/* Without AMD SMI, ROCm SMI: the same GPUs through rsmi_*, temperatures in millidegrees. */
static void test_rocm_smi_fallback(void **s)
{
    (void)s;
    unsetenv("VIGIL_AMDSMI_LIB");
    setenv("VIGIL_ROCM_SMI_LIB", lib("FAKE_ROCM_SMI", "build/tests/librocm_smi64.so.7"), 1);
    write_state("gpus=4\ngpu2.ue.umc=1\ngpu1.bad_reserved=1\ngpu*.temp=52\n");
    struct vg_gpu_probe_result r;
    vg_gpu_probe(amd_only, 10000, &r);
    assert_int_equal(r.count, 4);
    const struct vg_gpu_state *g2 = gpu(&r, 2);
    assert_string_equal(g2->source, "rsmi");
    assert_string_equal(g2->pci, "0000:3d:00.0");
    assert_string_equal(g2->model, "AMD Instinct MI300X");
    assert_int_equal(g2->temp_c, 52);
    assert_int_equal(g2->ecc_ue, 1);
    assert_int_equal(gpu(&r, 1)->retired_ue, 1);
    assert_int_equal(gpu(&r, 1)->remap_failure, 0);   /* one reserved page, no threshold: not an RMA */
    vg_gpu_probe_free(&r);
}

/* Runs vg_gpu_open_all over vendors with the process's stderr in a file; returns what it printed. */
static int open_all_capturing(const struct vg_gpu_vendor *const *vendors, struct vg_gpu_set *set, char *printed, size_t n)
{
    char path[160];
    snprintf(path, sizeof path, "%s/stderr", dir);
    fflush(stderr);
    int saved = dup(2), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    int rc = vg_gpu_open_all(vendors, set, NULL, NULL);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    char *text = NULL;
    size_t len = 0;
    vg_read_file(NULL, path, 1 << 16, &text, &len);
    snprintf(printed, n, "%s", text ? text : "");
    free(text);
    unlink(path);
    return rc;
}

/* The real librocm-smi64 of Debian 12 on a machine with no AMD GPU: rsmi_init
 * fails (status 8) and the library writes to stderr; vigil says nothing, the
 * vendor is simply not here, and the NVIDIA GPUs beside it are read. */
static void test_debian_rocm_smi(void **s)
{
    (void)s;
    if (access(DEBIAN_RSMI, R_OK) || vg_amd_driver_loaded(NULL)) {
        skip();   /* not Debian's package, or an AMD GPU here */
    }
    unsetenv("VIGIL_AMDSMI_LIB");
    setenv("VIGIL_ROCM_SMI_LIB", DEBIAN_RSMI, 1);
    struct vg_gpu_set set;
    char printed[1024];
    assert_int_equal(open_all_capturing(amd_only, &set, printed, sizeof printed), -1);
    assert_false(set.vendor[0].present);   /* absent: not a fault */
    assert_string_equal(set.vendor[0].error, "");
    assert_string_equal(printed, "");
    vg_gpu_close_all(&set);
    /* beside NVIDIA (the fake NVML with 3 GPUs) */
    const struct vg_gpu_vendor *const both[] = { &vg_gpu_nvidia, &vg_gpu_amd, NULL };
    char nvstate[160];
    snprintf(nvstate, sizeof nvstate, "%s/nvml-state", dir);
    FILE *f = fopen(nvstate, "w");
    fputs("gpus=3\n", f);
    fclose(f);
    setenv("FAKE_NVML_STATE", nvstate, 1);
    setenv("VIGIL_NVML_LIB", lib("FAKE_NVML", "build/tests/libnvidia-ml.so.1"), 1);
    assert_int_equal(open_all_capturing(both, &set, printed, sizeof printed), 3);
    assert_string_equal(printed, "");
    assert_true(set.vendor[0].opened);
    assert_false(set.vendor[1].present);
    vg_gpu_close_all(&set);
    unlink(nvstate);
    unsetenv("VIGIL_NVML_LIB");
}

/* The same quietness with the fake's failing rsmi_init (it prints as the real one does). */
static void test_init_failures(void **s)
{
    (void)s;
    struct vg_gpu_set set;
    char printed[256];
    write_state("init=fail\n");
    assert_int_equal(open_all_capturing(amd_only, &set, printed, sizeof printed), -1);
    assert_false(set.vendor[0].present);   /* AMDSMI_STATUS_DRIVER_NOT_LOADED: no AMD GPU */
    unsetenv("VIGIL_AMDSMI_LIB");
    setenv("VIGIL_ROCM_SMI_LIB", lib("FAKE_ROCM_SMI", "build/tests/librocm_smi64.so.7"), 1);
    assert_int_equal(open_all_capturing(amd_only, &set, printed, sizeof printed), -1);
    assert_false(set.vendor[0].present);
    assert_string_equal(printed, "");
    /* a library named and missing is a fault, said in one line */
    setenv("VIGIL_AMDSMI_LIB", "/nonexistent/libamd_smi.so.26", 1);
    assert_int_equal(open_all_capturing(amd_only, &set, printed, sizeof printed), -1);
    assert_true(set.vendor[0].present);
    assert_non_null(strstr(set.vendor[0].error, "cannot load /nonexistent/libamd_smi.so.26"));
}

/* A call into the library that never returns costs the probe's deadline and
 * is a hang of that GPU, named. */
static void test_hung_call(void **s)
{
    (void)s;
    write_state("gpus=8\ngpu3.hang=amdsmi_get_gpu_ecc_count\n");
    struct vg_gpu_probe_result r;
    vg_gpu_probe(amd_only, 800, &r);
    assert_true(r.hung);
    assert_ptr_equal(r.hung_vendor, &vg_gpu_amd);
    assert_int_equal(r.hung_gpu, 3);
    assert_int_equal(r.n, 3);   /* GPUs 0-2 were read in time */
    char text[160];
    assert_non_null(strstr(vg_gpu_probe_hung_text(&r, text, sizeof text), "GPU 3 unresponsive: AMD SMI did not answer"));
    vg_gpu_probe_free(&r);
}

/* After a driver reload the handles amdsmi gave out at init are stale (it
 * never looks again on its own): the backend initialises it again and reads
 * on; a GPU not found then is lost.  The vendor's reset goes through the
 * library and leaves it usable. */
static void test_reinit_and_reset(void **s)
{
    (void)s;
    write_state("gpus=8\ngpu2.ue.umc=1\n");
    struct vg_gpu_set set;
    assert_int_equal(vg_gpu_open_all(amd_only, &set, NULL, NULL), 8);
    struct vg_gpu_state st;
    assert_int_equal(vg_gpu_set_read(&set, 2, &st), 0);
    assert_int_equal(st.ecc_ue, 1);
    write_state("gpus=8\ngpu2.ue.umc=1\nreset=1\n");   /* the GPUs were reset under the library */
    assert_int_equal(vg_gpu_set_read(&set, 2, &st), 0);
    assert_false(st.lost);
    assert_int_equal(st.ecc_ue, 1);
    assert_string_equal(st.pci, "0000:3d:00.0");
    write_state("gpus=8\nreset=2\ngpu2.lost=1\n");
    assert_int_equal(vg_gpu_set_read(&set, 2, &st), -1);
    assert_true(st.lost);
    assert_int_equal(vg_gpu_set_read(&set, 4, &st), 0);   /* the others are still read */
    char err[256] = "";
    assert_int_equal(vg_gpu_amd.reset(4, err, sizeof err), 0);
    char path[200], *resets = NULL;
    snprintf(path, sizeof path, "%s.resets", state);
    assert_int_equal(vg_read_file(NULL, path, 4096, &resets, NULL), 0);
    assert_string_equal(resets, "gpu=4\n");
    free(resets);
    assert_int_equal(vg_gpu_set_read(&set, 4, &st), 0);   /* read again after the reset */
    assert_string_equal(st.pci, "0000:55:00.0");
    vg_gpu_close_all(&set);
    /* sysfs cannot reset a GPU: said, not pretended */
    vg_gpu_set_root(FIXTURE);
    assert_int_equal(vg_gpu_open_all(amd_only, &set, NULL, NULL), 2);
    assert_int_equal(vg_gpu_amd.reset(0, err, sizeof err), -1);
    assert_non_null(strstr(err, "sysfs cannot"));
    vg_gpu_close_all(&set);
}

static void test_parsers(void **s)
{
    (void)s;
    long long ue = -1, ce = -1, r, p, f;
#define EC(t) vg_amd_parse_err_count(t, strlen(t), &ue, &ce)
    assert_int_equal(EC("ue: 1\nce: 0\n"), 0);
    assert_int_equal(ue, 1);
    assert_int_equal(EC("ue: 0\r\nce: 12\r\n"), 0);
    assert_int_equal(ce, 12);
    assert_int_equal(EC("ue: 3\nce: 4\nde: 1\n"), 0);   /* deferred (newer drivers) */
    assert_int_equal(EC("Query currently inaccessible\n"), 1);
    assert_int_equal(EC("ue: 1\n"), -1);
    assert_int_equal(EC("ue: -1\nce: 0\n"), -1);
    assert_int_equal(EC("ue: 99999999999999999999\nce: 0\n"), -1);
    assert_int_equal(EC("ue: 1 2\nce: 0\n"), -1);
    assert_int_equal(EC("umc: 1\n"), -1);
    assert_int_equal(EC(""), -1);
#define BP(t) vg_amd_parse_bad_pages(t, strlen(t), &r, &p, &f)
    assert_int_equal(BP("0x00000001 : 0x00001000 : R\n0x00000002 : 0x00001000 : P\n"), 0);
    assert_true(r == 1 && p == 1 && f == 0);
    assert_int_equal(BP("0x1 : 0x1000 : F\n0x2 : 0x1000 : X\nnot a page\n0x : 0x1000 : R\n0x12345678901234567 : 0x1 : R\n"), 4);
    assert_true(r == 0 && p == 0 && f == 1);
    assert_int_equal(BP(""), 0);
    assert_int_equal(vg_amd_block_named("XGMI_WAFL", 9)->bit, 0x80);
    assert_null(vg_amd_block_named("nonsense", 8));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_sysfs_fixture, fresh),   cmocka_unit_test_setup(test_amdsmi, fresh),
        cmocka_unit_test_setup(test_version_layouts, fresh), cmocka_unit_test_setup(test_rocm_smi_fallback, fresh),
        cmocka_unit_test_setup(test_debian_rocm_smi, fresh), cmocka_unit_test_setup(test_init_failures, fresh),
        cmocka_unit_test_setup(test_hung_call, fresh),       cmocka_unit_test_setup(test_reinit_and_reset, fresh),
        cmocka_unit_test(test_parsers),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
