/* checks.c — the table of `vigil check` checks, config validation against
 * it, and the check result record with its JSON form; see checks.h. */
#include "signal/checks.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct vg_check *const vg_checks[] = {
    &vg_check_gpu, &vg_check_ib, &vg_check_driver, &vg_check_mount, &vg_check_service, &vg_check_pcie,
    &vg_check_fabric, NULL,
};

const struct vg_check *vg_check_find(const char *name)
{
    for (size_t i = 0; vg_checks[i]; i++)
        if (strcmp(vg_checks[i]->name, name) == 0) return vg_checks[i];
    return NULL;
}

bool vg_check_is_no(const char *v)
{
    return v && (!strcmp(v, "no") || !strcmp(v, "0") || !strcmp(v, "false"));
}

/* Whether value fits TYPE (see checks.h). */
static bool value_ok(const char *type, const char *v)
{
    if (!strcmp(type, "*")) return *v != 0;
    if (!strcmp(type, "int")) {
        long n;
        return vg_parse_long(v, &n) && n >= 0;
    }
    size_t vl = strlen(v);
    for (const char *t = type; *t;) {
        const char *bar = strchr(t, '|');
        size_t tl = bar ? (size_t)(bar - t) : strlen(t);
        if (tl == vl && strncmp(t, v, vl) == 0) return true;
        if (!bar) break;
        t = bar + 1;
    }
    return false;
}

static int bad(char *err, size_t n, const struct vg_checkconf *c, const struct vg_check_line *l, const char *fmt,
               const char *a, const char *b)
{
    char msg[256];
    snprintf(msg, sizeof msg, fmt, a, b);
    snprintf(err, n, "%s:%d: %s", c->file, l->lineno, msg);
    return -1;
}

int vg_check_validate(const struct vg_checkconf *c, char *err, size_t errlen)
{
    for (size_t i = 0; i < c->n; i++) {
        const struct vg_check_line *l = &c->lines[i];
        const struct vg_check *ck = vg_check_find(l->check);
        if (!ck) return bad(err, errlen, c, l, "unknown check '%s'%s", l->check, "");
        if (l->nwords < ck->min_words) return bad(err, errlen, c, l, "check '%s' needs an argument%s", l->check, "");
        if (l->nwords > ck->max_words)
            return bad(err, errlen, c, l, "unexpected word '%s' (keys are written key=value) for '%s'",
                       l->words[ck->max_words], l->check);
        for (int k = 0; k < l->nkv; k++) {
            const char *type = NULL;
            size_t kl = strlen(l->kv[k].key);
            for (size_t j = 0; ck->keys[j]; j++)
                if (strncmp(ck->keys[j], l->kv[k].key, kl) == 0 && ck->keys[j][kl] == '=') type = ck->keys[j] + kl + 1;
            if (!type) return bad(err, errlen, c, l, "unknown key '%s' for check '%s'", l->kv[k].key, l->check);
            if (!value_ok(type, l->kv[k].val))
                return bad(err, errlen, c, l, "bad value for '%s' (expected %s)", l->kv[k].key,
                           !strcmp(type, "*") ? "text" : !strcmp(type, "int") ? "a number" : type);
        }
        if (ck->required && !vg_check_get(l, ck->required))
            return bad(err, errlen, c, l, "check '%s' needs %s=", l->check, ck->required);
    }
    return 0;
}

struct vg_check_result *vg_check_add(struct vg_check_results *rs, const struct vg_check_line *l, bool ok,
                                     const char *name, const char *fmt, ...)
{
    if (rs->n == rs->cap) rs->r = vg_xrealloc(rs->r, sizeof *rs->r * (rs->cap = rs->cap ? rs->cap * 2 : 16));
    struct vg_check_result *r = &rs->r[rs->n++];
    memset(r, 0, sizeof *r);
    vg_strlcpy(r->name, name, sizeof r->name);
    r->ok = ok;
    r->line = l ? l->lineno : 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->detail, sizeof r->detail, fmt, ap);
    va_end(ap);
    return r;
}

void vg_check_add_event(struct vg_check_result *r, const struct vg_event *e)
{
    r->ev = vg_xrealloc(r->ev, sizeof *r->ev * (size_t)(r->nev + 1));
    r->ev[r->nev++] = *e;
}

void vg_check_results_free(struct vg_check_results *rs)
{
    for (size_t i = 0; i < rs->n; i++) free(rs->r[i].ev);
    free(rs->r);
    memset(rs, 0, sizeof *rs);
}

json_t *vg_check_result_to_json(const struct vg_check_result *r)
{
    json_t *ev = json_array();
    for (int i = 0; i < r->nev; i++) json_array_append_new(ev, vg_event_to_json(&r->ev[i]));
    json_t *j = json_pack("{s:s, s:b, s:s}", "name", r->name, "ok", r->ok, "detail", r->detail);
    json_object_set_new(j, "line", r->line ? json_integer(r->line) : json_null());
    if (r->starved) json_object_set_new(j, "starved", json_true());
    json_object_set_new(j, "events", ev);
    return j;
}

int vg_check_result_from_json(const json_t *j, struct vg_check_result *r)
{
    memset(r, 0, sizeof *r);
    if (!json_is_object(j) || !json_is_string(json_object_get(j, "name"))) return -1;
    vg_strlcpy(r->name, vg_json_str(j, "name", ""), sizeof r->name);
    vg_strlcpy(r->detail, vg_json_str(j, "detail", ""), sizeof r->detail);
    r->ok = json_is_true(json_object_get(j, "ok"));
    r->starved = json_is_true(json_object_get(j, "starved"));
    r->line = (int)vg_json_int(j, "line", 0);
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(j, "events"), i, v) {
        struct vg_event e;
        char err[128];
        if (vg_event_from_json(v, &e, err, sizeof err) == 0) vg_check_add_event(r, &e);
    }
    return 0;
}
