/* escape.c — terminal and Markdown escaping of outside text; see escape.h. */
#include "report/escape.h"
#include "util/strutil.h"
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The length of the valid UTF-8 sequence at p that may be shown as it is
 * (0: an invalid byte, or a code point to show escaped; *cp then holds it
 * when valid, else -1). */
static size_t shown_as_is(const unsigned char *p, long *cp)
{
    unsigned c = p[0], need, v;
    *cp = -1;
    if (c < 0x80) return c >= 0x20 && c != 0x7f ? 1 : (*cp = (long)c, 0);
    if (c >= 0xc2 && c <= 0xdf) need = 1, v = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef) need = 2, v = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4) need = 3, v = c & 0x07;
    else return 0;
    for (unsigned i = 1; i <= need; i++) {
        if ((p[i] & 0xc0) != 0x80) return 0;
        v = v << 6 | (p[i] & 0x3f);
    }
    if ((need == 2 && v < 0x800) || (need == 3 && (v < 0x10000 || v > 0x10ffff)) || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    if ((v >= 0x80 && v <= 0x9f) || vg_unicode_unsafe(v)) {
        *cp = (long)v;
        return 0;
    }
    return need + 1;
}

enum mode { TERM, MD, CODE };

static void escape(struct sbuf *b, const char *s, enum mode m)
{
    if (!s) return;
    bool md = m == MD;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        long cp;
        size_t n = shown_as_is(p, &cp);
        if (n == 1 && (*p == '\\' || (md && strchr("<>&|`[]", *p)))) {
            if (*p == '<') sbuf_puts(b, "&lt;");
            else if (*p == '>') sbuf_puts(b, "&gt;");
            else if (*p == '&') sbuf_puts(b, "&amp;");
            else sbuf_printf(b, "\\%c", *p);
            p++;
        } else if (n == 1 && m == CODE && *p == '`') {   /* would end the code span */
            sbuf_puts(b, "\\x60");
            p++;
        } else if (n) {
            sbuf_add(b, (const char *)p, n);
            p += n;
        } else if (cp == '\n' || cp == '\t' || cp == '\r' || cp == 0x1b) {
            sbuf_printf(b, "\\%c", cp == '\n' ? 'n' : cp == '\t' ? 't' : cp == '\r' ? 'r' : 'e');
            p++;
        } else if (cp >= 0x80) {   /* a whole code point, shown by its number */
            sbuf_printf(b, "\\u%04lx", cp);
            p += cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
        } else {   /* a control byte, or a byte that is not UTF-8 */
            sbuf_printf(b, "\\x%02x", *p);
            p++;
        }
    }
}

void vg_term_escape(struct sbuf *b, const char *s) { escape(b, s, TERM); }

void vg_md_escape(struct sbuf *b, const char *s) { escape(b, s, MD); }

static void put(FILE *f, const char *s, enum mode m)
{
    struct sbuf b = SBUF_INIT;
    escape(&b, s, m);
    if (b.s) fputs(b.s, f);
    sbuf_free(&b);
}

void vg_put_text(FILE *f, const char *s, bool md) { put(f, s, md ? MD : TERM); }

void vg_put_code(FILE *f, const char *s) { put(f, s, CODE); }
