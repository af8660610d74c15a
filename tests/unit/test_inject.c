/* test_inject.c — injected faults look real: every XID message the table
 * knows (and an unknown code) parses back through the kernel-log parser to
 * the same code and PCI address, in /dev/kmsg framing; fault kinds; the
 * record file (injections, clears, malformed lines); a lab node's NVML state
 * and sysfs changed and restored by clear. */
#include "drill/inject.h"
#include "lab/lab.h"
#include "signal/kmsg.h"
#include "util/jsonutil.h"
#include "util/rootfs.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct got {
    int n;
    struct vg_event last;
};

static void emit(const struct vg_event *e, void *arg)
{
    struct got *g = arg;
    g->n++;
    g->last = *e;
}

static void parse(const char *text, struct got *g)
{
    struct vg_kmsg k;
    struct vg_kmsg_opts o = { .boot_ms = 1, .node = "n1" };
    memset(g, 0, sizeof *g);
    vg_kmsg_init(&k, &o, emit, g);
    vg_kmsg_feed(&k, text, strlen(text));
    vg_kmsg_finish(&k);
}

static void test_xid_round_trip(void **state)
{
    (void)state;
    int codes[] = { 13, 31, 43, 45, 48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 109, 119, 120, 154, 999 };
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        for (int gpu = 0; gpu < 8; gpu += 5) {
            char msg[512], rec[1024];
            vg_xid_message(codes[i], vg_inj_gpu_pci(gpu), gpu, 4242, msg, sizeof msg);
            vg_kmsg_record(3, 100 + i, 5000000, msg, vg_inj_gpu_pci(gpu), rec, sizeof rec);
            struct got g;
            parse(rec, &g);
            if (g.n != 1 || g.last.code != codes[i] || strcmp(g.last.pci, vg_inj_gpu_pci(gpu)))
                fail_msg("xid %d gpu %d: %d events, code %d, pci %s: %s", codes[i], gpu, g.n, g.last.code,
                         g.last.pci, rec);
            assert_string_equal(g.last.kind, "xid");
        }
    assert_true(vg_xid_known(79));
    assert_false(vg_xid_known(999));
    char msg[512];
    vg_xid_message(79, "0000:18:00.0", 0, 77, msg, sizeof msg);
    assert_string_equal(msg, "NVRM: Xid (PCI:0000:18:00): 79, pid=77, name=python3, GPU has fallen off the bus.");
    char rec[1024];
    vg_kmsg_record(3, 9, 123, "hello", NULL, rec, sizeof rec);
    assert_string_equal(rec, "3,9,123,-;hello\n");
}

static void test_kinds(void **state)
{
    (void)state;
    enum vg_inj_kind k;
    int code = 0;
    assert_true(vg_inj_kind_parse("xid:79", &k, &code));
    assert_int_equal(k, VG_INJ_XID);
    assert_int_equal(code, 79);
    assert_true(vg_inj_kind_parse("node-freeze", &k, &code));
    assert_int_equal(k, VG_INJ_NODE_FREEZE);
    assert_string_equal(vg_inj_kind_name(VG_INJ_GPU_LOST), "gpu-lost");
    const char *bad[] = { "xid:0", "xid:1000", "xid:7x", "crash", "", "xid:" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) assert_false(vg_inj_kind_parse(bad[i], &k, &code));
    assert_null(vg_inj_gpu_pci(8));
    assert_null(vg_inj_gpu_pci(-1));
}

