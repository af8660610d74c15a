/* changelog_deb.c — the CVEs a Debian or Ubuntu package's own changelog
 * (/usr/share/doc/PKG/changelog.Debian.gz) names, per entry.  An entry starts
 * with a header line in column 0, "source (version) dist; urgency=…", and runs
 * to the next header; every CVE-YYYY-N in its lines is recorded with the
 * entry's version when that version is at or below the installed one.  The
 * distribution names a CVE in its changelog when it backports the fix, so
 * such a CVE counts as fixed by the distribution (docs/audit.md).  The list
 * and the CVE scan are shared with the rpm reader (changelog.c). */
#include "inventory/inventory.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define CHANGELOG_MAX (16u << 20)

/* "glibc (2.36-9+deb12u3) bookworm; urgency=medium": copies the version. */
static bool header_version(const char *l, size_t len, char *ver, size_t n)
{
    if (!len || isspace((unsigned char)*l)) return false;
    const char *open = memchr(l, '(', len);
    if (!open || open == l || open[-1] != ' ') return false;
    const char *close = memchr(open, ')', len - (size_t)(open - l));
    if (!close || close == open + 1 || (size_t)(close - open) >= n) return false;
    if (!memchr(close, ';', len - (size_t)(close - l))) return false;
    memcpy(ver, open + 1, (size_t)(close - open - 1));
    ver[close - open - 1] = 0;
    return true;
}

/* An entry's trailer line: the date after the mail address's "> ". */
static void trailer_date(const char *l, size_t len, struct vg_changelog *cl)
{
    const char *gt = memchr(l, '>', len);
    char buf[64], mon[8];
    int day, year;
    if (!gt || (size_t)(l + len - gt) >= sizeof buf) return;
    memcpy(buf, gt + 1, (size_t)(l + len - gt - 1));
    buf[l + len - gt - 1] = 0;
    if (sscanf(buf, " %*3s, %d %3s %d", &day, mon, &year) == 3) vg_changelog_saw_date(cl, day, mon, year);
}

void vg_deb_changelog_parse(const char *text, size_t len, const char *installed, struct vg_changelog *cl)
{
    char version[64] = "";
    bool counts = false;
    for (const char *p = text, *end = text + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
        char v[64];
        if (header_version(p, ll, v, sizeof v)) {
            vg_strlcpy(version, v, sizeof version);
            counts = !installed || !*installed || vg_version_cmp(VG_ECO_DPKG, version, installed) <= 0;
        } else if (counts && version[0] && ll > 4 && !memcmp(p, " -- ", 4)) {
            trailer_date(p, ll, cl);   /* " -- Name <mail>  Thu, 08 May 2025 11:54:24 +0100" */
        } else if (counts && version[0]) {
            vg_changelog_scan_line(p, ll, version, cl);
        }
        p = nl ? nl + 1 : end;
    }
}

int vg_deb_changelog_load(const char *root, const char *pkg, const char *installed, struct vg_changelog *cl,
                          char *err, size_t errlen)
{
    char rel[256];
    snprintf(rel, sizeof rel, "/usr/share/doc/%s/changelog.Debian.gz", pkg);
    if (!vg_path_exists(root, rel)) return 0;
    char *full = vg_root_path(root, rel);
    gzFile gz = gzopen(full, "rb");
    if (!gz) {
        snprintf(err, errlen, "%s: %s", full, strerror(errno));
        free(full);
        return -1;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = vg_xmalloc(cap);
    int got;
    while ((got = gzread(gz, buf + len, (unsigned)(cap - len))) > 0) {
        len += (size_t)got;
        if (len == cap) {
            if (cap >= CHANGELOG_MAX) break;   /* the newest entries are first: enough */
            cap *= 2;
            buf = vg_xrealloc(buf, cap);
        }
    }
    int zerr = 0;
    const char *msg = got < 0 ? gzerror(gz, &zerr) : NULL;
    if (got < 0) snprintf(err, errlen, "%s: not a readable gzip file (%s)", full, msg ? msg : "error");
    gzclose(gz);
    if (got >= 0) {
        vg_deb_changelog_parse(buf, len, installed, cl);
        vg_strlcpy(cl->path, rel, sizeof cl->path);
    }
    free(buf);
    free(full);
    return got < 0 ? -1 : 0;
}
