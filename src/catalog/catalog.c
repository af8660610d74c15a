/* catalog.c — loads the fault catalog (data/fault-catalog.tsv), applies site
 * policy overrides and classifies events; see catalog.h and docs/catalog.md. */
#include "catalog/catalog.h"
#include "util/datadir.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CATALOG_MAX_BYTES (4u << 20)

const char *const vg_catalog_categories[] = {
    "memory-ue", "memory-ce", "gpu-hw",  "interconnect", "pcie",        "firmware", "gpu-hang", "software",
    "gpu-init",  "thermal-power", "node", "network",     "performance", "sdc",      "other",    NULL,
};

static bool valid_category(const char *c)
{
    for (size_t i = 0; vg_catalog_categories[i]; i++)
        if (!strcmp(vg_catalog_categories[i], c)) return true;
    return false;
}

struct vg_catalog {
    struct vg_catalog_entry *e;
    size_t n, cap;
};

static struct vg_catalog_entry *add_entry(struct vg_catalog *c)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 256;
        c->e = vg_xrealloc(c->e, c->cap * sizeof *c->e);
    }
    struct vg_catalog_entry *e = &c->e[c->n++];
    memset(e, 0, sizeof *e);
    return e;
}

/* "*", "N" or "N-M" with 0 <= N <= M <= 1000000. */
static bool parse_code(const char *s, int *lo, int *hi)
{
    if (strcmp(s, "*") == 0) {
        *lo = *hi = VG_CODE_ANY;
        return true;
    }
    char buf[32];
    if (vg_strlcpy(buf, s, sizeof buf) >= sizeof buf) return false;
    char *dash = strchr(buf, '-');
    long a, b;
    if (dash) {
        *dash = '\0';
        if (!vg_parse_long(buf, &a) || !vg_parse_long(dash + 1, &b)) return false;
    } else {
        if (!vg_parse_long(buf, &a)) return false;
        b = a;
    }
    if (a < 0 || b < a || b > 1000000) return false;
    *lo = (int)a;
    *hi = (int)b;
    return true;
}

static bool valid_kind(const char *k)
{
    size_t n = strlen(k);
    if (n == 0 || n >= sizeof ((struct vg_catalog_entry *)0)->kind) return false;
    for (; *k; k++)
        if (!((*k >= 'a' && *k <= 'z') || (*k >= '0' && *k <= '9') || *k == '-' || *k == '_'))
            return false;
    return true;
}

/* A repeat rule "N/WINDOW" (2 <= N <= VG_CATALOG_AFTER_MAX, WINDOW a duration > 0) into e. */
static bool parse_after(const char *s, struct vg_catalog_entry *e)
{
    char buf[sizeof e->after];
    if (vg_strlcpy(buf, s, sizeof buf) >= sizeof buf) return false;
    char *slash = strchr(buf, '/');
    long n;
    int64_t ms;
    if (!slash) return false;
    *slash = '\0';
    if (!vg_parse_long(buf, &n) || n < 2 || n > VG_CATALOG_AFTER_MAX || !vg_duration_ms(slash + 1, &ms) || ms <= 0)
        return false;
    e->after_n = (int)n;
    e->after_ms = ms;
    vg_strlcpy(e->after, s, sizeof e->after);
    return true;
}

static int fail(char *err, size_t n, const char *name, int line, const char *what, const char *field)
{
    snprintf(err, n, "%s:%d: %s%s%s%s", name, line, what, field ? " '" : "", field ? field : "",
             field ? "'" : "");
    return -1;
}

/* Calls fn on each line (NUL-terminated copy, comment and blank lines skipped). */
static int each_line(const char *text, size_t len, int (*fn)(void *, char *, int), void *arg)
{
    const char *p = text, *end = text + len;
    int lineno = 0;
    char buf[2048];
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        lineno++;
        if (n >= sizeof buf) n = sizeof buf - 1;
        memcpy(buf, p, n);
        buf[n] = '\0';
        p = nl ? nl + 1 : end;
        if (strlen(buf) != n) {
            if (fn(arg, NULL, lineno)) return -1; /* embedded NUL: let fn report it */
            continue;
        }
        if (n && buf[n - 1] == '\r') buf[n - 1] = '\0';
        char *t = vg_trim(buf);
        if (*t == '\0' || *t == '#') continue;
        if (fn(arg, buf, lineno)) return -1;
    }
    return 0;
}

struct parse_ctx {
    struct vg_catalog *c;
    const char *name;
    char *err;
    size_t errlen;
};

