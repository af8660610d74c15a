/* manifest.c — the sources manifest (data/sources/MANIFEST): one line per
 * source of the advisory database, tab-separated,
 *
 *   name  path  repository  commit  snapshot  about
 *
 * ("go-vulndb", "osv/go" relative to the manifest's folder, the repository
 * the files were copied from, its commit or "-", the date the copy was
 * taken (YYYY-MM-DD) or "-", one line saying what it holds).  Lines starting
 * with '#' and blank lines are comments.  `vigil advisories import
 * --manifest` imports each path tagged with its name and keeps the rows in
 * the database, which `vigil advisories status` reports on. */
#include "advisory/importer.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool valid_name(const char *s)
{
    if (!*s) return false;
    for (; *s; s++)
        if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '-') return false;
    return true;
}

static bool valid_date(const char *s)
{
    return strlen(s) == 10 && isdigit((unsigned char)s[0]) && isdigit((unsigned char)s[1]) &&
           isdigit((unsigned char)s[2]) && isdigit((unsigned char)s[3]) && s[4] == '-' && isdigit((unsigned char)s[5]) &&
           isdigit((unsigned char)s[6]) && s[7] == '-' && isdigit((unsigned char)s[8]) && isdigit((unsigned char)s[9]) &&
           (s[5] - '0') * 10 + (s[6] - '0') >= 1 && (s[5] - '0') * 10 + (s[6] - '0') <= 12 &&
           (s[8] - '0') * 10 + (s[9] - '0') >= 1 && (s[8] - '0') * 10 + (s[9] - '0') <= 31;
}

/* A relative path inside the manifest's folder: no leading '/', no "..". */
static bool valid_path(const char *s)
{
    return *s && *s != '/' && !strstr(s, "..");
}

/* Copies field f into dst ("-" is empty); false when it does not fit. */
static bool field(char *dst, size_t n, const char *f)
{
    if (!strcmp(f, "-")) f = "";
    return vg_strlcpy(dst, f, n) < n;
}

int vg_manifest_parse(char *text, size_t len, const char *path, struct vg_source **out, size_t *nout, char *err,
                      size_t errlen)
{
    *out = NULL;
    *nout = 0;
    if (memchr(text, 0, len)) {
        snprintf(err, errlen, "%s: not a text file", path);
        return -1;
    }
    size_t lineno = 0;
    for (char *line = text; line < text + len;) {
        lineno++;
        char *nl = memchr(line, '\n', (size_t)(text + len - line));
        char *end = nl ? nl : text + len;
        *end = 0;
        if (end > line && end[-1] == '\r') end[-1] = 0;
        char *next = nl ? nl + 1 : text + len;
        if (!*line || *line == '#') {
            line = next;
            continue;
        }
        char *f[6];
        int k = 0;
        for (char *p = line; k < 6;) {
            f[k++] = p;
            char *t = strchr(p, '\t');
            if (!t) break;
            *t = 0;
            p = t + 1;
            while (*p == '\t') p++;   /* columns may be aligned with several tabs */
        }
        const char *why = NULL;
        struct vg_source s;
        memset(&s, 0, sizeof s);
        if (k != 6 || strchr(f[5], '\t')) why = "expected 6 tab-separated fields: name path repository commit snapshot about";
        else if (!field(s.name, sizeof s.name, f[0]) || !valid_name(s.name)) why = "name: lower-case letters, digits and '-' only";
        else if (!field(s.path, sizeof s.path, f[1]) || !valid_path(s.path)) why = "path: a relative path inside the manifest's folder";
        else if (!field(s.repository, sizeof s.repository, f[2])) why = "repository: too long";
        else if (!field(s.commit, sizeof s.commit, f[3]) || strspn(s.commit, "0123456789abcdef") != strlen(s.commit))
            why = "commit: a hexadecimal commit id or '-'";
        else if (!field(s.snapshot, sizeof s.snapshot, f[4]) || (s.snapshot[0] && !valid_date(s.snapshot)))
            why = "snapshot: a date YYYY-MM-DD or '-'";
        else if (!field(s.about, sizeof s.about, f[5])) why = "about: too long";
        for (size_t i = 0; !why && i < *nout; i++)
            if (!strcmp((*out)[i].name, s.name)) why = "name: listed twice";
        if (why) {
            snprintf(err, errlen, "%s:%zu: %s", path, lineno, why);
            free(*out);
            *out = NULL;
            *nout = 0;
            return -1;
        }
        *out = vg_xrealloc(*out, (*nout + 1) * sizeof **out);
        (*out)[(*nout)++] = s;
        line = next;
    }
    return 0;
}

int vg_import_manifest(const char *path, struct vg_advdb *db, struct vg_import_report *rep, char *err, size_t errlen)
{
    char *text;
    size_t len;
    if (vg_read_file(NULL, path, 1 << 20, &text, &len) < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct vg_source *src;
    size_t n;
    int rc = vg_manifest_parse(text, len, path, &src, &n, err, errlen);
    free(text);
    if (rc < 0) return -1;
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path) : 1;
    const char *dir = slash ? path : ".";
    for (size_t i = 0; i < n && rc == 0; i++) {
        char sub[4096];
        snprintf(sub, sizeof sub, "%.*s/%s", dirlen, dir, src[i].path);
        const char *before = rep->source;
        rep->source = src[i].name;
        rc = vg_import_path(sub, db, rep, err, errlen);
        rep->source = before;
        if (rc == 0) vg_advdb_add_source(db, &src[i]);
    }
    free(src);
    return rc;
}
