/* test_util.c — unit tests for src/util: strings, buffers, root-relative
 * reads, time formatting, spawning with a deadline. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "util/condwait.h"
#include "util/log.h"
#include "util/resafe.h"
#include "util/rootfs.h"
#include "util/sbuf.h"
#include "util/spawn.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include "core/event.h"

static void test_trim_split(void **state)
{
    (void)state;
    char s[] = "  a:b::c \n";
    char *t = vg_trim(s);
    assert_string_equal(t, "a:b::c");
    char *f[8];
    assert_int_equal(vg_split(t, ":", f, 8), 4);
    assert_string_equal(f[0], "a");
    assert_string_equal(f[2], "");
    assert_string_equal(f[3], "c");
    long v;
    assert_true(vg_parse_long("42", &v));
    assert_int_equal(v, 42);
    assert_false(vg_parse_long("42x", &v));
    assert_false(vg_parse_long("", &v));
}

static void test_fmt_fixed(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(vg_fmt_fixed(b, sizeof b, 0.0050000000000000001, 3), "0.005");
    assert_string_equal(vg_fmt_fixed(b, sizeof b, 6.674123, 3), "6.674");
    assert_string_equal(vg_fmt_fixed(b, sizeof b, 120.0, 3), "120");
    assert_string_equal(vg_fmt_fixed(b, sizeof b, 0.30000000000000004, 3), "0.3");
    assert_string_equal(vg_fmt_fixed(b, sizeof b, 1.9996, 3), "2");
    assert_string_equal(vg_fmt_fixed(b, sizeof b, -0.0001, 3), "0");
    assert_string_equal(vg_fmt_fixed(b, sizeof b, 99.95, 1), "100");
    assert_string_equal(vg_fmt_fixed(b, sizeof b, 1500, 0), "1500");   /* no decimal point: zeros stay */
}

static void test_sbuf(void **state)
{
    (void)state;
    struct sbuf b = SBUF_INIT;
    for (int i = 0; i < 1000; i++) sbuf_printf(&b, "%d,", i);
    assert_true(vg_startswith(b.s, "0,1,2,"));
    assert_true(vg_endswith(b.s, "999,"));
    char *s = sbuf_take(&b);
    assert_null(b.s);
    free(s);
}

static void test_time_roundtrip(void **state)
{
    (void)state;
    char buf[32];
    vg_format_time(1764430688123LL, buf);
    assert_string_equal(buf, "2025-11-29T15:38:08.123Z");
    int64_t ms;
    assert_true(vg_parse_time(buf, &ms));
    assert_int_equal(ms, 1764430688123LL);
    assert_true(vg_parse_time("2025-11-29T16:38:08.5+01:00", &ms));
    assert_int_equal(ms, 1764430688500LL);
    assert_false(vg_parse_time("2025-13-29T16:38:08Z", &ms));
    assert_false(vg_parse_time("yesterday", &ms));
    /* a day the calendar does not have is refused, not carried into the next month */
    assert_false(vg_parse_time("2026-02-29T00:00:00Z", &ms));
    assert_false(vg_parse_time("2026-04-31T00:00:00Z", &ms));
    assert_false(vg_parse_time("2100-02-29T00:00:00Z", &ms));
    assert_true(vg_parse_time("2024-02-29T00:00:00Z", &ms));
    assert_true(vg_parse_time("2000-02-29T00:00:00Z", &ms));
    assert_true(vg_parse_time("2026-12-31T23:59:59Z", &ms));
    /* the date options: a day or RFC 3339 */
    assert_true(vg_parse_day_or_time("2026-03-01", &ms));
    assert_int_equal(ms, 1772323200000LL);
    assert_true(vg_parse_day_or_time("2026-03-01T00:00:00Z", &ms));
    assert_int_equal(ms, 1772323200000LL);
    assert_false(vg_parse_day_or_time("2026-13-45", &ms));
    assert_false(vg_parse_day_or_time("2026-02-30", &ms));
    assert_false(vg_parse_day_or_time("2026-3-1", &ms));
}

