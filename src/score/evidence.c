/* evidence.c — the evidence `vigil score` reads: JSON reports told apart by
 * their shape (audit, security audit, check, drill, fleet merge, burn-in
 * history), the questionnaire, and the path language rules use to read a
 * value out of them. */
#include "score/score.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kinds[VG_EV_NKINDS] = { "audit", "security", "check", "drill", "fleet", "burnin",
                                                  "questionnaire" };

const char *vg_ev_kind_name(int kind) { return kind >= 0 && kind < VG_EV_NKINDS ? kinds[kind] : "?"; }

int vg_ev_kind_parse(const char *name)
{
    for (int i = 0; name && i < VG_EV_NKINDS; i++)
        if (!strcmp(name, kinds[i])) return i;
    return -1;
}

int vg_ev_detect(const json_t *doc)
{
    if (!json_is_object(doc)) return -1;
    if (json_is_array(json_object_get(doc, "security"))) return VG_EV_SECURITY;
    const json_t *sum = json_object_get(doc, "summary");
    if (json_is_array(json_object_get(doc, "nodes")) && json_object_get(sum, "skewed_components")) return VG_EV_FLEET;
    /* the controller's GET /v1/burnin: burnin {runs, …} and nodes[] */
    if (json_is_array(json_object_get(doc, "nodes")) && json_object_get(json_object_get(doc, "burnin"), "runs"))
        return VG_EV_BURNIN;
    if (json_is_array(json_object_get(doc, "findings")) && json_is_array(json_object_get(doc, "components")))
        return VG_EV_AUDIT;
    if (json_is_array(json_object_get(doc, "checks")) && json_is_boolean(json_object_get(doc, "ok"))) return VG_EV_CHECK;
    /* vigil drill --json: one object per stage at the top (detect, isolate, …) and runs[] */
    const json_t *det = json_object_get(doc, "detect");
    if (json_is_object(det) && json_object_get(det, "median") && json_is_array(json_object_get(doc, "runs")))
        return VG_EV_DRILL;
    return -1;
}

static int put(struct vg_evidence *ev, int kind, json_t *doc, const char *path, char *err, size_t errlen)
{
    if (ev->doc[kind]) {
        snprintf(err, errlen, "%s: a second %s report (first: %s); merge per-node audits with `vigil audit merge`", path,
                 kinds[kind], ev->file[kind]);
        json_decref(doc);
        return -1;
    }
    ev->doc[kind] = doc;
    ev->file[kind] = vg_xstrdup(path);
    return 0;
}

int vg_evidence_add(struct vg_evidence *ev, const char *path, char *err, size_t errlen)
{
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    if (!doc) {
        if (je.line > 0) snprintf(err, errlen, "%s:%d: not JSON: %s", path, je.line, je.text);
        else snprintf(err, errlen, "%s: %s", path, je.text);
        return -1;
    }
    int kind = vg_ev_detect(doc);
    if (kind < 0) {
        snprintf(err, errlen, "%s: not a vigil audit, security audit, check, drill, fleet-merge or burn-in history JSON report", path);
        json_decref(doc);
        return -1;
    }
    return put(ev, kind, doc, path, err, errlen);
}

int vg_evidence_questionnaire(struct vg_evidence *ev, const char *path, char *err, size_t errlen)
{
    char *text;
    size_t len;
    if (vg_read_file(NULL, path, 1u << 20, &text, &len)) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    json_t *q = vg_questionnaire_parse(text, len, path, err, errlen);
    free(text);
    return q ? put(ev, VG_EV_QUESTIONNAIRE, q, path, err, errlen) : -1;
}

void vg_evidence_free(struct vg_evidence *ev)
{
    for (int i = 0; i < VG_EV_NKINDS; i++) json_decref(ev->doc[i]), free(ev->file[i]);
    *ev = (struct vg_evidence){ 0 };
}

/* Does member m of an array element equal the filter text v? */
static bool member_is(const json_t *m, const char *v)
{
    char buf[64];
    if (json_is_string(m)) return !strcmp(json_string_value(m), v);
    if (json_is_boolean(m)) return !strcmp(v, json_is_true(m) ? "true" : "false");
    if (json_is_integer(m)) return snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(m)), !strcmp(buf, v);
    if (json_is_null(m)) return !strcmp(v, "null");
    return false;
}

json_t *vg_ev_resolve(const json_t *doc, const char *path)
{
    json_t *cur = json_incref((json_t *)doc);
    const char *p = path;
    while (cur && *p) {
        if (*p == '.') { p++; continue; }
        json_t *next = NULL;
        if (*p == '[') {
            const char *eq = strchr(p, '='), *end = strchr(p, ']');
            if (!eq || !end || eq > end || !json_is_array(cur)) { json_decref(cur); return NULL; }
            bool prefix = eq > p + 1 && eq[-1] == '^';   /* [key^=text]: the member starts with text */
            char *key = vg_xstrndup(p + 1, (size_t)(eq - p - 1 - prefix)), *val = vg_xstrndup(eq + 1, (size_t)(end - eq - 1));
            next = json_array();
            size_t i;
            json_t *el;
            json_array_foreach(cur, i, el) {
                const json_t *m = json_object_get(el, key);
                if (prefix ? json_is_string(m) && vg_startswith(json_string_value(m), val) : member_is(m, val))
                    json_array_append(next, el);
            }
            free(key), free(val);
            p = end + 1;
        } else if (*p == '#') {
            if (json_is_array(cur)) next = json_integer((json_int_t)json_array_size(cur));
            p++;
        } else {
            size_t n = strcspn(p, ".[#");
            char *key = vg_xstrndup(p, n);
            const json_t *obj = json_is_array(cur) ? json_array_get(cur, 0) : cur;
            next = json_incref(json_object_get(obj, key));
            free(key);
            p += n;
        }
        json_decref(cur);
        cur = next;
    }
    return cur;
}
