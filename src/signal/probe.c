/* probe.c — probes under a watchdog in forked children; see probe.h. */
#include "signal/probe.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_PENDING 256
static pid_t pending[MAX_PENDING];
static int npending;

int vg_probe_reap(void)
{
    int left = 0;
    for (int i = 0; i < npending; i++) {
        pid_t r = waitpid(pending[i], NULL, WNOHANG);
        if (r == 0 || (r < 0 && errno == EINTR)) pending[left++] = pending[i];
    }
    npending = left;
    return npending;
}

/* Reaps pid now if it has exited, else remembers it for vg_probe_reap. */
static void reap_later(pid_t pid)
{
    if (waitpid(pid, NULL, WNOHANG) != 0) return;
    vg_probe_reap();
    if (npending < MAX_PENDING) pending[npending++] = pid;
}

int vg_probe_start(struct vg_probe *p, const char *name, vg_probe_fn fn, void *arg)
{
    memset(p, 0, sizeof *p);
    vg_strlcpy(p->name, name, sizeof p->name);
    p->fd = -1;
    vg_probe_reap();
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0) return -1;
    fflush(stdout);
    fflush(stderr);
    p->start_ms = vg_mono_ms();
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        setpgid(0, 0);
        close(fds[0]);
        signal(SIGPIPE, SIG_DFL);
        FILE *out = fdopen(fds[1], "w");
        int rc = out ? fn(arg, out) : 1;
        if (out) fclose(out);
        _exit(rc & 0xff);
    }
    setpgid(pid, pid);   /* also from the parent: no race with the kill */
    close(fds[1]);
    p->pid = pid;
    p->fd = fds[0];
    return 0;
}

static void finish(struct vg_probe *p, bool killed)
{
    if (p->fd >= 0) close(p->fd);
    p->fd = -1;
    if (killed) {
        kill(-p->pid, SIGKILL);
        kill(p->pid, SIGKILL);
        p->timed_out = true;
    } else
        p->done = true;
    p->elapsed_ms = vg_mono_ms() - p->start_ms;
    reap_later(p->pid);
}

void vg_probe_wait(struct vg_probe *ps, size_t n, int64_t deadline)
{
    struct pollfd *pfd = vg_xcalloc(n ? n : 1, sizeof *pfd);
    for (;;) {
        size_t live = 0;
        for (size_t i = 0; i < n; i++) {
            pfd[i].fd = ps[i].fd;   /* negative fds are ignored by poll */
            pfd[i].events = POLLIN;
            pfd[i].revents = 0;
            if (ps[i].fd >= 0) live++;
        }
        if (!live) break;
        int64_t left = deadline - vg_mono_ms();
        if (left <= 0) break;
        int r = poll(pfd, n, (int)(left > 1000 ? 1000 : left));
        if (r < 0 && errno != EINTR) break;
        for (size_t i = 0; i < n && r > 0; i++) {
            if (ps[i].fd < 0 || !pfd[i].revents) continue;
            char buf[4096];
            ssize_t got = read(ps[i].fd, buf, sizeof buf);
            if (got > 0)
                sbuf_add(&ps[i].out, buf, (size_t)got);
            else if (got == 0 || (errno != EINTR && errno != EAGAIN))
                finish(&ps[i], false);
        }
    }
    for (size_t i = 0; i < n; i++)
        if (ps[i].fd >= 0) finish(&ps[i], true);
    free(pfd);
}

void vg_probe_free(struct vg_probe *p)
{
    if (p->fd >= 0) finish(p, true);
    sbuf_free(&p->out);
}
