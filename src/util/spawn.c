/* spawn.c — vfork/execvpe with pipes, poll, a deadline and process-group
 * kill.  vfork, not fork: the callers include vigil serve, a process with
 * many threads and a thousand connections, where a fork copies every page
 * table and leaves each page the other threads then write to a copy-on-write
 * fault (measured: a burst of 1,000 agents' first messages acknowledged at
 * p99 470 ms with fork, about 100 ms without a spawn at all).  The child
 * shares the caller's memory until it execs, so it only makes system calls:
 * its environment is built before, and signals stay blocked until every
 * handler it inherited is back to its default. */
#include "util/spawn.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define VG_SPAWN_MAX_OUTPUT (256u << 20)

extern char **environ;

/* environ with env_extra's NAME=VALUE entries in place of those of the same
 * name (as putenv would), or NULL for environ itself; malloc'd array. */
static char **env_with(const char *const env_extra[])
{
    if (!env_extra || !env_extra[0]) return NULL;
    size_t n = 0, k = 0, m = 0;
    while (environ[n]) n++;
    while (env_extra[m]) m++;
    char **env = vg_xcalloc(n + m + 1, sizeof *env);
    for (size_t i = 0; i < n; i++) {
        bool replaced = false;
        for (size_t j = 0; j < m && !replaced; j++) {
            const char *eq = strchr(env_extra[j], '=');
            size_t len = eq ? (size_t)(eq - env_extra[j]) : strlen(env_extra[j]);
            replaced = !strncmp(environ[i], env_extra[j], len) && environ[i][len] == '=';
        }
        if (!replaced) env[k++] = environ[i];
    }
    for (size_t j = 0; j < m; j++) env[k++] = (char *)env_extra[j];
    return env;
}

/* The vfork child: system calls only (it runs on the caller's memory). */
static void child(const char *const argv[], char *const env[], int in, int out, int err, pid_t parent)
{
    /* every handler the caller installed back to its default before any signal is let in:
     * a handler must never run here, on the caller's memory */
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction sa;
        if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &sa)) continue;
        if (sig == SIGPIPE || (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN)) {
            sa.sa_handler = SIG_DFL;
            sa.sa_flags = 0;
            sigaction(sig, &sa, NULL);
        }
    }
    setpgid(0, 0);
    /* never outlive the caller: it waits for the program, so the program
     * only loses it when the caller was killed (e.g. a preempted burn-in
     * job's task, whose program a scheduler's process tracking may miss
     * once it is re-parented) */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent) _exit(127);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    /* a program starts with no signal blocked, whatever the caller's thread
     * blocked (vigil serve blocks SIGTERM in its threads: a repair step
     * must still stop on SIGTERM) */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execvpe(argv[0], (char *const *)argv, env ? env : environ);
    int e = errno;
    static const char msg[] = "cannot run ";
    if (write(2, msg, sizeof msg - 1) < 0 || write(2, argv[0], strlen(argv[0])) < 0) {}
    char num[24] = ": errno ", *p = num + 8;
    char digits[12];
    int nd = 0;
    do digits[nd++] = (char)('0' + e % 10); while ((e /= 10) && nd < 11);
    while (nd) *p++ = digits[--nd];
    if (write(2, num, (size_t)(p - num)) < 0) {}
    _exit(127);
}

/* vfork and run child there; the caller's signals are blocked around it.
 * Its own function, so nothing of the caller's frame lives across vfork. */
static pid_t __attribute__((noinline)) start_child(const char *const argv[], char *const env[], int in, int out,
                                                   int err, pid_t parent)
{
    pid_t pid = vfork();
    if (pid == 0) child(argv, env, in, out, err, parent);
    return pid;
}

