/* test_spool.c — the agent's spool: append/ack/compact, replay after a
 * restart (order kept, acknowledged messages gone), seq persistence across
 * restarts and compactions, a torn last record ignored, garbage rejected;
 * the spool id (random, new for each life: a restart, a new file, a
 * version-1 spool), a head message replaced by its parts, pending messages
 * edited in place, a spool past the old 256 MiB cliff read in parts with
 * its messages left in the file, and the memory-only fallback when the file
 * cannot be created or a write fails. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
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
    char want[80];
    snprintf(want, sizeof want, "vigil-spool 2 id=%s next=5\n", vg_spool_id(s));
    assert_string_equal(t, want);
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

    const char *v2 = "vigil-spool 2 id=0123456789abcdef0123456789abcdef next=3\nM 3 2 {}\n";
    vg_spool_parse(v2, strlen(v2), &d);
    assert_int_equal(d.bad, 0);
    assert_string_equal(d.id, "0123456789abcdef0123456789abcdef");
    assert_int_equal(d.next_seq, 4);
    vg_spool_data_free(&d);

    static const char *const bad[] = {
        "vigil-spool 2 id=0123456789abcdef0123456789abcde next=3\n",    /* 31 characters */
        "vigil-spool 2 id=0123456789ABCDEF0123456789abcdef next=3\n",   /* not lowercase */
        "vigil-spool 2 id=0123456789abcdef0123456789abcdef\n", "vigil-spool 2 next=3\n",
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

static bool hex_id(const char *id)
{
    if (strlen(id) != VG_SPOOL_ID_LEN) return false;
    for (const char *c = id; *c; c++)
        if (!strchr("0123456789abcdef", *c)) return false;
    return true;
}

static void test_id(void **st)
{
    (void)st;
    unlink(path);
    char err[256], id[VG_SPOOL_ID_LEN + 1];
    struct vg_spool *s = vg_spool_open(path, err, sizeof err);
    assert_string_equal(err, "");
    assert_false(vg_spool_memory_only(s));
    assert_true(hex_id(vg_spool_id(s)));
    strcpy(id, vg_spool_id(s));
    vg_spool_append(s, vg_spool_next_seq(s), "{}");
    vg_spool_close(s);
    /* a restart is a new life: a new id (the message read back keeps the one
     * it carries), the seqs go on */
    s = vg_spool_open(path, err, sizeof err);
    assert_true(hex_id(vg_spool_id(s)));
    assert_string_not_equal(vg_spool_id(s), id);
    assert_int_equal(vg_spool_next_seq(s), 2);
    assert_false(vg_spool_head(s)->fresh);
    vg_spool_close(s);
    /* the file deleted: a new spool, a new id, seq from 1 */
    unlink(path);
    s = vg_spool_open(path, err, sizeof err);
    assert_true(hex_id(vg_spool_id(s)));
    assert_string_not_equal(vg_spool_id(s), id);
    assert_int_equal(vg_spool_next_seq(s), 1);
    vg_spool_close(s);
}

static void test_version1(void **st)
{
    (void)st;
    unlink(path);
    append_text("vigil-spool 1 next=40\nM 41 2 {}\n");
    char err[256];
    struct vg_spool *s = vg_spool_open(path, err, sizeof err);
    assert_true(hex_id(vg_spool_id(s)));
    assert_int_equal(vg_spool_pending(s), 1);
    assert_string_equal(vg_spool_head(s)->json, "{}");   /* delivered as it was written */
    assert_int_equal(vg_spool_next_seq(s), 42);
    char id[VG_SPOOL_ID_LEN + 1];
    strcpy(id, vg_spool_id(s));
    vg_spool_close(s);
    char *t = slurp();
    char want[128];
    snprintf(want, sizeof want, "vigil-spool 2 id=%s next=42\nM 41 2 {}\n", id);
    assert_string_equal(t, want);   /* rewritten as version 2 */
    free(t);
}

