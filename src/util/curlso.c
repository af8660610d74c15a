/* curlso.c — loads libcurl with dlopen on first use; see curlso.h. */
#include "util/curlso.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static struct vg_curl curl;
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

const struct vg_curl *vg_curl_load(char *err, size_t errlen)
{
    pthread_once(&curl_once, curl_init);
    if (curl_error) {
        snprintf(err, errlen, "%s", curl_error);
        return NULL;
    }
    return &curl;
}
