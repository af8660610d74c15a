/* test_storeguard.c — the guard of the controller's store (storeguard.c) on
 * real files: a second lock on one store refused with who holds it, a store
 * deleted, replaced or its write-ahead log deleted under the open
 * connections (lost, said once), a corrupt page met by a read (lost), a
 * corrupt store refused at start and moved aside on request; and the
 * controller's clock (clock.c): stamps that never go back when the wall
 * clock steps back 563 s, that follow a forward step, each step counted. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "controller/clock.h"
#include "controller/storeguard.h"
#include "util/sbuf.h"
#include "util/timeutil.h"

static char dir[64], db[96];

static int setup(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/vigil-guard-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(db, sizeof db, "%s/incidents.db", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static struct vg_store *open_db(void)
{
    char err[256];
    struct vg_store *st;
    if (vg_store_open(db, &st, err, sizeof err)) fail_msg("%s", err);
    return st;
}

/* Writes a row (the first write makes the -wal). */
static int write_row(struct vg_store *st)
{
    return vg_store_put_audit(st, "n1", vg_now_ms(), "{}");
}

static int count_audit(void *ctx, const char *node, int64_t at, const char *report)
{
    (void)ctx, (void)node, (void)at, (void)report;
    return 0;
}

static void test_one_writer(void **state)
{
    (void)state;
    char err[512];
    struct vg_storeguard *g = vg_storeguard_lock(db, err, sizeof err);
    assert_non_null(g);
    assert_null(vg_storeguard_lock(db, err, sizeof err));   /* a second controller */
    char want[64];
    snprintf(want, sizeof want, "another controller holds this store (pid %ld on ", (long)getpid());
    if (!strstr(err, want)) fail_msg("%s", err);
    vg_storeguard_close(g);
    g = vg_storeguard_lock(db, err, sizeof err);   /* released with the first */
    assert_non_null(g);
    vg_storeguard_close(g);
}

static struct vg_storeguard *watched(struct vg_store **st)
{
    char err[512];
    struct vg_storeguard *g = vg_storeguard_lock(db, err, sizeof err);
    assert_non_null(g);
    assert_int_equal(vg_storeguard_verify(g, false, err, sizeof err), 0);
    *st = open_db();
    assert_int_equal(write_row(*st), 0);
    vg_storeguard_watch(g, st, 1);
    assert_null(vg_storeguard_check(g));
    return g;
}

static void test_deleted_under_the_controller(void **state)
{
    (void)state;
    struct vg_store *st;
    struct vg_storeguard *g = watched(&st);
    char p[128];
    snprintf(p, sizeof p, "%s-wal", db);
    assert_int_equal(unlink(p), 0);   /* `rm incidents.db*` takes the log first */
    const char *why = vg_storeguard_check(g);
    assert_non_null(why);
    assert_non_null(strstr(why, "write-ahead log was deleted"));
    assert_int_equal(write_row(st), 0);   /* SQLite still writes: into a file no one will read again */
    assert_string_equal(vg_storeguard_lost(g), why);
    struct sbuf m = SBUF_INIT;
    vg_storeguard_metrics(g, &m);
    assert_non_null(strstr(m.s, "\nvigil_store_ok 0\n"));
    sbuf_free(&m);
    vg_store_close(st);
    vg_storeguard_close(g);
}

static void test_replaced_under_the_controller(void **state)
{
    (void)state;
    struct vg_store *st;
    struct vg_storeguard *g = watched(&st);
    char p[128], cmd[600];
    snprintf(p, sizeof p, "%s.new", db);
    snprintf(cmd, sizeof cmd, "cp %s %s && mv %s %s", db, p, p, db);
    assert_int_equal(system(cmd), 0);
    const char *why = vg_storeguard_check(g);
    assert_non_null(why);
    assert_non_null(strstr(why, "the file was replaced"));
    vg_store_close(st);
    vg_storeguard_close(g);
}

/* Garbage over the store's pages: the next read that meets them makes the
 * store lost, from the thread that met them; /healthz and the intake see it. */
