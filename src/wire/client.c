/* client.c — HTTP client for agent → controller messages (libcurl); see client.h.
 * libcurl is loaded with dlopen on the first request: an agent that has
 * nothing to report does not carry libcurl's dependencies (OpenSSL, GnuTLS,
 * Kerberos, LDAP: about 4 MB of resident pages) while it waits. */
#include "wire/client.h"
#include "util/sbuf.h"
#include <curl/curl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static struct {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_perform)(CURL *);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    void (*easy_cleanup)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
} curl;
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static const char *curl_error;

#define CURL_SYM(field, name) \
    if (!(*(void **)&curl.field = dlsym(lib, name))) { curl_error = "libcurl.so.4 lacks " name; return; }

static void curl_init(void)
{
    void *lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        curl_error = "cannot load libcurl.so.4 (Debian package libcurl4)";
        return;
    }
    CURL_SYM(global_init, "curl_global_init")
    CURL_SYM(easy_init, "curl_easy_init")
    CURL_SYM(easy_setopt, "curl_easy_setopt")
    CURL_SYM(easy_perform, "curl_easy_perform")
    CURL_SYM(easy_getinfo, "curl_easy_getinfo")
    CURL_SYM(easy_cleanup, "curl_easy_cleanup")
    CURL_SYM(easy_strerror, "curl_easy_strerror")
    CURL_SYM(slist_append, "curl_slist_append")
    CURL_SYM(slist_free_all, "curl_slist_free_all")
    curl.global_init(CURL_GLOBAL_DEFAULT);
}

/* Loads libcurl once; returns -1 (err set) when it cannot be. */
static int curl_ready(char *err, size_t errlen)
{
    pthread_once(&curl_once, curl_init);
    if (curl_error) snprintf(err, errlen, "%s", curl_error);
    return curl_error ? -1 : 0;
}

static size_t collect(char *ptr, size_t size, size_t n, void *ud)
{
    sbuf_add(ud, ptr, size * n);
    return size * n;
}

static int perform(CURL *c, const char *url, int timeout_ms, long *status, char **resp, char *err, size_t errlen)
{
    struct sbuf body = SBUF_INIT;
    char cerr[CURL_ERROR_SIZE] = "";
    curl.easy_setopt(c, CURLOPT_URL, url);
    curl.easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
    curl.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_ms);
    curl.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl.easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl.easy_setopt(c, CURLOPT_WRITEDATA, &body);
    curl.easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
    CURLcode rc = curl.easy_perform(c);
    if (rc != CURLE_OK) {
        snprintf(err, errlen, "%s: %s", url, cerr[0] ? cerr : curl.easy_strerror(rc));
        sbuf_free(&body);
        return -1;
    }
    curl.easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
    if (resp) *resp = sbuf_take(&body);
    else sbuf_free(&body);
    return 0;
}

int vg_client_post(const char *url, const struct vg_auth *auth, const char *json, int timeout_ms, long *status,
                   char **resp, char *err, size_t errlen)
{
    if (curl_ready(err, errlen)) return -1;
    char *body;
    char **headers;
    if (vg_auth_wrap(auth, json, &body, &headers, err, errlen)) {
        vg_auth_free_headers(headers);
        return -1;
    }
    CURL *c = curl.easy_init();
    struct curl_slist *hl = NULL;
    for (int i = 0; headers[i]; i++) hl = curl.slist_append(hl, headers[i]);
    hl = curl.slist_append(hl, "Expect:");
    curl.easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    curl.easy_setopt(c, CURLOPT_POSTFIELDS, body);
    int rc = perform(c, url, timeout_ms, status, resp, err, errlen);
    curl.slist_free_all(hl);
    curl.easy_cleanup(c);
    free(body);
    vg_auth_free_headers(headers);
    return rc;
}

int vg_client_get(const char *url, const char *bearer, int timeout_ms, long *status, char **resp, char *err,
                  size_t errlen)
{
    if (curl_ready(err, errlen)) return -1;
    CURL *c = curl.easy_init();
    struct curl_slist *hl = NULL;
    if (bearer && *bearer) {
        char h[512];
        snprintf(h, sizeof h, "Authorization: Bearer %s", bearer);
        hl = curl.slist_append(hl, h);
        curl.easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    }
    int rc = perform(c, url, timeout_ms, status, resp, err, errlen);
    curl.slist_free_all(hl);
    curl.easy_cleanup(c);
    return rc;
}
