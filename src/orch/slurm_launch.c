/* slurm_launch.c — `vigil launch` inside a Slurm job that keeps K warm
 * spares in its own allocation (sbatch -N N+K --no-kill; docs/drill.md): it
 * runs the program as one srun step on N nodes that are up; on SIGUSR1 (vigil
 * serve: a node of the step failed; ignored when every node of the running
 * step is up) or when the step fails, it stops the
 * step, waits for Slurm to show which node is out, and starts the step again
 * on N nodes that are up — a spare takes the failed node's place without a
 * requeue.  With fewer than N up it requeues its own job.  Each step gets
 * VIGIL_LAUNCH_RESTART (0, 1, …); the job's comment says "vigil:spares=K",
 * which is how vigil serve knows to tell it rather than requeue it.  Progress
 * lines on stdout, each led by an RFC 3339 time: `launch: step R on NODES`,
 * `launch: told (SIGUSR1): stopping step R`, `launch: step R failed (…)`. */
#include "orch/slurm_launch.h"
#include "util/hostlist.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define STOP_MS 5000      /* a step told to stop (SIGTERM) is killed after this */
#define OUT_WAIT_MS 10000 /* for Slurm to show the node that failed */

static volatile sig_atomic_t told, stop_sig;

static void on_usr1(int sig) { (void)sig; told = 1; }
static void on_stop(int sig) { stop_sig = sig; }

static pid_t start_step(const char *nodes, size_t n, long tasks, long restart, char **prog)
{
    char nn[32], nt[48], tp[48], nl[1100], rs[32];
    snprintf(nn, sizeof nn, "--nodes=%zu", n);
    snprintf(nt, sizeof nt, "--ntasks=%zu", n * (size_t)tasks);   /* not the allocation's own count */
    snprintf(tp, sizeof tp, "--ntasks-per-node=%ld", tasks);
    snprintf(nl, sizeof nl, "--nodelist=%s", nodes);
    snprintf(rs, sizeof rs, "%ld", restart);
    size_t np = 0;
    while (prog[np]) np++;
    const char **argv = vg_xcalloc(np + 7, sizeof *argv);
    size_t k = 0;
    argv[k++] = "srun", argv[k++] = nn, argv[k++] = nt, argv[k++] = tp, argv[k++] = nl, argv[k++] = "--kill-on-bad-exit=1";
    for (size_t i = 0; i < np; i++) argv[k++] = prog[i];
    pid_t pid = fork();
    if (pid == 0) {
        setenv("VIGIL_LAUNCH_RESTART", rs, 1);
        signal(SIGUSR1, SIG_DFL);
        execvp(argv[0], (char *const *)argv);
        fprintf(stderr, "vigil: launch: srun: %s\n", strerror(errno));
        _exit(127);
    }
    free(argv);
    return pid;
}

/* Until the step ends (its wait status) or we are told / asked to stop (-1). */
static int watch(pid_t pid)
{
    for (;;) {
        int st;
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) return st;
        if (w < 0 && errno != EINTR) return 0;
        if (told || stop_sig) return -1;
        vg_sleep_ms(20);
    }
}

