/* strutil.c — string helpers; see strutil.h. */
#include "util/strutil.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *oom(void)
{
    fputs("vigil: out of memory\n", stderr);
    abort();
}

void *vg_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    return p ? p : oom();
}

void *vg_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    return p ? p : oom();
}

void *vg_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    return q ? q : oom();
}

char *vg_xstrdup(const char *s) { return vg_xstrndup(s, strlen(s)); }

char *vg_xstrndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *p = vg_xmalloc(len + 1);
    memcpy(p, s, len);
    p[len] = 0;
    return p;
}

char *vg_trim(char *s)
{
    while (*s && isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) s[--n] = 0;
    return s;
}

bool vg_startswith(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool vg_endswith(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

bool vg_in_list(char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i], s)) return true;
    return false;
}

size_t vg_strlcpy(char *dst, const char *src, size_t size)
{
    size_t n = strlen(src);
    if (size) {
        size_t c = n < size - 1 ? n : size - 1;
        memcpy(dst, src, c);
        dst[c] = 0;
    }
    return n;
}

bool vg_unicode_unsafe(unsigned cp)
{
    return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

bool vg_utf8_printable(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p, need, cp;
        if (c < 0x80) {
            if (c < 0x20 || c == 0x7f) return false;
            p++;
            continue;
        }
        if (c >= 0xc2 && c <= 0xdf) need = 1, cp = c & 0x1f;
        else if (c >= 0xe0 && c <= 0xef) need = 2, cp = c & 0x0f;
        else if (c >= 0xf0 && c <= 0xf4) need = 3, cp = c & 0x07;
        else return false;
        for (unsigned i = 1; i <= need; i++) {
            if ((p[i] & 0xc0) != 0x80) return false;
            cp = cp << 6 | (p[i] & 0x3f);
        }
        if ((need == 2 && cp < 0x800) || (need == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f) || vg_unicode_unsafe(cp))
            return false;
        p += need + 1;
    }
    return true;
}

void vg_scrub_controls(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = '?';
}

int vg_split(char *s, const char *delims, char **fields, int max)
{
    int n = 0;
    if (max <= 0) return 0;
    fields[n++] = s;
    for (char *p = s; *p && n < max; p++) {
        if (strchr(delims, *p)) {
            *p = 0;
            fields[n++] = p + 1;
        }
    }
    return n;
}

bool vg_parse_long(const char *s, long *out)
{
    if (!s || !*s) return false;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end) return false;
    *out = v;
    return true;
}

char *vg_fmt_fixed(char *buf, size_t n, double v, int decimals)
{
    snprintf(buf, n, "%.*f", decimals, v);
    char *dot = strchr(buf, '.');
    if (dot) {
        char *e = buf + strlen(buf);
        while (e > dot + 1 && e[-1] == '0') *--e = '\0';
        if (e == dot + 1) *dot = '\0';
    }
    if (!strcmp(buf, "-0")) vg_strlcpy(buf, "0", n);
    return buf;
}

void vg_expand_node(const char *tmpl, const char *node, char *out, size_t n)
{
    size_t k = 0;
    for (const char *p = tmpl; *p && k + 1 < n; p++) {
        if (p[0] == '%' && p[1] == 'n') {
            k += (size_t)snprintf(out + k, n - k, "%s", node);
            if (k >= n) k = n - 1;
            p++;
        } else
            out[k++] = *p;
    }
    out[k < n ? k : n - 1] = 0;
}

bool vg_env_copy(const char *name, char *buf, size_t n)
{
    const char *v = getenv(name);
    if (!v || !*v) return false;
    vg_strlcpy(buf, v, n);
    return true;
}

long vg_env_long(const char *name, long def)
{
    const char *v = getenv(name);
    long x;
    return v && vg_parse_long(v, &x) && x >= 0 ? x : def;
}