static void test_records(void **state)
{
    (void)state;
    const char *ok = "{\"id\":\"a\",\"time\":\"2026-01-01T00:00:00.000Z\",\"kind\":\"xid\",\"node\":\"n1\",\"undo\":{}}\n"
                     "\n"
                     "{\"id\":\"b\",\"time\":\"2026-01-01T00:00:01.000Z\",\"kind\":\"gpu-lost\",\"node\":\"n2\",\"undo\":{}}\n"
                     "{\"clear\":\"a\",\"time\":\"2026-01-01T00:00:02.000Z\"}\n";
    char err[128];
    json_t *l = vg_inject_parse_records(ok, strlen(ok), err, sizeof err);
    assert_non_null(l);
    assert_int_equal(json_array_size(l), 2);
    assert_true(json_is_true(json_object_get(json_array_get(l, 0), "cleared")));
    assert_true(json_is_false(json_object_get(json_array_get(l, 1), "cleared")));
    json_decref(l);
    const struct { const char *text, *why; } bad[] = {
        { "{\"id\":\"a\"}\nnot json\n", "line 1" },
        { "[1]\n", "line 1: not a JSON object" },
        { "{\"id\":\"a\",\"time\":\"2026-01-01T00:00:00Z\",\"kind\":\"boom\",\"node\":\"n1\",\"undo\":{}}", "kind" },
        { "{\"id\":\"a\",\"time\":\"2026-01-01T00:00:00Z\",\"kind\":\"xid\",\"node\":\"../x\",\"undo\":{}}", "node" },
        { "{\"id\":\"a\",\"time\":\"yesterday\",\"kind\":\"xid\",\"node\":\"n1\",\"undo\":{}}", "time" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_null(vg_inject_parse_records(bad[i].text, strlen(bad[i].text), err, sizeof err));
        if (!strstr(err, bad[i].why)) fail_msg("%zu: '%s' lacks '%s'", i, err, bad[i].why);
    }
}

static char lab[64];

static void write_text(const char *rel, const char *text)
{
    char *p = vg_root_path(lab, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    free(p);
}

static char *read_text(const char *rel)
{
    char *t = NULL;
    if (vg_read_file(lab, rel, 1 << 20, &t, NULL)) return NULL;
    return t;
}

/* A lab of one node, n1, in a fresh directory (lab). */
static void one_node_lab(void)
{
    snprintf(lab, sizeof lab, "/tmp/vigil-inject.XXXXXX");
    assert_non_null(mkdtemp(lab));
    char p[160];
    snprintf(p, sizeof p, "%s/nodes", lab);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/nodes/n1", lab);
    mkdir(p, 0755);
    write_text("/" VG_LAB_MARKER, "nodes=1\n");
}

static void remove_lab(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", lab);
    assert_int_equal(system(cmd), 0);
}

static void test_lab_inject_and_clear(void **state)
{
    (void)state;
    one_node_lab();
    write_text("/nodes/n1/kmsg", "6,41,100,-;earlier record\n");
    write_text("/nodes/n1/nvml-state", "gpus=8\ngpu3.temp=40\n");
    struct vg_inject_opts o = { .kind = VG_INJ_GPU_LOST, .node = "n1", .gpu = 3, .lab = lab };
    char err[256];
    json_t *rec;
    assert_int_equal(vg_inject(&o, &rec, err, sizeof err), 0);
    assert_string_equal(vg_json_str(rec, "pci", ""), "0000:5d:00.0");
    assert_true(vg_json_get_time(rec, "time") > 0);
    json_decref(rec);
    char *t = read_text("/nodes/n1/nvml-state");
    assert_string_equal(t, "gpus=8\ngpu3.temp=40\ngpu3.lost=1\n");
    free(t);
    t = read_text("/nodes/n1/kmsg");
    assert_non_null(strstr(t, "\n3,42,"));   /* the next sequence number */
    assert_non_null(strstr(t, "NVRM: GPU 0000:5d:00.0: GPU has fallen off the bus."));
    free(t);
    o.kind = VG_INJ_ECC_DBE;
    assert_int_equal(vg_inject(&o, NULL, err, sizeof err), 0);
    t = read_text("/nodes/n1/nvml-state.events");
    assert_string_equal(t, "event=48 gpu=3 type=dbe\n");
    free(t);
    o.kind = VG_INJ_IB_DOWN;
    assert_int_equal(vg_inject(&o, NULL, err, sizeof err), 0);
    o.node = "n9";
    assert_int_equal(vg_inject(&o, NULL, err, sizeof err), -2);
    assert_non_null(strstr(err, "n9"));
    o.node = "n1";
    int n;
    assert_int_equal(vg_inject_clear(&o, &n, err, sizeof err), 0);
    assert_int_equal(n, 3);
    t = read_text("/nodes/n1/nvml-state");
    assert_string_equal(t, "gpus=8\ngpu3.temp=40\n");
    free(t);
    assert_false(vg_path_exists(lab, "/nodes/n1/sys/class/infiniband/mlx5_0/ports/1/state"));
    assert_int_equal(vg_inject_clear(&o, &n, err, sizeof err), 0);
    assert_int_equal(n, 0);
    remove_lab();
}

/* The faults between the GPUs on a lab node (its simulated HCA, lab_hw.c):
 * nic-hung wedges the fake verbs library's port query, link-flap and
 * ib-errors raise the port's counters (which a clear leaves: counters never
 * go back), fabric-degraded fails a GPU's fabric registration; each refused
 * on a real node. */
static void test_lab_nic_kinds(void **state)
{
    (void)state;
    one_node_lab();
    char err[256];
    write_text("/nodes/n1/nvml-state", "gpus=4\n");
    assert_int_equal(vg_lab_node_hw(lab, "n1", 1, err, sizeof err), 0);
    char *fabric = read_text("/nodes/n1/nvml-state");
    assert_non_null(strstr(fabric, "gpu*.fabric_clique=1\n"));
    enum vg_inj_kind k;
    int code;
    static const char *const names[] = { "nic-hung", "link-flap", "ib-errors", "fabric-degraded" };
    static const enum vg_inj_kind kinds[] = { VG_INJ_NIC_HUNG, VG_INJ_LINK_FLAP, VG_INJ_IB_ERRORS,
                                              VG_INJ_FABRIC_DEGRADED };
    for (int i = 0; i < 4; i++) {
        assert_true(vg_inj_kind_parse(names[i], &k, &code));
        assert_int_equal(k, kinds[i]);
        struct vg_inject_opts real = { .kind = kinds[i], .node = "n1", .gpu = 2, .via = "orch" };
        assert_int_equal(vg_inject(&real, NULL, err, sizeof err), -2);   /* a real NIC is not faked */
        assert_non_null(strstr(err, "only in the lab"));
        struct vg_inject_opts o = { .kind = kinds[i], .node = "n1", .gpu = 2, .lab = lab };
        assert_int_equal(vg_inject(&o, NULL, err, sizeof err), 0);
    }
    char *t = read_text("/nodes/n1/verbs-state");
    assert_string_equal(t, "devices=mlx5_0\nmlx5_0.hang=query\n");
    free(t);
#define PORT "/nodes/n1/sys/class/infiniband/mlx5_0/ports/1/counters/"
    t = read_text(PORT "link_downed");
    assert_string_equal(t, "1\n");
    free(t);
    t = read_text(PORT "symbol_error");
    assert_string_equal(t, "100000\n");
    free(t);
    t = read_text("/nodes/n1/nvml-state");
    assert_non_null(strstr(t, "gpu2.fabric=completed\ngpu2.fabric_status=999\n"));
    free(t);
    struct vg_inject_opts o = { .node = "n1", .lab = lab };
    int n;
    assert_int_equal(vg_inject_clear(&o, &n, err, sizeof err), 0);
    assert_int_equal(n, 4);
    t = read_text("/nodes/n1/verbs-state");
    assert_string_equal(t, "devices=mlx5_0\n");
    free(t);
    t = read_text("/nodes/n1/nvml-state");
    assert_string_equal(t, fabric);
    free(t);
    t = read_text(PORT "link_downed");
    assert_string_equal(t, "1\n");
    free(t);
#undef PORT
    free(fabric);
    remove_lab();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xid_round_trip), cmocka_unit_test(test_kinds), cmocka_unit_test(test_records),
        cmocka_unit_test(test_lab_inject_and_clear), cmocka_unit_test(test_lab_nic_kinds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
