/* healthcheck.c — drain/resume decisions of `vigil check --slurm`; see
 * healthcheck.h.  All scheduler calls go through orch.h. */
#include "orch/healthcheck.h"
#include "util/strutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *vg_hc_action_name(enum vg_hc_action a)
{
    switch (a) {
    case VG_HC_DRAIN: return "drain";
    case VG_HC_RESUME: return "resume";
    case VG_HC_FOREIGN: return "left-alone";
    default: return "none";
    }
}

enum vg_hc_action vg_hc_decide(bool healthy, const struct vg_orch_node *st, const char *reason)
{
    bool ours = vg_orch_ours(st);
    bool held = st->drain || (st->down && st->reason[0]);
    if (held && st->reason[0] && !ours) return VG_HC_FOREIGN;
    if (healthy) return held && ours ? VG_HC_RESUME : VG_HC_NONE;
    if (st->drain && ours && strcmp(st->reason, reason) == 0) return VG_HC_NONE;
    /* A node DOWN because vigil downed it stays down; drain anything else. */
    if (st->down && ours) return VG_HC_NONE;
    return VG_HC_DRAIN;
}

int vg_hc_apply(struct vg_orch *o, const char *node, bool healthy, const char *reason)
{
    struct vg_orch_node me;
    if (vg_orch_node(o, node, &me)) return -1;
    enum vg_hc_action a = vg_hc_decide(healthy, &me, reason);
    const char *const nodes[] = { node };
    if (a == VG_HC_DRAIN && o->ops->isolate(o, nodes, 1, VG_ISOLATE_DRAIN, reason) < 0) return -1;
    if (a == VG_HC_RESUME && o->ops->resume(o, nodes, 1) < 0) return -1;
    return (int)a;
}
