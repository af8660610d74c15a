/* precision.h — what the tests of human output (terminal, Markdown, HTML)
 * check about its numbers: none is printed with 4 or more decimals. */
#ifndef VG_TEST_PRECISION_H
#define VG_TEST_PRECISION_H
#include <stddef.h>

/* The first number in text with 4 or more decimals ([0-9]\.[0-9]{4,}),
 * copied to out with the text around it; NULL when there is none. */
const char *long_decimal(const char *text, char *out, size_t n);

#endif
