/* kapi_patch.c — the Kubernetes API double's PATCH (JSON merge patch, RFC
 * 7386; strategic merge patch, with the merge keys of the fields vigil and
 * kubectl patch; JSON patch, RFC 6902), label and field selectors, and
 * taint/toleration matching, as the API documents them. */
#include "kapi.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- merge patch and strategic merge patch ------------------------------- */

/* Lists merged element by element under strategic merge patch: the path (dot
 * separated, from the object's root) and the merge key.  Other lists (taints,
 * tolerations) are replaced whole, as the API's types declare. */
static const char *merge_key(const char *path)
{
    static const struct { const char *path, *key; } keys[] = {
        { "status.conditions", "type" },   { "status.addresses", "type" },
        { "metadata.ownerReferences", "uid" }, { "spec.containers", "name" },
        { "status.images", NULL },
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (!strcmp(keys[i].path, path)) return keys[i].key;
    return NULL;
}

static json_t *merge(json_t *target, json_t *patch, bool strategic, const char *path);

static json_t *merge_list(json_t *target, json_t *patch, const char *key, const char *path)
{
    json_t *out = json_is_array(target) ? json_deep_copy(target) : json_array();
    size_t i;
    json_t *el;
    json_array_foreach(patch, i, el) {
        const char *k = json_string_value(json_object_get(el, key));
        const char *directive = json_string_value(json_object_get(el, "$patch"));
        size_t j, at = (size_t)-1;
        json_t *cur;
        json_array_foreach(out, j, cur)
            if (k && json_is_string(json_object_get(cur, key)) && !strcmp(json_string_value(json_object_get(cur, key)), k))
                at = j;
        if (directive && !strcmp(directive, "delete")) {
            if (at != (size_t)-1) json_array_remove(out, at);
            continue;
        }
        if (at == (size_t)-1) json_array_append_new(out, merge(NULL, el, true, path));
        else json_array_set_new(out, at, merge(json_array_get(out, at), el, true, path));
    }
    return out;
}

/* A new object: target with patch merged in (target may be NULL). */
static json_t *merge(json_t *target, json_t *patch, bool strategic, const char *path)
{
    if (!json_is_object(patch)) return json_deep_copy(patch);
    const char *directive = strategic ? json_string_value(json_object_get(patch, "$patch")) : NULL;
    json_t *out = json_is_object(target) && !(directive && !strcmp(directive, "replace")) ? json_deep_copy(target)
                                                                                         : json_object();
    const char *k;
    json_t *v;
    json_object_foreach(patch, k, v) {
        if (strategic && k[0] == '$') continue;   /* $patch, $retainKeys, $setElementOrder/… */
        char sub[256];
        snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", k);
        if (json_is_null(v)) {
            json_object_del(out, k);
            continue;
        }
        const char *mk = strategic && json_is_array(v) ? merge_key(sub) : NULL;
        if (mk) json_object_set_new(out, k, merge_list(json_object_get(out, k), v, mk, sub));
        else json_object_set_new(out, k, merge(json_object_get(out, k), v, strategic, sub));
    }
    return out;
}

/* ---- JSON patch ------------------------------------------------------------ */

/* Splits a JSON pointer: the parent container and the last token. */
static json_t *resolve(json_t *doc, const char *ptr, char *last, size_t n)
{
    if (*ptr != '/') return NULL;
    json_t *cur = doc;
    const char *p = ptr + 1;
    for (;;) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        char tok[256];
        size_t o = 0;
        for (size_t i = 0; i < len && o + 1 < sizeof tok; i++) {
            if (p[i] == '~' && i + 1 < len && (p[i + 1] == '0' || p[i + 1] == '1')) tok[o++] = p[++i] == '0' ? '~' : '/';
            else tok[o++] = p[i];
        }
        tok[o] = 0;
        if (!slash) {
            snprintf(last, n, "%s", tok);
            return cur;
        }
        if (json_is_object(cur)) cur = json_object_get(cur, tok);
        else if (json_is_array(cur)) cur = json_array_get(cur, strtoul(tok, NULL, 10));
        else return NULL;
        if (!cur) return NULL;
        p = slash + 1;
    }
}

static bool index_of(json_t *arr, const char *tok, size_t *i, bool append_ok)
{
    if (append_ok && !strcmp(tok, "-")) { *i = json_array_size(arr); return true; }
    char *end;
    unsigned long v = strtoul(tok, &end, 10);
    if (!*tok || *end || v > json_array_size(arr) || (!append_ok && v == json_array_size(arr))) return false;
    *i = v;
    return true;
}

static json_t *get_at(json_t *doc, const char *ptr)
{
    if (!*ptr) return doc;
    char last[256];
    json_t *parent = resolve(doc, ptr, last, sizeof last);
    size_t i;
    if (json_is_object(parent)) return json_object_get(parent, last);
    if (json_is_array(parent) && index_of(parent, last, &i, false)) return json_array_get(parent, i);
    return NULL;
}

