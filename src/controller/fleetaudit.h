/* fleetaudit.h — GET /v1/audit (fleetaudit.c): the nodes'
 * latest audit reports merged, with the nodes the scheduler lists that did
 * not report, and the reports gone stale. */
#ifndef VG_FLEETAUDIT_H
#define VG_FLEETAUDIT_H
#include "controller/nodeset.h"
#include "controller/store.h"
#include <jansson.h>
#include <stdint.h>

#define VG_AUDIT_STALE_DEFAULT_S (2 * 86400)   /* twice the agent's daily report */

struct vg_fleetaudit {
    int64_t stale_after_ms;                /* a report older than this is stale */
    struct vg_nodeset *nodes;              /* the scheduler's nodes (NULL: none) */
};

/* The httpapi.h fleet callback (ctx: the struct vg_fleetaudit): NULL when
 * the store cannot be read. */
json_t *vg_fleetaudit(void *ctx, struct vg_store *reader);

#endif
