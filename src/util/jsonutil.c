/* jsonutil.c — jansson helpers; see jsonutil.h. */
#include "util/jsonutil.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdio.h>
#include <string.h>

int vg_json_print(FILE *f, json_t *doc, int lines)
{
    if (!doc) return -1;
    size_t flags = JSON_ENSURE_ASCII | (lines ? JSON_COMPACT : JSON_INDENT(2)) | JSON_PRESERVE_ORDER;
    int rc = json_dumpf(doc, f, flags);
    fputc('\n', f);
    json_decref(doc);
    return rc;
}

json_t *vg_json_time(int64_t ms)
{
    if (ms <= 0) return json_null();
    char buf[32];
    vg_format_time(ms, buf);
    return json_string(buf);
}

void vg_json_set_str(json_t *obj, const char *key, const char *s)
{
    json_object_set_new(obj, key, s && *s ? json_string(s) : json_null());
}

const char *vg_json_str(const json_t *obj, const char *key, const char *def)
{
    json_t *v = json_object_get(obj, key);
    return json_is_string(v) ? json_string_value(v) : def;
}

long long vg_json_int(const json_t *obj, const char *key, long long def)
{
    json_t *v = json_object_get(obj, key);
    return json_is_integer(v) ? json_integer_value(v) : def;
}

int64_t vg_json_get_time(const json_t *obj, const char *key)
{
    int64_t ms;
    const char *s = vg_json_str(obj, key, NULL);
    return s && vg_parse_time(s, &ms) ? ms : 0;
}

/* One value at path (path[0..len) is its name so far). */
static int text_ok(const json_t *j, char *path, size_t len, size_t cap, size_t max_len, int depth, char *err,
                   size_t errlen)
{
    if (depth < 0) return snprintf(err, errlen, "%s: nested too deep", path), -1;
    if (json_is_string(j)) {
        size_t n = json_string_length(j);
        const char *s = json_string_value(j);
        if (n > max_len) return snprintf(err, errlen, "%s: %zu bytes is over the limit of %zu", path, n, max_len), -1;
        if (strlen(s) != n || !vg_utf8_printable(s)) return snprintf(err, errlen, "%s: not printable text", path), -1;
        return 0;
    }
    if (json_is_array(j)) {
        size_t i;
        const json_t *v;
        json_array_foreach(j, i, v) {
            snprintf(path + len, cap - len, "[%zu]", i);
            if (text_ok(v, path, len + strlen(path + len), cap, max_len, depth - 1, err, errlen)) return -1;
        }
        path[len] = 0;
    } else if (json_is_object(j)) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)j, k, v) {
            if (strlen(k) > 64 || !vg_utf8_printable(k)) return snprintf(err, errlen, "%s: a key that is not a name", path), -1;
            snprintf(path + len, cap - len, "%s%s", len ? "." : "", k);
            if (text_ok(v, path, len + strlen(path + len), cap, max_len, depth - 1, err, errlen)) return -1;
        }
        path[len] = 0;
    }
    return 0;
}

int vg_json_text_ok(const json_t *j, const char *name, size_t max_len, int max_depth, char *err, size_t errlen)
{
    char path[512];
    snprintf(path, sizeof path, "%s", name);
    return text_ok(j, path, strlen(path), sizeof path, max_len, max_depth, err, errlen);
}
