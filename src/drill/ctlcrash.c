/* ctlcrash.c — the drill's faults beyond a node's own, one line each in
 * drill_faults[] (for now controller-crash), and what controller-crash does
 * in a lab of several controllers: SIGKILL the one that leads a moment before
 * the node's fault, then watch the others' /healthz until one says it leads
 * (the takeover); after the run it is started again on its own port. */
#include "drill/drill.h"
#include "lab/lab.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include "wire/leader.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

/* A follower's /healthz is asked at each poll: a short wait each. */
#define TAKEOVER_HEALTH_MS 500

static const struct vg_drill_fault drill_faults[] = {
    { "controller-crash", VG_INJ_XID, 79, true },
};

const struct vg_drill_fault *vg_drill_fault_find(const char *name)
{
    for (size_t i = 0; i < sizeof drill_faults / sizeof drill_faults[0]; i++)
        if (!strcmp(drill_faults[i].name, name)) return &drill_faults[i];
    return NULL;
}

int vg_drill_crash_leader(const char *lab, struct vg_ctl_crash *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->term = -1;
    struct vg_lab_ctl lc[VG_LAB_CTL_MAX];
    size_t n = vg_lab_controllers(lab, lc, VG_LAB_CTL_MAX);
    if (n < 2) return snprintf(err, errlen, "controller-crash: the lab in %.300s runs %zu controller(s)", lab, n), -1;
    for (size_t i = 0; i < n; i++) {
        struct vg_ctl_health h;
        if (!lc[i].alive || vg_ctl_health(lc[i].url, 2000, &h) || strcmp(h.role, "leader")) continue;
        c->killed_term = h.term;
        if (kill(lc[i].pid, SIGKILL)) return snprintf(err, errlen, "controller-crash: kill %d: %s", (int)lc[i].pid,
                                                      strerror(errno)), -1;
        c->killed_at = vg_now_ms();
        c->pid = lc[i].pid;
        vg_strlcpy(c->killed, lc[i].url, sizeof c->killed);
        return 0;
    }
    return snprintf(err, errlen, "controller-crash: none of the lab's %zu controllers says it leads", n), -1;
}

bool vg_drill_takeover(const char *lab, struct vg_ctl_crash *c)
{
    if (c->took_at) return true;
    struct vg_lab_ctl lc[VG_LAB_CTL_MAX];
    size_t n = vg_lab_controllers(lab, lc, VG_LAB_CTL_MAX);
    for (size_t i = 0; i < n; i++) {
        struct vg_ctl_health h;
        if (!strcmp(lc[i].url, c->killed) || vg_ctl_health(lc[i].url, TAKEOVER_HEALTH_MS, &h) ||
            strcmp(h.role, "leader"))
            continue;
        c->took_at = vg_now_ms();
        c->term = h.term;
        vg_strlcpy(c->leader, lc[i].url, sizeof c->leader);
        return true;
    }
    return false;
}

int vg_drill_crash_restart(const char *lab, const struct vg_ctl_crash *c, char *err, size_t errlen)
{
    struct vg_lab_ctl lc[VG_LAB_CTL_MAX];
    size_t n = vg_lab_controllers(lab, lc, VG_LAB_CTL_MAX);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(lc[i].url, c->killed)) return vg_lab_serve_start(lab, (int)i + 1, err, errlen);
    return snprintf(err, errlen, "%s is not one of the lab's controllers", c->killed), -1;
}

int vg_drill_live_controllers(const char *lab)
{
    struct vg_lab_ctl lc[VG_LAB_CTL_MAX];
    size_t n = vg_lab_controllers(lab, lc, VG_LAB_CTL_MAX);
    int live = 0;
    for (size_t i = 0; i < n; i++) live += lc[i].alive;
    return live;
}
