/* jsonutil.h — small helpers around jansson for the output contract:
 * one JSON document (or JSON lines) on stdout, UTC timestamps with ms. */
#ifndef VG_JSONUTIL_H
#define VG_JSONUTIL_H
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

/* Prints doc followed by a newline; compact when lines != 0 (JSON lines),
 * indented otherwise.  Steals the reference.  Returns 0 or -1. */
int vg_json_print(FILE *f, json_t *doc, int lines);
/* A timestamp as an RFC 3339 string, or JSON null when ms <= 0. */
json_t *vg_json_time(int64_t ms);
/* Sets key to a string, or to null when s is NULL or empty. */
void vg_json_set_str(json_t *obj, const char *key, const char *s);
/* Reads a string member; returns def when absent or not a string. */
const char *vg_json_str(const json_t *obj, const char *key, const char *def);
/* Reads an integer member; returns def when absent or not an integer. */
long long vg_json_int(const json_t *obj, const char *key, long long def);
/* Reads an RFC 3339 member into ms; returns 0 when absent/null/invalid. */
int64_t vg_json_get_time(const json_t *obj, const char *key);
/* Every string in j, keys too (at most 64 bytes), at any depth up to
 * max_depth, is printable text (vg_utf8_printable: no control, bidi or
 * line-separator character) of at most max_len bytes.  0, or -1 with
 * "NAME.PATH: what" in err (name: what j is, e.g. "report"; "" for none:
 * "nodes[0].tests[2].name: …"). */
int vg_json_text_ok(const json_t *j, const char *name, size_t max_len, int max_depth, char *err, size_t errlen);

#endif