static int catalog_line(void *arg, char *line, int lineno)
{
    struct parse_ctx *x = arg;
    if (!line) return fail(x->err, x->errlen, x->name, lineno, "NUL byte in line", NULL);
    if (vg_startswith(line, "kind\t")) return 0; /* the column header */
    char *f[10];
    int nf = vg_split(line, "\t", f, 10);
    if (nf < 6) return fail(x->err, x->errlen, x->name, lineno, "expected at least 6 tab-separated fields", NULL);
    if (!valid_kind(f[0])) return fail(x->err, x->errlen, x->name, lineno, "bad kind", f[0]);
    struct vg_catalog_entry tmp;
    memset(&tmp, 0, sizeof tmp);
    if (!parse_code(f[1], &tmp.lo, &tmp.hi)) return fail(x->err, x->errlen, x->name, lineno, "bad code", f[1]);
    if (!vg_action_parse(f[2], &tmp.action)) return fail(x->err, x->errlen, x->name, lineno, "bad action", f[2]);
    vg_strlcpy(tmp.kind, f[0], sizeof tmp.kind);
    vg_strlcpy(tmp.bucket, f[3], sizeof tmp.bucket);
    vg_strlcpy(tmp.caused_by, f[4], sizeof tmp.caused_by);
    vg_strlcpy(tmp.name, f[5], sizeof tmp.name);
    /* the ninth column, category, and the tenth, a repeat rule (catalogs
     * before them have eight or nine) */
    if (nf >= 9 && *vg_trim(f[8])) {
        if (!valid_category(vg_trim(f[8]))) return fail(x->err, x->errlen, x->name, lineno, "unknown category", vg_trim(f[8]));
        vg_strlcpy(tmp.category, vg_trim(f[8]), sizeof tmp.category);
    }
    if (nf >= 10 && *vg_trim(f[9])) {
        if (!parse_after(vg_trim(f[9]), &tmp))
            return fail(x->err, x->errlen, x->name, lineno, "bad repeat rule (N/WINDOW, N in 2..64)", f[9]);
        if (!tmp.caused_by[0])
            return fail(x->err, x->errlen, x->name, lineno, "a repeat rule needs the kinds it counts in caused_by",
                        f[0]);
    }
    *add_entry(x->c) = tmp;
    return 0;
}

struct vg_catalog *vg_catalog_parse(const char *text, size_t len, const char *name, char *err,
                                    size_t errlen)
{
    struct vg_catalog *c = vg_xcalloc(1, sizeof *c);
    struct parse_ctx x = { c, name, err, errlen };
    if (each_line(text, len, catalog_line, &x)) {
        vg_catalog_free(c);
        return NULL;
    }
    if (c->n == 0) {
        fail(err, errlen, name, 0, "no catalog entries", NULL);
        vg_catalog_free(c);
        return NULL;
    }
    return c;
}

struct vg_catalog *vg_catalog_load(const char *path, char *err, size_t errlen)
{
    char *def = path ? NULL : vg_data_path("fault-catalog.tsv");
    const char *p = path ? path : def;
    char *text = NULL;
    size_t len = 0;
    struct vg_catalog *c = NULL;
    if (vg_read_file(NULL, p, CATALOG_MAX_BYTES, &text, &len))
        snprintf(err, errlen, "%s: %s", p, strerror(errno));
    else
        c = vg_catalog_parse(text, len, p, err, errlen);
    free(text);
    free(def);
    return c;
}

struct vg_catalog *vg_catalog_open(const char *root, const char *path, const char *policy, char *err,
                                   size_t errlen)
{
    struct vg_catalog *c = vg_catalog_load(path, err, errlen);
    if (!c) return NULL;
    char *site = NULL;
    if (!policy && vg_path_exists(root, VG_SITE_POLICY)) policy = site = vg_root_path(root, VG_SITE_POLICY);
    int rc = policy ? vg_catalog_apply_policy(c, policy, err, errlen) : 0;
    free(site);
    if (rc) {
        vg_catalog_free(c);
        return NULL;
    }
    return c;
}

void vg_catalog_free(struct vg_catalog *c)
{
    if (!c) return;
    free(c->e);
    free(c);
}

