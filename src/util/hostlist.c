/* hostlist.c — Slurm-style host list expansion; see hostlist.h. */
#include "util/hostlist.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct names {
    char **v;
    size_t n, cap, max;
};

static int push(struct names *l, const char *s)
{
    if (l->n >= l->max) return -1;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->v = vg_xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = vg_xstrdup(s);
    return 0;
}

/* Expands one term "prefix[ranges]suffix" (at most one bracket group). */
static int expand_term(const char *term, struct names *l)
{
    for (const char *c = term; *c; c++)
        if (!isalnum((unsigned char)*c) && !strchr("._-[],", *c)) return -1; /* not a host name */
    const char *open = strchr(term, '['), *close = strchr(term, ']');
    if (!open && !close) return *term ? push(l, term) : -1;
    if (!open || !close || close < open || strchr(open + 1, '[') || strchr(close + 1, ']')) return -1;
    char *ranges = vg_xstrndup(open + 1, (size_t)(close - open - 1));
    int rc = 0;
    char *save = NULL;
    for (char *r = strtok_r(ranges, ",", &save); r && !rc; r = strtok_r(NULL, ",", &save)) {
        char *dash = strchr(r, '-');
        const char *hi_s = dash ? dash + 1 : r;
        if (dash) *dash = 0;
        long lo, hi;
        if (!vg_parse_long(r, &lo) || !vg_parse_long(hi_s, &hi) || lo < 0 || hi < lo || hi - lo > 100000 ||
            !isdigit((unsigned char)*r)) {
            rc = -1;
            break;
        }
        int width = (int)strlen(r);
        for (long i = lo; i <= hi && !rc; i++) {
            char name[256];
            int n = snprintf(name, sizeof name, "%.*s%0*ld%s", (int)(open - term), term, width, i, close + 1);
            rc = n < 0 || (size_t)n >= sizeof name ? -1 : push(l, name);
        }
    }
    free(ranges);
    return rc;
}

int vg_hostlist_expand(const char *expr, char ***names, size_t max)
{
    struct names l = { NULL, 0, 0, max };
    char *copy = vg_xstrdup(expr);
    int rc = 0;
    /* Split on commas outside brackets. */
    char *start = copy;
    int depth = 0;
    for (char *p = copy;; p++) {
        if (*p == '[') depth++;
        else if (*p == ']') depth--;
        if (depth < 0 || depth > 1) { rc = -1; break; }
        if ((*p == ',' && depth == 0) || !*p) {
            char end = *p;
            *p = 0;
            char *t = vg_trim(start);
            if (expand_term(t, &l)) { rc = -1; break; }
            if (!end) break;
            start = p + 1;
        }
    }
    if (!rc && depth) rc = -1;
    free(copy);
    if (rc) {
        for (size_t i = 0; i < l.n; i++) free(l.v[i]);
        free(l.v);
        *names = NULL;
        return -1;
    }
    *names = l.v;
    return (int)l.n;
}

char *vg_hostlist_join(const char *const *names, size_t n)
{
    struct sbuf b = SBUF_INIT;
    for (size_t i = 0; i < n; i++) {
        if (i) sbuf_putc(&b, ',');
        sbuf_puts(&b, names[i]);
    }
    return sbuf_take(&b);
}
