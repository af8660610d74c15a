/* checkconf.h — the expectations file of `vigil check` (/etc/vigil/vigil.conf),
 * NHC-style: one check per line, scoped by a host mask.
 *
 *   # comment
 *   HOSTMASK || CHECK [WORD…] [KEY=VALUE…]
 *
 * HOSTMASK is `*`, a glob (`gpu-*`), a node range (`gpu[01-16]`, `n[1-3,7]`),
 * a /regex/ (POSIX extended), or several of these separated by commas; a
 * leading `!` negates one.  VALUE may be double-quoted ("NVIDIA H100 80GB
 * HBM3", with \" and \\ escapes).  The checks and their keys are in
 * checks.h; the grammar is documented in docs/check.md. */
#ifndef VG_CHECKCONF_H
#define VG_CHECKCONF_H
#include <stdbool.h>
#include <stddef.h>

struct vg_check_kv {
    char *key, *val;
};

struct vg_check_line {
    int lineno;
    char *hostmask;
    char *check;
    char **words;          /* positional arguments */
    int nwords;
    struct vg_check_kv *kv;
    int nkv;
};

struct vg_checkconf {
    char *file;
    struct vg_check_line *lines;
    size_t n;
};

/* Parses text; on a malformed line returns -1 with "FILE:LINE: what" in err
 * (the lines before it are kept; free with vg_checkconf_free either way). */
int vg_checkconf_parse(const char *text, size_t len, const char *file, struct vg_checkconf *c, char *err,
                       size_t errlen);
/* Reads and parses path (root-relative when root is not NULL). */
int vg_checkconf_load(const char *root, const char *path, struct vg_checkconf *c, char *err, size_t errlen);
void vg_checkconf_free(struct vg_checkconf *c);
/* The value of key on the line, or NULL. */
const char *vg_check_get(const struct vg_check_line *l, const char *key);
/* Whether node matches mask; -1 when the mask is malformed. */
int vg_hostmask_match(const char *mask, const char *node);

#endif
