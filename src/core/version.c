/* version.c — version comparison per ecosystem; see version.h.
 *
 * dpkg:    epoch:upstream-revision, Debian policy 5.6.12 (verrevcmp: '~' sorts
 *          before everything, even the end; letters before non-letters).
 * rpm:     epoch:version-release, rpmvercmp (alnum segments, '~' sorts low,
 *          '^' sorts high but below a longer version).
 * generic: semver-like upstream versions: numeric and alphabetic tokens, a
 *          leading 'v' ignored, '+build' ignored, a pre-release ('~x' or '-x'
 *          with a letter after the dash) below the release, '-N' after a digit
 *          a further numeric field (OFED's 23.10-1.1.9.0), trailing zero fields
 *          insignificant (12.6 == 12.6.0), a letter suffix above (9.8p1 > 9.8).
 * nvidia:  driver versions (535.183.01) are dotted numeric: the generic rules
 *          compare them field by field numerically.
 * Every function reads its input only up to the NUL and allocates nothing, so
 * any byte string is safe (fuzz/fuzz_version.c). */
#include "core/version.h"
#include "util/strutil.h"
#include <ctype.h>
#include <string.h>

static const char *const eco_names[VG_ECO_COUNT] = { "generic", "dpkg", "rpm", "nvidia" };

const char *vg_eco_name(enum vg_ecosystem e)
{
    return (unsigned)e < VG_ECO_COUNT ? eco_names[e] : "generic";
}

bool vg_eco_parse(const char *s, enum vg_ecosystem *e)
{
    for (int i = 0; i < VG_ECO_COUNT; i++)
        if (s && !strcmp(s, eco_names[i])) {
            *e = (enum vg_ecosystem)i;
            return true;
        }
    return false;
}

static int sign(int x) { return (x > 0) - (x < 0); }

/* Compares two runs of digits by value, without overflow: leading zeros are
 * skipped, then the longer run is larger, then the digits decide. */
static int cmp_digits(const char *a, size_t na, const char *b, size_t nb)
{
    while (na && *a == '0') a++, na--;
    while (nb && *b == '0') b++, nb--;
    if (na != nb) return na < nb ? -1 : 1;
    return sign(memcmp(a, b, na));
}

static size_t span_digits(const char *s) { size_t n = 0; while (isdigit((unsigned char)s[n])) n++; return n; }
static size_t span_alpha(const char *s) { size_t n = 0; while (isalpha((unsigned char)s[n])) n++; return n; }

/* ---- dpkg ---- */

static int dpkg_order(int c)
{
    if (isdigit(c)) return 0;
    if (isalpha(c)) return c;
    if (c == '~') return -1;
    if (c) return c + 256;
    return 0;
}

/* dpkg's verrevcmp over [a, a+na) and [b, b+nb). */
static int dpkg_verrevcmp(const char *a, size_t na, const char *b, size_t nb)
{
    size_t i = 0, j = 0;
    while (i < na || j < nb) {
        int first_diff = 0;
        while ((i < na && !isdigit((unsigned char)a[i])) || (j < nb && !isdigit((unsigned char)b[j]))) {
            int ac = i < na ? dpkg_order((unsigned char)a[i]) : 0;
            int bc = j < nb ? dpkg_order((unsigned char)b[j]) : 0;
            if (ac != bc) return sign(ac - bc);
            i++, j++;
        }
        while (i < na && a[i] == '0') i++;
        while (j < nb && b[j] == '0') j++;
        while (i < na && isdigit((unsigned char)a[i]) && j < nb && isdigit((unsigned char)b[j])) {
            if (!first_diff) first_diff = a[i] - b[j];
            i++, j++;
        }
        if (i < na && isdigit((unsigned char)a[i])) return 1;
        if (j < nb && isdigit((unsigned char)b[j])) return -1;
        if (first_diff) return sign(first_diff);
    }
    return 0;
}

struct evr {
    const char *epoch; size_t nepoch;   /* digits only; empty = 0 */
    const char *ver; size_t nver;
    const char *rel; size_t nrel;       /* NULL when absent */
};

static void split_evr(const char *v, struct evr *e)
{
    memset(e, 0, sizeof *e);
    const char *colon = strchr(v, ':');
    if (colon && span_digits(v) == (size_t)(colon - v)) {
        e->epoch = v;
        e->nepoch = (size_t)(colon - v);
        v = colon + 1;
    }
    const char *dash = strrchr(v, '-');
    e->ver = v;
    e->nver = dash ? (size_t)(dash - v) : strlen(v);
    if (dash) {
        e->rel = dash + 1;
        e->nrel = strlen(dash + 1);
    }
}

static int dpkg_cmp(const char *a, const char *b)
{
    struct evr x, y;
    split_evr(a, &x);
    split_evr(b, &y);
    int r = cmp_digits(x.epoch ? x.epoch : "", x.nepoch, y.epoch ? y.epoch : "", y.nepoch);
    if (r) return r;
    r = dpkg_verrevcmp(x.ver, x.nver, y.ver, y.nver);
    if (r) return r;
    return dpkg_verrevcmp(x.rel ? x.rel : "", x.nrel, y.rel ? y.rel : "", y.nrel);
}

/* ---- rpm ---- */

