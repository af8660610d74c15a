/* test_proc.c — util/proc (liveness, environment tags, open files, listening
 * ports) and vg_spawn_daemon (double fork, tag, log, exec failure). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "util/proc.h"
#include "util/spawn.h"
#include "util/timeutil.h"

static void test_daemon(void **state)
{
    (void)state;
    char dir[] = "/tmp/vigil-proc-XXXXXX", log[64], tag[96];
    assert_non_null(mkdtemp(dir));
    snprintf(log, sizeof log, "%s/out.log", dir);
    snprintf(tag, sizeof tag, "VIGIL_TEST_TAG=%s", dir);
    const char *argv[] = { "sleep", "30", NULL };
    const char *env[] = { tag, NULL };
    pid_t pid = vg_spawn_daemon(argv, env, log, NULL, NULL);
    assert_true(pid > 0);
    assert_true(vg_proc_alive(pid));
    assert_int_not_equal(vg_proc_ppid(pid), getpid());   /* re-parented, never our zombie */
    assert_true(vg_proc_has_env(pid, tag));
    assert_false(vg_proc_has_env(pid, "VIGIL_TEST_TAG=/elsewhere"));
    char val[64];
    assert_int_equal(vg_proc_env(pid, "VIGIL_TEST_TAG", val, sizeof val), 0);
    assert_string_equal(val, dir);
    assert_int_equal(vg_proc_env(pid, "VIGIL_TEST", val, sizeof val), -1);   /* a prefix is not the name */
    assert_int_equal(vg_proc_env(pid, "VIGIL_OTHER", val, sizeof val), -1);
    assert_true(vg_proc_has_fd_under(pid, dir));
    assert_false(vg_proc_has_fd_under(pid, "/nonexistent"));
    char comm[32];
    assert_int_equal(vg_proc_comm(pid, comm, sizeof comm), 0);
    assert_string_equal(comm, "sleep");
    assert_false(vg_proc_is_self_or_ancestor(pid));
    assert_true(vg_proc_is_self_or_ancestor(getppid()));
    kill(pid, SIGKILL);
    for (int i = 0; i < 100 && vg_proc_alive(pid); i++) vg_sleep_ms(20);
    assert_false(vg_proc_alive(pid));
    const char *bad[] = { "/nonexistent/program", NULL };
    assert_int_equal(vg_spawn_daemon(bad, NULL, NULL, NULL, NULL), -1);
    assert_int_equal(errno, ENOENT);
    unlink(log);
    rmdir(dir);
}

static void test_listen_ports(void **state)
{
    (void)state;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t l = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &l);
    int port = ntohs(a.sin_port), *ports, n;
    n = vg_listen_ports(&ports);
    bool seen = false;
    for (int i = 0; i < n; i++) seen = seen || ports[i] == port;
    free(ports);
    assert_false(seen);   /* bound, not listening */
    assert_int_equal(listen(fd, 1), 0);
    n = vg_listen_ports(&ports);
    for (int i = 0; i < n; i++) seen = seen || ports[i] == port;
    free(ports);
    assert_true(seen);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_daemon),
        cmocka_unit_test(test_listen_ports),
    };
    return cmocka_run_group_tests_name("proc", tests, NULL, NULL);
}
