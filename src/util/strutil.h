/* strutil.h — small string helpers and allocation wrappers that abort on OOM. */
#ifndef VG_STRUTIL_H
#define VG_STRUTIL_H
#include <stdbool.h>
#include <stddef.h>

void *vg_xmalloc(size_t n);
void *vg_xcalloc(size_t n, size_t size);
void *vg_xrealloc(void *p, size_t n);
char *vg_xstrdup(const char *s);
char *vg_xstrndup(const char *s, size_t n);

/* Trims ASCII whitespace in place; returns the start of the trimmed text. */
char *vg_trim(char *s);
bool vg_startswith(const char *s, const char *prefix);
bool vg_endswith(const char *s, const char *suffix);
/* True when s is one of v[0..n). */
bool vg_in_list(char *const *v, size_t n, const char *s);
/* Copies at most size-1 bytes and always terminates; returns strlen(src). */
size_t vg_strlcpy(char *dst, const char *src, size_t size);
/* Splits s in place on any of the delimiter characters; empty fields kept.
 * Returns the number of fields stored (at most max). */
int vg_split(char *s, const char *delims, char **fields, int max);
/* True when s is valid UTF-8 (shortest forms, no surrogates) with no control
 * character (C0, DEL, C1) and no character that reorders or breaks what
 * follows it on screen (vg_unicode_unsafe): safe for log lines, Slurm
 * reasons, JSON, terminals and pages. */
bool vg_utf8_printable(const char *s);
/* The bidirectional controls (U+061C, U+200E, U+200F, U+202A-U+202E,
 * U+2066-U+2069) and the line and paragraph separators (U+2028, U+2029):
 * invisible, yet they reorder the text after them or end its line. */
bool vg_unicode_unsafe(unsigned cp);
/* Replaces every control character of s (C0 and DEL) with '?', in place. */
void vg_scrub_controls(char *s);
/* Parses a decimal integer that must span the whole string. */
bool vg_parse_long(const char *s, long *out);
/* The environment variable name copied into buf; false when unset or empty. */
bool vg_env_copy(const char *name, char *buf, size_t n);
/* The environment variable name as a number >= 0; def when unset or not one. */
long vg_env_long(const char *name, long def);
/* tmpl with each %n replaced by node, into out (n bytes, cut to fit): a
 * per-node path (SlurmdSpoolDir's own expansion, a node's token file). */
void vg_expand_node(const char *tmpl, const char *node, char *out, size_t n);
/* v rounded to at most `decimals` decimals, trailing zeros dropped, for
 * people to read (3: seconds to the millisecond): 0.0050000000000000001 →
 * "0.005", 6.674123 → "6.674", 120.0 → "120".  Returns buf. */
char *vg_fmt_fixed(char *buf, size_t n, double v, int decimals);

#endif
