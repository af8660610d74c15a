/* healthcheck.c — drain/resume decisions of `vigil check --slurm`; see
 * healthcheck.h.  All Slurm calls go through slurm.h. */
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

enum vg_hc_action vg_hc_decide(bool healthy, const struct vg_node_state *st, const char *reason)
{
    bool ours = vg_startswith(st->reason, VG_REASON_PREFIX);
    bool held = st->drain || (st->down && st->reason[0]);
    if (held && st->reason[0] && !ours) return VG_HC_FOREIGN;
    if (healthy) return held && ours ? VG_HC_RESUME : VG_HC_NONE;
    if (st->drain && ours && strcmp(st->reason, reason) == 0) return VG_HC_NONE;
    /* A node DOWN because vigil downed it stays down; drain anything else. */
    if (st->down && ours) return VG_HC_NONE;
    return VG_HC_DRAIN;
}

int vg_hc_apply(struct vg_slurm *s, const char *node, bool healthy, const char *reason)
{
    struct vg_node_state *st;
    size_t n;
    if (vg_slurm_nodes(s, node, &st, &n) < 0) return -1;
    struct vg_node_state me;
    bool found = false;
    for (size_t i = 0; i < n; i++)
        if (strcmp(st[i].name, node) == 0) {
            me = st[i];
            found = true;
        }
    free(st);
    if (!found) {
        snprintf(s->err, sizeof s->err, "node %s is not known to Slurm", node);
        return -1;
    }
    enum vg_hc_action a = vg_hc_decide(healthy, &me, reason);
    const char *const nodes[] = { node };
    if (a == VG_HC_DRAIN && vg_slurm_set_state(s, nodes, 1, "drain", reason) < 0) return -1;
    if (a == VG_HC_RESUME && vg_slurm_set_state(s, nodes, 1, "resume", NULL) < 0) return -1;
    return (int)a;
}
