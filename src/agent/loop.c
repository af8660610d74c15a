/* loop.c — the agent's poll() loop and its event path: every source (kernel
 * log, GPU vendors' event children, periodic probe) hands events to agent_signal(),
 * which sets the catalog's verdict and passes them through the dedup; a new
 * incident goes out at the end of the loop turn (one message per turn), a
 * repeat is folded and its count follows when the dedup window closes.  The
 * loop blocks in poll() with no timeout while nothing is pending. */
#include "agent/agent_int.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

void agent_signal(struct agent *a, struct vg_event *e)
{
    vg_strlcpy(e->node, a->node, sizeof e->node);
    if (!e->seen_ms) e->seen_ms = vg_now_ms();
    /* An incident's span is on this node's clock: when the signal happened,
     * or, unknown (a log file's boot-relative stamps), when it was read.  The
     * count of the repeats sent when the fold window closes carries the same
     * `first`, which is how the controller joins it to this incident however
     * long the storm lasted. */
    if (!e->first_ms) e->first_ms = e->time_ms ? e->time_ms : e->seen_ms;
    if (!e->last_ms) e->last_ms = e->first_ms;
    vg_catalog_classify(a->cat, e);
    struct vg_event rep[4];
    int nrep = vg_repeat_add(a->rep, e, rep, 4);
    const struct vg_dedup_stats *st = vg_dedup_stats(a->dd);
    uint64_t folded = st->folded, dropped = st->storm_dropped;
    vg_dedup_add(a->dd, e);
    if (st->folded == folded && st->storm_dropped == dropped) {   /* else counted, sent with the fold */
        a->incidents++;
        vg_info("agent: %s %d%s%s (%s) from %s", e->kind, e->code, e->pci[0] ? " on " : "", e->pci,
                vg_action_name(e->action), e->source);
        snd_queue(a, e);
        sa_event(a, e);
    }
    for (int i = 0; i < nrep; i++) agent_signal(a, &rep[i]);   /* a repeat rule completed: a fault of its own */
}

/* The dedup closed an incident: the repeats folded into it since the first
 * (already sent) go out as one event carrying their count. */
static void on_close(const struct vg_event *e, void *arg)
{
    struct agent *a = arg;
    if (e->count <= 1) return;
    struct vg_event rest = *e;
    rest.count = e->count - 1;
    snd_queue(a, &rest);
}

static int open_dedup(struct agent *a, char *err, size_t errlen)
{
    a->cat = vg_catalog_open(NULL, a->o->catalog, a->o->policy, err, errlen);
    if (!a->cat) return -1;
    struct vg_dedup_opts d = { a->o->window_ms, 0, 0 };
    a->dd = vg_dedup_new(&d, a->cat, on_close, a);
    a->rep = vg_repeat_new(a->cat);
    return 0;
}

static bool open_incidents(const struct agent *a)
{
    const struct vg_dedup_stats *s = vg_dedup_stats(a->dd);
    return s->in > s->folded + s->storm_dropped + s->emitted;
}

static int min_timeout(int t, int64_t ms)
{
    if (ms < 0) return t;
    if (ms > 3600000) ms = 3600000;
    return t < 0 || ms < t ? (int)ms : t;
}

static void run_loop(struct agent *a, int sfd)
{
    while (!a->stop) {
        struct pollfd p[6 + VG_GPU_VENDORS_MAX];
        int np = 0, ik = -1, in[VG_GPU_VENDORS_MAX], it = -1, itn = -1, ip = -1, inic = -1, is;
        if (kf_fd(a) >= 0) p[ik = np++] = (struct pollfd){ kf_fd(a), POLLIN, 0 };
        for (int i = 0; i < a->ngw; i++) {
            in[i] = -1;
            if (a->gw[i].fd >= 0) p[in[i] = np++] = (struct pollfd){ a->gw[i].fd, POLLIN, 0 };
        }
        if (a->per.tfd >= 0) p[it = np++] = (struct pollfd){ a->per.tfd, POLLIN, 0 };
        if (a->per.nic_tfd >= 0) p[itn = np++] = (struct pollfd){ a->per.nic_tfd, POLLIN, 0 };
        if (a->per.chk.running) p[ip = np++] = (struct pollfd){ a->per.chk.p.fd, POLLIN, 0 };
        if (a->per.nic.running) p[inic = np++] = (struct pollfd){ a->per.nic.p.fd, POLLIN, 0 };
        p[is = np++] = (struct pollfd){ sfd, POLLIN, 0 };
        int64_t now = vg_mono_ms();
        int timeout = min_timeout(min_timeout(snd_wait_ms(a), beat_wait_ms(a)), report_wait_ms(a));
        int64_t due = per_next_deadline(a);
        if (due >= 0) timeout = min_timeout(timeout, due - now > 0 ? due - now : 0);
        if (open_incidents(a)) timeout = min_timeout(timeout, 1000);
        int64_t restart = a->o->gpu_events ? gw_restart_at(a) : -1;
        if (restart >= 0) timeout = min_timeout(timeout, restart - now > 0 ? restart - now : 0);
        int r = poll(p, (nfds_t)np, timeout);
        if (r < 0 && errno != EINTR) {
            vg_err("agent: poll: %s", strerror(errno));
            break;
        }
        if (r > 0) {
            if (ik >= 0 && p[ik].revents) kf_ready(a);
            for (int i = 0; i < a->ngw; i++)
                if (in[i] >= 0 && p[in[i]].revents) gw_ready(a, i);
            if (it >= 0 && p[it].revents) per_tick(a, a->per.tfd);
            if (itn >= 0 && p[itn].revents) per_tick(a, a->per.nic_tfd);
            if (ip >= 0 && p[ip].revents && a->per.chk.running) per_ready(a, &a->per.chk);
            if (inic >= 0 && p[inic].revents && a->per.nic.running) per_ready(a, &a->per.nic);
            if (p[is].revents) {
                struct signalfd_siginfo si;
                if (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
                    vg_info("agent: stopping on signal %u", si.ssi_signo);
                    a->stop = true;
                }
            }
        }
        per_deadline(a);
        if (a->o->gpu_events) gw_start_due(a);
        if (open_incidents(a)) vg_dedup_tick(a->dd, vg_now_ms());
        snd_flush(a);
        snd_deliver(a, false);
        beat_due(a);
        report_due(a);
    }
}

