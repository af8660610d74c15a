/* controller_int.h — what the controller's files share (controller.c: start
 * and stop; controller_act.c: acting, the election, the calls up from the
 * intake and HTTP; controller_metrics.c: its /metrics lines). */
#ifndef VG_CONTROLLER_INT_H
#define VG_CONTROLLER_INT_H
#include "controller/controller.h"
#include "controller/httpapi.h"
#include "controller/policy.h"
#include "util/sbuf.h"

struct vg_controller {
    struct vg_controller_opts o;
    struct vg_policy policy;
    struct vg_catalog *cat;
    const char **kinds;           /* the catalog's kinds, each once (the intake's vocabulary) */
    size_t nkinds;
    bool file_store;              /* SQLite: one controller, locked; else PostgreSQL, elected */
    struct vg_storeguard *guard;
    /* four connections: the executor's, the intake's (group commit), the
     * nodes' reports' and the reads' */
    struct vg_store *store, *wstore, *astore, *reader;
    struct vg_orch *orch;         /* the executor's */
    struct vg_orch *view_orch;    /* the dashboard's (a short timeout) */
    struct vg_orch *hb_orch;      /* the heartbeat monitor's probes */
    struct vg_domains *domains;   /* the NVLink domains the nodes report with their beats */
    struct vg_nodeset *nodes;     /* the nodes the scheduler lists */
    struct vg_nodereports *reports;
    struct vg_fleetview *view;
    struct vg_ingest ingest;
    struct vg_http_opts hopts;
    struct vg_http *http;
    char url[300];
    struct vg_heartbeat_opts hbo;
    /* what acts (atomics: the HTTP threads read them) */
    struct vg_executor *exec;
    struct vg_heartbeats *hb;
    struct vg_election *election; /* several controllers on one PostgreSQL store; NULL: one */
    bool lost;                    /* it lost the lease */
};

/* controller.c: a handle of its own on the scheduler, with conf; NULL with err. */
struct vg_orch *vg_controller_orch(const struct vg_controller *c, const struct vg_orch_conf *conf, char *err,
                                   size_t errlen);
/* controller_act.c: the executor and the heartbeat monitor start; at once on
 * SQLite, from on_lead when elected. */
void vg_controller_act(struct vg_controller *c);
/* The election's callbacks (ctx: the controller). */
void vg_controller_on_lead(void *ctx, int64_t term);
void vg_controller_on_lost(void *ctx, int64_t term, const char *why);
/* The HTTP server's and the intake's calls up (ctx: the controller). */
int vg_controller_on_beat(void *ctx, const char *node, const char *jobs, const char *domain, char *err, size_t errlen);
void vg_controller_on_incident(void *ctx, int64_t incident, const struct vg_event *e);
void vg_controller_health(void *ctx, struct sbuf *out);
/* controller_metrics.c: the lines /metrics adds after the HTTP server's own. */
void vg_controller_metrics(void *ctx, struct sbuf *out);

#endif