static void test_rootfs(void **state)
{
    (void)state;
    char dir[] = "/tmp/vigil-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *p = vg_root_path(dir, "/etc/os-release");
    assert_true(vg_endswith(p, "/etc/os-release"));
    free(p);
    p = vg_root_path("/", "/etc/x");
    assert_string_equal(p, "/etc/x");
    free(p);
    char path[256];
    snprintf(path, sizeof path, "%s/f", dir);
    FILE *f = fopen(path, "w");
    fputs("  first line  \nsecond\n", f);
    fclose(f);
    char line[64];
    assert_int_equal(vg_read_line(dir, "/f", line, sizeof line), 0);
    assert_string_equal(line, "first line");
    char *data;
    size_t len;
    assert_int_equal(vg_read_file(dir, "f", 1 << 20, &data, &len), 0);
    assert_int_equal(len, 22);
    free(data);
    assert_int_equal(vg_read_file(dir, "f", 8, &data, &len), -1);
    assert_int_equal(vg_read_file(dir, "missing", 8, &data, &len), -1);
    char **names;
    assert_int_equal(vg_list_dir(dir, "/", &names), 1);
    assert_string_equal(names[0], "f");
    vg_free_list(names, 1);
    unlink(path);
    rmdir(dir);
}

static void test_spawn(void **state)
{
    (void)state;
    struct vg_spawn_result r;
    const char *echo[] = { "echo", "hello", NULL };
    assert_int_equal(vg_spawn(echo, NULL, NULL, 5000, &r), 0);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "hello\n");
    vg_spawn_result_free(&r);

    const char *cat[] = { "cat", NULL };
    assert_int_equal(vg_spawn(cat, NULL, "piped in", 5000, &r), 0);
    assert_string_equal(r.out, "piped in");
    vg_spawn_result_free(&r);

    const char *env[] = { "VG_TEST_VAR=xyz", NULL };
    const char *printenv[] = { "printenv", "VG_TEST_VAR", NULL };
    assert_int_equal(vg_spawn(printenv, env, NULL, 5000, &r), 0);
    assert_string_equal(r.out, "xyz\n");
    vg_spawn_result_free(&r);

    int64_t t0 = vg_mono_ms();
    const char *sleeper[] = { "sleep", "30", NULL };
    assert_int_equal(vg_spawn(sleeper, NULL, NULL, 200, &r), 0);
    assert_true(r.timed_out);
    assert_true(vg_mono_ms() - t0 < 10000);
    vg_spawn_result_free(&r);

    const char *missing[] = { "/nonexistent/prog", NULL };
    assert_int_equal(vg_spawn(missing, NULL, NULL, 5000, &r), 0);
    assert_int_equal(r.status, 127);
    assert_string_equal(r.err, "cannot run /nonexistent/prog: errno 2");   /* ENOENT, said by the child */
    vg_spawn_result_free(&r);
}

static volatile sig_atomic_t usr1_seen;
static void on_usr1(int sig) { (void)sig; usr1_seen = 1; }

/* The child runs on the caller's memory until it execs (vfork): an extra
 * variable replaces the caller's of the same name without touching the
 * caller's environment, and a signal handler of the caller never runs in
 * the program, which starts with every signal at its default and unblocked. */
static void test_spawn_leaves_the_caller_alone(void **state)
{
    (void)state;
    struct vg_spawn_result r;
    setenv("VG_TEST_OLD", "caller", 1);
    const char *env[] = { "VG_TEST_OLD=child", "VG_TEST_NEW=1", NULL };
    const char *show[] = { "printenv", "VG_TEST_OLD", "VG_TEST_NEW", NULL };
    assert_int_equal(vg_spawn(show, env, NULL, 5000, &r), 0);
    assert_string_equal(r.out, "child\n1\n");
    vg_spawn_result_free(&r);
    assert_string_equal(getenv("VG_TEST_OLD"), "caller");
    assert_null(getenv("VG_TEST_NEW"));
    unsetenv("VG_TEST_OLD");

    struct sigaction sa = { .sa_handler = on_usr1 }, old;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, &old);
    sigset_t usr1, prev;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, &prev);
    const char *self_kill[] = { "sh", "-c", "kill -USR1 $$; echo survived", NULL };
    assert_int_equal(vg_spawn(self_kill, NULL, NULL, 5000, &r), 0);
    assert_int_equal(r.status, 128 + SIGUSR1);   /* default action: the program ended by it */
    assert_string_equal(r.out, "");
    vg_spawn_result_free(&r);
    pthread_sigmask(SIG_SETMASK, &prev, NULL);
    sigaction(SIGUSR1, &old, NULL);
    assert_int_equal(usr1_seen, 0);
}

