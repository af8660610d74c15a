/* changelog_rpm.c — the CVEs an rpm package's own changelog names, per entry,
 * read from the package database with `rpm -q` (one run for all the packages
 * an audit asks about; util/spawn.h, never a shell).  An entry starts with a
 * header line "* Thu Jul 04 2024 Name <mail> - 8.7p1-42" (the version-release
 * after the last " - ", else after the mail address, where the kernel's
 * changelog writes it in brackets: "<mail> [5.14.0-424.el9]"; an epoch "1:"
 * may lead it) and runs to the next header; every CVE-YYYY-N in its lines is
 * recorded with the entry's version when that version is at or below the
 * installed one (rpm order, docs/audit.md).  An entry's version is written
 * without the %{dist} tag ("8.7p1-42" in the package 8.7p1-43.el9), and a z-stream
 * build has the tag inside its release (8.7p1-38.el9_4.1 against an entry
 * "8.7p1-38.1"), so the tags (.el9, .el9_4, .fc40, .amzn2) are left out of
 * both sides before the compare.  The version filter matters where several
 * instances of a package are installed (kernels): `rpm -q` prints each one's
 * changelog.  An entry without a readable version is skipped. */
#include "inventory/inventory.h"
#include "util/log.h"
#include "util/spawn.h"
#include "util/strutil.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RPM_TIMEOUT_MS 60000
/* Starts each package's part of the output: an entry's header starts "* ",
 * and no line of an entry's text starts with '*' (rpmbuild reads such a line
 * as the next header). */
#define MARK "**vigil "

/* "* Thu Jul 04 2024 Name <mail> - 8.7p1-42": copies "8.7p1-42" ("" when the
 * header names no version); "<mail> [5.14.0-424.el9]" gives "5.14.0-424.el9".
 * False when the line is not a header. */
static bool header_version(const char *l, size_t len, char *ver, size_t n)
{
    if (len < 2 || l[0] != '*' || l[1] != ' ') return false;
    ver[0] = 0;
    const char *p = NULL, *end = l + len;
    for (const char *q = l + 2; q + 3 <= end; q++)
        if (!memcmp(q, " - ", 3)) p = q + 3;
    if (!p)
        for (const char *q = end; q > l; q--)
            if (q[-1] == '>') {
                p = q;
                break;
            }
    if (!p) return true;
    while (p < end && *p == ' ') p++;
    bool bracket = p < end && *p == '[';
    p += bracket;
    const char *e = p;
    while (e < end && (isalnum((unsigned char)*e) || strchr(".+~^_:-", *e))) e++;
    if (bracket ? e == end || *e != ']' : e < end && *e != ' ' && *e != ',') return true;   /* not a version word */
    while (e > p && strchr(":-.", e[-1])) e--;                         /* "1.2-3:" */
    if (e == p || !isdigit((unsigned char)*p) || (size_t)(e - p) >= n) return true;
    memcpy(ver, p, (size_t)(e - p));
    ver[e - p] = 0;
    return true;
}

/* v without its epoch and with the release's distribution tags left out:
 * "1:8.7p1-38.el9_4.1" → "8.7p1-38.1". */
static void comparable(const char *v, char *buf, size_t n)
{
    const char *colon = strchr(v, ':');
    if (colon && colon > v && strspn(v, "0123456789") == (size_t)(colon - v)) v = colon + 1;
    vg_strlcpy(buf, v, n);
    char *rel = strrchr(buf, '-');
    if (!rel) return;
    char *w = ++rel;
    for (char *seg = rel; *seg;) {
        size_t l = strcspn(seg, ".");
        bool tag = false;
        static const char *const tags[] = { "el", "fc", "amzn", NULL };
        for (int i = 0; tags[i] && !tag; i++) {
            size_t tl = strlen(tags[i]);
            tag = l > tl && !strncmp(seg, tags[i], tl) && isdigit((unsigned char)seg[tl]);
        }
        if (!tag) {
            if (w != rel) *w++ = '.';
            memmove(w, seg, l);
            w += l;
        }
        seg += l + (seg[l] == '.');
    }
    *w = 0;
    if (w == rel) rel[-1] = 0;   /* only tags: no release left */
}

