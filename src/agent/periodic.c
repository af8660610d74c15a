/* periodic.c — the agent's periodic GPU/sysfs checks: a timerfd starts one
 * watchdog probe per interval (the GPU probe, or the whole `vigil check`
 * config run in a probe child); the poll loop reads its answer, and a probe
 * still running at its deadline is killed and reported as probe-hung — a hung
 * vendor library call never blocks the loop. */
#include "agent/agent_int.h"
#include "signal/checkrun.h"
#include "signal/checks.h"
#include "signal/gpuprobe.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define MAXEV 64

int per_init(struct agent *a, char *err, size_t errlen)
{
    struct periodic *p = &a->per;
    p->tfd = -1;
    p->p.fd = -1;
    if (a->o->config) {
        if (vg_checkconf_load(NULL, a->o->config, &p->conf, err, errlen) < 0 ||
            vg_check_validate(&p->conf, err, errlen) < 0) {
            vg_checkconf_free(&p->conf);
            return -1;
        }
        p->have_conf = true;
    }
    if (a->o->interval_ms <= 0) return 0;
    p->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (p->tfd < 0) return snprintf(err, errlen, "timerfd: %s", strerror(errno)), -1;
    /* the first check soon after the start, then every interval */
    struct itimerspec its = { { a->o->interval_ms / 1000, (a->o->interval_ms % 1000) * 1000000L }, { 0, 50000000L } };
    timerfd_settime(p->tfd, 0, &its, NULL);
    return 0;
}

/* The probe's deadline: half the interval, within [200 ms, 20 s]. */
static int deadline_ms(const struct agent *a)
{
    int d = a->o->interval_ms > 0 ? a->o->interval_ms / 2 : 10000;
    return d < 200 ? 200 : d > 20000 ? 20000 : d;
}

struct conf_arg {
    struct agent *a;
    int64_t deadline;
};

/* In the probe child: the config's checks, one JSON result per line. */
static int run_conf(void *arg, FILE *out)
{
    struct conf_arg *c = arg;
    struct vg_check_opts co = { .node = c->a->node, .deadline_mono_ms = c->deadline };
    struct vg_check_results rs = { 0 };
    vg_check_run(&c->a->per.conf, &co, &rs);
    for (size_t i = 0; i < rs.n; i++) {
        vg_json_print(out, vg_check_result_to_json(&rs.r[i]), 1);
        fflush(out);
    }
    vg_check_results_free(&rs);
    fputs("{\"done\":true}\n", out);
    return 0;
}

void per_tick(struct agent *a)
{
    struct periodic *p = &a->per;
    uint64_t expirations;
    while (read(p->tfd, &expirations, sizeof expirations) > 0) {
    }
    vg_probe_reap();
    if (p->running) return;   /* the last one is still within its deadline */
    int dl = deadline_ms(a);
    p->deadline = vg_mono_ms() + dl;
    p->grace = 0;
    int rc;
    if (p->have_conf) {
        static struct conf_arg c;
        c.a = a;
        c.deadline = p->deadline - dl / 5;   /* the checks' own watchdog fires first */
        p->gpu_only = false;
        rc = vg_probe_start(&p->p, "checks", run_conf, &c);
    } else {
        p->gpu_only = true;
        rc = vg_gpu_probe_start(&p->p, NULL);
    }
    if (rc < 0) {
        vg_warn("agent: cannot start the periodic check: %s", strerror(errno));
        return;
    }
    fcntl(p->p.fd, F_SETFL, O_NONBLOCK);   /* read from the loop without blocking */
    p->running = true;
}

/* A probe-hung event for a config run that did not answer in time. */
static void hung_event(struct agent *a, struct vg_event *e)
{
    vg_event_init(e);
    e->time_ms = e->seen_ms = vg_now_ms();
    vg_strlcpy(e->source, "probe", sizeof e->source);
    vg_strlcpy(e->kind, "probe-hung", sizeof e->kind);
    snprintf(e->raw, sizeof e->raw, "periodic checks hung: no answer within %d ms", deadline_ms(a));
}

/* Whether GPU st's uncorrectable count rose since the last read (the first
 * read of a count above 0 is a rise); remembers it either way. */
static bool ue_rose(struct periodic *p, const struct vg_gpu_state *st)
{
    int i = 0;
    while (i < p->nue && strcmp(p->ue[i].pci, st->pci)) i++;
    if (i == p->nue) {
        if (p->nue == (int)(sizeof p->ue / sizeof p->ue[0])) return true;   /* no room: every read is news */
        vg_strlcpy(p->ue[p->nue].pci, st->pci, sizeof p->ue[0].pci);
        p->ue[p->nue++].ue = 0;
    }
    bool rose = st->ecc_ue > p->ue[i].ue;
    if (st->ecc_ue >= 0) p->ue[i].ue = st->ecc_ue;
    return rose;
}

