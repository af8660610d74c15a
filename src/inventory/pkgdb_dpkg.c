/* pkgdb_dpkg.c — reads the dpkg status file (/var/lib/dpkg/status) directly:
 * RFC 822 stanzas separated by blank lines, continuation lines starting with
 * a blank.  Package, Version, Architecture, Status and Source (the source
 * package, without its version) are kept.  One read of the file, parsed in place (the packages' strings point
 * into the buffer), no per-line allocation.  Only packages whose Status is
 * "<want> ok installed" count.  A corrupt file (binary data, a stanza without
 * Package, a truncated last stanza, an over-long line) is an input error
 * naming file:line. */
#include "inventory/inventory.h"
#include "util/log.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DPKG_STATUS "/var/lib/dpkg/status"
#define DPKG_MAX_FILE (512u << 20)
#define DPKG_MAX_LINE (64u << 10)

struct stanza {
    char *name, *version, *arch, *status, *src;
    size_t line; /* where it starts */
};

/* The first control byte (below 0x20 other than tab and CR, or 0x7f; so
 * also the newline) in p[0..n), or -1.  Eight bytes at a time: a word without a byte below 0x20
 * or equal to 0x7f is skipped whole (the usual has-less-than trick; bytes
 * from 0x80 up may flag a word, which is then checked byte by byte). */
static long control_byte(const char *p, size_t n)
{
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, p + i, 8);
        uint64_t del = x ^ (0x7f * ones);
        if (!(((x - 0x20 * ones) | (del - ones)) & highs)) continue;
        for (size_t j = i; j < i + 8; j++) {
            unsigned char c = (unsigned char)p[j];
            if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f) return (long)j;
        }
    }
    for (; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f) return (long)i;
    }
    return -1;
}

static void add_pkg(struct vg_inventory *inv, const struct stanza *s)
{
    if (inv->npkgs == inv->pkgcap) {
        inv->pkgcap = inv->pkgcap ? inv->pkgcap * 2 : 256;
        inv->pkgs = vg_xrealloc(inv->pkgs, inv->pkgcap * sizeof *inv->pkgs);
    }
    inv->pkgs[inv->npkgs++] = (struct vg_pkg){ s->name, s->version, s->arch ? s->arch : "", s->src ? s->src : "",
                                                VG_ECO_DPKG };
}

/* "install ok installed", "hold ok installed": the third word is "installed". */
static bool installed(const char *status)
{
    const char *sp = strrchr(status, ' ');
    return sp && !strcmp(sp + 1, "installed") && strstr(status, " ok ");
}

static int end_stanza(struct vg_inventory *inv, struct stanza *s, const char *path)
{
    if (!s->name) return vg_inventory_fail(inv, "%s:%zu: stanza without a Package field", path, s->line);
    if (!s->status) return vg_inventory_fail(inv, "%s:%zu: package '%s' has no Status field", path, s->line, s->name);
    if (installed(s->status)) {
        if (!s->version || !*s->version)
            return vg_inventory_fail(inv, "%s:%zu: installed package '%s' has no Version field", path, s->line, s->name);
        add_pkg(inv, s);
    }
    memset(s, 0, sizeof *s);
    return 0;
}

int vg_dpkg_parse(struct vg_inventory *inv, char *buf, size_t len, const char *path)
{
    struct stanza s = { 0 };
    bool in_stanza = false;
    size_t line = 0;
    char *p = buf, *end = buf + len;
    while (p < end) {
        line++;
        /* one scan finds the line's end and any binary byte before it: '\n' is the first control byte */
        long at = control_byte(p, (size_t)(end - p));
        if (at >= 0 && p[at] != '\n')
            return vg_inventory_fail(inv, "%s:%zu: binary data (byte 0x%02x), not a dpkg status file", path, line,
                                     (unsigned char)p[at]);
        if (at < 0) return vg_inventory_fail(inv, "%s:%zu: truncated (last line has no newline)", path, line);
        char *nl = p + at;
        size_t ll = (size_t)(nl - p);
        if (ll > DPKG_MAX_LINE) return vg_inventory_fail(inv, "%s:%zu: line longer than %u bytes", path, line, DPKG_MAX_LINE);
        if (ll == 0 || (ll == 1 && *p == '\r')) {
            if (in_stanza && end_stanza(inv, &s, path) < 0) return -1;
            in_stanza = false;
        } else if (*p == ' ' || *p == '\t') {
            if (!in_stanza) return vg_inventory_fail(inv, "%s:%zu: continuation line outside a stanza", path, line);
        } else {
            char *colon = memchr(p, ':', ll);
            if (!colon) return vg_inventory_fail(inv, "%s:%zu: expected 'Field: value'", path, line);
            if (!in_stanza) s.line = line;
            in_stanza = true;
            char *v = colon + 1, *ve = nl;
            while (v < ve && (*v == ' ' || *v == '\t')) v++;
            while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t' || ve[-1] == '\r')) ve--;
            size_t fl = (size_t)(colon - p);
            char **slot = NULL;
            if (fl == 7 && !memcmp(p, "Package", 7)) slot = &s.name;
            else if (fl == 7 && !memcmp(p, "Version", 7)) slot = &s.version;
            else if (fl == 12 && !memcmp(p, "Architecture", 12)) slot = &s.arch;
            else if (fl == 6 && !memcmp(p, "Status", 6)) slot = &s.status;
            else if (fl == 6 && !memcmp(p, "Source", 6)) {
                slot = &s.src;
                char *sp = memchr(v, ' ', (size_t)(ve - v)); /* "glibc (2.36-9)": the name only */
                if (sp) ve = sp;
            }
            if (slot) {
                *ve = 0; /* ve <= nl: terminates the value in place */
                *slot = v;
            }
        }
        p = nl + 1;
    }
    if (in_stanza)
        return vg_inventory_fail(inv, "%s:%zu: truncated in the middle of a stanza (no blank line after it)", path, line);
    return 0;
}

int vg_pkgdb_dpkg_load(struct vg_inventory *inv)
{
    char *buf;
    size_t len;
    if (vg_read_file(inv->root, DPKG_STATUS, DPKG_MAX_FILE, &buf, &len) < 0) {
        if (errno == ENOENT || errno == ENOTDIR) return 0;
        char *full = vg_root_path(inv->root, DPKG_STATUS);
        vg_inventory_fail(inv, "%s: %s", full, strerror(errno));
        free(full);
        return -1;
    }
    inv->bufs = vg_xrealloc(inv->bufs, (inv->nbufs + 1) * sizeof *inv->bufs);
    inv->bufs[inv->nbufs++] = buf;
    char *full = vg_root_path(inv->root, DPKG_STATUS);
    size_t before = inv->npkgs;
    int rc = vg_dpkg_parse(inv, buf, len, full);
    free(full);
    if (rc < 0) return -1;
    vg_inventory_sort_pkgs(inv);
    if (inv->npkgs > before || !inv->pkgdb_source[0]) vg_strlcpy(inv->pkgdb_source, "dpkg:" DPKG_STATUS, sizeof inv->pkgdb_source);
    return 0;
}
