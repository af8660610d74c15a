/* test_spool.c — the agent's spool: append/ack/compact, replay after a
 * restart (order kept, acknowledged messages gone), seq persistence across
 * restarts and compactions, a torn last record ignored, garbage rejected. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "agent/spool.h"
#include "util/rootfs.h"

static char dir[64], path[128];

static int setup(void **st)
{
    (void)st;
    strcpy(dir, "/tmp/vigil-spool-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(path, sizeof path, "%s/spool", dir);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    unlink(path);
    rmdir(dir);
    return 0;
}

static char *slurp(void)
{
    char *t;
    size_t n;
    assert_int_equal(vg_read_file(NULL, path, 1 << 20, &t, &n), 0);
    return t;
}

static void append_text(const char *text)
{
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_append_ack_replay(void **st)
{
    (void)st;
    unlink(path);
    char err[256];
    struct vg_spool *s = vg_spool_open(path, err, sizeof err);
    assert_non_null(s);
    assert_int_equal(vg_spool_pending(s), 0);
    for (int i = 0; i < 3; i++) {
        int64_t seq = vg_spool_next_seq(s);
        assert_int_equal(seq, i + 1);
        char j[64];
        snprintf(j, sizeof j, "{\"seq\":%d}", (int)seq);
        assert_int_equal(vg_spool_append(s, seq, j), 0);
    }
    assert_int_equal(vg_spool_pending(s), 3);
    assert_int_equal(vg_spool_head(s)->seq, 1);
    assert_int_equal(vg_spool_ack_head(s), 0);
    assert_int_equal(vg_spool_head(s)->seq, 2);
    vg_spool_close(s);   /* a "crash": nothing else written */

    s = vg_spool_open(path, err, sizeof err);
    assert_non_null(s);
    assert_int_equal(vg_spool_pending(s), 2);
    assert_int_equal(vg_spool_head(s)->seq, 2);
    assert_string_equal(vg_spool_head(s)->json, "{\"seq\":2}");
    assert_int_equal(vg_spool_next_seq(s), 4);
    vg_spool_ack_head(s);
    vg_spool_ack_head(s);
    assert_null(vg_spool_head(s));
    /* everything acknowledged: the file is compacted to its header */
    char *t = slurp();
    assert_string_equal(t, "vigil-spool 1 next=5\n");
    free(t);
    vg_spool_close(s);
}

static void test_seq_survives_compaction(void **st)
{
    (void)st;
    unlink(path);
    char err[256];
    struct vg_spool *s = vg_spool_open(path, err, sizeof err);
    int64_t last = 0;
    for (int i = 0; i < 10; i++) {
        last = vg_spool_next_seq(s);
        vg_spool_append(s, last, "{}");
        vg_spool_ack_head(s);
    }
    vg_spool_close(s);
    s = vg_spool_open(path, err, sizeof err);
    assert_non_null(s);
    assert_int_equal(vg_spool_next_seq(s), last + 1);   /* never reused */
    vg_spool_close(s);
}

static void test_torn_tail(void **st)
{
    (void)st;
    unlink(path);
    char err[256];
    struct vg_spool *s = vg_spool_open(path, err, sizeof err);
    vg_spool_append(s, vg_spool_next_seq(s), "{\"a\":1}");
    vg_spool_append(s, vg_spool_next_seq(s), "{\"b\":2}");
    vg_spool_close(s);
    append_text("M 3 20 {\"c\":");   /* the crash cut this record short */
    s = vg_spool_open(path, err, sizeof err);
    assert_non_null(s);
    assert_int_equal(vg_spool_pending(s), 2);
    assert_int_equal(vg_spool_head(s)->seq, 1);
    assert_int_equal(vg_spool_next_seq(s), 3);
    vg_spool_close(s);
    /* the torn record is gone from the file */
    char *t = slurp();
    assert_null(strstr(t, "\"c\""));
    free(t);
}

static void test_parse(void **st)
{
    (void)st;
    struct vg_spool_data d;
    const char *ok = "vigil-spool 1 next=7\nM 7 2 {}\nM 8 4 {\"\"}\nA 7\n";
    vg_spool_parse(ok, strlen(ok), &d);
    assert_int_equal(d.bad, 0);
    assert_int_equal(d.n, 1);
    assert_int_equal(d.msgs[0].seq, 8);
    assert_int_equal(d.next_seq, 9);
    assert_int_equal(d.records, 4);
    vg_spool_data_free(&d);

    static const char *const bad[] = {
        "garbage\n", "M 1 5 {}\n", "M 1 2 {}", "M x 2 {}\n", "A\n", "vigil-spool 1 next=0\n",
        "M 1 99999999999999999999 {}\n", "M 1 3 {}\n\n", "M 1 2 ", "A 3",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        vg_spool_parse(bad[i], strlen(bad[i]), &d);
        assert_int_equal(d.bad, 1);
        vg_spool_data_free(&d);
    }
    vg_spool_parse("", 0, &d);
    assert_int_equal(d.bad, 0);
    assert_int_equal(d.next_seq, 1);
    vg_spool_data_free(&d);
}

static void test_many_acks_compact(void **st)
{
    (void)st;
    unlink(path);
    char err[256];
    struct vg_spool *s = vg_spool_open(path, err, sizeof err);
    for (int i = 0; i < 600; i++) vg_spool_append(s, vg_spool_next_seq(s), "{\"x\":1}");
    for (int i = 0; i < 599; i++) assert_int_equal(vg_spool_ack_head(s), 0);
    assert_int_equal(vg_spool_pending(s), 1);
    assert_int_equal(vg_spool_head(s)->seq, 600);
    vg_spool_close(s);
    s = vg_spool_open(path, err, sizeof err);
    assert_int_equal(vg_spool_pending(s), 1);
    assert_int_equal(vg_spool_head(s)->seq, 600);
    vg_spool_close(s);
}

static void test_unwritable(void **st)
{
    (void)st;
    char err[256] = "";
    assert_null(vg_spool_open("/nonexistent-dir/x/spool", err, sizeof err));
    assert_non_null(strstr(err, "/nonexistent-dir/x/spool"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_append_ack_replay), cmocka_unit_test(test_seq_survives_compaction),
        cmocka_unit_test(test_torn_tail),         cmocka_unit_test(test_parse),
        cmocka_unit_test(test_many_acks_compact), cmocka_unit_test(test_unwritable),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
