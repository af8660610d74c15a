/* heartbeat.h — crash detection by heartbeat.  A node that crashes, freezes,
 * loses power or wedges its NIC writes no kernel-log line, and its agent dies
 * with it: the only sign is silence.  Agents beat every interval (POST
 * /v1/heartbeat, nothing stored, nothing fsync'd); a node silent for more
 * than `missed` beats is suspect, and the orchestrator confirms it (its node
 * daemon refuses or does not answer, orch.h node_alive) before anything is
 * done: then `confirmed` is called once (the controller opens an incident of
 * kind node-silent, which goes through the policy like an XID: DOWN +
 * requeue).  A node whose daemon still answers only lost its agent: logged,
 * not isolated.  A probe that cannot tell is tried again 1 s, 2 s, 4 s … up
 * to a minute later, never every tick.
 *
 * Only nodes the scheduler lists are tracked (nodeset.h): a beat for any
 * other name is refused and never enters the table, and the table is pruned
 * to the scheduler's list whenever that list changes.
 *
 * Many nodes falling silent at once is more likely the controller's own
 * network: those nodes are held, nothing is isolated and an alert is raised.
 * A held node is decided again at every tick from the counts of that tick —
 * when some of the silent nodes beat again, or the cluster's size changes,
 * and the silence is no longer "many", each node still silent is probed and
 * confirmed as usual — and while the hold lasts the alert is repeated every
 * 30 s (the scheduler's list is read again meanwhile, nodeset.h). */
#ifndef VG_HEARTBEAT_H
#define VG_HEARTBEAT_H
#include "controller/nodeset.h"
#include "orch/orch.h"
#include "util/sbuf.h"
#include <stdbool.h>
#include <stdint.h>

struct vg_heartbeat_opts {
    int interval_ms;          /* agents beat this often; default 1000 */
    int missed;               /* suspect after this many missed beats; default 2 */
    int probe_timeout_ms;     /* the orchestrator's liveness probe; default 500 */
    int max_silent_percent;   /* more of the tracked nodes silent at once: hold; default 10 */
    struct vg_nodeset *nodes;      /* the scheduler's nodes: the only ones tracked (required) */
    /* For tests: the monotonic clock (NULL: vg_mono_ms), and no monitor
     * thread (vg_heartbeats_tick drives the monitor). */
    int64_t (*clock)(void);
    bool no_thread;
    /* A controller taking over from another (its agents beat to the old
     * leader): every node the scheduler lists is tracked from the start as
     * if it had just beaten, so one that died during the takeover, and will
     * never beat here, is found like any silent node. */
    bool track_all;
};

struct vg_heartbeats;

/* orch is the monitor's own (it probes from its thread).  confirmed(ctx,
 * node, jobs, why) runs on the monitor's thread; jobs: as the node's last
 * beat listed them ("" unknown). */
struct vg_heartbeats *vg_heartbeats_start(const struct vg_heartbeat_opts *o, struct vg_orch *orch,
                                          void (*confirmed)(void *ctx, const char *node, const char *jobs,
                                                            const char *why),
                                          void *ctx);
/* A beat from node (any thread), with the jobs running there ("" none or
 * unknown).  0: noted; 403: the scheduler does not list node; 503: the
 * scheduler's list has never been read (retry).  err says why. */
int vg_heartbeat_beat(struct vg_heartbeats *h, const char *node, const char *jobs, char *err, size_t errlen);
/* One pass of the monitor (its thread calls it every 100 ms). */
void vg_heartbeats_tick(struct vg_heartbeats *h);
/* Nodes in the table now, and of those held. */
size_t vg_heartbeats_tracked(struct vg_heartbeats *h, size_t *held);
/* Prometheus lines: nodes beating, silent, held; beats, refused beats,
 * probes, confirmed, agent-only, holds. */
void vg_heartbeats_metrics(struct vg_heartbeats *h, struct sbuf *out);
void vg_heartbeats_stop(struct vg_heartbeats *h);

#endif
