/* curlso.h — libcurl, loaded with dlopen on first use: a process that never
 * makes an HTTP request (an idle agent) does not carry libcurl's
 * dependencies (OpenSSL, GnuTLS, Kerberos, LDAP: about 4 MB of resident
 * pages).  Shared by the agent's client (src/wire/client.c) and the
 * Kubernetes orchestrator (src/orch/k8s_http.c). */
#ifndef VG_CURLSO_H
#define VG_CURLSO_H
#include <curl/curl.h>
#include <stddef.h>

struct vg_curl {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_perform)(CURL *);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    void (*easy_cleanup)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
};

/* libcurl's functions, loaded once (thread-safe); NULL with err set when
 * libcurl.so.4 cannot be loaded. */
const struct vg_curl *vg_curl_load(char *err, size_t errlen);

#endif
