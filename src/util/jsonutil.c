/* jsonutil.c — jansson helpers; see jsonutil.h. */
#include "util/jsonutil.h"
#include "util/timeutil.h"

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
