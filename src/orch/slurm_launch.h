/* slurm_launch.h — the launcher of a Slurm job that keeps spares inside its
 * own allocation (slurm_launch.c; `vigil launch`, docs/drill.md), and its
 * pure node choice (the unit test drives it). */
#ifndef VG_SLURM_LAUNCH_H
#define VG_SLURM_LAUNCH_H
#include "orch/slurm.h"
#include <stdbool.h>
#include <stddef.h>

#define VG_LAUNCH_BAD_INPUT (-2)   /* not in a job, or a bad allocation: err says why */
#define VG_LAUNCH_FAILED 1         /* could not start, requeue, or gave up */

/* Runs prog (NULL-terminated argv) as srun steps of this job on all but
 * `spares` of its nodes, `tasks` per node, until it succeeds; see
 * slurm_launch.c.  Returns the program's exit status (0 done), 128+SIG when
 * stopped by SIG, VG_LAUNCH_FAILED, or VG_LAUNCH_BAD_INPUT with err. */
int vg_slurm_launch(long spares, long tasks, char **prog, char *err, size_t errlen);

/* names: the allocation's nodes (n); states: what Slurm says of them (ns; a
 * node it does not list counts as down).  Fills out[] with up to `want` names
 * (borrowed from names) and returns how many are up in all (may be fewer
 * than want). */
size_t vg_launch_pick(char *const *names, size_t n, const struct vg_node_state *states, size_t ns, size_t want,
                      const char **out);
/* Whether a node in names[0..n) is down, drained or not responding now. */
bool vg_launch_any_out(char *const *names, size_t n, const struct vg_node_state *states, size_t ns);

#endif