static void test_replace_head(void **st)
{
    (void)st;
    unlink(path);
    char err[256];
    struct vg_spool *s = vg_spool_open(path, err, sizeof err);
    vg_spool_append(s, vg_spool_next_seq(s), "{\"big\":1}");
    vg_spool_append(s, vg_spool_next_seq(s), "{\"next\":2}");
    int64_t seqs[3];
    for (int i = 0; i < 3; i++) seqs[i] = vg_spool_next_seq(s);
    char *parts[3] = { "{\"p\":1}", "{\"p\":2}", "{\"p\":3}" };
    assert_int_equal(vg_spool_replace_head(s, seqs, parts, 3), 0);
    assert_int_equal(vg_spool_pending(s), 4);
    assert_int_equal(vg_spool_head(s)->seq, 3);
    vg_spool_close(s);
    /* the parts took the head's place, in the file too: order kept */
    s = vg_spool_open(path, err, sizeof err);
    const char *want[] = { "{\"p\":1}", "{\"p\":2}", "{\"p\":3}", "{\"next\":2}" };
    const int64_t wseq[] = { 3, 4, 5, 2 };
    for (int i = 0; i < 4; i++) {
        assert_string_equal(vg_spool_head(s)->json, want[i]);
        assert_int_equal(vg_spool_head(s)->seq, wseq[i]);
        vg_spool_ack_head(s);
    }
    assert_int_equal(vg_spool_next_seq(s), 6);
    vg_spool_close(s);
}

static void test_unwritable(void **st)
{
    (void)st;
    char err[256] = "";
    struct vg_spool *s = vg_spool_open("/nonexistent-dir/x/spool", err, sizeof err);
    assert_non_null(s);   /* memory-only, never a failure */
    assert_true(vg_spool_memory_only(s));
    assert_non_null(strstr(err, "/nonexistent-dir/x/spool"));
    assert_true(hex_id(vg_spool_id(s)));
    int64_t seq = vg_spool_next_seq(s);
    assert_int_equal(seq, 1);
    assert_int_equal(vg_spool_append(s, seq, "{}"), 0);
    assert_int_equal(vg_spool_pending(s), 1);
    assert_int_equal(vg_spool_ack_head(s), 0);
    assert_null(vg_spool_head(s));
    vg_spool_close(s);
    /* a path that cannot be read (a directory): memory-only too */
    s = vg_spool_open(dir, err, sizeof err);
    assert_true(vg_spool_memory_only(s));
    assert_non_null(strstr(err, "cannot read"));
    assert_int_equal(vg_spool_next_seq(s), 1);
    vg_spool_close(s);
}

/* A write that fails while running (here: the file size limit, as a full
 * disk would): nothing is queued, the spool turns memory-only under a new id
 * (seqs go on), and the message built again goes into memory. */
static void test_write_fails(void **st)
{
    (void)st;
    unlink(path);
    char err[256];
    struct vg_spool *s = vg_spool_open(path, err, sizeof err);
    vg_spool_append(s, vg_spool_next_seq(s), "{\"a\":1}");
    char id[VG_SPOOL_ID_LEN + 1];
    strcpy(id, vg_spool_id(s));
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 200;
    void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    char big[400];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    int64_t seq = vg_spool_next_seq(s);
    assert_int_equal(seq, 2);
    assert_int_equal(vg_spool_append(s, seq, big), -1);
    assert_true(vg_spool_memory_only(s));
    assert_non_null(strstr(vg_spool_error(s), path));
    assert_string_not_equal(vg_spool_id(s), id);
    assert_int_equal(vg_spool_pending(s), 1);   /* the failed one was not queued */
    seq = vg_spool_next_seq(s);
    assert_int_equal(seq, 3);
    assert_int_equal(vg_spool_append(s, seq, big), 0);
    assert_int_equal(vg_spool_pending(s), 2);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, was);
    vg_spool_close(s);
    /* the file still holds the message written before; the next life has an id of its own */
    s = vg_spool_open(path, err, sizeof err);
    assert_string_not_equal(vg_spool_id(s), id);
    assert_int_equal(vg_spool_pending(s), 1);
    assert_int_equal(vg_spool_next_seq(s), 2);
    vg_spool_close(s);
}

/* Pending messages edited in place (what the spool's cap does): one
 * replaced under a new seq, one removed, in one compaction, order kept. */
