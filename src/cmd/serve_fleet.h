/* serve_fleet.h — GET /v1/audit for `vigil serve` (serve_fleet.c): the nodes'
 * latest audit reports merged, with the nodes the controller knows that did
 * not report, and the reports gone stale. */
#ifndef VG_SERVE_FLEET_H
#define VG_SERVE_FLEET_H
#include "controller/heartbeat.h"
#include "orch/orch.h"
#include <jansson.h>
#include <pthread.h>
#include <stdint.h>

#define VG_AUDIT_STALE_DEFAULT_S (2 * 86400)   /* twice the agent's daily report */

struct vg_serve_fleet {
    int64_t stale_after_ms;              /* a report older than this is stale */
    struct vg_heartbeats *const *hb;     /* the monitor, read atomically (NULL: none) */
    const char *orchestrator;            /* the scheduler whose node list is read */
    struct vg_orch_conf oc;
    /* private */
    pthread_mutex_t lock;
    struct vg_orch *orch;                /* opened on first use, its own */
    bool orch_failed;
    char **sched;                        /* the scheduler's node names, cached */
    size_t nsched;
    int64_t sched_at;                    /* vg_mono_ms() of the last read (or failure) */
};

void vg_serve_fleet_init(struct vg_serve_fleet *sf);
void vg_serve_fleet_free(struct vg_serve_fleet *sf);
/* The httpapi.h fleet callback (ctx: the struct vg_serve_fleet). */
json_t *vg_serve_fleet(void *ctx, json_t *reports);

#endif