/* `kind NAME after=N/WINDOW`: the count and window of that kind's repeat rule. */
static int policy_after(struct parse_ctx *x, const char *kind, int lo, const char *val, int lineno)
{
    struct vg_catalog_entry rule;
    memset(&rule, 0, sizeof rule);
    if (!parse_after(val, &rule))
        return fail(x->err, x->errlen, x->name, lineno, "bad repeat rule (after=N/WINDOW, N in 2..64)", val);
    bool found = false;
    for (size_t i = 0; i < x->c->n; i++) {
        struct vg_catalog_entry *e = &x->c->e[i];
        if (strcmp(e->kind, kind) != 0 || (lo != VG_CODE_ANY && e->lo != lo)) continue;
        if (!e->after_n)
            return fail(x->err, x->errlen, x->name, lineno, "not a repeat rule (after= sets one's count and window)",
                        kind);
        e->after_n = rule.after_n;
        e->after_ms = rule.after_ms;
        vg_strlcpy(e->after, rule.after, sizeof e->after);
        found = true;
    }
    return found ? 0 : fail(x->err, x->errlen, x->name, lineno, "no repeat rule of that kind", kind);
}

static int policy_line(void *arg, char *line, int lineno)
{
    struct parse_ctx *x = arg;
    if (!line) return fail(x->err, x->errlen, x->name, lineno, "NUL byte in line", NULL);
    char *tok[6];
    int nt = 0;
    for (char *s = strtok(line, " \t"); s; s = strtok(NULL, " \t")) {
        if (nt == 5) return fail(x->err, x->errlen, x->name, lineno, "too many fields", NULL);
        tok[nt++] = s;
    }
    const char *kind, *code = "*", *set;
    if (nt == 3 && strcmp(tok[0], "category") == 0) {
        if (!valid_category(tok[1])) return fail(x->err, x->errlen, x->name, lineno, "unknown category", tok[1]);
        if (!vg_startswith(tok[2], "action=")) return fail(x->err, x->errlen, x->name, lineno, "expected action=ACTION, got", tok[2]);
        enum vg_action a;
        if (!vg_action_parse(tok[2] + 7, &a)) return fail(x->err, x->errlen, x->name, lineno, "unknown action", tok[2] + 7);
        for (size_t i = 0; i < x->c->n; i++)
            if (!strcmp(x->c->e[i].category, tok[1])) {
                x->c->e[i].action = a;
                x->c->e[i].overridden = true;
            }
        return 0;
    }
    if (nt >= 3 && strcmp(tok[0], "kind") == 0) {
        kind = tok[1];
        if (nt == 4) code = tok[2];
        else if (nt != 3) return fail(x->err, x->errlen, x->name, lineno, "expected 'kind NAME [CODE] action=ACTION'", NULL);
        set = tok[nt - 1];
    } else if (nt == 3 && (strcmp(tok[0], "xid") == 0 || strcmp(tok[0], "sxid") == 0)) {
        kind = tok[0];
        code = tok[1];
        set = tok[2];
    } else {
        return fail(x->err, x->errlen, x->name, lineno,
                    "expected 'xid CODE action=A', 'sxid CODE action=A', 'kind NAME [CODE] action=A', "
                    "'kind NAME after=N/WINDOW' or 'category NAME action=A'", NULL);
    }
    if (!valid_kind(kind)) return fail(x->err, x->errlen, x->name, lineno, "bad kind", kind);
    int lo, hi;
    if (!parse_code(code, &lo, &hi)) return fail(x->err, x->errlen, x->name, lineno, "bad code", code);
    if (vg_startswith(set, "after=")) return policy_after(x, kind, lo, set + 6, lineno);
    if (!vg_startswith(set, "action=")) return fail(x->err, x->errlen, x->name, lineno, "expected action=ACTION, got", set);
    enum vg_action a;
    if (!vg_action_parse(set + 7, &a)) return fail(x->err, x->errlen, x->name, lineno, "unknown action", set + 7);
    bool exact = false;
    for (size_t i = 0; i < x->c->n; i++) {
        struct vg_catalog_entry *e = &x->c->e[i];
        if (strcmp(e->kind, kind) != 0) continue;
        bool inside = lo == VG_CODE_ANY || (e->lo != VG_CODE_ANY && e->lo >= lo && e->hi <= hi);
        if (!inside) continue;
        e->action = a;
        e->overridden = true;
        if (e->lo == lo && e->hi == hi) exact = true;
    }
    if (!exact) {
        struct vg_catalog_entry *e = add_entry(x->c);
        vg_strlcpy(e->kind, kind, sizeof e->kind);
        e->lo = lo;
        e->hi = hi;
        e->action = a;
        e->overridden = true;
        vg_strlcpy(e->bucket, "(policy)", sizeof e->bucket);
        snprintf(e->name, sizeof e->name, "site policy (%s:%d)", x->name, lineno);
    }
    return 0;
}

