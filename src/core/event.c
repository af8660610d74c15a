/* event.c — the event record's names and its JSON form; see event.h. */
#include "core/event.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdio.h>
#include <string.h>

static const char *const action_names[VG_ACT_COUNT] = {
    "ignore", "restart-app", "reset-gpu", "reboot", "drain-rma",
};

const char *vg_action_name(enum vg_action a)
{
    return a >= 0 && a < VG_ACT_COUNT ? action_names[a] : "ignore";
}

bool vg_action_parse(const char *s, enum vg_action *a)
{
    for (int i = 0; i < VG_ACT_COUNT; i++)
        if (strcmp(s, action_names[i]) == 0) {
            *a = (enum vg_action)i;
            return true;
        }
    return false;
}

void vg_event_init(struct vg_event *e)
{
    memset(e, 0, sizeof *e);
    e->code = -1;
    e->gpu = -1;
    e->count = 1;
}

json_t *vg_event_to_json(const struct vg_event *e)
{
    json_t *j = json_object();
    vg_json_set_str(j, "node", e->node);
    json_object_set_new(j, "time", vg_json_time(e->time_ms));
    json_object_set_new(j, "seen", vg_json_time(e->seen_ms));
    vg_json_set_str(j, "source", e->source);
    vg_json_set_str(j, "kind", e->kind);
    json_object_set_new(j, "code", e->code >= 0 ? json_integer(e->code) : json_null());
    vg_json_set_str(j, "pci", e->pci);
    json_object_set_new(j, "gpu", e->gpu >= 0 ? json_integer(e->gpu) : json_null());
    json_object_set_new(j, "action", json_string(vg_action_name(e->action)));
    json_object_set_new(j, "count", json_integer(e->count));
    json_object_set_new(j, "first", vg_json_time(e->first_ms ? e->first_ms : e->time_ms));
    json_object_set_new(j, "last", vg_json_time(e->last_ms ? e->last_ms : e->time_ms));
    vg_json_set_str(j, "cause", e->cause);
    vg_json_set_str(j, "raw", e->raw);
    if (e->jobs[0]) vg_json_set_str(j, "jobs", e->jobs);
    return j;
}

static int bad(char *err, size_t n, const char *field, const char *why)
{
    snprintf(err, n, "field '%s': %s", field, why);
    return -1;
}

static int get_str(const json_t *j, const char *key, char *dst, size_t n, bool required,
                   char *err, size_t errlen)
{
    json_t *v = json_object_get(j, key);
    if (!v || json_is_null(v)) return required ? bad(err, errlen, key, "missing") : 0;
    if (!json_is_string(v)) return bad(err, errlen, key, "not a string");
    vg_strlcpy(dst, json_string_value(v), n);
    return 0;
}

static int get_time(const json_t *j, const char *key, int64_t *ms, char *err, size_t errlen)
{
    json_t *v = json_object_get(j, key);
    if (!v || json_is_null(v)) return 0;
    if (!json_is_string(v) || !vg_parse_time(json_string_value(v), ms))
        return bad(err, errlen, key, "not an RFC 3339 time");
    return 0;
}

static int get_int(const json_t *j, const char *key, int *out, char *err, size_t errlen)
{
    json_t *v = json_object_get(j, key);
    if (!v || json_is_null(v)) return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 1000000000)
        return bad(err, errlen, key, "not a non-negative integer");
    *out = (int)json_integer_value(v);
    return 0;
}

int vg_event_from_json(const json_t *j, struct vg_event *e, char *err, size_t errlen)
{
    vg_event_init(e);
    if (!json_is_object(j)) return bad(err, errlen, "(event)", "not an object");
    if (get_str(j, "node", e->node, sizeof e->node, false, err, errlen) ||
        get_str(j, "source", e->source, sizeof e->source, false, err, errlen) ||
        get_str(j, "kind", e->kind, sizeof e->kind, true, err, errlen) ||
        get_str(j, "pci", e->pci, sizeof e->pci, false, err, errlen) ||
        get_str(j, "cause", e->cause, sizeof e->cause, false, err, errlen) ||
        get_str(j, "raw", e->raw, sizeof e->raw, false, err, errlen) ||
        get_time(j, "time", &e->time_ms, err, errlen) ||
        get_time(j, "seen", &e->seen_ms, err, errlen) ||
        get_time(j, "first", &e->first_ms, err, errlen) ||
        get_time(j, "last", &e->last_ms, err, errlen) ||
        get_int(j, "code", &e->code, err, errlen) || get_int(j, "gpu", &e->gpu, err, errlen) ||
        get_int(j, "count", &e->count, err, errlen) || get_str(j, "jobs", e->jobs, sizeof e->jobs, false, err, errlen))
        return -1;
    if (!vg_event_jobs_ok(e->jobs)) return bad(err, errlen, "jobs", "not job ids separated by commas");
    const char *act = vg_json_str(j, "action", NULL);
    if (act && !vg_action_parse(act, &e->action)) return bad(err, errlen, "action", "unknown action");
    if (e->count < 1) e->count = 1;
    return 0;
}

struct vg_event *vg_event_append(struct vg_event *ev, int *n, int max, const char *node, const char *source,
                                 const char *kind, const char *pci)
{
    if (*n >= max) return NULL;
    struct vg_event *e = &ev[(*n)++];
    vg_event_init(e);
    vg_strlcpy(e->node, node ? node : "", sizeof e->node);
    e->time_ms = e->seen_ms = vg_now_ms();
    vg_strlcpy(e->source, source, sizeof e->source);
    vg_strlcpy(e->kind, kind, sizeof e->kind);
    vg_strlcpy(e->pci, pci ? pci : "", sizeof e->pci);
    return e;
}

bool vg_event_jobs_ok(const char *s)
{
    if (!*s) return true;
    bool digit = false;   /* the item so far has a digit */
    for (; *s; s++) {
        if (*s >= '0' && *s <= '9') digit = true;
        else if (*s == ',' && digit) digit = false;
        else return false;
    }
    return digit;
}

bool vg_event_jobs_has(const char *jobs, long id)
{
    for (const char *p = jobs; p && *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p) return false;
        if (v == id) return true;
        p = *end == ',' ? end + 1 : end;
    }
    return false;
}

void vg_event_key(const struct vg_event *e, char *buf, size_t n)
{
    if (e->pci[0]) snprintf(buf, n, "%s:%d@%s", e->kind, e->code, e->pci);
    else snprintf(buf, n, "%s:%d@gpu%d", e->kind, e->code, e->gpu);
}
