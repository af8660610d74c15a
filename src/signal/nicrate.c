/* nicrate.c — port counters over time; see nicrate.h.  The thresholds are
 * those of NVIDIA's NVSentinel NIC health monitor (docs/nic-health-monitor/
 * link-counter-detection.md: symbol_error above 10/s, derived from the IBTA
 * bit error rate of 10^-12; link_error_recovery above 5/min; port_rcv_errors
 * above 10/s; port_xmit_discards above 100/s; any excessive buffer overrun);
 * a RoCE interface's rx_errors and tx_errors take port_rcv_errors' rate.
 * A flap is one link_downed, or two carrier changes (down and up). */
#include "signal/nicrate.h"
#include "util/strutil.h"
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum how { FLAPS, RATE };

static const struct counter {
    const char *name;
    size_t off;               /* its field in struct vg_ib_port */
    const char *layer;        /* the ports it is read on ("InfiniBand", "Ethernet"), NULL: all */
    enum how how;
    double limit, per_s;      /* RATE: more than limit per per_s seconds; FLAPS: changes per flap */
    const char *unit;
} counters[] = {
#define F(f) #f, offsetof(struct vg_ib_port, f)
    { F(link_downed), "InfiniBand", FLAPS, 1, 0, "" },
    { F(carrier_changes), "Ethernet", FLAPS, 2, 0, "" },
    { F(symbol_error), NULL, RATE, 10, 1, "/s" },
    { F(link_error_recovery), NULL, RATE, 5, 60, "/min" },
    { F(port_rcv_errors), NULL, RATE, 10, 1, "/s" },
    { F(port_xmit_discards), NULL, RATE, 100, 1, "/s" },
    { F(excessive_buffer_overrun_errors), NULL, RATE, 0, 1, "/s" },
    { F(rx_errors), "Ethernet", RATE, 10, 1, "/s" },
    { F(tx_errors), "Ethernet", RATE, 10, 1, "/s" },
#undef F
};
#define NCOUNTERS (sizeof counters / sizeof counters[0])

struct seen {
    bool used, present;       /* present: in the last reading */
    char dev[32];
    int port;
    int64_t at;
    long long v[NCOUNTERS];   /* the baseline, or VG_SYSFS_MISSING / VG_SYSFS_GARBAGE */
};

struct vg_nic_rates {
    struct seen s[VG_NIC_PORTS_MAX];
};

struct vg_nic_rates *vg_nic_rates_new(void) { return vg_xcalloc(1, sizeof(struct vg_nic_rates)); }

void vg_nic_rates_free(struct vg_nic_rates *r) { free(r); }

static long long value(const struct vg_ib_port *p, size_t c)
{
    return *(const long long *)((const char *)p + counters[c].off);
}

static struct seen *find(struct vg_nic_rates *r, const char *dev, int port, bool add)
{
    struct seen *free_s = NULL;
    for (int i = 0; i < VG_NIC_PORTS_MAX; i++) {
        struct seen *s = &r->s[i];
        if (s->used && s->port == port && !strcmp(s->dev, dev)) return s;
        if (!s->used && !free_s) free_s = s;
    }
    if (!add || !free_s) return NULL;
    memset(free_s, 0, sizeof *free_s);
    free_s->used = true;
    vg_strlcpy(free_s->dev, dev, sizeof free_s->dev);
    free_s->port = port;
    for (size_t c = 0; c < NCOUNTERS; c++) free_s->v[c] = VG_SYSFS_MISSING;
    return free_s;
}

/* "mlx5_0 port 1 (0000:1a:00.0, beside GPU 0 0000:18:00.0)" */
static void where(const struct vg_ib_port *p, char *buf, size_t n)
{
    int len = snprintf(buf, n, "%s port %d (%s", p->dev, p->port, p->pci[0] ? p->pci : "no PCI address");
    if (p->gpu >= 0 && len > 0 && (size_t)len < n) snprintf(buf + len, n - (size_t)len, ", beside GPU %d %s)", p->gpu,
                                                            p->gpu_pci);
    else if (len > 0 && (size_t)len < n) snprintf(buf + len, n - (size_t)len, ")");
}