static void test_corrupt_under_the_controller(void **state)
{
    (void)state;
    char err[512];
    struct vg_storeguard *g = vg_storeguard_lock(db, err, sizeof err);
    assert_non_null(g);
    struct vg_store *st = open_db();
    for (int i = 0; i < 200; i++) {
        char node[16];
        snprintf(node, sizeof node, "n%d", i);
        assert_int_equal(vg_store_put_audit(st, node, vg_now_ms(), "{\"pad\":\"................................\"}"), 0);
    }
    vg_store_close(st);   /* the log checkpointed into the file */
    st = open_db();       /* the running controller's connection, open before the pages go bad */
    int fd = open(db, O_WRONLY);
    assert_true(fd >= 0);
    char junk[4096];
    memset(junk, 0x5a, sizeof junk);
    off_t end = lseek(fd, 0, SEEK_END);   /* every page but the first (the schema stays readable) */
    for (off_t off = 4096; off < end; off += 4096) assert_int_equal(pwrite(fd, junk, sizeof junk, off), 4096);
    close(fd);
    vg_storeguard_watch(g, &st, 1);
    assert_int_equal(vg_store_audits_each(st, NULL, 0, count_audit, NULL), -1);   /* reads a corrupt page */
    const char *why = vg_storeguard_lost(g);
    assert_non_null(why);
    assert_non_null(strstr(why, "corrupt"));
    vg_store_close(st);
    vg_storeguard_close(g);
}

/* At start: a corrupt store is refused (one line saying how to go on), and
 * with --new-store moved aside, never deleted. */
static void test_corrupt_at_start(void **state)
{
    (void)state;
    FILE *f = fopen(db, "w");
    assert_non_null(f);
    fputs("this is not an SQLite database, whatever its name says\n", f);
    fclose(f);
    char err[512];
    struct vg_storeguard *g = vg_storeguard_lock(db, err, sizeof err);
    assert_non_null(g);
    assert_int_equal(vg_storeguard_verify(g, false, err, sizeof err), -1);
    if (!strstr(err, "the store is corrupt") || !strstr(err, "--new-store")) fail_msg("%s", err);
    assert_null(strchr(err, '\n'));
    assert_int_equal(access(db, F_OK), 0);   /* untouched */
    assert_int_equal(vg_storeguard_verify(g, true, err, sizeof err), 0);
    assert_int_equal(access(db, F_OK), -1);
    char pat[128];
    snprintf(pat, sizeof pat, "%s.corrupt-*", db);
    glob_t gl;
    assert_int_equal(glob(pat, 0, NULL, &gl), 0);
    assert_int_equal(gl.gl_pathc, 1);
    f = fopen(gl.gl_pathv[0], "r");
    char line[80] = "";
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_string_equal(line, "this is not an SQLite database, whatever its name says\n");
    globfree(&gl);
    struct vg_store *st = open_db();   /* the new one */
    assert_int_equal(write_row(st), 0);
    vg_store_close(st);
    assert_int_equal(vg_storeguard_verify(g, false, err, sizeof err), 0);   /* sound */
    vg_storeguard_close(g);
}

static int64_t fake_wall;
static int64_t wall(void) { return fake_wall; }

static void test_clock_steps(void **state)
{
    (void)state;
    fake_wall = 1800000000000;   /* 2027-01-15 */
    vg_clock_wall_source(wall);
    unsigned long steps = vg_clock_steps();
    int64_t a = vg_clock_ms();
    assert_true(a >= fake_wall && a < fake_wall + 100);
    fake_wall -= 563000;   /* stepped back */
    int64_t b = vg_clock_ms();
    assert_true(b >= a);
    assert_int_equal(vg_clock_steps(), steps + 1);
    vg_sleep_ms(20);
    int64_t c = vg_clock_ms();   /* time goes on from the boot-time clock */
    assert_true(c >= b + 15);
    assert_int_equal(vg_clock_steps(), steps + 1);   /* said once */
    fake_wall += 563000 + 3600000;   /* forward, an hour past where it was */
    int64_t d = vg_clock_ms();
    assert_true(d >= fake_wall && d < fake_wall + 100);
    assert_int_equal(vg_clock_steps(), steps + 2);
    vg_clock_wall_source(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_one_writer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deleted_under_the_controller, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replaced_under_the_controller, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_under_the_controller, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_at_start, setup, teardown),
        cmocka_unit_test(test_clock_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
