/* import_debian.c — importer for the Debian security tracker's advisory lists
 * (data/DSA/list and data/DLA/list in its repository), Debian's own record
 * of what each DSA/DLA fixed:
 *
 *   [01 Jul 2024] DSA-5724-1 openssh - security update
 *           {CVE-2024-6387}
 *           [bookworm] - openssh 1:9.2p1-2+deb12u3
 *           NOTE: …
 *
 * Each "[release] - package version" line of a package vigil tracks becomes
 * the distribution's record for that release (ecosystem "Debian:12" from the
 * codename, the source package, the CVE ids in braces, fixed in that
 * version); "<not-affected>"/"<end-of-life>" lines carry no fix and are
 * skipped.  Such a record decides a Debian package's CVEs as USN and ALSA
 * records do (docs/audit.md, "Distribution packages: who decides"). */
#include "advisory/importer.h"
#include "util/strutil.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct { const char *codename, *release; } releases[] = {
    { "squeeze", "6" },   { "wheezy", "7" },  { "jessie", "8" }, { "stretch", "9" }, { "buster", "10" },
    { "bullseye", "11" }, { "bookworm", "12" }, { "trixie", "13" }, { "forky", "14" }, { "duke", "15" },
};

static const char *release_of(const char *codename, size_t n)
{
    for (size_t i = 0; i < sizeof releases / sizeof releases[0]; i++)
        if (strlen(releases[i].codename) == n && !strncmp(releases[i].codename, codename, n)) return releases[i].release;
    return NULL;
}

/* "[01 Jul 2024] " → "2024-07-01"; the length of the bracket, 0 when the
 * line does not start with one. */
static size_t header_date(const char *l, size_t len, char out[11])
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    if (len < 14 || l[0] != '[' || !isdigit((unsigned char)l[1]) || !isdigit((unsigned char)l[2]) || l[3] != ' ' ||
        l[7] != ' ' || l[12] != ']')
        return 0;
    const char *m = NULL;
    for (int i = 0; i < 12 && !m; i++)
        if (!memcmp(months + 3 * i, l + 4, 3)) m = months + 3 * i;
    for (int i = 8; i < 12; i++)
        if (!isdigit((unsigned char)l[i])) return 0;
    if (!m) return 0;
    snprintf(out, 11, "%.4s-%02d-%.2s", l + 8, (int)((m - months) / 3 + 1), l + 1);
    return 13;
}

bool vg_debian_list_detect(const char *text, size_t len)
{
    char d[11];
    size_t h = header_date(text, len, d);
    return h && len > h + 5 && text[h] == ' ' && text[h + 1] == 'D' && (text[h + 2] == 'S' || text[h + 2] == 'L') &&
           text[h + 3] == 'A' && text[h + 4] == '-';
}

struct entry {
    char id[48], pkg[64], date[11];
    char cves[1024];
    int lineno;
};

/* One "[release] - package version" line of the entry. */
static void fix_line(const struct entry *e, const char *l, size_t len, const char *file, struct vg_advdb *db,
                     struct vg_import_report *rep)
{
    const char *close = memchr(l, ']', len);
    if (!close || len - (size_t)(close - l) < 4 || memcmp(close, "] - ", 4)) return;
    const char *rel = release_of(l + 1, (size_t)(close - l - 1));
    const char *p = close + 4, *end = l + len;
    size_t pl = 0;
    while (p + pl < end && !isspace((unsigned char)p[pl])) pl++;
    const char *v = p + pl;
    while (v < end && *v == ' ') v++;
    size_t vl = 0;
    while (v + vl < end && !isspace((unsigned char)v[vl])) vl++;
    char pkg[64], ver[64];
    if (!pl || pl >= sizeof pkg || !vl || vl >= sizeof ver || !isdigit((unsigned char)*v)) return;   /* <not-affected> … */
    memcpy(pkg, p, pl), pkg[pl] = 0;
    memcpy(ver, v, vl), ver[vl] = 0;
    const char *comp = vg_component_for_distro_package(pkg);
    if (!comp || !rel) {
        rep->products_skipped++;
        if (comp) vg_strlist_add(&rep->skipped, "%s:%d: %s %.*s: unknown Debian release", file, e->lineno, e->id,
                                 (int)(close - l - 1), l + 1);
        return;
    }
    struct vg_advisory a;
    memset(&a, 0, sizeof a);
    struct vg_range r;
    memset(&r, 0, sizeof r);
    vg_strlcpy(r.fixed, ver, sizeof r.fixed);
    vg_strlcpy(a.id, e->id, sizeof a.id);
    vg_strlcpy(a.component, comp, sizeof a.component);
    a.eco = VG_ECO_DPKG;
    a.severity = VG_SEV_MEDIUM;   /* the list rates nothing; the upstream record's rating is used when it has one */
    char summary[160];
    snprintf(summary, sizeof summary, "%s %s security update", e->id, pkg);
    a.summary = summary;
    snprintf(a.url, sizeof a.url, "https://security-tracker.debian.org/tracker/%s", e->id);
    vg_strlcpy(a.published, e->date, sizeof a.published);
    snprintf(a.distro, sizeof a.distro, "Debian:%s", rel);
    vg_strlcpy(a.package, pkg, sizeof a.package);
    a.cves = (char *)e->cves;
    a.ranges = &r;
    a.nranges = 1;
    vg_import_add(db, rep, &a);
}

