/* versiontext.c — reads versions out of text that tools and packages leave on
 * disk, without running anything: nvcc's banner ("Cuda compilation tools,
 * release 13.0, V13.0.88", the text `nvcc --version` prints, also found
 * inside the nvcc binary), a wheel's METADATA headers ("Name:" and
 * "Version:"), and CUDA_VERSION as cuda.h defines it (13000 → 13.0). */
#include "inventory/inventory.h"
#include "util/strutil.h"
#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* The version characters at s (digits, letters, dots, '+', '-'), at most n-1. */
static size_t version_span(const char *s, const char *end, char *out, size_t n)
{
    size_t k = 0;
    while (s + k < end && k + 1 < n && (isalnum((unsigned char)s[k]) || s[k] == '.' || s[k] == '+' || s[k] == '-')) k++;
    while (k && (s[k - 1] == '.' || s[k - 1] == '-' || s[k - 1] == '+')) k--;
    memcpy(out, s, k);
    out[k] = 0;
    return k;
}

bool vg_nvcc_banner(const char *text, size_t len, char *release, size_t rn, char *build, size_t bn)
{
    static const char key[] = "Cuda compilation tools, release ";
    const size_t kl = sizeof key - 1;
    const char *end = text + len;
    for (const char *p = text; p && p + kl <= end; p = memchr(p + 1, 'C', (size_t)(end - p - 1))) {
        if (memcmp(p, key, kl)) continue;
        const char *r = p + kl;
        if (r >= end || !isdigit((unsigned char)*r) || !version_span(r, end, release, rn) || !strchr(release, '.'))
            continue;
        const char *v = r + strlen(release);
        build[0] = 0;
        if (end - v > 3 && v[0] == ',' && v[1] == ' ' && v[2] == 'V' && isdigit((unsigned char)v[3]))
            version_span(v + 3, end, build, bn);
        return true;
    }
    return false;
}

/* One header value of an RFC 822-style block: the text after "Key: " on the
 * line starting with it (before the first empty line, where the body starts). */
static bool header_value(const char *text, size_t len, const char *key, char *out, size_t n)
{
    size_t kl = strlen(key);
    const char *end = text + len;
    for (const char *line = text; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const char *le = nl ? nl : end;
        size_t l = (size_t)(le - line);
        if (l && line[l - 1] == '\r') l--;
        if (!l) return false; /* the headers end at the first empty line */
        if (l > kl + 1 && !strncasecmp(line, key, kl) && line[kl] == ':') {
            const char *v = line + kl + 1;
            while (v < line + l && (*v == ' ' || *v == '\t')) v++;
            size_t vl = (size_t)(line + l - v);
            while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t')) vl--;
            if (!vl || vl >= n || memchr(v, 0, vl)) return false;
            memcpy(out, v, vl);
            out[vl] = 0;
            return true;
        }
        line = nl ? nl + 1 : end;
    }
    return false;
}

bool vg_wheel_metadata(const char *text, size_t len, char *name, size_t nn, char *version, size_t vn)
{
    if (!header_value(text, len, "Name", name, nn) || !header_value(text, len, "Version", version, vn)) return false;
    return isdigit((unsigned char)version[0]) && strspn(version, "0123456789.abcrdevpost+") == strlen(version);
}

bool vg_cuda_version_code(long code, char *out, size_t n)
{
    if (code < 1000 || code > 999990) return false;
    snprintf(out, n, "%ld.%ld", code / 1000, code % 1000 / 10);
    return true;
}
