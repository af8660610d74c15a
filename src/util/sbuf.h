/* sbuf.h — a growable, always NUL-terminated byte buffer. */
#ifndef VG_SBUF_H
#define VG_SBUF_H
#include <stddef.h>

struct sbuf {
    char *s;
    size_t len, cap;
};

#define SBUF_INIT { NULL, 0, 0 }

void sbuf_add(struct sbuf *b, const void *data, size_t n);
void sbuf_puts(struct sbuf *b, const char *s);
void sbuf_putc(struct sbuf *b, char c);
void sbuf_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sbuf_reset(struct sbuf *b);
/* Hands the string to the caller (never NULL) and leaves the buffer empty. */
char *sbuf_take(struct sbuf *b);
void sbuf_free(struct sbuf *b);

#endif
