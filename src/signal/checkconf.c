/* checkconf.c — parser of the `vigil check` expectations file and host-mask
 * matching; see checkconf.h for the grammar. */
#include "signal/checkconf.h"
#include "util/resafe.h"
#include "util/rootfs.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CONF (4 << 20)

static int fail(char *err, size_t n, const char *file, int line, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(err, n, "%s:%d: %s", file, line, msg);
    return -1;
}

/* One "prefix[ranges]suffix" pattern; ranges "a-b,c" (zero-padded ranges
 * such as "01-16" match names of that width only).  Returns 1/0, -1 bad. */
static int match_range(const char *mask, const char *node)
{
    const char *lb = strchr(mask, '['), *rb = lb ? strchr(lb, ']') : NULL;
    if (!lb || !rb || strchr(rb + 1, '[')) return -1;
    char spec[128];
    size_t sl = (size_t)(rb - lb - 1);
    if (sl == 0 || sl >= sizeof spec) return -1;
    memcpy(spec, lb + 1, sl);
    spec[sl] = 0;
    /* The node's number, when prefix and suffix match. */
    size_t plen = (size_t)(lb - mask);
    const char *suffix = rb + 1, *num = node + plen;
    size_t nlen = strlen(node) >= plen ? strlen(num) : 0, slen = strlen(suffix);
    bool cand = strncmp(node, mask, plen) == 0 && nlen > slen && strcmp(num + nlen - slen, suffix) == 0;
    if (cand) {
        nlen -= slen;
        for (size_t i = 0; i < nlen; i++)
            if (!isdigit((unsigned char)num[i])) cand = false;
        if (nlen > 9) cand = false;
    }
    long v = cand ? strtol(num, NULL, 10) : -1;
    int hit = 0;
    char *save = NULL;
    for (char *r = strtok_r(spec, ",", &save); r; r = strtok_r(NULL, ",", &save)) {
        char *dash = strchr(r, '-');
        const char *hi_s = dash ? dash + 1 : r;
        if (dash) *dash = 0;
        long lo, hi;
        if (!vg_parse_long(r, &lo) || !vg_parse_long(hi_s, &hi) || lo < 0 || hi < lo) return -1;
        size_t width = strlen(r);
        bool padded = width > 1 && r[0] == '0';
        if (cand && v >= lo && v <= hi && (!padded || nlen == width)) hit = 1;
    }
    /* Empty items ("1,,3") leave strtok_r nothing to complain about. */
    if (strstr(lb, ",,") || lb[1] == ',' || rb[-1] == ',') return -1;
    return hit;
}

/* Whether the text between the brackets is a node range ("01-16", "1,3-5"). */
static bool is_range(const char *m)
{
    const char *lb = strchr(m, '['), *rb = lb ? strchr(lb, ']') : NULL;
    if (!lb || !rb || rb == lb + 1) return false;
    for (const char *c = lb + 1; c < rb; c++)
        if (!isdigit((unsigned char)*c) && *c != ',' && *c != '-') return false;
    const char *dash = strchr(lb + 1, '-'), *comma = strchr(lb + 1, ',');
    return (dash && dash < rb) || (comma && comma < rb);
}

static int match_one(const char *m, const char *node)
{
    size_t len = strlen(m);
    if (len == 0) return -1;
    if (m[0] == '/') {
        if (len < 3 || m[len - 1] != '/') return -1;
        char *re_s = vg_xstrndup(m + 1, len - 2);
        regex_t re;
        int rc = vg_regex_safe(re_s) ? regcomp(&re, re_s, REG_EXTENDED | REG_NOSUB) : -1;
        free(re_s);
        if (rc) return -1;
        rc = regexec(&re, node, 0, NULL, 0) == 0;
        regfree(&re);
        return rc;
    }
    if (is_range(m)) return match_range(m, node);
    return fnmatch(m, node, 0) == 0;
}

int vg_hostmask_match(const char *mask, const char *node)
{
    /* Items are separated by commas outside brackets and /regex/. */
    char *copy = vg_xstrdup(mask);
    int depth = 0, pos_hit = 0, npos = 0, neg_hit = 0, bad = 0;
    bool in_re = false;
    char *start = copy;
    for (char *p = copy;; p++) {
        if (*p == '/') {
            const char *item = start;
            while (isspace((unsigned char)*item)) item++;
            if (*item == '!') item++;
            if (in_re || p == item) in_re = !in_re;
        } else if (!in_re && *p == '[')
            depth++;
        else if (!in_re && *p == ']')
            depth--;
        if (*p == 0 || (*p == ',' && depth == 0 && !in_re)) {
            char end = *p;
            *p = 0;
            char *m = vg_trim(start);
            bool neg = *m == '!';
            int r = match_one(neg ? m + 1 : m, node);
            if (r < 0) bad = 1;
            else if (neg) neg_hit |= r;
            else {
                npos++;
                pos_hit |= r;
            }
            if (end == 0) break;
            start = p + 1;
        }
    }
    free(copy);
    if (bad || depth != 0 || in_re) return -1;
    return !neg_hit && (npos == 0 || pos_hit);
}

/* Reads one token at *p: a bare word (up to whitespace) or a word with a
 * "quoted" part.  Returns malloc'd text or NULL with *why set. */
