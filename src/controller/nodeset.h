/* nodeset.h — "is this node known to the scheduler, and may this request
 * name it?", for everything the controller takes from nodes (the intake, the
 * heartbeat monitor, audit reports and burn-in passes, the fleet audit's
 * coverage): a copy of the orchestrator's node list, names and the
 * addresses the scheduler reaches them at, read by a thread of its own every
 * refresh interval and again soon after a name it does not hold is asked
 * about.  A miss reads the list again at most once per miss interval: the
 * lookup whose miss starts that read waits for it (a node just added to the
 * scheduler is heard at its first message), every other lookup answers from
 * the list held, so a flood of unknown names costs the scheduler one read
 * per interval and holds at most one request per interval, for the length
 * of that read.  Until the first read succeeds
 * the set is "unread" and says so (-1): the caller refuses for now (503,
 * retry), it never guesses.  A read that fails later keeps the last list.
 * Addresses: IPv4 literals as given, host names resolved when the list is
 * read (and again only when the scheduler's address changes). */
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

/* Starts the reader on orch (which it then owns and closes); refresh_ms,
 * miss_ms 0: the defaults above. */
struct vg_nodeset *vg_nodeset_start(struct vg_orch *orch, int refresh_ms, int miss_ms);
void vg_nodeset_stop(struct vg_nodeset *ns);
/* 1: the scheduler lists node; 0: it does not; -1: its list was never read. */
int vg_nodeset_known(struct vg_nodeset *ns, const char *node);
/* 1: addr4 (an IPv4 address, network byte order) is one of node's
 * addresses; 0: it is not, or node is not listed; -1: never read. */
int vg_nodeset_has_addr(struct vg_nodeset *ns, const char *node, uint32_t addr4);
/* The one decision of whether a request may name node (in its field, named
 * in err): sender is the node its credential speaks for (NULL or "": a
 * credential that names none, auth none, which may name any node the
 * scheduler lists; ns NULL: no scheduler, any node name).  0, or the
 * refusal's HTTP status with err saying why:
 * 400 not a node name; 403 not the sender's node, or not a node the
 * scheduler lists; 503 the scheduler's list never read (retry). */
int vg_nodeset_may_name(struct vg_nodeset *ns, const char *field, const char *node, const char *sender, char *err,
                        size_t errlen);
/* The names the scheduler lists, sorted (*names: malloc'd array of malloc'd
 * strings; free with vg_nodeset_names_free); *generation (may be NULL)
 * changes whenever the names do.  -1 when never read. */
long vg_nodeset_names(struct vg_nodeset *ns, char ***names, uint64_t *generation);
void vg_nodeset_names_free(char **names, long n);
/* How many nodes the list holds (0 before the first read). */
size_t vg_nodeset_count(struct vg_nodeset *ns);
/* The names' generation alone (cheap: no copy). */
uint64_t vg_nodeset_generation(struct vg_nodeset *ns);
/* Waits up to timeout_ms for the first successful read: true when done. */
bool vg_nodeset_wait(struct vg_nodeset *ns, int timeout_ms);
/* Reads the list now, whatever its age, and waits up to timeout_ms for that
 * read to end: true when it ended (successful or not). */
bool vg_nodeset_refresh(struct vg_nodeset *ns, int timeout_ms);
/* The last read's error ("" when it succeeded). */
void vg_nodeset_error(struct vg_nodeset *ns, char *buf, size_t n);
/* Prometheus lines: nodes listed, reads, failed reads. */
void vg_nodeset_metrics(struct vg_nodeset *ns, struct sbuf *out);

#endif
