/* serve_fleet.c — the controller's fleet audit (GET /v1/audit): the reports
 * the agents sent (POST /v1/inventory), merged as `vigil audit merge` does,
 * with when each node reported; a report older than --audit-stale is stale,
 * and a node the scheduler lists that never sent an audit is "not
 * reporting" (the scheduler's list is the same the intake believes:
 * schednodes.h).  A scheduler that was never read leaves no coverage. */
#include "cmd/serve_fleet.h"
#include "orch/orch.h"
#include "report/audit_report.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdlib.h>
#include <string.h>

json_t *vg_serve_fleet(void *ctx, json_t *reports)
{
    struct vg_serve_fleet *sf = ctx;
    struct vg_fleet *fl = vg_fleet_new();
    size_t i;
    json_t *r;
    char err[256];
    json_array_foreach(reports, i, r) {
        const char *node = vg_json_str(r, "node", "?");
        int64_t at = 0;
        if (vg_fleet_add_json(fl, json_object_get(r, "report"), node, err, sizeof err) == 0) {
            vg_parse_time(vg_json_str(r, "at", ""), &at);
            vg_fleet_reported(fl, node, at);
        }
    }
    json_decref(reports);
    char **known = NULL;
    size_t nknown = sf->known ? vg_schednodes_list(sf->known, &known, NULL) : 0;
    vg_fleet_coverage(fl, (const char *const *)known, nknown, vg_now_ms(), sf->stale_after_ms);
    vg_strv_free(known, nknown);
    json_t *doc = vg_fleet_json(fl);
    vg_fleet_free(fl);
    return doc;
}
