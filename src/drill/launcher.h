/* launcher.h — which nodes of its own allocation `vigil launch` runs a step
 * on: the first `want` that are up, in allocation order (pure: the unit test
 * drives it; the command is src/cmd/launch.c). */
#ifndef VG_LAUNCHER_H
#define VG_LAUNCHER_H
#include "orch/slurm.h"
#include <stddef.h>

/* names: the allocation's nodes (n); states: what Slurm says of them (ns;
 * a node it does not list counts as down).  Fills out[] with up to `want`
 * names (borrowed from names) and returns how many are up in all (may be
 * fewer than want). */
size_t vg_launch_pick(char *const *names, size_t n, const struct vg_node_state *states, size_t ns, size_t want,
                      const char **out);
/* Whether a node in names[0..n) is down, drained or not responding now. */
bool vg_launch_any_out(char *const *names, size_t n, const struct vg_node_state *states, size_t ns);

#endif