static char *token(const char **p, const char **why)
{
    struct sbuf b = SBUF_INIT;
    const char *s = *p;
    while (*s && !isspace((unsigned char)*s)) {
        if (*s == '"') {
            s++;
            while (*s && *s != '"') {
                if (*s == '\\' && (s[1] == '"' || s[1] == '\\')) s++;
                sbuf_putc(&b, *s++);
            }
            if (*s != '"') {
                sbuf_free(&b);
                *why = "unterminated quoted value";
                return NULL;
            }
            s++;
        } else
            sbuf_putc(&b, *s++);
    }
    *p = s;
    return sbuf_take(&b);
}

static int parse_line(char *line, struct vg_check_line *l, const char **why)
{
    char *sep = strstr(line, "||");
    if (!sep) {
        *why = "expected 'HOSTMASK || CHECK …'";
        return -1;
    }
    *sep = 0;
    char *mask = vg_trim(line);
    if (!*mask) {
        *why = "empty host mask";
        return -1;
    }
    if (vg_hostmask_match(mask, "x") < 0) {
        *why = "malformed host mask";
        return -1;
    }
    l->hostmask = vg_xstrdup(mask);
    const char *p = sep + 2;
    for (int first = 1;; first = 0) {
        while (isspace((unsigned char)*p)) p++;
        if (!*p) break;
        char *t = token(&p, why);
        if (!t) return -1;
        if (first) {
            for (char *c = t; *c; c++)
                if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-') {
                    free(t);
                    *why = "malformed check name";
                    return -1;
                }
            l->check = t;
            continue;
        }
        char *eq = strchr(t, '=');
        if (eq && eq != t) {
            *eq = 0;
            for (char *c = t; *c; c++)
                if (!isalnum((unsigned char)*c) && *c != '_') {
                    free(t);
                    *why = "malformed key";
                    return -1;
                }
            l->kv = vg_xrealloc(l->kv, sizeof *l->kv * (size_t)(l->nkv + 1));
            l->kv[l->nkv].key = vg_xstrdup(t);
            l->kv[l->nkv++].val = vg_xstrdup(eq + 1);
            free(t);
        } else {
            l->words = vg_xrealloc(l->words, sizeof *l->words * (size_t)(l->nwords + 1));
            l->words[l->nwords++] = t;
        }
    }
    if (!l->check || !*l->check) {
        *why = "missing check name after '||'";
        return -1;
    }
    return 0;
}

static void free_line(struct vg_check_line *l)
{
    free(l->hostmask);
    free(l->check);
    for (int i = 0; i < l->nwords; i++) free(l->words[i]);
    free(l->words);
    for (int i = 0; i < l->nkv; i++) {
        free(l->kv[i].key);
        free(l->kv[i].val);
    }
    free(l->kv);
    memset(l, 0, sizeof *l);
}

int vg_checkconf_parse(const char *text, size_t len, const char *file, struct vg_checkconf *c, char *err,
                       size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->file = vg_xstrdup(file ? file : "-");
    size_t cap = 0;
    int lineno = 0;
    for (size_t pos = 0; pos < len;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t ll = nl ? (size_t)(nl - (text + pos)) : len - pos;
        lineno++;
        if (memchr(text + pos, 0, ll)) return fail(err, errlen, c->file, lineno, "NUL byte in line");
        char *line = vg_xstrndup(text + pos, ll);
        pos += ll + 1;
        /* A '#' outside quotes starts a comment. */
        bool q = false;
        for (char *s = line; *s; s++) {
            if (*s == '"' && (s == line || s[-1] != '\\')) q = !q;
            else if (*s == '#' && !q) {
                *s = 0;
                break;
            }
        }
        char *t = vg_trim(line);
        if (!*t) {
            free(line);
            continue;
        }
        struct vg_check_line l;
        memset(&l, 0, sizeof l);
        l.lineno = lineno;
        const char *why = NULL;
        int rc = parse_line(t, &l, &why);
        free(line);
        if (rc < 0) {
            free_line(&l);
            return fail(err, errlen, c->file, lineno, "%s", why);
        }
        if (c->n == cap) c->lines = vg_xrealloc(c->lines, sizeof *c->lines * (cap = cap ? cap * 2 : 16));
        c->lines[c->n++] = l;
    }
    return 0;
}

int vg_checkconf_load(const char *root, const char *path, struct vg_checkconf *c, char *err, size_t errlen)
{
    char *text;
    size_t len;
    memset(c, 0, sizeof *c);
    if (vg_read_file(root, path, MAX_CONF, &text, &len) < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = vg_checkconf_parse(text, len, path, c, err, errlen);
    free(text);
    return rc;
}

void vg_checkconf_free(struct vg_checkconf *c)
{
    for (size_t i = 0; i < c->n; i++) free_line(&c->lines[i]);
    free(c->lines);
    free(c->file);
    memset(c, 0, sizeof *c);
}

const char *vg_check_get(const struct vg_check_line *l, const char *key)
{
    for (int i = l->nkv - 1; i >= 0; i--)
        if (strcmp(l->kv[i].key, key) == 0) return l->kv[i].val;
    return NULL;
}
