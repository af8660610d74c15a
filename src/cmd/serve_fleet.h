/* serve_fleet.h — GET /v1/audit (serve_fleet.c): the nodes' latest audit
 * reports merged (report/: the command gives the controller this, which
 * sits below the reports), with the nodes the scheduler lists that did not
 * report, and the reports gone stale. */
#ifndef VG_SERVE_FLEET_H
#define VG_SERVE_FLEET_H
#include "controller/nodeset.h"
#include "controller/store.h"
#include <jansson.h>
#include <stdint.h>

#define VG_AUDIT_STALE_DEFAULT_S (2 * 86400)   /* twice the agent's daily report */

/* The controller's fleet callback (controller.h; ctx: a long, the seconds
 * after which a report is stale; nodes: the scheduler's, NULL when never
 * read): NULL when the store cannot be read. */
json_t *vg_serve_fleet(void *ctx, struct vg_store *reader, struct vg_nodeset *nodes);

#endif
