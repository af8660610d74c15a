/* standalone.c — the agent with no controller: like `vigil check --drain`,
 * it drains its own node through the orchestrator (DRAIN only, reason
 * "vigil: …") when a verdict reaches --drain-at, and resumes it only by
 * vigil check's rules (orch/healthcheck.h): the periodic checks pass again,
 * the drain is vigil's, and no kernel-log or GPU event at or above the
 * threshold was seen since the agent started. */
#include "agent/agent_int.h"
#include "orch/healthcheck.h"
#include "util/log.h"
#include "util/strutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ORCH_TIMEOUT_MS 5000

int sa_init(struct agent *a, char *err, size_t errlen)
{
    if (a->o->controller || !a->o->drain) return 0;
    struct vg_orch_conf c = { .config = a->o->orch_config, .timeout_ms = ORCH_TIMEOUT_MS,
                              .insecure_http = a->o->insecure_http };
    a->orch = vg_orch_open(a->o->orchestrator, &c, err, errlen);
    return a->orch ? 0 : -1;
}

static void apply(struct agent *a, bool healthy, const char *reason)
{
    int r = vg_hc_apply(a->orch, a->node, healthy, reason);
    if (r < 0) {
        vg_err("agent: %s: %s", a->orch->ops->name, a->orch->err);
        return;
    }
    if (r == VG_HC_DRAIN) {
        vg_info("agent: drained %s: %s", a->node, reason);
        vg_strlcpy(a->drained_reason, reason, sizeof a->drained_reason);
        a->maybe_ours = true;
    } else if (r == VG_HC_RESUME) {
        vg_info("agent: resumed %s (checks pass again)", a->node);
        a->drained_reason[0] = 0;
        a->maybe_ours = false;
    } else if (r == VG_HC_FOREIGN) {
        vg_info("agent: %s is drained or down by someone else; left alone", a->node);
        a->maybe_ours = false;
    } else if (healthy)
        a->maybe_ours = false;
}

void sa_event(struct agent *a, const struct vg_event *e)
{
    if (e->action < a->o->drain_at) return;
    a->unhealthy = true;
    if (!a->orch) return;
    a->sticky = true;
    char reason[256];
    if (e->code >= 0)
        snprintf(reason, sizeof reason, VG_REASON_PREFIX " %s %d%s%s (%s)", e->kind, e->code, e->pci[0] ? " on " : "",
                 e->pci, vg_action_name(e->action));
    else
        snprintf(reason, sizeof reason, VG_REASON_PREFIX " %s%s%s (%s)", e->kind, e->pci[0] ? " on " : "", e->pci,
                 vg_action_name(e->action));
    if (a->drained_reason[0]) return;   /* already drained by this agent: one request per drain */
    apply(a, false, reason);
}

void sa_checks(struct agent *a, bool healthy, const char *reason)
{
    if (!a->orch) return;
    if (!healthy) {
        if (!a->drained_reason[0]) apply(a, false, reason);
        return;
    }
    /* Resume only a drain that may be vigil's, and never after a kernel-log
     * or GPU fault (those do not heal by themselves). */
    if (a->sticky || !a->maybe_ours) return;
    apply(a, true, "");
}
