/* replay.h — token mode's replay protection, per node: a request's nonce is
 * "INSTANCE-COUNTER", INSTANCE 16 hex characters a client process draws at
 * random when it starts and COUNTER its requests numbered from 1.  For each
 * node the controller keeps the instances seen within the last 10 minutes
 * (a request's X-Vigil-Time is within 5 of the controller's clock, so an
 * older one can no longer be replayed) — at most VG_REPLAY_INSTANCES — and
 * for each its highest counter and which of the 64 below it were used.
 * Nothing is global: a node fills only its own window, the memory is bounded
 * by the nodes the scheduler lists (the caller checks that first), and a
 * node's requests in order cost nothing however many arrive. */
#ifndef VG_REPLAY_H
#define VG_REPLAY_H
#include <stddef.h>
#include <stdint.h>

#define VG_REPLAY_INSTANCES 16   /* client processes per node within the window */
#define VG_REPLAY_SPAN 64        /* counters below the highest still accepted once */
#define VG_REPLAY_KEEP_MS (10 * 60 * 1000)

struct vg_replay;

struct vg_replay *vg_replay_new(void);
void vg_replay_free(struct vg_replay *r);
/* Parses a nonce: 0 and *instance, *counter, or -1 when it is not INSTANCE-COUNTER. */
int vg_replay_parse(const char *nonce, uint64_t *instance, uint64_t *counter);
/* Takes node's request (instance, counter) at now_ms: 0 when it was never
 * used, -1 with the reason in err (replayed, too old for the window, or the
 * node has VG_REPLAY_INSTANCES instances within the window already).  Not
 * thread-safe. */
int vg_replay_use(struct vg_replay *r, const char *node, uint64_t instance, uint64_t counter, int64_t now_ms,
                  char *err, size_t errlen);
/* Nodes with a window. */
size_t vg_replay_nodes(const struct vg_replay *r);

#endif
