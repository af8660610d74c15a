/* advindex.c — the compact form of the advisory database (advisories.idx
 * beside advisories.json), written whenever the JSON file is saved, so that
 * `vigil audit` starts without a JSON parse: one read of the file and one
 * pass splitting lines in place.  Text, one record per line, fields separated
 * by tabs; tab, newline and backslash inside a field are written \t \n \\.
 *
 *   #vigil-advisory-index 3 STAMP
 *   G generated
 *   S name path repository commit snapshot about
 *   A id component ecosystem severity cvss url published distro package cves source summary ranges
 *   E component branch below date url note
 *   M component branch version url reason
 *
 * `ranges` is "introduced|fixed|last_affected|models|undecided" joined by
 * ';'.  An index of another format version is stale: it is passed over like
 * one written for another JSON file.  Advisories are
 * written in the database's (component, id, distro, package) order, so the
 * loaded database needs no sort.  STAMP is the size and FNV-1a hash (over 8-byte words) of the
 * JSON file it was written with: the index stands for that file only while
 * the stamp matches (vg_advdb_stamp). */
#include "advisory/advdb_int.h"
#include "util/rootfs.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC_ANY "#vigil-advisory-index "
#define MAGIC MAGIC_ANY "3 "
#define INDEX_MAX (64u << 20)

static void put(struct sbuf *b, const char *s, bool last)
{
    for (const char *p = s ? s : ""; *p; p++) {
        if (*p == '\t') sbuf_puts(b, "\\t");
        else if (*p == '\n') sbuf_puts(b, "\\n");
        else if (*p == '\\') sbuf_puts(b, "\\\\");
        else sbuf_putc(b, *p);
    }
    sbuf_putc(b, last ? '\n' : '\t');
}

/* A range's text field (models, undecided) with '|' and ';' (the field
 * separators) and tab, newline, backslash left out: the importers keep them
 * out of model lists and reasons.  Version bounds never hold them, and a
 * bound that has one is refused by the loader, so bounds are written as
 * they are. */
static void put_plain(struct sbuf *b, const char *s)
{
    for (; *s; s++)
        if (!strchr("|;\t\n\\", *s)) sbuf_putc(b, *s);
}

static void put_ranges(struct sbuf *b, const struct vg_advisory *a)
{
    for (size_t i = 0; i < a->nranges; i++) {
        const struct vg_range *r = &a->ranges[i];
        sbuf_printf(b, "%s%s|%s|%s|", i ? ";" : "", r->introduced, r->fixed, r->last_affected);
        put_plain(b, r->models);
        sbuf_putc(b, '|');
        put_plain(b, r->undecided);
    }
    sbuf_putc(b, '\n');
}

int vg_advdb_stamp(const char *json_path, char *stamp, size_t n)
{
    char *buf;
    size_t len;
    if (vg_read_file(NULL, json_path, INDEX_MAX, &buf, &len) < 0) return -1;
    uint64_t h = 1469598103934665603ull;   /* FNV-1a over 8-byte words, then the tail */
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, buf + i, 8);
        h = (h ^ w) * 1099511628211ull;
    }
    for (; i < len; i++) h = (h ^ (unsigned char)buf[i]) * 1099511628211ull;
    free(buf);
    snprintf(stamp, n, "%zu-%016llx", len, (unsigned long long)h);
    return 0;
}

