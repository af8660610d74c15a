/* probe.c — probes under a watchdog in forked children; see probe.h. */
#include "signal/probe.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
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

/* One /proc/PID entry: its parent, process group, state and time on a CPU (ns). */
struct proc_sched { long pid, ppid, pgrp; char state; unsigned long long ran; };

static int read_proc(const char *name, struct proc_sched *ps)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%.20s/stat", name);
    FILE *f = fopen(path, "re");
    if (!f) return -1;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = 0;
    const char *rp = strrchr(buf, ')');   /* the command name may hold anything */
    if (!rp || sscanf(rp + 1, " %c %ld %ld", &ps->state, &ps->ppid, &ps->pgrp) != 3) return -1;
    ps->pid = atol(name);
    snprintf(path, sizeof path, "/proc/%.20s/schedstat", name);
    if (!(f = fopen(path, "re"))) return -1;
    int got = fscanf(f, "%llu", &ps->ran);
    fclose(f);
    return got == 1 ? 0 : -1;
}

/* Every process on the machine, malloc'd. */
static size_t scan_procs(struct proc_sched **out)
{
    *out = NULL;
    DIR *d = opendir("/proc");
    if (!d) return 0;
    struct proc_sched *all = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] < '1' || de->d_name[0] > '9') continue;
        if (n == cap) all = vg_xrealloc(all, (cap = cap ? cap * 2 : 256) * sizeof *all);
        if (!read_proc(de->d_name, &all[n])) n++;
    }
    closedir(d);
    *out = all;
    return n;
}

#define STARVE_SAMPLE_MS 50

/* Runnable (state R) at both looks, STARVE_SAMPLE_MS apart, and on a CPU for
 * less than a quarter of that: waiting for a core.  (The kernel's run-delay
 * figure is only brought up to date when a task next runs, so a task that
 * does not run at all would not show it.)  A probe blocked in the kernel or
 * asleep is not starved, nor is one spinning on a CPU. */
static bool starved_in(pid_t leader, const struct proc_sched *a, size_t na, const struct proc_sched *b, size_t nb)
{
    for (size_t i = 0; i < nb; i++) {
        bool ours = b[i].pgrp == leader;
        for (size_t j = 0; j < nb && !ours; j++) ours = b[j].pid == b[i].pgrp && b[j].ppid == leader;
        for (size_t j = 0; j < na && ours; j++)
            if (a[j].pid == b[i].pid && a[j].state == 'R' && b[i].state == 'R' &&
                b[i].ran - a[j].ran < (unsigned long long)STARVE_SAMPLE_MS * 1000000 / 4)
                return true;
    }
    return false;
}

/* starved[i] for each probe process group leader pids[i] (0: skipped), from
 * one pair of looks at /proc. */
static void sample_starved(const pid_t *pids, size_t n, bool *starved)
{
    struct proc_sched *a, *b;
    size_t na = scan_procs(&a);
    vg_sleep_ms(STARVE_SAMPLE_MS);
    size_t nb = scan_procs(&b);
    for (size_t i = 0; i < n; i++) starved[i] = pids[i] > 0 && starved_in(pids[i], a, na, b, nb);
    free(a);
    free(b);
}

bool vg_probe_starved(const struct vg_probe *p)
{
    bool starved;
    sample_starved(&p->pid, 1, &starved);
    return starved;
}

/* starved[i] for each probe of ps still being read; whether any is. */
static bool live_starved(const struct vg_probe *ps, size_t n, bool *starved)
{
    pid_t *pids = vg_xcalloc(n ? n : 1, sizeof *pids);
    bool live = false, any = false;
    memset(starved, 0, n * sizeof *starved);
    for (size_t i = 0; i < n; i++) {
        pids[i] = ps[i].fd >= 0 ? ps[i].pid : 0;
        live |= pids[i] > 0;
    }
    if (live) sample_starved(pids, n, starved);
    for (size_t i = 0; i < n; i++) any |= starved[i];
    free(pids);
    return any;
}

#define LATE_READS 64   /* reads past the deadline of what was already there (256 KB at most) */

void vg_probe_wait(struct vg_probe *ps, size_t n, int64_t deadline)
{
    struct pollfd *pfd = vg_xcalloc(n ? n : 1, sizeof *pfd);
    int64_t window = deadline - vg_mono_ms();
    int grace = 0, late = 0;
    bool *starved = vg_xcalloc(n ? n : 1, sizeof *starved);
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
        if (left <= 0 && window > 0 && grace < VG_PROBE_GRACE && live_starved(ps, n, starved)) {
            deadline += window, grace++;   /* waiting for a CPU is not hanging */
            continue;
        }
        /* past the deadline, the last looks do not wait: a probe that answered while this
         * process itself waited for a CPU is done, not hung (bounded: a probe that never stops
         * writing is still killed) */
        if (left <= 0 && late++ >= LATE_READS) break;
        int r = poll(pfd, n, left <= 0 ? 0 : (int)(left > 1000 ? 1000 : left));
        if (r < 0 && errno != EINTR) break;
        if (left <= 0 && r <= 0) break;
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
    live_starved(ps, n, starved);
    for (size_t i = 0; i < n; i++)
        if (ps[i].fd >= 0) {
            ps[i].starved = starved[i];
            finish(&ps[i], true);
        }
    free(starved);
    free(pfd);
}

void vg_probe_free(struct vg_probe *p)
{
    if (p->fd >= 0) finish(p, true);
    sbuf_free(&p->out);
}
