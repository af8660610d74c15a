/* client.c — HTTP(S) client of the controller API (libcurl); see client.h.
 * libcurl is loaded with dlopen on the first request (util/curlso.h). */
#include "wire/client.h"
#include "util/sbuf.h"
#include "util/curlso.h"
#include <stdio.h>
#include <stdlib.h>

static const char *ca_file;

void vg_client_set_ca(const char *path) { ca_file = path; }

static size_t collect(char *ptr, size_t size, size_t n, void *ud)
{
    sbuf_add(ud, ptr, size * n);
    return size * n;
}

static int perform(const struct vg_curl *cu, CURL *c, const char *url, int timeout_ms, long *status, char **resp,
                   char *err, size_t errlen)
{
    struct sbuf body = SBUF_INIT;
    char cerr[CURL_ERROR_SIZE] = "";
    cu->easy_setopt(c, CURLOPT_URL, url);
    cu->easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
    cu->easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_ms);
    cu->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    cu->easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    cu->easy_setopt(c, CURLOPT_WRITEDATA, &body);
    cu->easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
    const char *ca = ca_file ? ca_file : getenv("VIGIL_CA");
    if (ca && *ca) cu->easy_setopt(c, CURLOPT_CAINFO, ca);
    cu->easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
    cu->easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
    CURLcode rc = cu->easy_perform(c);
    if (rc != CURLE_OK) {
        snprintf(err, errlen, "%s: %s", url, cerr[0] ? cerr : cu->easy_strerror(rc));
        sbuf_free(&body);
        return -1;
    }
    cu->easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
    if (resp) *resp = sbuf_take(&body);
    else sbuf_free(&body);
    return 0;
}

int vg_client_post(const char *url, struct vg_auth *auth, const char *json, int timeout_ms, long *status,
                   char **resp, char *err, size_t errlen)
{
    const struct vg_curl *cu = vg_curl_load(err, errlen);
    if (!cu) return -1;
    char **headers;
    if (vg_auth_wrap(auth, json, &headers, err, errlen)) {
        vg_auth_free_headers(headers);
        return -1;
    }
    CURL *c = cu->easy_init();
    struct curl_slist *hl = NULL;
    for (int i = 0; headers[i]; i++) hl = cu->slist_append(hl, headers[i]);
    hl = cu->slist_append(hl, "Expect:");
    cu->easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    cu->easy_setopt(c, CURLOPT_POSTFIELDS, json);
    int rc = perform(cu, c, url, timeout_ms, status, resp, err, errlen);
    cu->slist_free_all(hl);
    cu->easy_cleanup(c);
    vg_auth_free_headers(headers);
    return rc;
}

int vg_client_get(const char *url, const char *bearer, int timeout_ms, long *status, char **resp, char *err,
                  size_t errlen)
{
    const struct vg_curl *cu = vg_curl_load(err, errlen);
    if (!cu) return -1;
    CURL *c = cu->easy_init();
    struct curl_slist *hl = NULL;
    if (bearer && *bearer) {
        char h[512];
        snprintf(h, sizeof h, "Authorization: Bearer %s", bearer);
        hl = cu->slist_append(hl, h);
        cu->easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    }
    int rc = perform(cu, c, url, timeout_ms, status, resp, err, errlen);
    cu->slist_free_all(hl);
    cu->easy_cleanup(c);
    return rc;
}
