/* gpuwatch.c — each GPU vendor's event source (NVML's XID and double-bit ECC
 * events, …) watched by a forked child per vendor of the table that has one:
 * the vendor's wait blocks and cannot be cancelled, and no vendor library may
 * be loaded in the agent itself (its watchdog probes fork, and a hung driver
 * call must never stall the loop).  A child writes each event as one
 * fixed-size record to a pipe the poll loop watches; it dies with the agent.
 * A vendor that is not here makes its child exit at once; it is looked for
 * again a minute later (a driver loaded since). */
#include "agent/agent_int.h"
#include "signal/gpu.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define GW_RESTART_MS 60000
#define GW_ABSENT 3   /* the child's exit status: the vendor is not here */

static void child(const struct vg_gpu_vendor *v, int fd, pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(0);
    signal(SIGPIPE, SIG_DFL);
    char err[256] = "";
    if (v->probe && !v->probe()) _exit(GW_ABSENT);
    int rc = v->open(err, sizeof err);
    if (rc == VG_GPU_ABSENT) _exit(GW_ABSENT);
    if (rc < 0) {
        vg_debug("agent: %s events: %s", v->source, err);
        _exit(GW_ABSENT);
    }
    struct vg_event ev[16];
    if (v->events(0, ev, 0) < 0) {   /* sets the wait up */
        vg_warn("agent: %s events: cannot set up the wait for events", v->source);
        _exit(4);
    }
    vg_info("agent: %s: watching the %s events of %d GPUs", v->name, v->source, v->devices());
    for (;;) {
        int n = v->events(10000, ev, 16);
        if (n < 0) _exit(5);
        for (int i = 0; i < n; i++) {
            vg_strlcpy(ev[i].source, v->source, sizeof ev[i].source);
            if (write(fd, &ev[i], sizeof ev[i]) != (ssize_t)sizeof ev[i]) _exit(0);
        }
    }
}

/* Starts the watcher of vendor slot i. */
static void start(struct agent *a, int i)
{
    struct gpuwatch *w = &a->gw[i];
    w->fd = -1;
    w->pid = 0;
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
        child(w->v, fds[1], parent);
    }
    close(fds[1]);
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    w->pid = pid;
    w->fd = fds[0];
}

void gw_init(struct agent *a)
{
    a->ngw = 0;
    for (size_t i = 0; vg_gpu_vendors[i] && a->ngw < VG_GPU_VENDORS_MAX; i++)
        if (vg_gpu_vendors[i]->events) {
            struct gpuwatch *w = &a->gw[a->ngw++];
            memset(w, 0, sizeof *w);
            w->v = vg_gpu_vendors[i];
            w->fd = -1;
        }
}

void gw_start_due(struct agent *a)
{
    int64_t now = vg_mono_ms();
    for (int i = 0; i < a->ngw; i++)
        if (a->gw[i].fd < 0 && now >= a->gw[i].restart) start(a, i);
}

int64_t gw_restart_at(const struct agent *a)
{
    int64_t at = -1;
    for (int i = 0; i < a->ngw; i++)
        if (a->gw[i].fd < 0 && (at < 0 || a->gw[i].restart < at)) at = a->gw[i].restart;
    return at;
}

void gw_stop(struct agent *a)
{
    for (int i = 0; i < a->ngw; i++) {
        struct gpuwatch *w = &a->gw[i];
        if (w->fd >= 0) close(w->fd);
        w->fd = -1;
        if (w->pid > 0) {
            kill(w->pid, SIGKILL);
            waitpid(w->pid, NULL, 0);
        }
        w->pid = 0;
    }
}

void gw_ready(struct agent *a, int i)
{
    struct gpuwatch *w = &a->gw[i];
    struct vg_event e;
    for (;;) {
        ssize_t n = read(w->fd, &e, sizeof e);
        if (n == (ssize_t)sizeof e) {
            e.node[sizeof e.node - 1] = 0;
            e.raw[sizeof e.raw - 1] = 0;
            e.source[sizeof e.source - 1] = 0;
            agent_signal(a, &e);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return;
        break;   /* end of file (the child exited) or a short record */
    }
    int st = 0;
    waitpid(w->pid, &st, 0);
    close(w->fd);
    w->fd = -1;
    w->pid = 0;
    w->restart = vg_mono_ms() + GW_RESTART_MS;
    if (WIFEXITED(st) && WEXITSTATUS(st) == GW_ABSENT) {
        if (!w->said_absent)
            vg_info("agent: no %s GPU here (%s library missing or init failed): not watching its events", w->v->name,
                    w->v->label);
        w->said_absent = true;
    } else {
        w->said_absent = false;
        vg_warn("agent: the %s event watcher stopped (status %d); restarting it in %d s", w->v->source, st,
                GW_RESTART_MS / 1000);
    }
}