int vg_catalog_apply_policy_text(struct vg_catalog *c, const char *text, size_t len,
                                 const char *name, char *err, size_t errlen)
{
    struct parse_ctx x = { c, name, err, errlen };
    return each_line(text, len, policy_line, &x);
}

int vg_catalog_apply_policy(struct vg_catalog *c, const char *path, char *err, size_t errlen)
{
    char *text = NULL;
    size_t len = 0;
    if (vg_read_file(NULL, path, CATALOG_MAX_BYTES, &text, &len)) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = vg_catalog_apply_policy_text(c, text, len, path, err, errlen);
    free(text);
    return rc;
}

const struct vg_catalog_entry *vg_catalog_lookup(const struct vg_catalog *c, const char *kind,
                                                 int code)
{
    const struct vg_catalog_entry *best = NULL;
    for (size_t i = 0; i < c->n; i++) {
        const struct vg_catalog_entry *e = &c->e[i];
        if (e->kind[0] != kind[0] || strcmp(e->kind, kind) != 0) continue;
        if (e->lo == VG_CODE_ANY) {
            if (!best) best = e;
            continue;
        }
        if (code < e->lo || code > e->hi) continue;
        if (!best || best->lo == VG_CODE_ANY || e->hi - e->lo <= best->hi - best->lo) best = e;
    }
    return best;
}

enum vg_action vg_catalog_action(const struct vg_catalog *c, const char *kind, int code)
{
    const struct vg_catalog_entry *e = vg_catalog_lookup(c, kind, code);
    return e ? e->action : VG_ACT_RESTART_APP;
}

/* Xid 154 says what to do: "... changed from 0x0 (None) to 0x2 (Node Reboot Required)". */
static bool xid154_action(const char *raw, enum vg_action *a)
{
    const char *p = strstr(raw, "recovery action changed from");
    if (!p || !(p = strstr(p, " to 0x"))) return false;
    long v = strtol(p + 6, NULL, 16);
    switch (v) {
    case 0: *a = VG_ACT_IGNORE; return true;
    case 1: case 3: case 4: case 5: *a = VG_ACT_RESET_GPU; return true;
    case 2: *a = VG_ACT_REBOOT; return true;
    default: return false;
    }
}

const struct vg_catalog_entry *vg_catalog_classify(const struct vg_catalog *c, struct vg_event *e)
{
    const struct vg_catalog_entry *ent = vg_catalog_lookup(c, e->kind, e->code);
    if (strcmp(e->kind, "sxid") == 0 && (!ent || ent->lo == VG_CODE_ANY)) {
        /* The NVSwitch driver prints the severity right after the code. */
        const char *sev = NULL;
        if (strcasestr(e->raw, "Non-fatal") || strcasestr(e->raw, "Nonfatal")) sev = "sxid-nonfatal";
        else if (strstr(e->raw, "Fatal")) sev = "sxid-fatal";
        const struct vg_catalog_entry *s = sev ? vg_catalog_lookup(c, sev, e->code) : NULL;
        if (s) ent = s;
    }
    e->action = ent ? ent->action : VG_ACT_RESTART_APP;
    enum vg_action a;
    if (ent && !ent->overridden && e->code == 154 && strcmp(e->kind, "xid") == 0 &&
        xid154_action(e->raw, &a))
        e->action = a;
    return ent;
}

bool vg_catalog_is_cause(const struct vg_catalog_entry *entry, const struct vg_event *earlier)
{
    if (!entry || !entry->caused_by[0]) return false;
    const char *p = entry->caused_by;
    size_t kl = strlen(earlier->kind);
    while (*p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == 1 && *p == '*') return true;
        if (n >= kl && memcmp(p, earlier->kind, kl) == 0) {
            if (n == kl) return true;
            if (p[kl] == ':') {
                char num[16];
                size_t m = n - kl - 1;
                if (m > 0 && m < sizeof num) {
                    memcpy(num, p + kl + 1, m);
                    num[m] = '\0';
                    long v;
                    if (vg_parse_long(num, &v) && v == earlier->code) return true;
                }
            }
        }
        p += n;
        if (*p == ',') p++;
    }
    return false;
}

size_t vg_catalog_count(const struct vg_catalog *c) { return c->n; }

const struct vg_catalog_entry *vg_catalog_at(const struct vg_catalog *c, size_t i)
{
    return i < c->n ? &c->e[i] : NULL;
}
