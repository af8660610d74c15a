/* hostlist.h — Slurm-style host lists: "n[1-4,7],gpu[01-03],login1" expanded
 * to names (zero padding kept), and compressed back. */
#ifndef VG_HOSTLIST_H
#define VG_HOSTLIST_H
#include <stddef.h>

/* Expands expr into a malloc'd array of malloc'd names.  Returns the count,
 * or -1 when expr is malformed (unbalanced brackets, bad range, more than
 * max names). */
int vg_hostlist_expand(const char *expr, char ***names, size_t max);
/* Joins names with commas (Slurm accepts that anywhere a node list goes). */
char *vg_hostlist_join(const char *const *names, size_t n);

#endif