/* Whether a process runs with exactly this argv (NUL-separated cmdline). */
static bool running_cmdline(const char *want, size_t len)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    bool found = false;
    while (d && !found && (e = readdir(d))) {
        char path[300], buf[128];
        snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        char stat[64] = "";
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        if ((f = fopen(path, "r"))) {
            if (!fgets(stat, sizeof stat, f)) stat[0] = 0;
            fclose(f);
        }
        found = n == len && !memcmp(buf, want, len) && !strstr(stat, ") Z");   /* not a zombie */
    }
    if (d) closedir(d);
    return found;
}

/* A spawned program dies with the process that spawned it (killed, it
 * cannot wait for it): nothing is left running on a node. */
static void test_spawn_dies_with_caller(void **state)
{
    (void)state;
    static const char want[] = "sleep\0" "37.25";   /* sleep 37.25, unique to this test */
    pid_t p = fork();
    assert_true(p >= 0);
    if (p == 0) {
        struct vg_spawn_result r;
        const char *sleeper[] = { "sleep", "37.25", NULL };
        vg_spawn(sleeper, NULL, NULL, 60000, &r);
        _exit(0);
    }
    int i = 0;
    while (!running_cmdline(want, sizeof want) && i++ < 500) usleep(10000);
    assert_true(running_cmdline(want, sizeof want));
    kill(p, SIGKILL);
    waitpid(p, NULL, 0);
    for (i = 0; running_cmdline(want, sizeof want) && i < 500; i++) usleep(10000);
    assert_false(running_cmdline(want, sizeof want));
}

/* A spawned program starts with no signal blocked, whatever the calling
 * thread blocked (vigil serve's threads block SIGTERM; a repair step must
 * still stop on it). */
static void test_spawn_unblocks_signals(void **state)
{
    (void)state;
    sigset_t term, old;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, &old);
    struct vg_spawn_result r;
    const char *argv[] = { "grep", "^SigBlk:", "/proc/self/status", NULL };
    assert_int_equal(vg_spawn(argv, NULL, NULL, 10000, &r), 0);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    assert_string_equal(vg_trim(r.out), "SigBlk:\t0000000000000000");
    vg_spawn_result_free(&r);
}

static void test_event_json(void **state)
{
    (void)state;
    struct vg_event e, back;
    vg_event_init(&e);
    strcpy(e.node, "n1");
    strcpy(e.kind, "xid");
    strcpy(e.source, "kmsg");
    strcpy(e.pci, "0000:18:00.0");
    e.code = 79;
    e.gpu = 2;
    e.action = VG_ACT_DRAIN_RMA;
    e.time_ms = 1764430688123LL;
    json_t *j = vg_event_to_json(&e);
    char err[128];
    assert_int_equal(vg_event_from_json(j, &back, err, sizeof err), 0);
    assert_string_equal(back.pci, "0000:18:00.0");
    assert_int_equal(back.code, 79);
    assert_int_equal(back.gpu, 2);
    assert_int_equal(back.action, VG_ACT_DRAIN_RMA);
    assert_int_equal(back.time_ms, e.time_ms);
    json_object_set_new(j, "action", json_string("explode"));
    assert_int_equal(vg_event_from_json(j, &back, err, sizeof err), -1);
    assert_non_null(strstr(err, "action"));
    json_object_del(j, "kind");
    assert_int_equal(vg_event_from_json(j, &back, err, sizeof err), -1);
    json_decref(j);
}