/* --once: what the log holds now, one periodic check, one delivery attempt. */
static void run_once(struct agent *a)
{
    kf_drain(a);
    if (a->per.tfd >= 0 || a->per.nic_tfd >= 0) {
        per_tick(a, a->per.tfd);
        per_tick(a, a->per.nic_tfd);
        for (int64_t due; (due = per_next_deadline(a)) >= 0;) {
            struct per_slot *s[2], *all[2] = { &a->per.chk, &a->per.nic };
            struct pollfd p[2];
            int n = 0;
            for (int i = 0; i < 2; i++)
                if (all[i]->running) s[n] = all[i], p[n++] = (struct pollfd){ all[i]->p.fd, POLLIN, 0 };
            int64_t left = due - vg_mono_ms();
            if (left > 0 && poll(p, (nfds_t)n, (int)left) > 0)
                for (int i = 0; i < n; i++)
                    if (p[i].revents && s[i]->running) per_ready(a, s[i]);
            per_deadline(a);
        }
    }
}

void agent_jobs(const struct agent *a, char *out, size_t n)
{
    if (n) *out = 0;
    if (a->jobs_from[0]) vg_orch_local_jobs(a->sched, a->jobs_from, a->node, out, n);
}

int vg_agent_run(const struct vg_agent_opts *o, char *err, size_t errlen)
{
    struct agent *a = vg_xcalloc(1, sizeof *a);
    a->o = o;
    a->per.tfd = a->per.nic_tfd = a->per.chk.p.fd = a->per.nic.p.fd = a->kf.fd = a->kf.ino = -1;
    gw_init(a);
    a->maybe_ours = true;   /* a drain left by an earlier run may be vigil's */
    a->sched = vg_orch_find(o->orchestrator);
    if (o->node && *o->node) vg_strlcpy(a->node, o->node, sizeof a->node);
    else vg_orch_local_node(a->sched, a->node, sizeof a->node);
    if (o->jobs_from && *o->jobs_from) vg_expand_node(o->jobs_from, a->node, a->jobs_from, sizeof a->jobs_from);
    int rc = 0, sfd = -1;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    signal(SIGPIPE, SIG_IGN);
    if (open_dedup(a, err, errlen) || snd_init(a, err, errlen) || kf_open(a, err, errlen) ||
        per_init(a, err, errlen) || sa_init(a, err, errlen)) {
        rc = -1;
        goto out;
    }
    /* said after the options' errors, so that one of those is all a bad command line prints */
    char jobs[VG_EVENT_JOBS];
    int jr = a->jobs_from[0] ? vg_orch_local_jobs(a->sched, a->jobs_from, a->node, jobs, sizeof jobs) : 0;
    if (jr == -1) vg_info("agent: the %s node's jobs cannot be read at %s: events and heartbeats name no jobs",
                          a->sched->name, a->jobs_from);
    if (jr == -2) {
        vg_info("agent: the %s orchestrator lists no jobs on a node: events and heartbeats name none", a->sched->name);
        a->jobs_from[0] = 0;
    }
    if (!o->once) {
        sigprocmask(SIG_BLOCK, &set, NULL);
        sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
        if (o->gpu_events) gw_start_due(a);
    }
    char to[600] = "";
    if (o->controller) {
        ctl_url(a, "/v1/events", to, sizeof to);
        for (int i = 1; i < a->nctl; i++)   /* the others, in the order they are turned to */
            snprintf(to + strlen(to), sizeof to - strlen(to), "%s%s%s", i == 1 ? " (then " : ", ", a->ctl[i],
                     i + 1 == a->nctl ? ")" : "");
    }
    vg_info("agent: node %s, kernel log %s, %s%s", a->node, a->kf.path, o->controller ? "controller " : "standalone",
            o->controller ? to : a->orch ? " (drains through the orchestrator)" : " (log only)");
    snd_status(a, "start");
    if (o->once) run_once(a);
    else run_loop(a, sfd);
    vg_kmsg_finish(&a->kf.k);
    vg_dedup_finish(a->dd);
    snd_flush(a);
    snd_deliver(a, true);
    if (o->once && a->unhealthy) rc = 1;
    if (a->spool && vg_spool_pending(a->spool) && vg_spool_memory_only(a->spool))
        vg_err("agent: %zu messages not delivered; the spool was memory-only: those not in %s are LOST",
               vg_spool_pending(a->spool), o->spool);
    else if (a->spool && vg_spool_pending(a->spool))
        vg_warn("agent: %zu messages not delivered yet (kept in %s)", vg_spool_pending(a->spool), o->spool);
    snd_status(a, "stop");
out:
    gw_stop(a);
    per_close(a);
    if (a->kf.path) kf_close(a);
    snd_close(a);
    vg_dedup_free(a->dd);
    vg_repeat_free(a->rep);
    vg_catalog_free(a->cat);
    vg_orch_close(a->orch);
    if (sfd >= 0) close(sfd);
    free(a);
    return rc;
}
