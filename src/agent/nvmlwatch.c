/* nvmlwatch.c — the NVML event set (XID, double-bit ECC) watched by a forked
 * child: nvmlEventSetWait blocks and cannot be cancelled, and NVML must not be
 * loaded in the agent itself (its watchdog probes fork, and a hung driver call
 * must never stall the loop).  The child writes each event as one fixed-size
 * record to a pipe the poll loop watches; it dies with the agent. */
#include "agent/agent_int.h"
#include "signal/gpu.h"
#include "util/log.h"
#include "util/timeutil.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define NV_RESTART_MS 60000

static void child(int fd, pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(0);
    signal(SIGPIPE, SIG_DFL);
    const struct vg_gpu_backend *b = &vg_nvml_backend;
    char err[256];
    if (b->init(err, sizeof err) < 0) {
        vg_debug("agent: nvml events: %s", err);
        _exit(3);
    }
    struct vg_event ev[16];
    if (b->wait_events(0, ev, 0) < 0) {   /* creates the event set */
        vg_warn("agent: nvml events: cannot create the event set");
        _exit(4);
    }
    vg_info("agent: nvml: watching XID and ECC events on %d GPUs", b->count());
    for (;;) {
        int n = b->wait_events(10000, ev, 16);
        if (n < 0) _exit(5);
        for (int i = 0; i < n; i++)
            if (write(fd, &ev[i], sizeof ev[i]) != (ssize_t)sizeof ev[i]) _exit(0);
    }
}

void nv_start(struct agent *a)
{
    a->nvml_fd = -1;
    a->nvml_pid = 0;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0) return;
    pid_t parent = getpid();
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return;
    }
    if (pid == 0) {
        close(fds[0]);
        child(fds[1], parent);
    }
    close(fds[1]);
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    a->nvml_pid = pid;
    a->nvml_fd = fds[0];
}

void nv_stop(struct agent *a)
{
    if (a->nvml_fd >= 0) close(a->nvml_fd);
    a->nvml_fd = -1;
    if (a->nvml_pid > 0) {
        kill(a->nvml_pid, SIGKILL);
        waitpid(a->nvml_pid, NULL, 0);
    }
    a->nvml_pid = 0;
}

void nv_ready(struct agent *a)
{
    struct vg_event e;
    for (;;) {
        ssize_t n = read(a->nvml_fd, &e, sizeof e);
        if (n == (ssize_t)sizeof e) {
            e.node[sizeof e.node - 1] = 0;
            e.raw[sizeof e.raw - 1] = 0;
            agent_signal(a, &e);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return;
        break;   /* end of file (the child exited) or a short record */
    }
    int st = 0;
    waitpid(a->nvml_pid, &st, 0);
    close(a->nvml_fd);
    a->nvml_fd = -1;
    a->nvml_pid = 0;
    a->nvml_restart = vg_mono_ms() + NV_RESTART_MS;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
        vg_info("agent: no NVML (library missing or init failed): not watching GPU events");
    else
        vg_warn("agent: the NVML event watcher stopped (status %d); restarting it in %d s", st, NV_RESTART_MS / 1000);
}