static void test_edit(void **st)
{
    (void)st;
    unlink(path);
    char err[256];
    struct vg_spool *s = vg_spool_open(path, err, sizeof err);
    for (int i = 1; i <= 4; i++) {
        char j[32];
        snprintf(j, sizeof j, "{\"m\":%d}", i);
        vg_spool_append(s, vg_spool_next_seq(s), j);
    }
    size_t before = vg_spool_bytes(s);
    assert_int_equal(before, 4 * strlen("M 1 7 {\"m\":1}\n"));
    size_t idx[2] = { 1, 2 };
    int64_t seqs[2] = { vg_spool_next_seq(s), 0 };
    char *jsons[2] = { "{\"m\":22}", NULL };
    assert_int_equal(vg_spool_edit(s, idx, seqs, jsons, 2), 0);
    assert_int_equal(vg_spool_pending(s), 3);
    assert_int_equal(vg_spool_bytes(s), before - 2 * strlen("M 1 7 {\"m\":1}\n") + strlen("M 5 8 {\"m\":22}\n"));
    assert_string_equal(vg_spool_at(s, 1)->json, "{\"m\":22}");
    assert_int_equal(vg_spool_at(s, 1)->seq, 5);
    assert_null(vg_spool_at(s, 3));
    vg_spool_close(s);
    s = vg_spool_open(path, err, sizeof err);
    const char *want[] = { "{\"m\":1}", "{\"m\":22}", "{\"m\":4}" };
    for (int i = 0; i < 3; i++) {
        assert_string_equal(vg_spool_head(s)->json, want[i]);
        vg_spool_ack_head(s);
    }
    assert_int_equal(vg_spool_next_seq(s), 6);
    vg_spool_close(s);
}

/* A message's life: fresh when spooled by this life, its attempts counted;
 * read back after a restart it is not fresh. */
static void test_fresh_attempts(void **st)
{
    (void)st;
    unlink(path);
    char err[256];
    struct vg_spool *s = vg_spool_open(path, err, sizeof err);
    vg_spool_append(s, vg_spool_next_seq(s), "{}");
    assert_true(vg_spool_head(s)->fresh);
    assert_int_equal(vg_spool_head(s)->attempts, 0);
    vg_spool_head_tried(s);
    vg_spool_head_tried(s);
    assert_int_equal(vg_spool_head(s)->attempts, 2);
    char id[VG_SPOOL_ID_LEN + 1];
    strcpy(id, vg_spool_id(s));
    assert_int_equal(vg_spool_new_life(s), 0);
    assert_string_not_equal(vg_spool_id(s), id);
    vg_spool_close(s);
    s = vg_spool_open(path, err, sizeof err);
    assert_false(vg_spool_head(s)->fresh);
    assert_int_equal(vg_spool_head(s)->attempts, 0);
    vg_spool_close(s);
}

/* A spool past 256 MiB (which the agent used to abandon whole at start,
 * "memory only" for its life): indexed a part at a time, every message
 * delivered in order, none of them held in memory until it is sent. */
static void test_large(void **st)
{
    (void)st;
    unlink(path);
    enum { N = 1100, LEN = 256 << 10 };
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "vigil-spool 2 id=0123456789abcdef0123456789abcdef next=1\n");
    char *json = malloc(LEN + 1);
    memset(json, 'x', LEN);
    for (int i = 1; i <= N; i++) {
        int k = snprintf(json, 32, "{\"seq\":%d,\"pad\":\"", i);
        json[k] = 'x';
        memcpy(json + LEN - 2, "\"}", 2);
        json[LEN] = 0;
        fprintf(f, "M %d %d %s\n", i, LEN, json);
    }
    free(json);
    assert_int_equal(fclose(f), 0);
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    char err[256];
    struct vg_spool *s = vg_spool_open(path, err, sizeof err);
    getrusage(RUSAGE_SELF, &ru1);
    assert_string_equal(err, "");
    assert_false(vg_spool_memory_only(s));
    assert_int_equal(vg_spool_pending(s), N);
    assert_true(vg_spool_bytes(s) > 256u << 20);
    assert_true(ru1.ru_maxrss - ru0.ru_maxrss < 64 * 1024);   /* kB: the index, not the 275 MB */
    for (int i = 1; i <= N; i++) {
        const struct vg_spool_msg *m = vg_spool_head(s);
        assert_non_null(m);
        assert_int_equal(m->seq, i);
        char want[32];
        snprintf(want, sizeof want, "{\"seq\":%d,", i);
        assert_memory_equal(m->json, want, strlen(want));
        assert_int_equal(strlen(m->json), LEN);
        assert_int_equal(vg_spool_ack_head(s), 0);
    }
    assert_null(vg_spool_head(s));
    vg_spool_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_append_ack_replay), cmocka_unit_test(test_seq_survives_compaction),
        cmocka_unit_test(test_torn_tail),         cmocka_unit_test(test_parse),
        cmocka_unit_test(test_many_acks_compact), cmocka_unit_test(test_id),
        cmocka_unit_test(test_version1),          cmocka_unit_test(test_replace_head),
        cmocka_unit_test(test_unwritable),        cmocka_unit_test(test_write_fails),
        cmocka_unit_test(test_edit),              cmocka_unit_test(test_fresh_attempts),
        cmocka_unit_test(test_large),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
