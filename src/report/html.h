/* html.h — a small writer for self-contained HTML reports: escaping, the page
 * shell with inline CSS, and inline SVG charts (horizontal bars, a badge, a
 * timeline of stages).  No external asset, no script.  Used by the scorecard
 * and the drill report. */
#ifndef VG_HTML_H
#define VG_HTML_H
#include "util/sbuf.h"
#include <stddef.h>

/* Appends s with & < > " ' escaped (NULL appends nothing). */
void vg_html_escape(struct sbuf *b, const char *s);
/* The page shell: doctype, title, base CSS plus extra_css (may be NULL).
 * Text from input must go through vg_html_escape. */
void vg_html_begin(struct sbuf *b, const char *title, const char *extra_css);
void vg_html_end(struct sbuf *b);

struct vg_svg_bar {
    const char *label;
    double value;          /* 0..1; < 0 draws a hatched "not measured" bar */
    const char *note;      /* text at the bar's end, e.g. "72 / 100" */
};
/* One row per bar, width pixels wide. */
void vg_svg_bars(struct sbuf *b, const struct vg_svg_bar *bars, size_t n, int width);
/* A rounded badge with text on a fill colour ("#c9a227"). */
void vg_svg_badge(struct sbuf *b, const char *text, const char *fill);

struct vg_svg_mark {
    const char *label;
    double t;              /* seconds from the start; < 0: never happened */
    double lo, hi;         /* optional spread (e.g. median..max); hi <= lo: none */
};
/* A time axis from 0 to the largest mark (or limit, when larger and > 0, e.g.
 * a target line), one labelled marker per stage. */
void vg_svg_timeline(struct sbuf *b, const struct vg_svg_mark *m, size_t n, int width, double limit,
                     const char *limit_label);

#endif
