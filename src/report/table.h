/* table.h — a plain-text table for terminal output: columns sized to their
 * widest cell, an optional title line.  Cells are copied, and printed
 * escaped (escape.h): a terminal table shows control characters, a
 * Markdown one markup, as text. */
#ifndef VG_TABLE_H
#define VG_TABLE_H
#include <stdio.h>

struct vg_table;

/* headers: ncols column titles. */
struct vg_table *vg_table_new(int ncols, const char *const *headers);
/* Adds a row of ncols cells (NULL prints as "-"). */
void vg_table_row(struct vg_table *t, const char *const *cells);
/* Same, from a printf-style list: the format has one "%s"-compatible value per
 * column separated by '\t', e.g. vg_table_rowf(t, "%s\t%d\t%s", a, n, b). */
void vg_table_rowf(struct vg_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int vg_table_rows(const struct vg_table *t);
void vg_table_print(const struct vg_table *t, FILE *f);
/* Markdown (GitHub pipe table). */
void vg_table_print_markdown(const struct vg_table *t, FILE *f);
void vg_table_free(struct vg_table *t);

#endif