static void finish(struct agent *a)
{
    struct periodic *p = &a->per;
    struct vg_event ev[MAXEV];
    int n = 0;
    bool healthy = true, unknown = p->p.starved;
    char reason[256] = "";
    if (p->gpu_only) {
        struct vg_gpu_probe_result r;
        vg_gpu_probe_collect(&p->p, NULL, &r);
        if (r.error[0] && !r.hung) vg_debug("agent: GPU probe: %s", r.error);
        vg_gpu_probe_events(&r, a->node, ev, &n, MAXEV);
        /* An uncorrectable count is a fault when it rises: one that stays is
         * the same fault, already sent (the node stays unhealthy for it). */
        for (int i = 0; i < r.n; i++) {
            const struct vg_gpu_state *st = &r.gpus[i];
            if (ue_rose(p, st) || !st->v || !st->v->kinds.ecc_ue) continue;
            for (int k = 0; k < n; k++)
                if (!strcmp(ev[k].kind, st->v->kinds.ecc_ue) && !strcmp(ev[k].pci, st->pci)) {
                    if (vg_catalog_action(a->cat, ev[k].kind, ev[k].code) >= a->o->drain_at && healthy) {
                        healthy = false;
                        snprintf(reason, sizeof reason, "vigil: %s%s%s", ev[k].kind, ev[k].pci[0] ? " on " : "",
                                 ev[k].pci);
                    }
                    ev[k] = ev[--n];
                    k--;
                }
        }
        vg_gpu_probe_free(&r);
    } else {
        bool done = false;
        char *save = NULL;
        for (char *line = p->p.out.s ? strtok_r(p->p.out.s, "\n", &save) : NULL; line;
             line = strtok_r(NULL, "\n", &save)) {
            json_t *j = json_loads(line, 0, NULL);
            struct vg_check_result r;
            if (j && json_is_true(json_object_get(j, "done"))) done = true;
            else if (j && vg_check_result_from_json(j, &r) == 0) {
                if (r.starved) unknown = true;   /* no verdict: neither drain nor resume on it */
                else if (!r.ok && healthy) {
                    healthy = false;
                    snprintf(reason, sizeof reason, "vigil: %.80s: %.150s", r.name, r.detail);
                }
                for (int i = 0; i < r.nev && n < MAXEV; i++) ev[n++] = r.ev[i];
                free(r.ev);
            }
            json_decref(j);
        }
        if (!done && n < MAXEV && !p->p.starved) {
            hung_event(a, &ev[n++]);
            healthy = false;
            snprintf(reason, sizeof reason, "vigil: periodic checks hung");
        }
    }
    vg_probe_free(&p->p);
    p->running = false;
    for (int i = 0; i < n; i++) {
        vg_strlcpy(ev[i].node, a->node, sizeof ev[i].node);
        if (!ev[i].seen_ms) ev[i].seen_ms = vg_now_ms();
        agent_signal(a, &ev[i]);
        if (ev[i].action >= a->o->drain_at && healthy) {
            healthy = false;
            snprintf(reason, sizeof reason, "vigil: %s%s%s", ev[i].kind, ev[i].pci[0] ? " on " : "", ev[i].pci);
        }
    }
    if (healthy && unknown) return;   /* a starved check proved nothing either way */
    sa_checks(a, healthy, reason);
}

void per_ready(struct agent *a)
{
    struct periodic *p = &a->per;
    char buf[4096];
    for (;;) {
        ssize_t got = read(p->p.fd, buf, sizeof buf);
        if (got > 0) {
            sbuf_add(&p->p.out, buf, (size_t)got);
            continue;
        }
        if (got < 0 && errno == EINTR) continue;
        if (got < 0 && errno == EAGAIN) return;
        break;
    }
    vg_probe_wait(&p->p, 1, vg_mono_ms() + 1000);   /* end of file: marks it done and reaps it */
    finish(a);
}

void per_deadline(struct agent *a)
{
    struct periodic *p = &a->per;
    if (!p->running || vg_mono_ms() < p->deadline) return;
    if (p->grace < VG_PROBE_GRACE && vg_probe_starved(&p->p)) {   /* waiting for a CPU is not hanging */
        p->grace++;
        p->deadline += deadline_ms(a);
        vg_info("agent: the periodic check is starved of CPU; its deadline extended (%d of %d)", p->grace,
                VG_PROBE_GRACE);
        return;
    }
    vg_probe_wait(&p->p, 1, 0);   /* reads what it wrote, kills it if it still runs, looks whether it was starved */
    if (p->p.timed_out)
        vg_warn("agent: the periodic check did not answer within %d ms%s", deadline_ms(a) * (1 + p->grace),
                p->p.starved ? ", starved of CPU (not counted as a hang)" : "");
    finish(a);
}

void per_close(struct agent *a)
{
    struct periodic *p = &a->per;
    if (p->running) vg_probe_free(&p->p);
    p->running = false;
    if (p->tfd >= 0) close(p->tfd);
    if (p->have_conf) vg_checkconf_free(&p->conf);
    vg_probe_reap();
}
