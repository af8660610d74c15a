/* table.c — column-aligned terminal tables and Markdown tables; see table.h. */
#include "report/table.h"
#include "report/escape.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct vg_table {
    int ncols, nrows, cap;
    char **cells; /* (nrows + 1) * ncols, row 0 = headers */
};

static void add_row(struct vg_table *t, const char *const *cells)
{
    if (t->nrows + 1 >= t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->cells = vg_xrealloc(t->cells, sizeof(char *) * (size_t)t->cap * (size_t)t->ncols);
    }
    char **row = t->cells + (size_t)(t->nrows + 1) * (size_t)t->ncols;
    for (int c = 0; c < t->ncols; c++) row[c] = vg_xstrdup(cells[c] ? cells[c] : "-");
    t->nrows++;
}

struct vg_table *vg_table_new(int ncols, const char *const *headers)
{
    struct vg_table *t = vg_xcalloc(1, sizeof *t);
    t->ncols = ncols;
    t->nrows = -1; /* the header row is row 0 */
    add_row(t, headers);
    return t;
}

void vg_table_row(struct vg_table *t, const char *const *cells) { add_row(t, cells); }

void vg_table_rowf(struct vg_table *t, const char *fmt, ...)
{
    struct sbuf b = SBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0) s = NULL;
    va_end(ap);
    if (s) sbuf_puts(&b, s);
    free(s);
    char *line = sbuf_take(&b);
    const char **cells = vg_xcalloc((size_t)t->ncols, sizeof *cells);
    char *p = line;
    for (int c = 0; c < t->ncols; c++) {
        cells[c] = p;
        char *tab = p ? strchr(p, '\t') : NULL;
        if (tab) { *tab = 0; p = tab + 1; }
        else p = NULL;
    }
    add_row(t, cells);
    free(cells);
    free(line);
}

int vg_table_rows(const struct vg_table *t) { return t->nrows; }

/* Every cell as a terminal may show it (escape.h): what a node or a file
 * wrote never reaches the terminal as a control sequence. */
void vg_table_print(const struct vg_table *t, FILE *f)
{
    size_t n = (size_t)(t->nrows + 1) * (size_t)t->ncols;
    char **shown = vg_xcalloc(n, sizeof *shown);
    size_t *w = vg_xcalloc((size_t)t->ncols, sizeof *w);
    for (size_t i = 0; i < n; i++) {
        struct sbuf b = SBUF_INIT;
        vg_term_escape(&b, t->cells[i]);
        shown[i] = b.s ? sbuf_take(&b) : vg_xstrdup("");
        size_t l = strlen(shown[i]);
        if (l > w[i % (size_t)t->ncols]) w[i % (size_t)t->ncols] = l;
    }
    for (int r = 0; r <= t->nrows; r++) {
        for (int c = 0; c < t->ncols; c++) {
            const char *cell = shown[(size_t)r * (size_t)t->ncols + (size_t)c];
            if (c == t->ncols - 1) fputs(cell, f);
            else fprintf(f, "%-*s  ", (int)w[c], cell);
        }
        fputc('\n', f);
    }
    for (size_t i = 0; i < n; i++) free(shown[i]);
    free(shown);
    free(w);
}

void vg_table_print_markdown(const struct vg_table *t, FILE *f)
{
    for (int r = 0; r <= t->nrows; r++) {
        fputc('|', f);
        for (int c = 0; c < t->ncols; c++) {
            fputc(' ', f);
            vg_put_text(f, t->cells[(size_t)r * (size_t)t->ncols + (size_t)c], true);
            fputs(" |", f);
        }
        fputc('\n', f);
        if (r == 0) {
            fputc('|', f);
            for (int c = 0; c < t->ncols; c++) fputs(" --- |", f);
            fputc('\n', f);
        }
    }
}

void vg_table_free(struct vg_table *t)
{
    if (!t) return;
    for (size_t i = 0; i < (size_t)(t->nrows + 1) * (size_t)t->ncols; i++) free(t->cells[i]);
    free(t->cells);
    free(t);
}