bool vg_rpm_changelog_counts(const char *entry, const char *installed)
{
    if (!installed || !*installed) return true;
    char a[128], b[128];
    comparable(entry, a, sizeof a);
    comparable(installed, b, sizeof b);
    return vg_version_cmp(VG_ECO_RPM, a, b) <= 0;
}

void vg_rpm_changelog_parse(const char *text, size_t len, const char *installed, struct vg_changelog *cl)
{
    char version[64] = "";
    bool counts = false;
    for (const char *p = text, *end = text + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (header_version(p, ll, version, sizeof version)) {
            counts = version[0] && vg_rpm_changelog_counts(version, installed);
            char mon[8], line[32];
            int day, year;
            size_t k = ll < sizeof line - 1 ? ll : sizeof line - 1;   /* "* Thu Jul 04 2024 Name" */
            memcpy(line, p, k);
            line[k] = 0;
            if (counts && sscanf(line, "* %*3s %3s %d %d", mon, &day, &year) == 3)
                vg_changelog_saw_date(cl, day, mon, year);
        }
        else if (counts)
            vg_changelog_scan_line(p, ll, version, cl);
        p = nl ? nl + 1 : end;
    }
}

/* Hands the part of the output for package `name` to each component of it. */
static void deliver(struct vg_component *const *comps, size_t n, const char *name, size_t nl, const char *text,
                    size_t len)
{
    for (size_t i = 0; i < n; i++) {
        struct vg_component *c = comps[i];
        if (strlen(c->package) != nl || memcmp(c->package, name, nl)) continue;
        vg_rpm_changelog_parse(text, len, c->version, &c->changelog);
        if (len) snprintf(c->changelog.path, sizeof c->changelog.path, "rpm -q --changelog %s", c->package);
    }
}

void vg_rpm_changelogs_split(struct vg_component *const *comps, size_t n, const char *out, size_t len)
{
    const char *name = NULL, *text = NULL;
    size_t nl = 0;
    for (const char *p = out, *end = out + len; p <= end;) {
        const char *eol = p < end ? memchr(p, '\n', (size_t)(end - p)) : NULL;
        size_t ll = eol ? (size_t)(eol - p) : (size_t)(end - p);
        bool mark = p < end && ll > strlen(MARK) && !memcmp(p, MARK, strlen(MARK));
        if (mark || p == end) {
            if (name) deliver(comps, n, name, nl, text, (size_t)(p - text));
            if (p == end) break;
            name = p + strlen(MARK);
            nl = ll - strlen(MARK);
            text = eol ? eol + 1 : end;
        }
        p = eol ? eol + 1 : end;
    }
}

int vg_rpm_changelogs_load(struct vg_inventory *inv, struct vg_component *const *comps, size_t n)
{
    if (!n || !inv->rpm_db[0]) return 0;
    const char **argv = vg_xmalloc((n + 10) * sizeof *argv);
    size_t k = 0;
    argv[k++] = "rpm";
    argv[k++] = "-q";
    argv[k++] = "--root";
    argv[k++] = inv->rpm_root ? inv->rpm_root : inv->root;
    argv[k++] = "--dbpath";
    argv[k++] = inv->rpm_db;
    argv[k++] = "--qf";
    argv[k++] = MARK "%{NAME}\\n[* %{CHANGELOGTIME:day} %{CHANGELOGNAME}\\n%{CHANGELOGTEXT}\\n\\n]";
    for (size_t i = 0; i < n; i++) {
        bool dup = false;
        for (size_t j = 8; j < k && !dup; j++) dup = !strcmp(argv[j], comps[i]->package);
        if (!dup) argv[k++] = comps[i]->package;
    }
    argv[k] = NULL;
    struct vg_spawn_result r;
    int rc = vg_spawn(argv, NULL, NULL, RPM_TIMEOUT_MS, &r);
    if (rc < 0 || r.status == 127 || r.timed_out) {
        /* status 1 only says a name is not installed: the rest is printed */
        vg_warn("rpm -q --changelog: %s (changelogs not used)", r.timed_out ? "timed out" : "could not be run");
        rc = -1;
    } else {
        vg_rpm_changelogs_split(comps, n, r.out, r.out_len);
    }
    vg_spawn_result_free(&r);
    free(argv);
    return rc < 0 ? -1 : 0;
}
