/* k8s_config.c — where the Kubernetes API server is and how vigil
 * authenticates to it: a kubeconfig file (its current context: the cluster's
 * server and CA, the user's bearer token or client certificate), or, inside
 * a pod, the service account's token and CA with KUBERNETES_SERVICE_HOST and
 * _PORT.  The kubeconfig is YAML (libyaml turns it into JSON first). */
#include "orch/k8s.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include "util/tlskey.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* ---- YAML → JSON (mappings, sequences, scalars; no anchors) --------------- */

#define YAML_DEPTH 64

static json_t *yaml_to_json(const char *text, size_t len, char *err, size_t n)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p)) {
        snprintf(err, n, "cannot start the YAML parser");
        return NULL;
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    json_t *stack[YAML_DEPTH], *root = NULL;
    char *keys[YAML_DEPTH];   /* the pending key of each mapping on the stack */
    int depth = 0;
    bool ok = true, done = false;
    while (ok && !done) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            snprintf(err, n, "YAML, line %zu: %s", p.problem_mark.line + 1, p.problem ? p.problem : "cannot parse");
            ok = false;
            break;
        }
        json_t *value = NULL;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
        case YAML_DOCUMENT_END_EVENT: done = ev.type == YAML_STREAM_END_EVENT || root; break;
        case YAML_MAPPING_START_EVENT: value = json_object(); break;
        case YAML_SEQUENCE_START_EVENT: value = json_array(); break;
        case YAML_MAPPING_END_EVENT:
        case YAML_SEQUENCE_END_EVENT:
            if (depth > 0) {   /* a key left without its value (after a complex key) goes too */
                free(keys[--depth]);
                keys[depth] = NULL;
            }
            break;
        case YAML_SCALAR_EVENT: {
            const char *s = (const char *)ev.data.scalar.value;
            bool plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
            if (depth > 0 && json_is_object(stack[depth - 1]) && !keys[depth - 1]) {
                keys[depth - 1] = vg_xstrdup(s);
                break;
            }
            if (plain && (!strcmp(s, "true") || !strcmp(s, "false"))) value = json_boolean(!strcmp(s, "true"));
            else if (plain && (!strcmp(s, "null") || !strcmp(s, "~") || !*s)) value = json_null();
            else value = json_stringn(s, ev.data.scalar.length);
            if (!value) value = json_null();   /* not UTF-8 */
            break;
        }
        case YAML_ALIAS_EVENT:
            snprintf(err, n, "YAML, line %zu: anchors and aliases are not supported", ev.start_mark.line + 1);
            ok = false;
            break;
        default: break;
        }
        if (value) {
            if (depth == 0) {
                if (root) json_decref(root);
                root = json_incref(value);
            } else if (json_is_object(stack[depth - 1])) {
                json_object_set(stack[depth - 1], keys[depth - 1] ? keys[depth - 1] : "", value);
                free(keys[depth - 1]);
                keys[depth - 1] = NULL;
            } else json_array_append(stack[depth - 1], value);
            if (json_is_object(value) || json_is_array(value)) {
                if (depth == YAML_DEPTH) {
                    snprintf(err, n, "YAML nested deeper than %d levels", YAML_DEPTH);
                    ok = false;
                } else {
                    keys[depth] = NULL;
                    stack[depth++] = value;
                }
            }
            json_decref(value);
        }
        yaml_event_delete(&ev);
    }
    while (depth > 0) free(keys[--depth]);
    yaml_parser_delete(&p);
    if (!ok) {
        json_decref(root);
        return NULL;
    }
    if (!json_is_object(root)) {
        snprintf(err, n, "not a kubeconfig (no mapping at the top)");
        json_decref(root);
        return NULL;
    }
    return root;
}

/* ---- kubeconfig ------------------------------------------------------------ */

static char *b64decode(const char *in)
{
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(in);
    char *out = vg_xmalloc(n / 4 * 3 + 4);
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;
    for (const char *p = in; *p && *p != '='; p++) {
        const char *c = strchr(tbl, *p);
        if (!c || !*p) {
            if (*p == '\n' || *p == '\r' || *p == ' ') continue;
            free(out);
            return NULL;
        }
        acc = (acc << 6) | (unsigned)(c - tbl);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (char)((acc >> bits) & 0xff);
        }
    }
    out[o] = 0;
    return out;
}

