/* periodic.c — the agent's periodic checks: a timerfd starts, every
 * interval, two watchdog probes side by side — the GPU probe (or the whole
 * `vigil check` config run in a probe child) and the NIC probe (every
 * InfiniBand/RoCE port's counters from sysfs, then the RDMA stack walked
 * through the verbs library) — and the poll loop reads their answers.  A
 * probe still running at its deadline is killed and reported (probe-hung,
 * nic-hung), unless it was only starved of CPU: a hung vendor library or a
 * wedged NIC driver never blocks the loop.  The ports' counters are judged
 * against the last reading (nicrate.h); what could not be judged is logged.
 * The GPUs' NVLink fabric domain read by the GPU probe goes out with the
 * heartbeats (beat.c). */
#include "agent/agent_int.h"
#include "signal/checkrun.h"
#include "signal/checks.h"
#include "signal/gpuprobe.h"
#include "signal/nicprobe.h"
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

/* A timerfd firing soon, then every ms; -1 with err. */
static int timer(int ms, char *err, size_t errlen)
{
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (fd < 0) return snprintf(err, errlen, "timerfd: %s", strerror(errno)), -1;
    /* the first check soon after the start, then every interval */
    struct itimerspec its = { { ms / 1000, (ms % 1000) * 1000000L }, { 0, 50000000L } };
    timerfd_settime(fd, 0, &its, NULL);
    return fd;
}

static int nic_interval(const struct agent *a)
{
    return a->o->nic_interval_ms > 0 ? a->o->nic_interval_ms : a->o->interval_ms;
}

int per_init(struct agent *a, char *err, size_t errlen)
{
    struct periodic *p = &a->per;
    p->tfd = p->nic_tfd = -1;
    p->chk.p.fd = p->nic.p.fd = -1;
    if (a->o->config) {
        if (vg_checkconf_load(NULL, a->o->config, &p->conf, err, errlen) < 0 ||
            vg_check_validate(&p->conf, err, errlen) < 0) {
            vg_checkconf_free(&p->conf);
            return -1;
        }
        p->have_conf = true;
    }
    if (a->o->interval_ms > 0 && (p->tfd = timer(a->o->interval_ms, err, errlen)) < 0) return -1;
    if (a->o->nic && nic_interval(a) > 0) {   /* --interval 0 --nic-interval S: the NIC probe alone */
        if ((p->nic_tfd = timer(nic_interval(a), err, errlen)) < 0) return -1;
        p->rates = vg_nic_rates_new();
    }
    return 0;
}

/* A probe's deadline: half its interval, within [200 ms, 20 s]. */
static int deadline_ms(const struct agent *a, const struct per_slot *s)
{
    int i = s == &a->per.nic ? nic_interval(a) : a->o->interval_ms;
    int d = i > 0 ? i / 2 : 10000;
    return d < 200 ? 200 : d > 20000 ? 20000 : d;
}

struct conf_arg {
    struct agent *a;
    int64_t deadline;
};

/* In the probe child: the config's checks, one JSON result per line, and the
 * GPUs' fabric domain when a GPU line read them. */
static int run_conf(void *arg, FILE *out)
{
    struct conf_arg *c = arg;
    struct vg_check_opts co = { .root = c->a->o->root, .node = c->a->node, .deadline_mono_ms = c->deadline };
    struct vg_check_results rs = { 0 };
    vg_check_run(&c->a->per.conf, &co, &rs);
    for (size_t i = 0; i < rs.n; i++) {
        vg_json_print(out, vg_check_result_to_json(&rs.r[i]), 1);
        fflush(out);
    }
    if (rs.fabric_domain[0]) vg_json_print(out, json_pack("{s:s}", "fabric_domain", rs.fabric_domain), 1);
    vg_check_results_free(&rs);
    fputs("{\"done\":true}\n", out);
    return 0;
}

/* Starts a slot's probe (unless the last one is still within its deadline). */
static void start(struct agent *a, struct per_slot *s, const char *what, int (*go)(struct agent *, struct per_slot *))
{
    if (s->running) return;
    s->deadline = vg_mono_ms() + deadline_ms(a, s);
    s->grace = 0;
    if (go(a, s) < 0) {
        vg_warn("agent: cannot start the %s probe: %s", what, strerror(errno));
        return;
    }
    fcntl(s->p.fd, F_SETFL, O_NONBLOCK);   /* read from the loop without blocking */
    s->running = true;
}

static int go_chk(struct agent *a, struct per_slot *s)
{
    struct periodic *p = &a->per;
    p->gpu_only = !p->have_conf;
    if (p->gpu_only) return vg_gpu_probe_start(&s->p, NULL);
    static struct conf_arg c;
    c.a = a;
    c.deadline = s->deadline - deadline_ms(a, s) / 5;   /* the checks' own watchdog fires first */
    return vg_probe_start(&s->p, "checks", run_conf, &c);
}

