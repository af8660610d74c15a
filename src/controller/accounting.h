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

struct vg_acct_opts {
    int64_t since_ms, until_ms;      /* the window (ms since the epoch) */
    size_t nodes;                    /* the cluster's size; 0: the nodes the incidents name */
    const struct vg_policy *policy;  /* its domains and domain_max_unavailable; NULL: none */
    bool until_now;                  /* until_ms is this machine's clock now: when the store holds a later
                                      * stamp, the clock is behind (stepped back) and the time-based
                                      * figures cannot be known */
};

/* incidents: the store's JSON (vg_store_incidents).  Returns {window, nodes,
 * incidents, interruptions, availability, mttr_s, mtbi_s, node_hours_lost,
 * causes [{cause, count}], racks [{rack, nodes, availability, sla_down_s}],
 * per_node [{node, incidents, hours_lost}], repairs [{step, tried, failed,
 * returned}] (the repair ladder's rungs), rma_handoffs}; a figure that cannot be known
 * (no repair finished: mttr_s) is null.  With until_now and a clock behind
 * the store's newest stamp: clock_behind_s, and availability (of the
 * cluster and of each rack) and mtbi_s null — never 1 for a window that
 * ends before the outages it holds began. */
json_t *vg_accounting(const json_t *incidents, const struct vg_acct_opts *o);

#endif