/* The entry named name in the list key (clusters, users, contexts): its inner object. */
static json_t *named(json_t *doc, const char *list, const char *inner, const char *name)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(doc, list), i, e)
        if (json_is_string(json_object_get(e, "name")) && !strcmp(json_string_value(json_object_get(e, "name")), name))
            return json_object_get(e, inner);
    return NULL;
}

static void path_in(const char *dir, const char *file, char *out, size_t n)
{
    if (file[0] == '/' || !dir || !*dir) snprintf(out, n, "%s", file);
    else snprintf(out, n, "%s/%s", dir, file);
}

static int read_text(const char *path, char **out, size_t *len, char *err, size_t n)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        snprintf(err, n, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct sbuf b = SBUF_INIT;
    char buf[4096];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, f)) > 0) sbuf_add(&b, buf, k);
    fclose(f);
    *len = b.len;
    *out = sbuf_take(&b);
    if (!*out) *out = vg_xstrdup("");
    return 0;
}

/* A -data field (base64) into *pem; -1 with err when it is not base64. */
static int data_field(json_t *o, const char *key, char **pem, char *err, size_t n)
{
    const char *v = json_string_value(json_object_get(o, key));
    if (!v) return 0;
    free(*pem);
    *pem = b64decode(v);
    if (!*pem) {
        snprintf(err, n, "%s is not base64", key);
        return -1;
    }
    return 0;
}

/* A client certificate's PEM (inline or its file) into *out; its field's name, with the file, into what. */
static int client_pem(const char *pem, const char *file, const char *field, char **out, size_t *len, char *what,
                      size_t wn, char *err, size_t n)
{
    if (pem) {
        snprintf(what, wn, "%s-data", field);
        *out = vg_xstrdup(pem), *len = strlen(pem);
        return 0;
    }
    snprintf(what, wn, "%s (%s)", field, file);
    char why[1200];
    if (!read_text(file, out, len, why, sizeof why)) return 0;
    snprintf(err, n, "%s: %s", field, why);
    return -1;
}

/* A client certificate needs its key, and the key must be the certificate's
 * (checked here, so a wrong pair is refused when the configuration is read,
 * naming the fields, instead of failing every TLS handshake later). */
static int client_pair(const struct vg_k8s_conf *c, const char *user, char *err, size_t n)
{
    bool cert = c->cert_pem || c->cert_file[0], key = c->key_pem || c->key_file[0];
    if (!cert && !key) return 0;
    if (cert != key) {
        snprintf(err, n, "user '%s': %s is set without %s", user, cert ? "client-certificate" : "client-key",
                 cert ? "client-key or client-key-data" : "client-certificate or client-certificate-data");
        return -1;
    }
    char *ct = NULL, *kt = NULL, cw[1100], kw[1100];
    size_t cl = 0, kl = 0;
    int rc = -1;
    if (!client_pem(c->cert_pem, c->cert_file, "client-certificate", &ct, &cl, cw, sizeof cw, err, n) &&
        !client_pem(c->key_pem, c->key_file, "client-key", &kt, &kl, kw, sizeof kw, err, n)) {
        char why[256];
        rc = vg_tls_keypair_check(ct, cl, kt, kl, why, sizeof why) < 0 ? -1 : 0;
        if (rc) snprintf(err, n, "user '%s': %.1000s does not go with %.1000s: %s", user, kw, cw, why);
    }
    free(ct);
    free(kt);
    return rc;
}

