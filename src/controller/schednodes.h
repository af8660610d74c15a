/* schednodes.h — the nodes the scheduler knows, as the controller's intake
 * and heartbeat monitor ask it: "is this a node of the cluster?".  A node a
 * message, a heartbeat or a report names is believed only when the
 * scheduler lists it, so a forged name (a ghost node, 100,000 new names)
 * never enters a table, a store or a command line.
 *
 * The list is read through an orchestrator handle of its own (orch.h
 * nodes), kept sorted, and read again when it is older than max_age_ms, or
 * when a name is missing from it and the last read is older than
 * miss_gap_ms (a node just added to the cluster is taken within seconds,
 * while a flood of unknown names costs at most one read per miss_gap_ms).
 * One read at a time: the others use the last list meanwhile.  When a read
 * fails the last list stands; before the first read succeeds nothing is
 * known. */
#ifndef VG_SCHEDNODES_H
#define VG_SCHEDNODES_H
#include "orch/orch.h"
#include "util/sbuf.h"
#include <stddef.h>
#include <stdint.h>

#define VG_SCHEDNODES_MAX_AGE_MS 30000
#define VG_SCHEDNODES_MISS_GAP_MS 5000

struct vg_schednodes;

/* orch: its own handle (closed by vg_schednodes_free); 0: the defaults above. */
struct vg_schednodes *vg_schednodes_new(struct vg_orch *orch, int max_age_ms, int miss_gap_ms);
void vg_schednodes_free(struct vg_schednodes *s);
/* 1: the scheduler lists node; 0: it does not; -1: its list has never been
 * read (err, when given, says why). */
int vg_schednodes_has(struct vg_schednodes *s, const char *node, char *err, size_t errlen);
/* Reads the list again when it is older than max_age_ms (or never read).
 * 0 when a list is held, -1 (err, when given, says why) before the first
 * read succeeds. */
int vg_schednodes_poll(struct vg_schednodes *s, char *err, size_t errlen);
/* The names, sorted (*out a malloc'd array of malloc'd names; vg_strv_free);
 * *generation (may be NULL) changes whenever the list's content does.
 * Returns the count (0 before the first read). */
size_t vg_schednodes_list(struct vg_schednodes *s, char ***out, uint64_t *generation);
/* How many nodes the list holds (0 before the first read). */
size_t vg_schednodes_count(struct vg_schednodes *s);
/* The generation alone (cheap: no copy). */
uint64_t vg_schednodes_generation(struct vg_schednodes *s);
/* Prometheus lines: nodes listed, reads, failed reads. */
void vg_schednodes_metrics(struct vg_schednodes *s, struct sbuf *out);

#endif