static int rpm_vercmp(const char *a, size_t na, const char *b, size_t nb)
{
    size_t i = 0, j = 0;
    if (na == nb && !memcmp(a, b, na)) return 0;
    while (i < na || j < nb) {
        while (i < na && !isalnum((unsigned char)a[i]) && a[i] != '~' && a[i] != '^') i++;
        while (j < nb && !isalnum((unsigned char)b[j]) && b[j] != '~' && b[j] != '^') j++;
        int ta = i < na && a[i] == '~', tb = j < nb && b[j] == '~';
        if (ta || tb) {
            if (!ta) return 1;
            if (!tb) return -1;
            i++, j++;
            continue;
        }
        int ca = i < na && a[i] == '^', cb = j < nb && b[j] == '^';
        if (ca || cb) {
            if (i >= na) return -1;
            if (j >= nb) return 1;
            if (!ca) return 1;
            if (!cb) return -1;
            i++, j++;
            continue;
        }
        if (i >= na || j >= nb) break;
        size_t si = i, sj = j;
        int isnum = isdigit((unsigned char)a[i]);
        if (isnum) {
            while (i < na && isdigit((unsigned char)a[i])) i++;
            while (j < nb && isdigit((unsigned char)b[j])) j++;
        } else {
            while (i < na && isalpha((unsigned char)a[i])) i++;
            while (j < nb && isalpha((unsigned char)b[j])) j++;
        }
        if (j == sj) return isnum ? 1 : -1;   /* segments of different types */
        int r;
        if (isnum) r = cmp_digits(a + si, i - si, b + sj, j - sj);
        else {
            size_t la = i - si, lb = j - sj;
            r = sign(memcmp(a + si, b + sj, la < lb ? la : lb));
            if (!r && la != lb) r = la < lb ? -1 : 1;
        }
        if (r) return r;
    }
    if (i >= na && j >= nb) return 0;
    return i < na ? 1 : -1;
}

static int rpm_cmp(const char *a, const char *b)
{
    struct evr x, y;
    split_evr(a, &x);
    split_evr(b, &y);
    int r = cmp_digits(x.epoch ? x.epoch : "", x.nepoch, y.epoch ? y.epoch : "", y.nepoch);
    if (r) return r;
    r = rpm_vercmp(x.ver, x.nver, y.ver, y.nver);
    if (r || !x.rel || !y.rel) return r;   /* a missing release matches any */
    return rpm_vercmp(x.rel, x.nrel, y.rel, y.nrel);
}

/* ---- generic / nvidia ---- */

enum tok_type { T_PRE = 0, T_END, T_ALPHA, T_NUM };   /* in sort order */

struct tok {
    enum tok_type type;
    const char *s;
    size_t n;
};

static bool is_sep(int c) { return c && !isalnum(c) && c != '~' && c != '+'; }

/* Reads the next token at *p, advancing it. */
static struct tok next_tok(const char **p)
{
    const char *s = *p;
    struct tok t = { T_END, s, 0 };
    for (;;) {
        if (!*s || *s == '+') { *p = s; return t; }          /* '+build' is ignored */
        if (*s == '~') { *p = s + 1; t.type = T_PRE; return t; }
        if (*s == '-' && isalpha((unsigned char)s[1])) { *p = s + 1; t.type = T_PRE; return t; }
        if (is_sep((unsigned char)*s)) { s++; continue; }
        break;
    }
    if (isdigit((unsigned char)*s)) {
        t.type = T_NUM;
        t.n = span_digits(s);
    } else {
        t.type = T_ALPHA;
        t.n = span_alpha(s);
    }
    t.s = s;
    *p = s + t.n;
    return t;
}

static bool is_zero(const struct tok *t)
{
    if (t->type != T_NUM) return false;
    for (size_t i = 0; i < t->n; i++)
        if (t->s[i] != '0') return false;
    return true;
}

static const char *skip_v(const char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    if ((*s == 'v' || *s == 'V') && isdigit((unsigned char)s[1])) s++;
    return s;
}

static int generic_cmp(const char *a, const char *b)
{
    a = skip_v(a);
    b = skip_v(b);
    for (;;) {
        struct tok x = next_tok(&a), y = next_tok(&b);
        if (x.type == T_END && y.type == T_END) return 0;
        /* trailing zero fields are insignificant: 12.6 == 12.6.0 */
        if (x.type == T_END && is_zero(&y)) { a = x.s; continue; }
        if (y.type == T_END && is_zero(&x)) { b = y.s; continue; }
        if (x.type != y.type) return x.type < y.type ? -1 : 1;
        int r = 0;
        if (x.type == T_NUM) r = cmp_digits(x.s, x.n, y.s, y.n);
        else if (x.type == T_ALPHA) {
            size_t n = x.n < y.n ? x.n : y.n;
            for (size_t i = 0; i < n && !r; i++)
                r = sign(tolower((unsigned char)x.s[i]) - tolower((unsigned char)y.s[i]));
            if (!r && x.n != y.n) r = x.n < y.n ? -1 : 1;
        }
        if (r) return r;
    }
}

int vg_version_cmp(enum vg_ecosystem eco, const char *a, const char *b)
{
    if (!a) a = "";
    if (!b) b = "";
    switch (eco) {
    case VG_ECO_DPKG: return dpkg_cmp(a, b);
    case VG_ECO_RPM: return rpm_cmp(a, b);
    default: return generic_cmp(a, b);
    }
}

void vg_version_upstream(enum vg_ecosystem eco, const char *v, char *buf, unsigned n)
{
    if (!n) return;
    if (!v) v = "";
    if (eco != VG_ECO_DPKG && eco != VG_ECO_RPM) {
        vg_strlcpy(buf, v, n);
        return;
    }
    struct evr e;
    split_evr(v, &e);
    size_t len = e.nver < n - 1 ? e.nver : n - 1;
    memcpy(buf, e.ver, len);
    buf[len] = 0;
}