static int remove_at(json_t *doc, const char *ptr)
{
    char last[256];
    json_t *parent = resolve(doc, ptr, last, sizeof last);
    size_t i;
    if (json_is_object(parent)) return json_object_del(parent, last);
    if (json_is_array(parent) && index_of(parent, last, &i, false)) return json_array_remove(parent, i);
    return -1;
}

static int add_at(json_t *doc, const char *ptr, json_t *v, bool replace)
{
    char last[256];
    json_t *parent = resolve(doc, ptr, last, sizeof last);
    size_t i;
    if (json_is_object(parent)) {
        if (replace && !json_object_get(parent, last)) return -1;
        return json_object_set(parent, last, v);
    }
    if (json_is_array(parent) && index_of(parent, last, &i, !replace))
        return replace ? json_array_set(parent, i, v) : json_array_insert(parent, i, v);
    return -1;
}

static json_t *json_patch(const json_t *obj, json_t *ops, char *msg, size_t n)
{
    if (!json_is_array(ops)) {
        snprintf(msg, n, "a JSON patch is an array of operations");
        return NULL;
    }
    json_t *doc = json_deep_copy(obj);
    size_t i;
    json_t *op;
    json_array_foreach(ops, i, op) {
        const char *o = json_string_value(json_object_get(op, "op"));
        const char *path = json_string_value(json_object_get(op, "path"));
        const char *from = json_string_value(json_object_get(op, "from"));
        json_t *value = json_object_get(op, "value");
        int rc = -1;
        if (!o || !path) rc = -1;
        else if (!strcmp(o, "add") && value) rc = add_at(doc, path, value, false);
        else if (!strcmp(o, "replace") && value) rc = add_at(doc, path, value, true);
        else if (!strcmp(o, "remove")) rc = remove_at(doc, path);
        else if (!strcmp(o, "test") && value) rc = get_at(doc, path) && json_equal(get_at(doc, path), value) ? 0 : -1;
        else if ((!strcmp(o, "copy") || !strcmp(o, "move")) && from && get_at(doc, from)) {
            json_t *v = json_deep_copy(get_at(doc, from));
            rc = !strcmp(o, "move") ? remove_at(doc, from) : 0;
            if (!rc) rc = add_at(doc, path, v, false);
            json_decref(v);
        }
        if (rc) {
            snprintf(msg, n, "the server rejected our request due to an error in our request: operation %zu (%s %s) failed",
                     i, o ? o : "?", path ? path : "?");
            json_decref(doc);
            return NULL;
        }
    }
    return doc;
}

json_t *kapi_patch(const json_t *obj, const char *ctype, const char *text, int *code, char *msg, size_t n)
{
    json_error_t je;
    json_t *patch = json_loads(text ? text : "", 0, &je);
    if (!patch) {
        *code = 400;
        snprintf(msg, n, "the body of the request was in an unknown format: %s", je.text);
        return NULL;
    }
    char type[128];
    snprintf(type, sizeof type, "%s", ctype ? ctype : "");
    char *semi = strchr(type, ';');
    if (semi) *semi = 0;
    json_t *out = NULL;
    if (!strcmp(type, "application/merge-patch+json")) out = merge((json_t *)obj, patch, false, "");
    else if (!strcmp(type, "application/strategic-merge-patch+json")) out = merge((json_t *)obj, patch, true, "");
    else if (!strcmp(type, "application/json-patch+json")) {
        out = json_patch(obj, patch, msg, n);
        if (!out) *code = 422;
    } else {
        *code = 415;
        snprintf(msg, n, "the body of the request was in an unknown format - accepted media types include: "
                         "application/json-patch+json, application/merge-patch+json, "
                         "application/strategic-merge-patch+json");
    }
    if (out && !json_is_object(out)) {
        json_decref(out);
        out = NULL;
        *code = 422;
        snprintf(msg, n, "the patch does not leave an object");
    }
    json_decref(patch);
    return out;
}

/* ---- selectors ------------------------------------------------------------- */

static char *trim(char *s)
{
    while (*s == ' ') s++;
    char *e = s + strlen(s);
    while (e > s && e[-1] == ' ') *--e = 0;
    return s;
}

/* Splits sel at top-level commas (not inside parentheses) into terms. */
static size_t split_terms(char *sel, char **terms, size_t max)
{
    size_t n = 0;
    int depth = 0;
    char *start = sel;
    for (char *p = sel;; p++) {
        if (*p == '(') depth++;
        if (*p == ')') depth--;
        if (*p == 0 || (*p == ',' && depth == 0)) {
            bool end = *p == 0;
            *p = 0;
            if (n < max && *trim(start)) terms[n++] = trim(start);
            if (end) break;
            start = p + 1;
        }
    }
    return n;
}

static bool in_set(const char *set, const char *v)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", set);
    for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (v && !strcmp(trim(t), v)) return true;
    return false;
}