static void stop_step(pid_t pid, int sig)
{
    kill(pid, sig);
    for (int64_t end = vg_mono_ms() + STOP_MS; vg_mono_ms() < end; vg_sleep_ms(20))
        if (waitpid(pid, NULL, WNOHANG) == pid) return;
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* Told (SIGUSR1) while a step runs: whether a node of that step is out (or
 * Slurm cannot be read: the tell is trusted).  vigil serve DOWNs the node
 * before it tells, and the DOWN ends the step's tasks there, so the step has
 * often failed and started again on a spare by the time the tell comes: a
 * step whose nodes are all up goes on. */
static bool step_hit(struct vg_slurm *s, char *const *step, size_t n, const char *list)
{
    struct vg_node_state *ns;
    size_t nn;
    if (vg_slurm_nodes(s, list, &ns, &nn)) return true;
    bool out = vg_launch_any_out(step, n, ns, nn);
    free(ns);
    return out;
}

/* Waits for Slurm to show a node of the step out; false when none is. */
static bool wait_out(struct vg_slurm *s, char *const *step, size_t n, const char *list)
{
    for (int64_t end = vg_mono_ms() + OUT_WAIT_MS; vg_mono_ms() < end && !stop_sig; vg_sleep_ms(100)) {
        struct vg_node_state *ns;
        size_t nn;
        if (vg_slurm_nodes(s, list, &ns, &nn)) continue;
        bool out = vg_launch_any_out(step, n, ns, nn);
        free(ns);
        if (out) return true;
    }
    return false;
}

static bool up(const char *name, const struct vg_node_state *states, size_t ns)
{
    for (size_t i = 0; i < ns; i++)
        if (!strcmp(states[i].name, name)) return !states[i].down && !states[i].drain && states[i].responding;
    return false;
}

size_t vg_launch_pick(char *const *names, size_t n, const struct vg_node_state *states, size_t ns, size_t want,
                      const char **out)
{
    size_t got = 0;
    for (size_t i = 0; i < n; i++) {
        if (!up(names[i], states, ns)) continue;
        if (got < want) out[got] = names[i];
        got++;
    }
    return got;
}

bool vg_launch_any_out(char *const *names, size_t n, const struct vg_node_state *states, size_t ns)
{
    for (size_t i = 0; i < n; i++)
        if (!up(names[i], states, ns)) return true;
    return false;
}

int vg_slurm_launch(long spares, long tasks, char **prog, char *err, size_t errlen)
{
    long jobid;
    const char *jid = getenv("SLURM_JOB_ID"), *list = getenv("SLURM_JOB_NODELIST");
    if (!jid || !vg_parse_long(jid, &jobid) || !list || !*list)
        return snprintf(err, errlen, "runs as the batch script of a Slurm job (SLURM_JOB_ID, SLURM_JOB_NODELIST unset)"),
               VG_LAUNCH_BAD_INPUT;
    char **names;
    int n = vg_hostlist_expand(list, &names, 100000);
    if (n <= 0) return snprintf(err, errlen, "SLURM_JOB_NODELIST: '%s' is not a host list", list), VG_LAUNCH_BAD_INPUT;
    size_t want = (size_t)n > (size_t)spares ? (size_t)n - (size_t)spares : 0;
    if (!want) {
        vg_strv_free(names, (size_t)n);
        return snprintf(err, errlen, "--spares %ld leaves no node of the %d allocated to run on", spares, n),
               VG_LAUNCH_BAD_INPUT;
    }
    struct vg_slurm s = { .conf = getenv("SLURM_CONF"), .timeout_ms = 10000 };
    char comment[48];
    snprintf(comment, sizeof comment, "%s%ld", VG_INALLOC_COMMENT, spares);
    if (spares && vg_slurm_set_comment(&s, jobid, comment))
        vg_warn("launch: cannot mark job %ld as holding spares (%s): vigil will requeue it on a fault", jobid, s.err);
    struct sigaction sa = { .sa_handler = on_usr1 };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    sa.sa_handler = on_stop;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    const char **step = vg_xcalloc((size_t)n, sizeof *step);
    int rc = 0;
    for (long restart = 0;; restart++) {
        struct vg_node_state *ns = NULL;
        size_t nn = 0;
        if (vg_slurm_nodes(&s, list, &ns, &nn)) vg_warn("launch: reading the allocation's nodes: %s", s.err);
        size_t up = vg_launch_pick(names, (size_t)n, ns, nn, want, step);
        free(ns);
        if (up < want) {
            vg_stamped("launch: %zu of %d nodes up, %zu needed: requeueing job %ld", up, n, want, jobid);
            rc = vg_slurm_requeue(&s, &jobid, 1) ? VG_LAUNCH_FAILED : 0;
            if (rc) vg_err("launch: requeue: %s", s.err);
            break;
        }
        char *nodes = vg_hostlist_join(step, want);
        vg_stamped("launch: step %ld on %s", restart, nodes);
        told = 0;
        pid_t pid = start_step(nodes, want, tasks, restart, prog);
        free(nodes);
        if (pid < 0) {
            vg_err("launch: fork: %s", strerror(errno));
            rc = VG_LAUNCH_FAILED;
            break;
        }
        int st = watch(pid);
        while (st < 0 && told && !stop_sig && !step_hit(&s, (char *const *)step, want, list)) {
            vg_stamped("launch: a tell (SIGUSR1) with every node of step %ld up: it goes on", restart);
            told = 0;
            st = watch(pid);
        }
        if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0) break;   /* the program finished */
        if (stop_sig) {
            stop_step(pid, stop_sig);
            rc = 128 + stop_sig;
            break;
        }
        if (st < 0) {
            vg_stamped("launch: told (SIGUSR1): stopping step %ld", restart);
            stop_step(pid, SIGTERM);
        } else
            vg_stamped("launch: step %ld failed (%s %d)", restart, WIFEXITED(st) ? "exit" : "signal",
                WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        if (!wait_out(&s, (char *const *)step, want, list) && st >= 0) {
            rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);   /* the program's own failure */
            break;
        }
        if (restart >= 2 * spares + 8) {
            vg_err("launch: %ld restarts: giving up", restart + 1);
            rc = VG_LAUNCH_FAILED;
            break;
        }
    }
    free(step);
    vg_strv_free(names, (size_t)n);
    return rc;
}