int vg_advdb_save_index(const struct vg_advdb *db, const char *stamp, const char *path, char *err, size_t errlen)
{
    vg_advdb_sort((struct vg_advdb *)db);
    struct sbuf b = SBUF_INIT;
    sbuf_printf(&b, "%s%s\n", MAGIC, stamp && *stamp ? stamp : "-");
    sbuf_puts(&b, "G\t");
    put(&b, db->generated, true);
    for (size_t i = 0; i < db->nsrc; i++) {
        const struct vg_source *sr = &db->src[i];
        sbuf_puts(&b, "S\t");
        put(&b, sr->name, false), put(&b, sr->path, false), put(&b, sr->repository, false);
        put(&b, sr->commit, false), put(&b, sr->snapshot, false), put(&b, sr->about, true);
    }
    for (size_t i = 0; i < db->n; i++) {
        const struct vg_advisory *a = &db->advs[i];
        char cvss[32];
        snprintf(cvss, sizeof cvss, "%.1f", a->cvss);
        sbuf_puts(&b, "A\t");
        const char *f[] = { a->id,     a->component, vg_eco_name(a->eco), vg_severity_name(a->severity), cvss, a->url,
                            a->published, a->distro, a->package,           a->cves,                         a->source,
                            a->summary };
        for (size_t k = 0; k < sizeof f / sizeof f[0]; k++) put(&b, f[k], false);
        put_ranges(&b, a);
    }
    for (size_t i = 0; i < db->neol; i++) {
        const struct vg_eol *e = &db->eol[i];
        sbuf_puts(&b, "E\t");
        put(&b, e->component, false), put(&b, e->branch, false), put(&b, e->below, false);
        put(&b, e->date, false), put(&b, e->url, false), put(&b, e->note, true);
    }
    for (size_t i = 0; i < db->nmin; i++) {
        const struct vg_minimum *m = &db->min[i];
        sbuf_puts(&b, "M\t");
        put(&b, m->component, false), put(&b, m->branch, false), put(&b, m->version, false);
        put(&b, m->url, false), put(&b, m->reason, true);
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    bool ok = f && fwrite(b.s, 1, b.len, f) == b.len;
    if (f && fclose(f) != 0) ok = false;
    sbuf_free(&b);
    if (!ok || rename(tmp, path) < 0) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* Unescapes s in place. */
static char *unescape(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        if (*r == '\\' && r[1]) {
            r++;
            *w++ = *r == 't' ? '\t' : *r == 'n' ? '\n' : *r;
        } else {
            *w++ = *r;
        }
    }
    *w = 0;
    return s;
}

/* Splits the line at tabs into f (n fields exactly). */
static bool split(char *line, char **f, int n)
{
    for (int i = 0; i < n; i++) {
        f[i] = line;
        char *t = strchr(line, '\t');
        if (i == n - 1) return !t;
        if (!t) return false;
        *t = 0;
        line = t + 1;
    }
    return true;
}

static bool copy(char *dst, size_t n, char *src)
{
    unescape(src);
    return vg_strlcpy(dst, src, n) < n;
}

/* "introduced|fixed|last|models|undecided" → f[0..4]. */
static bool split_bar(char *s, char **f)
{
    for (int i = 0; i < 5; i++) {
        f[i] = s;
        char *bar = strchr(s, '|');
        if (i == 4) return !bar;
        if (!bar) return false;
        *bar = 0;
        s = bar + 1;
    }
    return true;
}

static bool parse_ranges(char *s, struct vg_advisory *a)
{
    size_t n = *s ? 1 : 0;
    for (char *p = s; *p; p++) n += *p == ';';
    a->ranges = vg_xcalloc(n ? n : 1, sizeof *a->ranges);
    for (char *r = s; n && r;) {
        char *next = strchr(r, ';');
        if (next) *next++ = 0;
        char *f[5];
        if (!split_bar(r, f)) return false;
        struct vg_range *g = &a->ranges[a->nranges++];
        if (!copy(g->introduced, sizeof g->introduced, f[0]) || !copy(g->fixed, sizeof g->fixed, f[1]) ||
            !copy(g->last_affected, sizeof g->last_affected, f[2]) || !copy(g->models, sizeof g->models, f[3]) ||
            !copy(g->undecided, sizeof g->undecided, f[4]))
            return false;
        r = next;
    }
    return true;
}

static bool advisory_line(struct vg_advdb *db, char *line)
{
    char *f[13];
    if (!split(line, f, 13)) return false;
    if (db->n == db->cap) {
        db->cap = db->cap ? db->cap * 2 : 256;
        db->advs = vg_xrealloc(db->advs, db->cap * sizeof *db->advs);
    }
    struct vg_advisory *a = &db->advs[db->n];
    memset(a, 0, sizeof *a);
    bool ok = copy(a->id, sizeof a->id, f[0]) && copy(a->component, sizeof a->component, f[1]) &&
              vg_eco_parse(f[2], &a->eco) && vg_severity_parse(f[3], &a->severity) &&
              copy(a->url, sizeof a->url, f[5]) && copy(a->published, sizeof a->published, f[6]) &&
              copy(a->distro, sizeof a->distro, f[7]) && copy(a->package, sizeof a->package, f[8]) &&
              copy(a->source, sizeof a->source, f[10]);
    a->cvss = strtod(f[4], NULL);
    a->cves = vg_xstrdup(unescape(f[9]));
    a->summary = vg_xstrdup(unescape(f[11]));
    db->n++;   /* counted even when bad, so that free releases it */
    /* in the database's order (component first): the binary search relies on it */
    if (db->n > 1 && strcmp(db->advs[db->n - 2].component, a->component) > 0) return false;
    return ok && parse_ranges(f[12], a);
}

int vg_advdb_parse_index(char *buf, size_t len, const char *path, const char *stamp, struct vg_advdb **out,
                         char *err, size_t errlen)
{
    *out = NULL;
    char *first = memchr(buf, '\n', len);
    if (len < sizeof MAGIC_ANY - 1 || memcmp(buf, MAGIC_ANY, sizeof MAGIC_ANY - 1) || !first) {
        snprintf(err, errlen, "%s:1: not a vigil advisory index", path);
        return -1;
    }
    *first = 0;
    if ((size_t)(first - buf) < sizeof MAGIC - 1 || memcmp(buf, MAGIC, sizeof MAGIC - 1)) {
        snprintf(err, errlen, "%s:1: another format version of the index", path);
        return 1;
    }
    if (stamp && strcmp(buf + sizeof MAGIC - 1, stamp)) {
        snprintf(err, errlen, "%s:1: written for another version of the JSON database", path);
        return 1;
    }
    struct vg_advdb *db = vg_advdb_new();
    size_t lineno = 1;
    bool ok = true;
    for (char *p = first + 1; ok && p < buf + len;) {
        lineno++;
        char *nl = memchr(p, '\n', (size_t)(buf + len - p));
        if (!nl) { ok = false; break; }
        *nl = 0;
        char *f[7];
        if (p[0] == 'A' && p[1] == '\t') {
            ok = advisory_line(db, p + 2);
        } else if (p[0] == 'G' && p[1] == '\t') {
            ok = copy(db->generated, sizeof db->generated, p + 2);
        } else if (p[0] == 'S' && p[1] == '\t' && split(p + 2, f, 6)) {
            struct vg_source sr;
            ok = copy(sr.name, sizeof sr.name, f[0]) && copy(sr.path, sizeof sr.path, f[1]) &&
                 copy(sr.repository, sizeof sr.repository, f[2]) && copy(sr.commit, sizeof sr.commit, f[3]) &&
                 copy(sr.snapshot, sizeof sr.snapshot, f[4]) && copy(sr.about, sizeof sr.about, f[5]);
            if (ok) vg_advdb_add_source(db, &sr);
        } else if (p[0] == 'E' && p[1] == '\t' && split(p + 2, f, 6)) {
            struct vg_eol e;
            ok = copy(e.component, sizeof e.component, f[0]) && copy(e.branch, sizeof e.branch, f[1]) &&
                 copy(e.below, sizeof e.below, f[2]) && copy(e.date, sizeof e.date, f[3]) &&
                 copy(e.url, sizeof e.url, f[4]) && copy(e.note, sizeof e.note, f[5]);
            if (ok) vg_advdb_add_eol(db, &e);
        } else if (p[0] == 'M' && p[1] == '\t' && split(p + 2, f, 5)) {
            struct vg_minimum m;
            ok = copy(m.component, sizeof m.component, f[0]) && copy(m.branch, sizeof m.branch, f[1]) &&
                 copy(m.version, sizeof m.version, f[2]) && copy(m.url, sizeof m.url, f[3]) &&
                 copy(m.reason, sizeof m.reason, f[4]);
            if (ok) vg_advdb_add_minimum(db, &m);
        } else {
            ok = false;
        }
        p = nl + 1;
    }
    if (!ok) {
        snprintf(err, errlen, "%s:%zu: malformed index line", path, lineno);
        vg_advdb_free(db);
        return -1;
    }
    db->sorted = true;   /* written in order */
    *out = db;
    return 0;
}

int vg_advdb_load_index(const char *path, const char *stamp, struct vg_advdb **out, char *err, size_t errlen)
{
    *out = NULL;
    char *buf;
    size_t len;
    if (vg_read_file(NULL, path, INDEX_MAX, &buf, &len) < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = vg_advdb_parse_index(buf, len, path, stamp, out, err, errlen);
    free(buf);
    return rc;
}