int vg_k8s_conf_parse(const char *text, size_t len, const char *dir, struct vg_k8s_conf *c, char *err, size_t n)
{
    json_t *doc = yaml_to_json(text, len, err, n);
    if (!doc) return -1;
    int rc = -1;
    const char *cur = json_string_value(json_object_get(doc, "current-context"));
    json_t *ctx = cur ? named(doc, "contexts", "context", cur) : NULL;
    const char *cl = json_string_value(json_object_get(ctx, "cluster"));
    const char *us = json_string_value(json_object_get(ctx, "user"));
    json_t *cluster = cl ? named(doc, "clusters", "cluster", cl) : NULL;
    json_t *user = us ? named(doc, "users", "user", us) : NULL;
    const char *server = json_string_value(json_object_get(cluster, "server"));
    if (!cur || !*cur) snprintf(err, n, "current-context is not set");
    else if (!ctx) snprintf(err, n, "context '%s' is not in contexts", cur);
    else if (!cluster) snprintf(err, n, "context '%s': cluster '%s' is not in clusters", cur, cl ? cl : "");
    else if (!server || !*server) snprintf(err, n, "cluster '%s': server is not set", cl);
    else if (us && !user) snprintf(err, n, "context '%s': user '%s' is not in users", cur, us);
    else if (json_object_get(user, "exec") || json_object_get(user, "auth-provider"))
        snprintf(err, n, "user '%s' authenticates through a plugin (exec / auth-provider), which vigil does not run: "
                         "give it a token or a client certificate", us);
    else rc = 0;
    if (!rc) {
        vg_strlcpy(c->server, server, sizeof c->server);
        size_t l = strlen(c->server);
        while (l && c->server[l - 1] == '/') c->server[--l] = 0;
        const char *v;
        if ((v = json_string_value(json_object_get(cluster, "certificate-authority"))))
            path_in(dir, v, c->ca_file, sizeof c->ca_file);
        c->insecure = json_is_true(json_object_get(cluster, "insecure-skip-tls-verify"));
        if ((v = json_string_value(json_object_get(user, "token")))) vg_strlcpy(c->token, v, sizeof c->token);
        if ((v = json_string_value(json_object_get(user, "client-certificate"))))
            path_in(dir, v, c->cert_file, sizeof c->cert_file);
        if ((v = json_string_value(json_object_get(user, "client-key")))) path_in(dir, v, c->key_file, sizeof c->key_file);
        if (data_field(cluster, "certificate-authority-data", &c->ca_pem, err, n) ||
            data_field(user, "client-certificate-data", &c->cert_pem, err, n) ||
            data_field(user, "client-key-data", &c->key_pem, err, n))
            rc = -1;
        if (!rc && (v = json_string_value(json_object_get(user, "tokenFile"))) && !c->token[0]) {
            char path[1024], *tok;
            size_t tl;
            path_in(dir, v, path, sizeof path);
            if (read_text(path, &tok, &tl, err, n)) rc = -1;
            else {
                vg_strlcpy(c->token, vg_trim(tok), sizeof c->token);
                free(tok);
            }
        }
        if (!rc) rc = client_pair(c, us ? us : "", err, n);
    }
    json_decref(doc);
    return rc;
}

void vg_k8s_conf_free(struct vg_k8s_conf *c)
{
    free(c->ca_pem);
    free(c->cert_pem);
    free(c->key_pem);
    c->ca_pem = c->cert_pem = c->key_pem = NULL;
}

static int from_file(const char *path, struct vg_k8s_conf *c, char *err, size_t n)
{
    char *text;
    size_t len;
    if (read_text(path, &text, &len, err, n)) return -1;
    char dir[1024];
    vg_strlcpy(dir, path, sizeof dir);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    else vg_strlcpy(dir, ".", sizeof dir);
    char why[512];
    int rc = vg_k8s_conf_parse(text, len, dir, c, why, sizeof why);
    free(text);
    if (rc) snprintf(err, n, "%s: %s", path, why);
    else snprintf(c->source, sizeof c->source, "%s", path);
    return rc;
}

static int in_cluster(const char *host, struct vg_k8s_conf *c, char *err, size_t n)
{
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    bool v6 = strchr(host, ':') != NULL;
    snprintf(c->server, sizeof c->server, "https://%s%s%s:%s", v6 ? "[" : "", host, v6 ? "]" : "",
             port && *port ? port : "443");
    char *tok;
    size_t len;
    if (read_text(VG_K8S_SA_DIR "/token", &tok, &len, err, n)) return -1;
    vg_strlcpy(c->token, vg_trim(tok), sizeof c->token);
    free(tok);
    snprintf(c->ca_file, sizeof c->ca_file, "%s", VG_K8S_SA_DIR "/ca.crt");
    snprintf(c->source, sizeof c->source, "in-cluster");
    return 0;
}

int vg_k8s_conf_load(const char *file, struct vg_k8s_conf *c, char *err, size_t n)
{
    memset(c, 0, sizeof *c);
    if (file && *file) return from_file(file, c, err, n);
    const char *env = getenv("KUBECONFIG");
    if (env && *env) {
        char first[1024];
        vg_strlcpy(first, env, sizeof first);
        char *colon = strchr(first, ':');
        if (colon) *colon = 0;
        return from_file(first, c, err, n);
    }
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    if (host && *host) return in_cluster(host, c, err, n);
    const char *home = getenv("HOME");
    char path[1024];
    snprintf(path, sizeof path, "%s/.kube/config", home && *home ? home : "");
    return from_file(path, c, err, n);
}
