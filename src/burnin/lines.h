/* lines.h — the line reader the burn-in parsers share: copies the next line
 * of a buffer (without its newline or a trailing CR) into a bounded buffer. */
#ifndef VG_BURNIN_LINES_H
#define VG_BURNIN_LINES_H
#include <stdbool.h>
#include <stddef.h>

struct vg_lines {
    const char *p, *end;
};
/* false at the end of the text; a longer line is cut to n-1 bytes. */
bool vg_lines_next(struct vg_lines *it, char *buf, size_t n);
/* Strips the prefixes launchers put before each line: srun's "0: ", Open
 * MPI's "[1,0]<stdout>:", and leading blanks.  Returns the rest. */
char *vg_lines_unprefix(char *line);

#endif
