/* kapi_openapi.c — GET /openapi/v2 as the API server serves it to kubectl:
 * the OpenAPI v2 document in protobuf (gnostic's openapi.v2.Document,
 * Content-Type application/com.github.proto-openapi.spec.v2@v1.0+protobuf),
 * which kubectl reads for its client-side schema validation (the server answers
 * with the dotted type application/com.github.proto-openapi.spec.v2.v1.0+protobuf).  The document
 * is Kubernetes 1.32's own (tests/fixtures/k8s/swagger-1.32.json.gz, see
 * SOURCES there), its definitions encoded here; the paths are left out, so
 * kubectl finds no server-side field validation (fieldValidation) to rely on
 * and validates every object against the definitions itself.  Encoded:
 * $ref, format, description, default, required, enum, additionalProperties,
 * type, items, allOf, properties and the x- vendor extensions (as YAML, in
 * JSON's flow form) — what kubectl's validation reads. */
#include "kapi.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

struct pb {
    unsigned char *b;
    size_t n, cap;
};

static void put(struct pb *p, const void *d, size_t n)
{
    if (p->n + n > p->cap) {
        p->cap = (p->n + n) * 2 + 64;
        p->b = realloc(p->b, p->cap);
    }
    memcpy(p->b + p->n, d, n);
    p->n += n;
}

static void varint(struct pb *p, uint64_t v)
{
    unsigned char c[10];
    size_t n = 0;
    do {
        c[n] = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v) c[n] |= 0x80;
        n++;
    } while (v);
    put(p, c, n);
}

/* Field `f` of wire type 2 (a string, bytes or an embedded message). */
static void bytes(struct pb *p, int f, const void *d, size_t n)
{
    varint(p, (uint64_t)f << 3 | 2);
    varint(p, n);
    put(p, d, n);
}

static void str(struct pb *p, int f, const char *s) { bytes(p, f, s, strlen(s)); }

/* Embeds child as field f and frees it. */
static void msg(struct pb *p, int f, struct pb *child)
{
    bytes(p, f, child->b, child->n);
    free(child->b);
    *child = (struct pb){ 0 };
}

/* openapi.v2.Any: its YAML (JSON is YAML's flow form). */
static void any(struct pb *p, int f, const json_t *v)
{
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    struct pb a = { 0 };
    str(&a, 2, text ? text : "null");
    free(text);
    msg(p, f, &a);
}

static void schema(struct pb *p, const json_t *s);

/* NamedSchema {name = 1; value = 2}. */
static void named_schema(struct pb *p, int f, const char *name, const json_t *s)
{
    struct pb ns = { 0 }, v = { 0 };
    str(&ns, 1, name);
    schema(&v, s);
    msg(&ns, 2, &v);
    msg(p, f, &ns);
}

/* openapi.v2.Schema, field numbers of gnostic's OpenAPIv2.proto. */
static void schema(struct pb *p, const json_t *s)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)s, k, v) {
        if (!strcmp(k, "$ref") && json_is_string(v)) str(p, 1, json_string_value(v));
        else if (!strcmp(k, "format") && json_is_string(v)) str(p, 2, json_string_value(v));
        else if (!strcmp(k, "description") && json_is_string(v)) str(p, 4, json_string_value(v));
        else if (!strcmp(k, "default")) any(p, 5, v);
        else if (!strcmp(k, "required")) {
            size_t i;
            json_t *r;
            json_array_foreach(v, i, r) if (json_is_string(r)) str(p, 19, json_string_value(r));
        } else if (!strcmp(k, "enum")) {
            size_t i;
            json_t *e;
            json_array_foreach(v, i, e) any(p, 20, e);
        } else if (!strcmp(k, "additionalProperties")) {
            struct pb ap = { 0 }, sub = { 0 };
            if (json_is_boolean(v)) {
                varint(&ap, 2 << 3 | 0);
                varint(&ap, json_is_true(v));
            } else {
                schema(&sub, v);
                msg(&ap, 1, &sub);
            }
            msg(p, 21, &ap);
        } else if (!strcmp(k, "type")) {
            struct pb t = { 0 };
            if (json_is_string(v)) str(&t, 1, json_string_value(v));
            size_t i;
            json_t *e;
            json_array_foreach(v, i, e) if (json_is_string(e)) str(&t, 1, json_string_value(e));
            msg(p, 22, &t);
        } else if (!strcmp(k, "items")) {
            struct pb it = { 0 }, sub = { 0 };
            if (json_is_object(v)) {
                schema(&sub, v);
                msg(&it, 1, &sub);
            }
            size_t i;
            json_t *e;
            json_array_foreach(v, i, e) {
                schema(&sub, e);
                msg(&it, 1, &sub);
            }
            msg(p, 23, &it);
        } else if (!strcmp(k, "allOf")) {
            size_t i;
            json_t *e;
            json_array_foreach(v, i, e) {
                struct pb sub = { 0 };
                schema(&sub, e);
                msg(p, 24, &sub);
            }
        } else if (!strcmp(k, "properties")) {
            struct pb props = { 0 };
            const char *pk;
            json_t *pv;
            json_object_foreach(v, pk, pv) named_schema(&props, 1, pk, pv);
            msg(p, 25, &props);
        } else if (!strncmp(k, "x-", 2)) {
            struct pb na = { 0 };
            str(&na, 1, k);
            any(&na, 2, v);
            msg(p, 31, &na);
        }
    }
}

static unsigned char *doc;
static size_t doc_len;

int kapi_openapi_load(const char *path)
{
    gzFile f = gzopen(path, "rb");
    if (!f) {
        fprintf(stderr, "kapi: --openapi %s: cannot open it\n", path);
        return -1;
    }
    size_t n = 0, cap = 1 << 22;
    char *text = malloc(cap);
    int r;
    while ((r = gzread(f, text + n, (unsigned)(cap - n - 1))) > 0) {
        n += (size_t)r;
        if (cap - n < 2) text = realloc(text, cap *= 2);
    }
    gzclose(f);
    text[n] = 0;
    json_error_t e;
    json_t *sw = json_loadb(text, n, 0, &e);
    free(text);
    if (!json_is_object(json_object_get(sw, "definitions"))) {
        fprintf(stderr, "kapi: --openapi %s: line %d: %s\n", path, e.line, sw ? "no definitions" : e.text);
        json_decref(sw);
        return -1;
    }
    struct pb d = { 0 }, info = { 0 }, defs = { 0 };
    str(&d, 1, json_string_value(json_object_get(sw, "swagger")) ?: "2.0");
    json_t *in = json_object_get(sw, "info");
    str(&info, 1, json_string_value(json_object_get(in, "title")) ?: "Kubernetes");
    str(&info, 2, json_string_value(json_object_get(in, "version")) ?: "unversioned");
    msg(&d, 2, &info);
    const char *name;
    json_t *s;
    json_object_foreach(json_object_get(sw, "definitions"), name, s) named_schema(&defs, 1, name, s);
    msg(&d, 9, &defs);
    json_decref(sw);
    doc = d.b, doc_len = d.n;
    return 0;
}

bool kapi_openapi(const unsigned char **body, size_t *len)
{
    *body = doc, *len = doc_len;
    return doc != NULL;
}
