/* heartbeat.h — crash detection by heartbeat.  A node that crashes, freezes,
 * loses power or wedges its NIC writes no kernel-log line, and its agent dies
 * with it: the only sign is silence.  Agents beat every interval (POST
 * /v1/heartbeat, nothing stored, nothing fsync'd); a node silent for more
 * than `missed` beats is suspect, and the orchestrator confirms it (its node
 * daemon refuses or does not answer, orch.h node_alive) before anything is
 * done: then `confirmed` is called once (the controller opens an incident of
 * kind node-silent, which goes through the policy like an XID: DOWN +
 * requeue).  A node whose daemon still answers only lost its agent: logged,
 * not isolated.  Many nodes falling silent at once is more likely the
 * controller's own network: nothing is isolated and an alert is raised. */
#ifndef VG_HEARTBEAT_H
#define VG_HEARTBEAT_H
#include "orch/orch.h"
#include "util/sbuf.h"
#include <stdint.h>

struct vg_heartbeat_opts {
    int interval_ms;          /* agents beat this often; default 1000 */
    int missed;               /* suspect after this many missed beats; default 2 */
    int probe_timeout_ms;     /* the orchestrator's liveness probe; default 500 */
    int max_silent_percent;   /* more of the beating nodes silent at once: hold; default 10 */
};

struct vg_heartbeats;

/* orch is the monitor's own (it probes from its thread).  confirmed(ctx,
 * node, jobs, why) runs on the monitor's thread; jobs: as the node's last
 * beat listed them ("" unknown). */
struct vg_heartbeats *vg_heartbeats_start(const struct vg_heartbeat_opts *o, struct vg_orch *orch,
                                          void (*confirmed)(void *ctx, const char *node, const char *jobs,
                                                            const char *why),
                                          void *ctx);
/* A beat from node (any thread), with the jobs running there ("" none or unknown). */
void vg_heartbeat_beat(struct vg_heartbeats *h, const char *node, const char *jobs);
/* The nodes that have beaten since the controller started (silent ones
 * too): *out a malloc'd array of malloc'd names; returns the count. */
size_t vg_heartbeats_nodes(struct vg_heartbeats *h, char ***out);
/* Prometheus lines: nodes beating, silent, confirmed; holds. */
void vg_heartbeats_metrics(struct vg_heartbeats *h, struct sbuf *out);
void vg_heartbeats_stop(struct vg_heartbeats *h);

#endif
