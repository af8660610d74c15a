/* k8s_http.c — requests to the Kubernetes API server with libcurl (loaded
 * on first use, util/curlso.h): bearer token or client certificate (over
 * HTTPS only: as kubectl, none is sent over plain HTTP), the cluster's CA,
 * retries with doubling backoff on 429 (honouring Retry-After), 5xx and no
 * answer, answers capped at VG_K8S_MAX_ANSWER (the transfer stops there and
 * the request fails saying so), lists read in pages, and one-line errors
 * from the Status objects the API answers with.  Every request counts in
 * o->calls. */
#include "orch/k8s.h"
#include "util/curlso.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WAIT_MS 5000

/* The answer as it comes, up to the cap. */
struct answer {
    struct sbuf b;
    bool over;               /* it went past VG_K8S_MAX_ANSWER: the transfer was stopped */
};

static size_t collect(char *ptr, size_t size, size_t n, void *ud)
{
    struct answer *a = ud;
    if (a->b.len + size * n > (size_t)VG_K8S_MAX_ANSWER) {
        a->over = true;
        return 0;   /* curl stops with CURLE_WRITE_ERROR */
    }
    sbuf_add(&a->b, ptr, size * n);
    return size * n;
}

bool vg_k8s_plain_http(const char *server) { return !strncasecmp(server, "http://", 7); }

static size_t header(char *buf, size_t size, size_t n, void *ud)
{
    size_t len = size * n;
    if (len > 12 && !strncasecmp(buf, "Retry-After:", 12)) *(long *)ud = strtol(buf + 12, NULL, 10);
    return len;
}

static void tls(const struct vg_curl *cu, CURL *c, const struct vg_k8s_conf *k)
{
    if (k->insecure) {
        cu->easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
        cu->easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (k->ca_pem) {
        struct curl_blob b = { .data = k->ca_pem, .len = strlen(k->ca_pem), .flags = CURL_BLOB_COPY };
        cu->easy_setopt(c, CURLOPT_CAINFO_BLOB, &b);
    } else if (k->ca_file[0]) cu->easy_setopt(c, CURLOPT_CAINFO, k->ca_file);
    if (k->cert_pem) {
        struct curl_blob b = { .data = k->cert_pem, .len = strlen(k->cert_pem), .flags = CURL_BLOB_COPY };
        cu->easy_setopt(c, CURLOPT_SSLCERT_BLOB, &b);
    } else if (k->cert_file[0]) cu->easy_setopt(c, CURLOPT_SSLCERT, k->cert_file);
    if (k->key_pem) {
        struct curl_blob b = { .data = k->key_pem, .len = strlen(k->key_pem), .flags = CURL_BLOB_COPY };
        cu->easy_setopt(c, CURLOPT_SSLKEY_BLOB, &b);
    } else if (k->key_file[0]) cu->easy_setopt(c, CURLOPT_SSLKEY, k->key_file);
}

/* One try: the status (0 when no answer came, or a larger one than the cap
 * (*over); err set). */
static long once(const struct vg_curl *cu, struct vg_k8s_http *h, const char *method, const char *url,
                 const char *ctype, const char *body, char **resp, long *retry_after, bool *over, char *err, size_t n)
{
    CURL *c = cu->easy_init();
    if (!c) {
        snprintf(err, n, "curl_easy_init failed");
        return 0;
    }
    struct curl_slist *hl = NULL;
    char auth[4200], ct[160];
    if (h->conf.token[0] && !vg_k8s_plain_http(h->conf.server)) {
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", h->conf.token);
        hl = cu->slist_append(hl, auth);
    }
    hl = cu->slist_append(hl, "Accept: application/json");
    hl = cu->slist_append(hl, "User-Agent: vigil");
    if (body) {
        snprintf(ct, sizeof ct, "Content-Type: %s", ctype ? ctype : "application/json");
        hl = cu->slist_append(hl, ct);
        cu->easy_setopt(c, CURLOPT_POSTFIELDS, body);
    }
    struct answer a = { .b = SBUF_INIT };
    char cerr[CURL_ERROR_SIZE] = "";
    cu->easy_setopt(c, CURLOPT_URL, url);
    cu->easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    cu->easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    cu->easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)h->timeout_ms);
    cu->easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)h->timeout_ms);
    cu->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    cu->easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    cu->easy_setopt(c, CURLOPT_WRITEDATA, &a);
    cu->easy_setopt(c, CURLOPT_HEADERFUNCTION, header);
    cu->easy_setopt(c, CURLOPT_HEADERDATA, retry_after);
    cu->easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
    if (!vg_k8s_plain_http(h->conf.server)) tls(cu, c, &h->conf);
    long status = 0;
    CURLcode rc = cu->easy_perform(c);
    *over = a.over;
    if (a.over)
        snprintf(err, n, "the answer is larger than %ld MiB, the most vigil reads of one answer", VG_K8S_MAX_ANSWER >> 20);
    else if (rc != CURLE_OK) snprintf(err, n, "%.200s: %.250s", h->conf.server, cerr[0] ? cerr : cu->easy_strerror(rc));
    else cu->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    *resp = sbuf_take(&a.b);
    cu->slist_free_all(hl);
    cu->easy_cleanup(c);
    return status;
}

