/* serve_fleet.h — GET /v1/audit for `vigil serve` (serve_fleet.c): the nodes'
 * latest audit reports merged, with the nodes the scheduler lists that did
 * not report, and the reports gone stale. */
#ifndef VG_SERVE_FLEET_H
#define VG_SERVE_FLEET_H
#include "controller/nodeset.h"
#include "controller/store.h"
#include <jansson.h>
#include <stdint.h>

#define VG_AUDIT_STALE_DEFAULT_S (2 * 86400)   /* twice the agent's daily report */

struct vg_serve_fleet {
    int64_t stale_after_ms;                /* a report older than this is stale */
    struct vg_nodeset *nodes;              /* the scheduler's nodes (NULL: none) */
};

/* The httpapi.h fleet callback (ctx: the struct vg_serve_fleet): NULL when
 * the store cannot be read. */
json_t *vg_serve_fleet(void *ctx, struct vg_store *reader);

#endif