int vg_debian_list_import(const char *text, size_t len, const char *file, struct vg_advdb *db,
                          struct vg_import_report *rep, char *err, size_t errlen)
{
    if (memchr(text, 0, len)) {
        snprintf(err, errlen, "%s: not a text file", file);
        return -1;
    }
    struct entry e;
    memset(&e, 0, sizeof e);
    bool in = false;
    int lineno = 0;
    for (const char *l = text; l < text + len;) {
        const char *nl = memchr(l, '\n', (size_t)(text + len - l));
        size_t ll = (size_t)((nl ? nl : text + len) - l);
        lineno++;
        char date[11];
        size_t h = header_date(l, ll, date);
        if (h) {   /* [01 Jul 2024] DSA-5724-1 openssh - security update */
            memset(&e, 0, sizeof e);
            e.lineno = lineno;
            vg_strlcpy(e.date, date, sizeof e.date);
            const char *p = l + h, *end = l + ll;
            while (p < end && *p == ' ') p++;
            size_t il = 0, pl = 0;
            while (p + il < end && !isspace((unsigned char)p[il])) il++;
            const char *q = p + il;
            while (q < end && *q == ' ') q++;
            while (q + pl < end && !isspace((unsigned char)q[pl])) pl++;
            in = il > 4 && il < sizeof e.id && pl && pl < sizeof e.pkg && (!strncmp(p, "DSA-", 4) || !strncmp(p, "DLA-", 4));
            if (in) {
                memcpy(e.id, p, il);
                memcpy(e.pkg, q, pl);
            } else {
                vg_strlist_add(&rep->warnings, "%s:%d: not an advisory line; entry skipped", file, lineno);
            }
        } else if (in && ll && isspace((unsigned char)*l)) {
            const char *p = l;
            while (p < l + ll && isspace((unsigned char)*p)) p++;
            size_t rest = (size_t)(l + ll - p);
            if (rest && *p == '{') {   /* {CVE-… CVE-…} */
                size_t k = strlen(e.cves);
                for (const char *c = p + 1; c < p + rest && *c != '}';) {
                    size_t w = 0;
                    while (c + w < p + rest && c[w] != ' ' && c[w] != '}') w++;
                    if (w >= 13 && !strncmp(c, "CVE-", 4) && k + w + 2 < sizeof e.cves)
                        k += (size_t)snprintf(e.cves + k, sizeof e.cves - k, "%s%.*s", k ? " " : "", (int)w, c);
                    c += w;
                    while (c < p + rest && *c == ' ') c++;
                }
            } else if (rest && *p == '[') {
                fix_line(&e, p, rest, file, db, rep);
            }
        } else if (ll) {
            in = false;   /* anything else ends the entry */
        }
        l = nl ? nl + 1 : text + len;
    }
    return 0;
}

const struct vg_importer vg_importer_debian = { "debian", NULL, NULL, vg_debian_list_detect, vg_debian_list_import };
