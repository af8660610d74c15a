/* serve_fleet.c — the controller's fleet audit (GET /v1/audit): the reports
 * the agents sent (POST /v1/inventory), merged as `vigil audit merge` does,
 * with when each node reported; a report older than --audit-stale is stale,
 * and a node the scheduler lists that never sent an audit is "not
 * reporting" (the scheduler's list is the same the intake believes:
 * nodeset.h).  A scheduler that was never read leaves no coverage.  The
 * reports are read and merged one at a time: the memory is the merge's
 * (bounded: report/audit_report.h), never every report at once. */
#include "cmd/serve_fleet.h"
#include "report/audit_report.h"
#include "controller/store.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdlib.h>
#include <string.h>

/* One stored report into the merge (a report that does not read back is left out). */
static int add_one(void *ctx, const char *node, int64_t at, const char *text)
{
    struct vg_fleet *fl = ctx;
    char err[256];
    json_t *rep = json_loads(text, 0, NULL);
    if (rep && vg_fleet_add_json(fl, rep, node, err, sizeof err) == 0) vg_fleet_reported(fl, node, at);
    json_decref(rep);
    return 0;
}

json_t *vg_serve_fleet(void *ctx, struct vg_store *reader, struct vg_nodeset *nodes)
{
    const long *stale_after_s = ctx;
    struct vg_fleet *fl = vg_fleet_new();
    if (vg_store_audits_each(reader, NULL, 0, add_one, fl)) {
        vg_fleet_free(fl);
        return NULL;
    }
    char **known = NULL;
    long nknown = nodes ? vg_nodeset_names(nodes, &known, NULL) : -1;
    vg_fleet_coverage(fl, (const char *const *)known, nknown > 0 ? (size_t)nknown : 0, vg_now_ms(),
                      (int64_t)*stale_after_s * 1000);
    vg_nodeset_names_free(known, nknown);
    json_t *doc = vg_fleet_json(fl);
    vg_fleet_free(fl);
    return doc;
}
