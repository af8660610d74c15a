/* accounting.h — reliability accounting from the incident store, over a
 * window: availability, MTTR (fault → back in service), MTBI (node-time
 * between interruptions), node-hours lost, incidents by cause, and per rack /
 * NVLink domain its availability and the time it spent with more nodes out
 * than the domain rule allows (the rack SLA: for an NVL72 rack, down once 3
 * of its 18 trays are out).  A node is out from its `isolated` step to its
 * `returned` step (or the end of the window); overlapping outages of one
 * node count once. */
#ifndef VG_ACCOUNTING_H
#define VG_ACCOUNTING_H
#include "controller/policy.h"
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Availability and MTBI are rates over node-time: below this much history
 * they are not stated ("not enough history"), never a number. */
#define VG_ACCT_MIN_HISTORY_MS (3600LL * 1000)

struct vg_acct_opts {
    int64_t since_ms, until_ms;      /* the window asked for (ms since the epoch) */
    int64_t first_ms;                /* the controller's first record: nothing was watched before it,
                                      * so the window starts there at the earliest; 0 unknown */
    size_t nodes;                    /* the cluster's size (the scheduler's node list, or given); 0 unknown */
    const struct vg_policy *policy;  /* its domains and domain_max_unavailable; NULL: none */
};

/* incidents: the store's JSON (vg_store_incidents).  Returns {window {since,
 * until, s, requested_since, history_since}, nodes (null unknown), incidents,
 * interruptions, availability, mttr_s, mtbi_s, node_hours_lost, causes
 * [{cause, count}], racks [{rack, nodes, availability, sla_down_s}], per_node
 * [{node, incidents, hours_lost}], repairs [{step, tried, failed, returned}]
 * (the repair ladder's rungs), rma_handoffs, unmeasured {FIGURE: why}}; a
 * figure that cannot be known is null and `unmeasured` says why: no repair
 * finished (mttr_s), no interruption (mtbi_s), the fleet size unknown
 * (availability, mtbi_s), less than VG_ACCT_MIN_HISTORY_MS of history in
 * the window ("not enough history": availability, mtbi_s, racks'). */
json_t *vg_accounting(const json_t *incidents, const struct vg_acct_opts *o);

#endif
