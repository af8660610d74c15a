/* test_trainer.c — the trainer's checkpoints: parse, atomic write, newest
 * complete one wins over torn/foreign files, pruning; the ranks' barrier. */
#include "drill/trainer.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/vigil-trainer.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void put(const char *name, const char *text)
{
    char p[128];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int count_ckpts(void)
{
    int n = 0;
    for (long s = 0; s <= 100; s++) {
        char p[128];
        snprintf(p, sizeof p, "%s/ckpt-%010ld", dir, s);
        n += access(p, F_OK) == 0;
    }
    return n;
}

static void test_parse(void **state)
{
    (void)state;
    long s = -1;
    const char *ok = "vigil-trainer checkpoint\nstep=42\nend\n";
    assert_true(vg_ckpt_parse(ok, strlen(ok), &s));
    assert_int_equal(s, 42);
    const char *bad[] = { "vigil-trainer checkpoint\nstep=42\n", "vigil-trainer checkpoint\nstep=42\nen",
                          "vigil-trainer checkpoint\nstep=-1\nend\n", "vigil-trainer checkpoint\nstep=4x\nend\n",
                          "other\nstep=42\nend\n", "", "vigil-trainer checkpoint\nstep=42\nend\nmore\n" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) assert_false(vg_ckpt_parse(bad[i], strlen(bad[i]), &s));
}

static void test_fresh_and_resume(void **state)
{
    (void)state;
    assert_int_equal(vg_ckpt_latest(dir), 0);
    assert_int_equal(vg_ckpt_write(dir, 5), 0);
    assert_int_equal(vg_ckpt_latest(dir), 5);
    assert_int_equal(vg_ckpt_write(dir, 10), 0);
    assert_int_equal(vg_ckpt_latest(dir), 10);
    /* no temp file is left behind */
    char p[128];
    snprintf(p, sizeof p, "%s/.ckpt-0000000010.tmp", dir);
    assert_int_not_equal(access(p, F_OK), 0);
    assert_int_equal(vg_ckpt_latest("/nonexistent/vigil"), -1);
}

static void test_torn_newest_is_skipped(void **state)
{
    (void)state;
    assert_int_equal(vg_ckpt_write(dir, 10), 0);
    put("ckpt-0000000015", "vigil-trainer checkpoint\nstep=15\n");          /* torn: no end marker */
    put("ckpt-0000000020", "vigil-trainer checkpoint\nstep=7\nend\n");      /* name and content disagree */
    put(".ckpt-0000000025.tmp", "vigil-trainer checkpoint\nstep=25\nend\n"); /* never renamed */
    put("notes", "hello\n");
    assert_int_equal(vg_ckpt_latest(dir), 10);
}

static void test_prune_keeps_newest(void **state)
{
    (void)state;
    for (long s = 5; s <= 30; s += 5) assert_int_equal(vg_ckpt_write(dir, s), 0);
    assert_int_equal(count_ckpts(), VG_CKPT_KEEP);
    assert_int_equal(vg_ckpt_latest(dir), 30);
}

static void test_progress_barrier(void **state)
{
    (void)state;
    long from = 0;
    assert_false(vg_progress_reached(dir, 0, 2, 5, &from));   /* nobody wrote */
    assert_int_equal(from, 0);
    assert_int_equal(vg_progress_write(dir, 0, 0, 7), 0);
    assert_false(vg_progress_reached(dir, 0, 2, 5, &from));   /* rank 1 missing */
    assert_int_equal(from, 1);                                /* rank 0 is not read again */
    assert_int_equal(vg_progress_write(dir, 0, 1, 4), 0);
    assert_false(vg_progress_reached(dir, 0, 2, 5, &from));   /* rank 1 behind */
    assert_int_equal(vg_progress_write(dir, 0, 1, 5), 0);
    assert_true(vg_progress_reached(dir, 0, 2, 5, &from));
    assert_int_equal(from, 2);
    from = 0;
    assert_false(vg_progress_reached(dir, 1, 2, 5, &from));   /* a restart starts a new barrier */
    from = 0;
    assert_true(vg_progress_reached(dir, 0, 1, 7, &from));
    from = 0;
    assert_false(vg_progress_reached(dir, 0, 1, 8, &from));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test_setup_teardown(test_fresh_and_resume, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_newest_is_skipped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prune_keeps_newest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_progress_barrier, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
