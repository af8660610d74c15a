/* lines.c — the line reader the burn-in parsers share (see lines.h). */
#include "burnin/lines.h"
#include <ctype.h>
#include <string.h>

bool vg_lines_next(struct vg_lines *it, char *buf, size_t n)
{
    if (it->p >= it->end) return false;
    const char *nl = memchr(it->p, '\n', (size_t)(it->end - it->p));
    size_t l = nl ? (size_t)(nl - it->p) : (size_t)(it->end - it->p);
    size_t c = l < n - 1 ? l : n - 1;
    memcpy(buf, it->p, c);
    buf[c] = 0;
    if (c && buf[c - 1] == '\r') buf[c - 1] = 0;
    /* NUL bytes inside a line end it (the text is not a C string) */
    it->p += l + (nl ? 1 : 0);
    return true;
}

char *vg_lines_unprefix(char *line)
{
    char *s = line;
    while (*s == ' ' || *s == '\t') s++;
    if (*s == '[') {   /* Open MPI --tag-output: "[1,0]<stdout>:" */
        char *e = strstr(s, "]<stdout>:");
        if (!e) e = strstr(s, "]<stderr>:");
        if (e) s = e + 10;
    } else if (isdigit((unsigned char)*s)) {   /* srun --label: "0: " */
        char *d = s;
        while (isdigit((unsigned char)*d)) d++;
        if (d[0] == ':' && d[1] == ' ') s = d + 2;
    }
    while (*s == ' ' || *s == '\t') s++;
    return s;
}
