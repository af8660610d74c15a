/* check_ib.c — the `ib` check: an InfiniBand/RoCE port's state, physical
 * state, rate and link layer, from sysfs (sysfs_ib.c).
 *   gpu[01-16] || ib port=mlx5_0:1 state=ACTIVE rate=400 */
#include "signal/checks.h"
#include "signal/sysfs.h"
#include "util/strutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const ib_keys[] = {
    "port=*", "state=*", "phys_state=*", "rate=int", "link_layer=*", "link_downed=int", NULL,
};

static void ib_run(const struct vg_check_ctx *ctx, const struct vg_check_line *l, struct vg_check_results *out)
{
    struct vg_ib_port *ports;
    size_t n = vg_ib_ports(ctx->root, &ports);
    const char *spec = vg_check_get(l, "port"), *v;
    const struct vg_ib_port *p = vg_ib_find(ports, n, spec);
    char name[96];
    snprintf(name, sizeof name, "ib %s", spec);
    if (!p) {
        vg_check_add(out, l, false, name, "port %s not found under /sys/class/infiniband", spec);
        free(ports);
        return;
    }
    struct vg_event ev[4];
    int nev = 0;
    const char *state = vg_check_get(l, "state");
    if (state) {
        bool ok = strcasecmp(p->state_name, state) == 0;
        if (!ok) vg_ib_port_events(p, 0, ctx->node, ev, &nev, 4);
        snprintf(name, sizeof name, "ib %s state", spec);
        struct vg_check_result *r =
            vg_check_add(out, l, ok, name, "%s (%s), expected %s", p->state_name[0] ? p->state_name : "unreadable",
                         p->phys_name, state);
        for (int k = 0; k < nev; k++) vg_check_add_event(r, &ev[k]);
    }
    if ((v = vg_check_get(l, "phys_state"))) {
        snprintf(name, sizeof name, "ib %s phys_state", spec);
        vg_check_add(out, l, strcasecmp(p->phys_name, v) == 0, name, "%s, expected %s",
                     p->phys_name[0] ? p->phys_name : "unreadable", v);
    }
    if ((v = vg_check_get(l, "rate"))) {
        double want = atof(v);
        bool ok = p->rate_gbps >= want;
        nev = 0;
        /* A port that is down is reported by the state check. */
        if (!ok && p->state == 4) vg_ib_port_events(p, want, ctx->node, ev, &nev, 4);
        snprintf(name, sizeof name, "ib %s rate", spec);
        struct vg_check_result *r =
            vg_check_add(out, l, ok, name, "%s, expected %s Gb/sec", p->rate[0] ? p->rate : "unreadable", v);
        for (int k = 0; k < nev; k++) vg_check_add_event(r, &ev[k]);
    }
    if ((v = vg_check_get(l, "link_layer"))) {
        snprintf(name, sizeof name, "ib %s link_layer", spec);
        vg_check_add(out, l, strcasecmp(p->link_layer, v) == 0, name, "%s, expected %s", p->link_layer, v);
    }
    if ((v = vg_check_get(l, "link_downed"))) {
        snprintf(name, sizeof name, "ib %s link_downed", spec);
        vg_check_add(out, l, p->link_downed >= 0 && p->link_downed <= atol(v), name, "link_downed=%lld, at most %s",
                     p->link_downed, v);
    }
    if (!state && !vg_check_get(l, "rate") && !vg_check_get(l, "phys_state") && !vg_check_get(l, "link_layer") &&
        !vg_check_get(l, "link_downed")) {
        /* "ib port=X" alone: the port must be up. */
        bool ok = p->state == 4;
        nev = 0;
        if (!ok) vg_ib_port_events(p, 0, ctx->node, ev, &nev, 4);
        struct vg_check_result *r = vg_check_add(out, l, ok, name, "%s (%s)", p->state_name, p->phys_name);
        for (int k = 0; k < nev; k++) vg_check_add_event(r, &ev[k]);
    }
    free(ports);
}

static void ib_init(const struct vg_check_ctx *ctx, struct sbuf *out)
{
    struct vg_ib_port *p;
    size_t n = vg_ib_ports(ctx->root, &p);
    for (size_t i = 0; i < n; i++)
        if (p[i].state == 4)
            sbuf_printf(out, "* || ib port=%s:%d state=ACTIVE rate=%.0f\n", p[i].dev, p[i].port, p[i].rate_gbps);
    free(p);
}

/* Every InfiniBand port found must be ACTIVE (Ethernet/RoCE ports are often
 * unused, so they need a config line). */
static void ib_defaults(const struct vg_check_ctx *ctx, struct sbuf *out)
{
    struct vg_ib_port *p;
    size_t n = vg_ib_ports(ctx->root, &p);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(p[i].link_layer, "InfiniBand")) sbuf_printf(out, "* || ib port=%s:%d\n", p[i].dev, p[i].port);
    free(p);
}

const struct vg_check vg_check_ib = {
    .name = "ib", .keys = ib_keys, .required = "port", .run = ib_run, .init = ib_init, .defaults = ib_defaults,
};
