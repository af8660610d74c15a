/* probe.h — watchdog probes: a probe that may block (a GPU library call, a read of
 * a dying device's sysfs, a helper program) runs in a forked child that writes
 * its result to a pipe; the parent waits for any number of them at once up to
 * one deadline, kills those still running (their process group) and moves on.
 * Killed children are reaped asynchronously, so a child stuck in the kernel
 * never blocks the next cycle.  A probe that is slow because it is starved
 * of CPU (runnable, waiting for a core, most of the time: a node saturated
 * by its job) is not a hung one: its deadline is extended, at most
 * VG_PROBE_GRACE times by the same window, and one killed while still
 * starved is marked so, for the caller not to report a hang. */
#ifndef VG_PROBE_H
#define VG_PROBE_H
#include "util/sbuf.h"
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Runs in the child: writes its result to out (flushing as it goes: what was
 * written before a hang still reaches the parent).  Returns the exit code. */
typedef int (*vg_probe_fn)(void *arg, FILE *out);

struct vg_probe {
    char name[48];
    pid_t pid;
    int fd;
    struct sbuf out;      /* everything the child wrote */
    bool done;            /* the child finished (closed its end) */
    bool timed_out;       /* killed at the deadline */
    bool starved;         /* … while it was starved of CPU (vg_probe_starved): not a hang */
    int64_t start_ms, elapsed_ms;
};

/* Forks the child; 0, or -1 (errno set) when it could not be started. */
int vg_probe_start(struct vg_probe *p, const char *name, vg_probe_fn fn, void *arg);
/* Collects the output of the n probes until each has finished or the monotonic
 * clock reaches deadline_mono_ms (vg_mono_ms()); those still running are killed
 * and marked timed_out.  Past the deadline it first reads, without waiting,
 * what is already there: a caller that comes back late (it waited for a CPU
 * itself) does not kill a probe that answered. */
void vg_probe_wait(struct vg_probe *ps, size_t n, int64_t deadline_mono_ms);
#define VG_PROBE_GRACE 2
/* Whether one of the probe's processes (its process group, and those of the
 * probes it started) is waiting for a CPU: runnable at two looks 50 ms apart
 * and on a CPU for less than a quarter of them (/proc/PID/stat and
 * schedstat); false when that cannot be read.  Takes 50 ms. */
bool vg_probe_starved(const struct vg_probe *p);
void vg_probe_free(struct vg_probe *p);
/* Reaps killed children that have exited since; returns how many are still
 * not reaped (stuck in the kernel). */
int vg_probe_reap(void);

#endif
