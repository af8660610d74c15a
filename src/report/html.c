/* html.c — self-contained HTML and inline SVG: escaping, the page shell,
 * bars, a badge and a stage timeline (see html.h). */
#include "report/html.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

void vg_html_escape(struct sbuf *b, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': sbuf_puts(b, "&amp;"); break;
        case '<': sbuf_puts(b, "&lt;"); break;
        case '>': sbuf_puts(b, "&gt;"); break;
        case '"': sbuf_puts(b, "&quot;"); break;
        case '\'': sbuf_puts(b, "&#39;"); break;
        default: sbuf_putc(b, *s);
        }
    }
}

void vg_html_begin(struct sbuf *b, const char *title, const char *extra_css)
{
    sbuf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>");
    vg_html_escape(b, title);
    sbuf_puts(b, "</title>\n<style>\n"
                 "body{font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;margin:24px 32px;color:#1d2330;background:#fff}\n"
                 "h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #dde}\n"
                 "table{border-collapse:collapse;width:100%;font-size:13px}th,td{text-align:left;padding:4px 6px;border-bottom:1px solid #eef;vertical-align:top}\n"
                 "th{background:#f4f6fa}.muted{color:#6b7280}.met{color:#137333}.missed{color:#b3261e}.nm{color:#6b7280;font-style:italic}\n"
                 "code{font-size:12px;background:#f4f6fa;padding:1px 3px;border-radius:3px}svg text{font-family:inherit}\n");
    if (extra_css) sbuf_puts(b, extra_css);
    sbuf_puts(b, "</style></head><body>\n");
}

void vg_html_end(struct sbuf *b) { sbuf_puts(b, "</body></html>\n"); }

void vg_svg_bars(struct sbuf *b, const struct vg_svg_bar *bars, size_t n, int width)
{
    const int row = 28, lw = 150, nw = 200, bw = width - lw - nw;
    sbuf_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%zu\" role=\"img\">\n", width, n * row + 8);
    sbuf_puts(b, "<defs><pattern id=\"hatch\" width=\"8\" height=\"8\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
                 "<rect width=\"8\" height=\"8\" fill=\"#f1f3f6\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"8\" stroke=\"#c5cad3\" stroke-width=\"3\"/></pattern></defs>\n");
    for (size_t i = 0; i < n; i++) {
        int y = (int)i * row + 4;
        double v = bars[i].value;
        sbuf_printf(b, "<text x=\"0\" y=\"%d\" font-size=\"13\">", y + 17);
        vg_html_escape(b, bars[i].label);
        sbuf_printf(b, "</text><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"20\" rx=\"3\" fill=\"%s\"/>", lw, y + 2, bw,
                    v < 0 ? "url(#hatch)" : "#eef0f4");
        if (v >= 0) {
            const char *fill = v >= 0.75 ? "#2e7d32" : v >= 0.5 ? "#9e9d24" : v >= 0.3 ? "#ef6c00" : "#c62828";
            sbuf_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"20\" rx=\"3\" fill=\"%s\"/>", lw, y + 2,
                        (int)lround(fmin(fmax(v, 0), 1) * bw), fill);
        }
        sbuf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"12\" fill=\"#374151\">", lw + bw + 8, y + 17);
        vg_html_escape(b, bars[i].note ? bars[i].note : (v < 0 ? "not measured" : ""));
        sbuf_puts(b, "</text>\n");
    }
    sbuf_puts(b, "</svg>\n");
}

void vg_svg_badge(struct sbuf *b, const char *text, const char *fill)
{
    int w = 24 + 11 * (int)strlen(text ? text : "");
    sbuf_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"40\" role=\"img\">"
                   "<rect width=\"%d\" height=\"40\" rx=\"20\" fill=\"%s\"/>"
                   "<text x=\"%d\" y=\"26\" font-size=\"18\" font-weight=\"bold\" fill=\"#fff\" text-anchor=\"middle\">",
                w, w, fill, w / 2);
    vg_html_escape(b, text);
    sbuf_puts(b, "</text></svg>\n");
}

void vg_svg_timeline(struct sbuf *b, const struct vg_svg_mark *m, size_t n, int width, double limit,
                     const char *limit_label)
{
    double max = limit > 0 ? limit : 0;
    for (size_t i = 0; i < n; i++) max = fmax(max, fmax(m[i].t, m[i].hi));
    if (max <= 0) max = 1;
    const int left = 20, right = 40, top = 20, h = 60 + 22 * (int)n, axis = h - 28;
    const double sx = (width - left - right) / max;
    sbuf_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" role=\"img\">\n", width, h);
    sbuf_printf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#6b7280\"/>\n", left, axis, width - right, axis);
    for (int k = 0; k <= 4; k++) {
        double t = max * k / 4;
        int x = left + (int)lround(t * sx);
        sbuf_printf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#9ca3af\"/>"
                       "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\" fill=\"#6b7280\">%.0f s</text>\n",
                    x, axis, x, axis + 5, x, axis + 18, t);
    }
    if (limit > 0) {
        int x = left + (int)lround(limit * sx);
        sbuf_printf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#c62828\" stroke-dasharray=\"4 3\"/>"
                       "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#c62828\" text-anchor=\"end\">",
                    x, top - 8, x, axis, x - 4, top);
        vg_html_escape(b, limit_label);
        sbuf_puts(b, "</text>\n");
    }
    for (size_t i = 0; i < n; i++) {
        int y = top + 12 + 22 * (int)i;
        if (m[i].t < 0) {
            sbuf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"12\" fill=\"#6b7280\">", left, y + 4);
            vg_html_escape(b, m[i].label);
            sbuf_puts(b, ": never happened</text>\n");
            continue;
        }
        int x = left + (int)lround(m[i].t * sx);
        if (m[i].hi > m[i].lo)
            sbuf_printf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#90caf9\" stroke-width=\"6\"/>",
                        left + (int)lround(m[i].lo * sx), y, left + (int)lround(m[i].hi * sx), y);
        sbuf_printf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#1565c0\" stroke-dasharray=\"2 2\"/>"
                       "<circle cx=\"%d\" cy=\"%d\" r=\"5\" fill=\"#1565c0\"/>"
                       "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"%s\">",
                    x, y, x, axis, x, y, x > width / 2 ? x - 9 : x + 9, y + 4, x > width / 2 ? "end" : "start");
        vg_html_escape(b, m[i].label);
        sbuf_printf(b, " %.1f s</text>\n", m[i].t);
    }
    sbuf_puts(b, "</svg>\n");
}
