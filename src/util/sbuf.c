/* sbuf.c — growable string buffer; aborts only when memory runs out. */
#include "util/sbuf.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void grow(struct sbuf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1) cap *= 2;
    char *p = realloc(b->s, cap);
    if (!p) { fputs("vigil: out of memory\n", stderr); abort(); }
    b->s = p;
    b->cap = cap;
}

void sbuf_add(struct sbuf *b, const void *data, size_t n)
{
    grow(b, n);
    if (n) memcpy(b->s + b->len, data, n);
    b->len += n;
    b->s[b->len] = 0;
}

void sbuf_puts(struct sbuf *b, const char *s) { sbuf_add(b, s, strlen(s)); }
void sbuf_putc(struct sbuf *b, char c) { sbuf_add(b, &c, 1); }

void sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    grow(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void sbuf_reset(struct sbuf *b)
{
    b->len = 0;
    if (b->s) b->s[0] = 0;
}

char *sbuf_take(struct sbuf *b)
{
    if (!b->s) grow(b, 0), b->s[0] = 0;
    char *s = b->s;
    b->s = NULL;
    b->len = b->cap = 0;
    return s;
}

void sbuf_free(struct sbuf *b)
{
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
}