/* The regular-expression guard: stacked repetitions and over-long patterns
 * are refused (the fuzzer's pattern of 100 '+' took regcomp past 1 GB). */
static void test_regex_safe(void **state)
{
    (void)state;
    const char *good[] = { "^gpu-[a-c][0-9]+$", "resumed from step ([0-9]+)", "[[:digit:]]+x*", "a{2,3}b?",
                           "[]+*]+", "\\++", "(ab)+(cd)*", "" };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) assert_true(vg_regex_safe(good[i]));
    const char *bad[] = { "^gpu-[a-c][0-9]++++", "a**", "x+?", "a{2}*", "(b?)*+", "[0-9]{1,2}{3}" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) assert_false(vg_regex_safe(bad[i]));
    char longer[VG_RE_MAX + 2];
    memset(longer, 'a', sizeof longer - 1);
    longer[sizeof longer - 1] = 0;
    assert_false(vg_regex_safe(longer));
}

/* A class of log lines past its burst is counted, not written, and one line
 * says how many once the window is over. */
static void test_lograte(void **state)
{
    (void)state;
    char path[] = "/tmp/vigil-lograte-XXXXXX";
    int fd = mkstemp(path), saved = dup(2);
    assert_true(fd >= 0);
    fflush(stderr);
    dup2(fd, 2);
    static struct vg_lograte r = VG_LOGRATE("test", 50, 3);
    for (int i = 0; i < 1000; i++) vg_warn_limited(&r, "line %d", i);
    vg_lograte_tick(&r);   /* the window is not over: nothing yet */
    usleep(60 * 1000);
    vg_lograte_tick(&r);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char buf[1024] = "";
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    close(fd);
    unlink(path);
    assert_true(n > 0);
    assert_string_equal(buf, "vigil: warning: line 0\nvigil: warning: line 1\nvigil: warning: line 2\n"
                             "vigil: warning: suppressed 997 'test' lines in the last 1 s\n");
}

struct cw { pthread_mutex_t m; pthread_cond_t c; int go; };
static void *cw_signal(void *arg)
{
    struct cw *w = arg;
    vg_sleep_ms(20);
    pthread_mutex_lock(&w->m);
    w->go = 1;
    pthread_cond_signal(&w->c);
    pthread_mutex_unlock(&w->m);
    return NULL;
}

/* A wait on the monotonic clock: ends when signalled, or after its time (never before it). */
static void test_condwait(void **state)
{
    (void)state;
    struct cw w = { .go = 0 };
    pthread_mutex_init(&w.m, NULL);
    vg_cond_init_mono(&w.c);
    pthread_mutex_lock(&w.m);
    int64_t t0 = vg_mono_ms();
    int rc = vg_cond_wait_ms(&w.c, &w.m, 30);
    assert_int_equal(rc, ETIMEDOUT);
    assert_true(vg_mono_ms() - t0 >= 30);
    assert_int_equal(vg_cond_wait_ms(&w.c, &w.m, -5), ETIMEDOUT);   /* a deadline passed: no wait */
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, cw_signal, &w), 0);
    rc = 0;
    while (!w.go && rc == 0) rc = vg_cond_wait_ms(&w.c, &w.m, 60000);
    assert_int_equal(rc, 0);
    assert_int_equal(w.go, 1);
    pthread_mutex_unlock(&w.m);
    pthread_join(th, NULL);
    pthread_cond_destroy(&w.c);
    pthread_mutex_destroy(&w.m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trim_split), cmocka_unit_test(test_fmt_fixed), cmocka_unit_test(test_sbuf),
        cmocka_unit_test(test_time_roundtrip), cmocka_unit_test(test_rootfs),
        cmocka_unit_test(test_spawn),             cmocka_unit_test(test_lograte), cmocka_unit_test(test_condwait),
        cmocka_unit_test(test_spawn_leaves_the_caller_alone), cmocka_unit_test(test_spawn_dies_with_caller),
        cmocka_unit_test(test_spawn_unblocks_signals), cmocka_unit_test(test_event_json), cmocka_unit_test(test_regex_safe),
    };
    return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