int vg_spawn(const char *const argv[], const char *const env_extra[], const char *stdin_data,
             int timeout_ms, struct vg_spawn_result *r)
{
    memset(r, 0, sizeof *r);
    int pin[2], pout[2], perr[2];
    if (pipe2(pin, O_CLOEXEC) < 0) goto fail0;
    if (pipe2(pout, O_CLOEXEC) < 0) goto fail1;
    if (pipe2(perr, O_CLOEXEC) < 0) goto fail2;
    char **env = env_with(env_extra);
    sigset_t all, mask;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &mask);
    pid_t pid = start_child(argv, env, pin[0], pout[1], perr[1], getpid());
    int vfork_errno = errno;
    pthread_sigmask(SIG_SETMASK, &mask, NULL);
    free(env);
    if (pid < 0) {
        errno = vfork_errno;
        goto fail3;
    }
    setpgid(pid, pid);
    close(pin[0]);
    close(pout[1]);
    close(perr[1]);
    int wfd = pin[1];
    const char *wp = stdin_data;
    size_t wleft = stdin_data ? strlen(stdin_data) : 0;
    if (!wleft) { close(wfd); wfd = -1; }
    else fcntl(wfd, F_SETFL, O_NONBLOCK);
    struct sbuf out = SBUF_INIT, err = SBUF_INIT;
    int64_t deadline = timeout_ms > 0 ? vg_mono_ms() + timeout_ms : 0;
    int fds_open = 2;
    int ofd = pout[0], efd = perr[0];
    void (*old)(int) = signal(SIGPIPE, SIG_IGN);
    while (fds_open > 0 || wfd >= 0) {
        struct pollfd p[3];
        int np = 0;
        if (ofd >= 0) p[np++] = (struct pollfd){ ofd, POLLIN, 0 };
        if (efd >= 0) p[np++] = (struct pollfd){ efd, POLLIN, 0 };
        if (wfd >= 0) p[np++] = (struct pollfd){ wfd, POLLOUT, 0 };
        int wait = -1;
        if (deadline) {
            int64_t left = deadline - vg_mono_ms();
            if (left <= 0) { r->timed_out = true; break; }
            wait = (int)left;
        }
        int n = poll(p, (nfds_t)np, wait);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        if (n == 0) continue;
        for (int i = 0; i < np; i++) {
            if (!p[i].revents) continue;
            if (p[i].fd == wfd) {
                ssize_t w = write(wfd, wp, wleft);
                if (w > 0) { wp += w; wleft -= (size_t)w; }
                if (w < 0 && errno != EAGAIN) wleft = 0;
                if (!wleft) { close(wfd); wfd = -1; }
                continue;
            }
            char buf[65536];
            ssize_t got = read(p[i].fd, buf, sizeof buf);
            if (got > 0) {
                struct sbuf *b = p[i].fd == ofd ? &out : &err;
                if (b->len < VG_SPAWN_MAX_OUTPUT) sbuf_add(b, buf, (size_t)got);
            } else if (got == 0 || errno != EINTR) {
                close(p[i].fd);
                if (p[i].fd == ofd) ofd = -1; else efd = -1;
                fds_open--;
            }
        }
    }
    signal(SIGPIPE, old);
    if (r->timed_out) kill(-pid, SIGKILL);
    if (ofd >= 0) close(ofd);
    if (efd >= 0) close(efd);
    if (wfd >= 0) close(wfd);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (r->timed_out) kill(-pid, SIGKILL);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r->out_len = out.len;
    r->out = sbuf_take(&out);
    r->err_len = err.len;
    r->err = sbuf_take(&err);
    return 0;
fail3:
    close(perr[0]);
    close(perr[1]);
fail2:
    close(pout[0]);
    close(pout[1]);
fail1:
    close(pin[0]);
    close(pin[1]);
fail0:
    r->status = -1;
    r->out = vg_xstrdup("");
    r->err = vg_xstrdup(strerror(errno));
    r->err_len = strlen(r->err);
    return -1;
}

void vg_spawn_result_free(struct vg_spawn_result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

char *vg_argv_str(const char *const argv[])
{
    struct sbuf b = SBUF_INIT;
    for (int i = 0; argv[i]; i++) {
        if (i) sbuf_putc(&b, ' ');
        sbuf_puts(&b, argv[i]);
    }
    return sbuf_take(&b);
}

/* The daemon's side of vg_spawn_daemon: reports its pid, then exec's (or the
 * errno of what failed) through the close-on-exec pipe fd. */
static void daemon_child(const char *const argv[], const char *const env_extra[], const char *log_path,
                         int (*pre_exec)(void *), void *arg, int fd)
{
    pid_t self = getpid();
    if (write(fd, &self, sizeof self) != sizeof self) _exit(127);
    int in = open("/dev/null", O_RDONLY);
    int out = open(log_path ? log_path : "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0644);
    int e = errno;
    if (in < 0 || out < 0) goto fail;
    dup2(in, 0);
    dup2(out, 1);
    dup2(out, 2);
    for (int i = 3; i < 1024; i++)
        if (i != fd) close(i);
    for (int i = 0; env_extra && env_extra[i]; i++) putenv((char *)env_extra[i]);
    signal(SIGPIPE, SIG_DFL);
    if (pre_exec && pre_exec(arg)) { e = errno ? errno : EINVAL; goto fail; }
    execvp(argv[0], (char *const *)argv);
    e = errno;
fail:
    if (write(fd, &e, sizeof e) < 0) {}
    _exit(127);
}

pid_t vg_spawn_daemon(const char *const argv[], const char *const env_extra[], const char *log_path,
                      int (*pre_exec)(void *arg), void *arg)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) return -1;
    pid_t mid = fork();
    if (mid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (mid == 0) {
        close(p[0]);
        setsid();
        pid_t d = fork();
        if (d == 0) daemon_child(argv, env_extra, log_path, pre_exec, arg, p[1]);
        _exit(d < 0 ? 1 : 0);
    }
    close(p[1]);
    int st;
    while (waitpid(mid, &st, 0) < 0 && errno == EINTR) {}
    pid_t pid = -1;
    int e = 0;
    ssize_t got;
    while ((got = read(p[0], &pid, sizeof pid)) < 0 && errno == EINTR) {}
    if (got != sizeof pid) { close(p[0]); errno = ECHILD; return -1; }
    while ((got = read(p[0], &e, sizeof e)) < 0 && errno == EINTR) {}
    close(p[0]);
    if (got == sizeof e) { errno = e; return -1; }
    return pid;
}