int kapi_labels_match(const char *sel, const json_t *obj, bool *match, char *msg, size_t n)
{
    *match = true;
    if (!sel || !*sel) return 0;
    char buf[1024], *terms[32];
    snprintf(buf, sizeof buf, "%s", sel);
    size_t nt = split_terms(buf, terms, 32);
    json_t *labels = json_object_get(json_object_get(obj, "metadata"), "labels");
    for (size_t i = 0; i < nt; i++) {
        char *t = terms[i], *op;
        const char *v;
        bool ok;
        if ((op = strstr(t, " notin ")) || (op = strstr(t, " in "))) {
            bool notin = op[1] == 'n';
            *op = 0;
            char *set = strchr(op + 1, '(');
            char *close = set ? strrchr(set, ')') : NULL;
            if (!set || !close) goto bad;
            *close = 0;
            v = json_string_value(json_object_get(labels, trim(t)));
            ok = notin ? !in_set(set + 1, v) : in_set(set + 1, v);
        } else if ((op = strstr(t, "!="))) {
            *op = 0;
            v = json_string_value(json_object_get(labels, trim(t)));
            ok = !v || strcmp(v, trim(op + 2));
        } else if ((op = strchr(t, '='))) {
            *op = 0;
            const char *want = trim(op[1] == '=' ? op + 2 : op + 1);
            v = json_string_value(json_object_get(labels, trim(t)));
            ok = v && !strcmp(v, want);
        } else if (*t == '!') {
            ok = !json_object_get(labels, trim(t + 1));
        } else {
            if (strpbrk(t, " ()<>")) goto bad;
            ok = json_object_get(labels, t) != NULL;
        }
        if (!ok) *match = false;
    }
    return 0;
bad:
    snprintf(msg, n, "unable to parse requirement: %s", sel);
    return -1;
}

/* The value of a field a field selector may name, for nodes and pods. */
static const char *field(const json_t *obj, const char *name, bool *known)
{
    static const char *const fields[][2] = {
        { "metadata.name", "metadata" },   { "metadata.namespace", "metadata" }, { "spec.nodeName", "spec" },
        { "status.phase", "status" },      { "spec.unschedulable", "spec" },      { "involvedObject.name", NULL },
        { "involvedObject.namespace", NULL }, { "involvedObject.kind", NULL },   { "involvedObject.uid", NULL },
    };
    *known = false;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (!strcmp(fields[i][0], name)) *known = true;
    if (!*known) return NULL;
    const char *dot = strchr(name, '.');
    char top[64];
    snprintf(top, sizeof top, "%.*s", (int)(dot - name), name);
    json_t *v = json_object_get(json_object_get(obj, top), dot + 1);
    if (json_is_true(v)) return "true";
    if (json_is_false(v)) return "false";
    return json_string_value(v) ? json_string_value(v) : "";
}

int kapi_fields_match(const char *sel, const json_t *obj, bool *match, char *msg, size_t n)
{
    *match = true;
    if (!sel || !*sel) return 0;
    char buf[1024], *terms[32];
    snprintf(buf, sizeof buf, "%s", sel);
    size_t nt = split_terms(buf, terms, 32);
    for (size_t i = 0; i < nt; i++) {
        char *t = terms[i], *op;
        bool neg = false;
        const char *want;
        if ((op = strstr(t, "!="))) neg = true, want = op + 2;
        else if ((op = strstr(t, "=="))) want = op + 2;
        else if ((op = strchr(t, '='))) want = op + 1;
        else {
            snprintf(msg, n, "invalid selector: '%s'; can't understand '%s'", sel, t);
            return -1;
        }
        *op = 0;
        bool known;
        const char *v = field(obj, trim(t), &known);
        if (!known) {
            snprintf(msg, n, "field label not supported: %s", trim(t));
            return -1;
        }
        if ((strcmp(v, want) == 0) == neg) *match = false;
    }
    return 0;
}

/* ---- taints and tolerations ------------------------------------------------ */

static bool tolerated(const json_t *taint, const json_t *tols)
{
    const char *tk = json_string_value(json_object_get(taint, "key"));
    const char *tv = json_string_value(json_object_get(taint, "value"));
    const char *te = json_string_value(json_object_get(taint, "effect"));
    size_t i;
    json_t *t;
    json_array_foreach(tols, i, t) {
        const char *k = json_string_value(json_object_get(t, "key"));
        const char *op = json_string_value(json_object_get(t, "operator"));
        const char *v = json_string_value(json_object_get(t, "value"));
        const char *e = json_string_value(json_object_get(t, "effect"));
        bool exists = op && !strcmp(op, "Exists");
        if (e && *e && (!te || strcmp(e, te))) continue;
        if (k && *k && (!tk || strcmp(k, tk))) continue;
        if (!(k && *k) && !exists) continue;   /* an empty key must go with Exists */
        if (exists || !strcmp(v ? v : "", tv ? tv : "")) return true;
    }
    return false;
}

bool kapi_tolerates(const json_t *pod, const json_t *node, const char *effect)
{
    json_t *taints = json_object_get(json_object_get(node, "spec"), "taints");
    json_t *tols = json_object_get(json_object_get(pod, "spec"), "tolerations");
    size_t i;
    json_t *t;
    json_array_foreach(taints, i, t) {
        const char *e = json_string_value(json_object_get(t, "effect"));
        if (!e || strcmp(e, effect)) continue;
        if (!tolerated(t, tols)) return false;
    }
    return true;
}
