/* client.c — HTTP client for agent → controller messages (libcurl); see client.h. */
#include "remedy/client.h"
#include "util/sbuf.h"
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

static size_t collect(char *ptr, size_t size, size_t n, void *ud)
{
    sbuf_add(ud, ptr, size * n);
    return size * n;
}

static int perform(CURL *c, const char *url, int timeout_ms, long *status, char **resp, char *err, size_t errlen)
{
    struct sbuf body = SBUF_INIT;
    char cerr[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_ms);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
    CURLcode rc = curl_easy_perform(c);
    if (rc != CURLE_OK) {
        snprintf(err, errlen, "%s: %s", url, cerr[0] ? cerr : curl_easy_strerror(rc));
        sbuf_free(&body);
        return -1;
    }
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
    if (resp) *resp = sbuf_take(&body);
    else sbuf_free(&body);
    return 0;
}

int vg_client_post(const char *url, const struct vg_auth *auth, const char *json, int timeout_ms, long *status,
                   char **resp, char *err, size_t errlen)
{
    pthread_once(&curl_once, curl_init);
    char *body;
    char **headers;
    if (vg_auth_wrap(auth, json, &body, &headers, err, errlen)) {
        vg_auth_free_headers(headers);
        return -1;
    }
    CURL *c = curl_easy_init();
    struct curl_slist *hl = NULL;
    for (int i = 0; headers[i]; i++) hl = curl_slist_append(hl, headers[i]);
    hl = curl_slist_append(hl, "Expect:");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    int rc = perform(c, url, timeout_ms, status, resp, err, errlen);
    curl_slist_free_all(hl);
    curl_easy_cleanup(c);
    free(body);
    vg_auth_free_headers(headers);
    return rc;
}

int vg_client_get(const char *url, int timeout_ms, long *status, char **resp, char *err, size_t errlen)
{
    pthread_once(&curl_once, curl_init);
    CURL *c = curl_easy_init();
    int rc = perform(c, url, timeout_ms, status, resp, err, errlen);
    curl_easy_cleanup(c);
    return rc;
}
