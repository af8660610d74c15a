/* healthcheck.h — what `vigil check --drain` (and the agent alone) does to its
 * node through the orchestrator: drain it with
 * a "vigil: …" reason when checks fail, resume it when they pass again and
 * vigil was the one that drained it, and never touch a node someone else
 * drained or downed. */
#ifndef VG_HEALTHCHECK_H
#define VG_HEALTHCHECK_H
#include "orch/orch.h"
#include <stdbool.h>

enum vg_hc_action {
    VG_HC_NONE,          /* nothing to do */
    VG_HC_DRAIN,         /* drain (or update vigil's own reason) */
    VG_HC_RESUME,        /* vigil's drain, checks pass again */
    VG_HC_FOREIGN,       /* drained/down by someone else: left alone */
};

const char *vg_hc_action_name(enum vg_hc_action a);
/* The decision for a node in state st, given the checks' verdict and the
 * reason vigil would write. */
enum vg_hc_action vg_hc_decide(bool healthy, const struct vg_orch_node *st, const char *reason);
/* Queries the node, decides and acts (one query, at most one update).
 * Returns the action taken, or -1 (o->err says why). */
int vg_hc_apply(struct vg_orch *o, const char *node, bool healthy, const char *reason);

#endif