static struct vg_event *event(const struct vg_ib_port *p, const char *node, const char *kind, struct vg_event *ev,
                              int *nev, int max)
{
    struct vg_event *e = vg_event_append(ev, nev, max, node, "sysfs", kind, p->pci);
    if (e) {
        e->code = p->port;
        e->gpu = p->gpu;
    }
    return e;
}

/* One port's reading against its baseline. */
static void judge_port(struct seen *s, const struct vg_ib_port *p, int64_t at, const char *node, struct vg_event *ev,
                       int *nev, int max, struct sbuf *notes)
{
    char at_port[128], errs[320] = "";
    where(p, at_port, sizeof at_port);
    double dt = (double)(at - s->at) / 1000.0;
    long long flaps = 0;
    char flap_from[96] = "";
    for (size_t c = 0; c < NCOUNTERS; c++) {
        long long now = value(p, c), before = s->v[c];
        s->v[c] = now;
        if (counters[c].layer && strcmp(counters[c].layer, p->link_layer)) continue;
        if (now == VG_SYSFS_GARBAGE) {
            if (before != VG_SYSFS_GARBAGE)
                sbuf_printf(notes, "%s: %s holds no number: not judged until it does\n", at_port, counters[c].name);
            continue;
        }
        if (now == VG_SYSFS_MISSING) {
            if (before >= 0) sbuf_printf(notes, "%s: %s disappeared: not judged\n", at_port, counters[c].name);
            continue;
        }
        if (before < 0 || dt <= 0) continue;   /* a baseline only */
        if (now < before) {
            sbuf_printf(notes, "%s: %s went back from %lld to %lld (its counters were reset: a driver reload?): "
                               "the new baseline, nothing judged\n", at_port, counters[c].name, before, now);
            continue;
        }
        long long d = now - before;
        if (!d) continue;
        if (counters[c].how == FLAPS) {
            flaps += (d + (long long)counters[c].limit - 1) / (long long)counters[c].limit;
            snprintf(flap_from, sizeof flap_from, "%s %lld -> %lld", counters[c].name, before, now);
            continue;
        }
        double rate = (double)d / dt * counters[c].per_s;
        if (rate > counters[c].limit) {
            size_t l = strlen(errs);
            snprintf(errs + l, sizeof errs - l, "%s%s +%lld in %.1f s = %.1f%s (above %g%s)", l ? ", " : "",
                     counters[c].name, d, dt, rate, counters[c].unit, counters[c].limit, counters[c].unit);
        }
    }
    s->at = at;
    struct vg_event *e;
    if (flaps && (e = event(p, node, "link-flap", ev, nev, max))) {
        e->count = (int)(flaps > 1000 ? 1000 : flaps);
        snprintf(e->raw, sizeof e->raw, "%s: link went down and came back %lld time%s in %.1f s (%s)", at_port, flaps,
                 flaps == 1 ? "" : "s", dt, flap_from);
    }
    if (errs[0] && (e = event(p, node, "ib-errors", ev, nev, max)))
        snprintf(e->raw, sizeof e->raw, "%s: %s", at_port, errs);
}

void vg_nic_rates_judge(struct vg_nic_rates *r, const struct vg_ib_port *ports, size_t n, int64_t at_ms,
                        const char *node, struct vg_event *ev, int *nev, int max, struct sbuf *notes)
{
    for (int i = 0; i < VG_NIC_PORTS_MAX; i++) r->s[i].present = false;
    for (size_t i = 0; i < n; i++) {
        struct seen *s = find(r, ports[i].dev, ports[i].port, false);
        if (!s) {   /* a new port: its first reading is the baseline */
            if (!(s = find(r, ports[i].dev, ports[i].port, true))) continue;
            for (size_t c = 0; c < NCOUNTERS; c++) s->v[c] = value(&ports[i], c);
            s->at = at_ms;
        } else
            judge_port(s, &ports[i], at_ms, node, ev, nev, max, notes);
        s->present = true;
    }
    for (int i = 0; i < VG_NIC_PORTS_MAX; i++) {
        struct seen *s = &r->s[i];
        if (s->used && !s->present) {
            sbuf_printf(notes, "%s port %d is gone from /sys/class/infiniband: its counters are forgotten\n", s->dev,
                        s->port);
            s->used = false;
        }
    }
}
