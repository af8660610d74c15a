/* controller.h — the cluster controller as one object: the store (its
 * connections and, on SQLite, its lock and watch), the nodes the scheduler
 * lists, the intake (catalog verdicts, group commit), the HTTP API, the
 * cluster view, the nodes' reports, and what acts — the executor and the
 * heartbeat monitor — started at once on SQLite, or on PostgreSQL when this
 * controller is elected among those sharing the store.  Started and stopped
 * in order; `vigil serve` is its options, its signals and its log lines.
 * Two controllers on one SQLite file: the second is refused (storeguard.h). */
#ifndef VG_CONTROLLER_H
#define VG_CONTROLLER_H
#include "controller/heartbeat.h"
#include "controller/ingest.h"
#include "controller/nodeset.h"
#include "orch/orch.h"
#include "wire/auth.h"
#include <stdbool.h>
#include <stddef.h>

struct vg_controller_opts {
    const char *listen;               /* "ADDR:PORT" (PORT 0: a free one) */
    const char *db;                   /* a SQLite file, or a postgresql:// URI or libpq conninfo (store.h) */
    bool new_store;                   /* a corrupt SQLite store is moved aside and a new one begun */
    struct vg_auth *auth;             /* the agents' credentials (the caller's, kept until the stop) */
    const char *read_token;           /* NULL: reads are open only under auth none */
    const char *tls_cert, *tls_key;   /* PEM text (the caller's until the stop); NULL: plain HTTP */
    const char *policy_file;          /* the executor's policy (policy.h); NULL: the defaults */
    const char *catalog_file;         /* the fault catalog; NULL: the bundled one */
    const char *fault_policy;         /* the site's verdicts over it; NULL: the default file when present */
    const char *orchestrator;         /* the scheduler's backend by name (orch.h); NULL: the default */
    const struct vg_orch_ops *orch_ops; /* tests: the backend itself (then orchestrator is unused) */
    struct vg_orch_conf orch_conf;
    struct vg_heartbeat_opts heartbeat; /* interval_ms 0: no monitor; its nodes are the controller's */
    long window_s;                    /* identical events fold into one incident within this */
    /* GET /v1/audit: the nodes' reports merged, given the scheduler's nodes
     * (NULL when never read); NULL: no fleet audit */
    json_t *(*fleet)(void *ctx, struct vg_store *reader, struct vg_nodeset *nodes);
    void *fleet_ctx;
    long alarm_mb;                    /* the store's size alarm (nodereport.h); 0: none */
    const char *advertise;            /* shared store: this controller's URL as the others name it; NULL: its own */
    bool act;                         /* false: a dry run, decisions recorded, nothing done */
    unsigned max_connections;         /* 0: 1024; within the descriptor limit, raised to its hard limit */
    unsigned max_per_client;          /* 0: 32 */
    /* shared store: this controller lost its lease (from the election's
     * thread); it must stop, as a leader that lost its lease may not act on
     * (vg_controller_stop then says so).  NULL: nothing is called */
    void (*on_lost)(void *ctx);
    void *ctx;
};

struct vg_controller;

/* Starts everything in order; NULL with err one line naming what failed
 * (the flag, the file). */
struct vg_controller *vg_controller_start(const struct vg_controller_opts *o, char *err, size_t errlen);
unsigned vg_controller_port(const struct vg_controller *c);
/* http(s)://HOST:PORT, the host name when it listens on every address. */
const char *vg_controller_url(const struct vg_controller *c);
/* The scheduler backend's name (slurm, k8s). */
const char *vg_controller_orchestrator(const struct vg_controller *c);
/* Its intake, for the controller's own events (vg_intake_event). */
struct vg_ingest *vg_controller_intake(struct vg_controller *c);
/* Stops everything in order (every acknowledged message committed first) and
 * frees c.  True when it had lost its lease. */
bool vg_controller_stop(struct vg_controller *c);

#endif