long vg_k8s_request_raw(struct vg_orch *o, struct vg_k8s_http *h, const char *method, const char *path,
                        const char *ctype, const char *body, char **raw)
{
    *raw = NULL;
    char err[512];
    const struct vg_curl *cu = vg_curl_load(err, sizeof err);
    if (!cu) {
        vg_orch_fail(o, "%s", err);
        return 0;
    }
    char url[2048];
    snprintf(url, sizeof url, "%s%s", h->conf.server, path);
    long wait = h->backoff_ms > 0 ? h->backoff_ms : 100, status = 0;
    for (int attempt = 0;; attempt++) {
        char *resp = NULL;
        long retry_after = -1;
        bool over = false;
        err[0] = 0;
        o->calls++;
        status = once(cu, h, method, url, ctype, body, &resp, &retry_after, &over, err, sizeof err);
        free(*raw);
        *raw = resp;
        bool again = !over && (status == 0 || status == 429 || status >= 500);
        if (!again || attempt >= h->retries) break;
        long ms = retry_after >= 0 ? retry_after * 1000 : wait;
        if (ms > MAX_WAIT_MS) ms = MAX_WAIT_MS;
        vg_sleep_ms(ms);
        if (wait < MAX_WAIT_MS) wait *= 2;
    }
    if (status == 0) vg_orch_fail(o, "%s %s: %s", method, path, err);
    return status;
}

long vg_k8s_request(struct vg_orch *o, struct vg_k8s_http *h, const char *method, const char *path,
                    const char *ctype, const char *body, json_t **out)
{
    char *raw;
    long status = vg_k8s_request_raw(o, h, method, path, ctype, body, &raw);
    *out = raw && *raw ? json_loads(raw, 0, NULL) : NULL;
    free(raw);
    return status;
}

int vg_k8s_fail(struct vg_orch *o, long status, json_t *answer, const char *method, const char *path)
{
    if (status == 0) return -1;   /* vg_k8s_request said why */
    const char *msg = json_string_value(json_object_get(answer, "message"));
    if (!msg) msg = "";
    switch (status) {
    case 401:
        return vg_orch_fail(o, "%s %s: 401 Unauthorized: the API server does not accept vigil's credentials "
                               "(expired or wrong token?)", method, path);
    case 403:
        return vg_orch_fail(o, "%s %s: 403 Forbidden (RBAC): %s", method, path, *msg ? msg : "vigil's role lacks this verb");
    case 404: return vg_orch_fail(o, "%s %s: 404 Not Found: %s", method, path, *msg ? msg : "no such object");
    case 409: return vg_orch_fail(o, "%s %s: 409 Conflict: %s", method, path, msg);
    case 429:
        return vg_orch_fail(o, "%s %s: 429 Too Many Requests after %s: %s", method, path, "retries",
                            *msg ? msg : "the API server is rate-limiting vigil");
    default: return vg_orch_fail(o, "%s %s: HTTP %ld%s%s", method, path, status, *msg ? ": " : "", msg);
    }
}

int vg_k8s_list(struct vg_orch *o, struct vg_k8s_http *h, const char *path,
                int (*each)(struct vg_orch *o, const json_t *item, void *ud), void *ud)
{
    char cont[4096] = "";
    for (;;) {
        struct sbuf p = SBUF_INIT;
        sbuf_printf(&p, "%s%climit=%d", path, strchr(path, '?') ? '&' : '?', VG_K8S_PAGE);
        if (cont[0]) {
            sbuf_puts(&p, "&continue=");
            for (const char *c = cont; *c; c++) {   /* the token is opaque: percent-encoded whole */
                unsigned char ch = (unsigned char)*c;
                if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || strchr("-_.~", ch))
                    sbuf_putc(&p, (char)ch);
                else sbuf_printf(&p, "%%%02X", ch);
            }
        }
        char *raw;
        long st = vg_k8s_request_raw(o, h, "GET", p.s, NULL, NULL, &raw);
        sbuf_free(&p);
        size_t len = raw ? strlen(raw) : 0;
        json_t *ans = len ? json_loadb(raw, len, 0, NULL) : NULL;
        free(raw);
        if (st < 200 || st >= 300) {
            /* 410 Gone: the continue token expired (the list changed too much between pages) */
            vg_k8s_fail(o, st, ans, "GET", path);
            json_decref(ans);
            return -1;
        }
        json_t *items = json_object_get(ans, "items");
        if (!json_is_array(items)) {
            json_decref(ans);
            return vg_orch_fail(o, "GET %s: the answer is not a list (no items)", path);
        }
        size_t i;
        json_t *item;
        json_array_foreach(items, i, item)
            if (each(o, item, ud)) {
                json_decref(ans);
                return -1;
            }
        const char *next = json_string_value(json_object_get(json_object_get(ans, "metadata"), "continue"));
        bool more = next && *next && strlen(next) < sizeof cont;
        if (more) vg_strlcpy(cont, next, sizeof cont);
        json_decref(ans);
        if (more) continue;
        return next && *next ? vg_orch_fail(o, "GET %s: a continue token longer than %zu bytes", path, sizeof cont - 1)
                             : 0;
    }
}
