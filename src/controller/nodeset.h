/* nodeset.h — "is this node known to the scheduler?", for everything the
 * controller takes from nodes (the intake, the heartbeat monitor): a copy of
 * the orchestrator's node list, names and the addresses the scheduler
 * reaches them at, read by a thread of its own every refresh interval and
 * again soon after a name it does not hold is asked about (at most once per
 * VG_NODESET_MISS_MS), so a node added to the scheduler is known within
 * seconds while a flood of unknown names costs the scheduler one read every
 * few seconds.  Lookups never wait for the scheduler.  Until the first read
 * succeeds the set is "unread" and says so (-1): the caller refuses for now
 * (503, retry), it never guesses.  A read that fails later keeps the last
 * list.  Addresses: IPv4 literals as given, host names resolved when the
 * list is read (and again only when the scheduler's address changes). */
#ifndef VG_NODESET_H
#define VG_NODESET_H
#include "orch/orch.h"
#include "util/sbuf.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VG_NODESET_REFRESH_MS 30000 /* the list is read again this often */
#define VG_NODESET_MISS_MS 2000     /* an unknown name asked about: read again, at most this often */

struct vg_nodeset;

/* Starts the reader on orch (which it then owns and closes); refresh_ms 0:
 * VG_NODESET_REFRESH_MS. */
struct vg_nodeset *vg_nodeset_start(struct vg_orch *orch, int refresh_ms);
void vg_nodeset_stop(struct vg_nodeset *ns);
/* 1: the scheduler lists node; 0: it does not; -1: its list was never read. */
int vg_nodeset_known(struct vg_nodeset *ns, const char *node);
/* 1: addr4 (an IPv4 address, network byte order) is one of node's
 * addresses; 0: it is not, or node is not listed; -1: never read. */
int vg_nodeset_has_addr(struct vg_nodeset *ns, const char *node, uint32_t addr4);
/* The names the scheduler lists (*names: malloc'd array of malloc'd strings;
 * free with vg_nodeset_names_free); -1 when never read. */
long vg_nodeset_names(struct vg_nodeset *ns, char ***names);
void vg_nodeset_names_free(char **names, long n);
/* Waits up to timeout_ms for the first successful read: true when done. */
bool vg_nodeset_wait(struct vg_nodeset *ns, int timeout_ms);
/* The last read's error ("" when it succeeded). */
void vg_nodeset_error(struct vg_nodeset *ns, char *buf, size_t n);
/* Prometheus lines: nodes listed, reads, failed reads. */
void vg_nodeset_metrics(struct vg_nodeset *ns, struct sbuf *out);

#endif
