/* changelog_deb.c — the CVEs a Debian or Ubuntu package's own changelog
 * (/usr/share/doc/PKG/changelog.Debian.gz) names, per entry.  An entry starts
 * with a header line in column 0, "source (version) dist; urgency=…", and runs
 * to the next header; every CVE-YYYY-N in its lines is recorded with the
 * entry's version when that version is at or below the installed one.  The
 * distribution names a CVE in its changelog when it backports the fix, so
 * such a CVE counts as fixed by the distribution (docs/audit.md). */
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

static void add(struct vg_changelog *cl, const char *cve, size_t cl_len, const char *version)
{
    for (size_t i = 0; i < cl->n; i++)
        if (strlen(cl->v[i].cve) == cl_len && !memcmp(cl->v[i].cve, cve, cl_len)) {
            vg_strlcpy(cl->v[i].version, version, sizeof cl->v[i].version);   /* entries run newest first: */
            return;                                                           /* the oldest naming it is the fix */
        }
    cl->v = vg_xrealloc(cl->v, (cl->n + 1) * sizeof *cl->v);
    struct vg_cl_cve *c = &cl->v[cl->n++];
    memcpy(c->cve, cve, cl_len);
    c->cve[cl_len] = 0;
    vg_strlcpy(c->version, version, sizeof c->version);
}

/* Records each CVE-YYYY-NNNN… in the line. */
static void scan_line(const char *l, size_t len, const char *version, struct vg_changelog *cl)
{
    for (size_t i = 0; i + 13 <= len; i++) {
        if (memcmp(l + i, "CVE-", 4) || (i && isalnum((unsigned char)l[i - 1]))) continue;
        size_t j = i + 4, d = 0;
        while (j < len && isdigit((unsigned char)l[j]) && d < 4) j++, d++;
        if (d != 4 || j >= len || l[j] != '-') continue;
        size_t k = ++j;
        while (j < len && isdigit((unsigned char)l[j]) && j - k < 8) j++;
        if (j - k < 4) continue;
        add(cl, l + i, j - i, version);
        i = j - 1;
    }
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
        } else if (counts && version[0]) {
            scan_line(p, ll, version, cl);
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

const char *vg_changelog_names(const struct vg_changelog *cl, const char *cve)
{
    for (size_t i = 0; cl && i < cl->n; i++)
        if (!strcmp(cl->v[i].cve, cve)) return cl->v[i].version;
    return NULL;
}

void vg_changelog_free(struct vg_changelog *cl)
{
    free(cl->v);
    memset(cl, 0, sizeof *cl);
}