static int go_nic(struct agent *a, struct per_slot *s) { return vg_nic_probe_start(&s->p, a->o->root); }

void per_tick(struct agent *a, int tfd)
{
    struct periodic *p = &a->per;
    uint64_t expirations;
    if (tfd < 0) return;
    while (read(tfd, &expirations, sizeof expirations) > 0) {
    }
    vg_probe_reap();
    if (tfd == p->tfd) start(a, &p->chk, "periodic check", go_chk);
    else start(a, &p->nic, "NIC", go_nic);
}

/* A probe-hung event for a config run that did not answer in time. */
static void hung_event(struct agent *a, struct vg_event *e)
{
    vg_event_init(e);
    e->time_ms = e->seen_ms = vg_now_ms();
    vg_strlcpy(e->source, "probe", sizeof e->source);
    vg_strlcpy(e->kind, "probe-hung", sizeof e->kind);
    snprintf(e->raw, sizeof e->raw, "periodic checks hung: no answer within %d ms", deadline_ms(a, &a->per.chk));
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

/* The NVLink domain the GPUs registered in, for the heartbeats; said when it changes. */
static void learn_domain(struct agent *a, const char *domain)
{
    if (!strcmp(a->fabric_domain, domain)) return;
    if (domain[0]) vg_info("agent: this node's GPUs are in NVLink domain %s", domain);
    vg_strlcpy(a->fabric_domain, domain, sizeof a->fabric_domain);
}

/* The check config's results (or the GPU probe's) into ev; healthy and the
 * reason of the first failure. */
static void finish_chk(struct agent *a, struct per_slot *s, struct vg_event *ev, int *n, bool *healthy, bool *unknown,
                       char *reason, size_t rlen)
{
    struct periodic *p = &a->per;
    if (p->gpu_only) {
        struct vg_gpu_probe_result r;
        vg_gpu_probe_collect(&s->p, NULL, &r);
        if (r.error[0] && !r.hung) vg_debug("agent: GPU probe: %s", r.error);
        vg_gpu_probe_events(&r, a->node, ev, n, MAXEV);
        /* An uncorrectable count is a fault when it rises: one that stays is
         * the same fault, already sent (the node stays unhealthy for it). */
        for (int i = 0; i < r.n; i++) {
            const struct vg_gpu_state *st = &r.gpus[i];
            if (ue_rose(p, st) || !st->v || !st->v->kinds.ecc_ue) continue;
            for (int k = 0; k < *n; k++)
                if (!strcmp(ev[k].kind, st->v->kinds.ecc_ue) && !strcmp(ev[k].pci, st->pci)) {
                    if (vg_catalog_action(a->cat, ev[k].kind, ev[k].code) >= a->o->drain_at && *healthy) {
                        *healthy = false;
                        snprintf(reason, rlen, "vigil: %s%s%s", ev[k].kind, ev[k].pci[0] ? " on " : "", ev[k].pci);
                    }
                    ev[k] = ev[--*n];
                    k--;
                }
        }
        char dom[64];
        bool conflict;
        vg_gpu_fabric_domain(r.gpus, r.n, dom, &conflict);
        if (!r.hung) learn_domain(a, dom);
        vg_gpu_probe_free(&r);
        return;
    }
    bool done = false;
    char *save = NULL;
    for (char *line = s->p.out.s ? strtok_r(s->p.out.s, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
        json_t *j = json_loads(line, 0, NULL);
        struct vg_check_result r;
        if (j && json_is_true(json_object_get(j, "done"))) done = true;
        else if (j && json_is_string(json_object_get(j, "fabric_domain")))
            learn_domain(a, vg_json_str(j, "fabric_domain", ""));
        else if (j && vg_check_result_from_json(j, &r) == 0) {
            if (r.starved) *unknown = true;   /* no verdict: neither drain nor resume on it */
            else if (!r.ok && *healthy) {
                *healthy = false;
                snprintf(reason, rlen, "vigil: %.80s: %.150s", r.name, r.detail);
            }
            for (int i = 0; i < r.nev && *n < MAXEV; i++) ev[(*n)++] = r.ev[i];
            free(r.ev);
        }
        json_decref(j);
    }
    if (!done && *n < MAXEV && !s->p.starved) {
        hung_event(a, &ev[(*n)++]);
        *healthy = false;
        snprintf(reason, rlen, "vigil: periodic checks hung");
    }
}

/* The NIC probe's answer: a hang is nic-hung; the ports read are judged
 * against their last reading, and what could not be judged is said. */
static void finish_nic(struct agent *a, struct per_slot *s, struct vg_event *ev, int *n)
{
    struct vg_nic_probe_result r;
    vg_nic_probe_collect(&s->p, &r);
    vg_nic_probe_events(&r, a->node, ev, n, MAXEV);
    if (r.hung) vg_warn("agent: NIC probe: %s", ev[*n - 1].raw);
    else if (r.starved) vg_info("agent: the NIC probe was starved of CPU at step %s: not a hang", r.step);
    else if (r.verbs_rc < 0) vg_warn("agent: NIC probe: the RDMA stack: %s", r.verbs_error);
    if (r.ports_read) {
        struct sbuf notes = SBUF_INIT;
        vg_nic_rates_judge(a->per.rates, r.ports, r.nports, s->p.start_ms + s->p.elapsed_ms, a->node, ev, n, MAXEV,
                           &notes);
        char *save = NULL;
        for (char *l = notes.s ? strtok_r(notes.s, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save))
            vg_info("agent: NIC counters: %s", l);
        sbuf_free(&notes);
    }
    vg_nic_probe_free(&r);
}

static void finish(struct agent *a, struct per_slot *s)
{
    struct vg_event ev[MAXEV];
    int n = 0;
    bool healthy = true, unknown = s->p.starved, nic = s == &a->per.nic;
    char reason[256] = "";
    if (nic) finish_nic(a, s, ev, &n);
    else finish_chk(a, s, ev, &n, &healthy, &unknown, reason, sizeof reason);
    vg_probe_free(&s->p);
    s->running = false;
    for (int i = 0; i < n; i++) {
        vg_strlcpy(ev[i].node, a->node, sizeof ev[i].node);
        if (!ev[i].seen_ms) ev[i].seen_ms = vg_now_ms();
        agent_signal(a, &ev[i]);
        if (ev[i].action >= a->o->drain_at && healthy) {
            healthy = false;
            snprintf(reason, sizeof reason, "vigil: %s%s%s", ev[i].kind, ev[i].pci[0] ? " on " : "", ev[i].pci);
        }
    }
    /* The NIC probe says nothing of a healthy node (the checks do); a starved
     * check proved nothing either way. */
    if ((nic && healthy) || (healthy && unknown)) return;
    sa_checks(a, healthy, reason);
}

void per_ready(struct agent *a, struct per_slot *s)
{
    char buf[4096];
    for (;;) {
        ssize_t got = read(s->p.fd, buf, sizeof buf);
        if (got > 0) {
            sbuf_add(&s->p.out, buf, (size_t)got);
            continue;
        }
        if (got < 0 && errno == EINTR) continue;
        if (got < 0 && errno == EAGAIN) return;
        break;
    }
    vg_probe_wait(&s->p, 1, vg_mono_ms() + 1000);   /* end of file: marks it done and reaps it */
    finish(a, s);
}

static void slot_deadline(struct agent *a, struct per_slot *s, const char *what)
{
    if (!s->running || vg_mono_ms() < s->deadline) return;
    if (s->grace < VG_PROBE_GRACE && vg_probe_starved(&s->p)) {   /* waiting for a CPU is not hanging */
        s->grace++;
        s->deadline += deadline_ms(a, s);
        vg_info("agent: the %s is starved of CPU; its deadline extended (%d of %d)", what, s->grace, VG_PROBE_GRACE);
        return;
    }
    vg_probe_wait(&s->p, 1, 0);   /* reads what it wrote, kills it if it still runs, looks whether it was starved */
    if (s->p.timed_out)
        vg_warn("agent: the %s did not answer within %d ms%s", what, deadline_ms(a, s) * (1 + s->grace),
                s->p.starved ? ", starved of CPU (not counted as a hang)" : "");
    finish(a, s);
}

void per_deadline(struct agent *a)
{
    slot_deadline(a, &a->per.chk, "periodic check");
    slot_deadline(a, &a->per.nic, "NIC probe");
}

int64_t per_next_deadline(const struct agent *a)
{
    const struct periodic *p = &a->per;
    int64_t d = p->chk.running ? p->chk.deadline : -1;
    if (p->nic.running && (d < 0 || p->nic.deadline < d)) d = p->nic.deadline;
    return d;
}

void per_close(struct agent *a)
{
    struct periodic *p = &a->per;
    struct per_slot *slots[2] = { &p->chk, &p->nic };
    for (int i = 0; i < 2; i++) {
        if (slots[i]->running) vg_probe_free(&slots[i]->p);
        slots[i]->running = false;
    }
    if (p->tfd >= 0) close(p->tfd);
    if (p->nic_tfd >= 0) close(p->nic_tfd);
    if (p->have_conf) vg_checkconf_free(&p->conf);
    vg_nic_rates_free(p->rates);
    vg_probe_reap();
}
