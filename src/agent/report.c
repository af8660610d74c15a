/* report.c — the agent's share of the fleet audit: at start and then every
 * --audit-every seconds, it audits its own node (`vigil audit --json`, this
 * binary, run with argv and a timeout) and POSTs the report to the
 * controller's /v1/inventory, authenticated like a message.  The controller
 * keeps the latest per node and merges them (GET /v1/audit, `vigil audit
 * fleet`): version skew and findings across the cluster, with no srun or ssh. */
#include "agent/agent_int.h"
#include "util/log.h"
#include "util/spawn.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define AUDIT_TIMEOUT_MS 120000
#define POST_TIMEOUT_MS 10000

int report_wait_ms(const struct agent *a)
{
    if (!a->o->controller || a->o->audit_every_ms <= 0 || !a->auth_ok) return -1;
    int64_t left = a->next_audit - vg_mono_ms();
    return left > 0 ? (int)left : 0;
}

void report_due(struct agent *a)
{
    if (report_wait_ms(a) != 0) return;
    a->next_audit = vg_mono_ms() + a->o->audit_every_ms;
    char self[1024];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return;
    self[n] = 0;
    const char *argv[] = { self, "audit", "--json", "--fail-on", "none", NULL };
    struct vg_spawn_result r;
    vg_spawn(argv, NULL, NULL, AUDIT_TIMEOUT_MS, &r);
    json_t *rep = r.status == 0 && !r.timed_out ? json_loads(r.out, 0, NULL) : NULL;
    if (!rep) {
        vg_warn("agent: audit of this node failed (%s); the fleet view misses it until the next try",
                r.timed_out ? "timed out" : *vg_trim(r.err) ? vg_trim(r.err) : "no report");
        vg_spawn_result_free(&r);
        return;
    }
    vg_spawn_result_free(&r);
    json_t *msg = json_pack("{s:s, s:o}", "node", a->node, "report", rep);
    char *body = json_dumps(msg, JSON_COMPACT);
    json_decref(msg);
    struct ctl_result p = { .url = "the controller", .err = "the report cannot be encoded" };
    int rc = body ? ctl_post(a, "/v1/inventory", body, POST_TIMEOUT_MS, &p) : -1;
    if (rc || p.status != 200) {
        vg_warn("agent: audit report to %s: %s", p.url, rc ? p.err : p.resp ? p.resp : "refused");
        a->next_audit = vg_mono_ms() + 60000;   /* sooner than a day: the controller may be back */
    } else
        vg_info("agent: audit report sent (%zu bytes)", strlen(body));
    free(p.resp);
    free(body);
}
