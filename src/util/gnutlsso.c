/* gnutlsso.c — loads GnuTLS with dlopen on first use; see gnutlsso.h. */
#include "util/gnutlsso.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static struct vg_gnutls G;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *load_error;

#define SYM(field, name) \
    if (!(*(void **)&G.field = dlsym(lib, name))) { load_error = "libgnutls.so.30 lacks " name; return; }

static void load(void)
{
    void *lib = dlopen("libgnutls.so.30", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        load_error = "cannot load libgnutls.so.30 (Debian package libgnutls30)";
        return;
    }
    SYM(hmac_fast, "gnutls_hmac_fast")
    SYM(hash_fast, "gnutls_hash_fast")
    SYM(strerror, "gnutls_strerror")
    SYM(cert_alloc, "gnutls_certificate_allocate_credentials")
    SYM(cert_free, "gnutls_certificate_free_credentials")
    SYM(cert_set_key_mem, "gnutls_certificate_set_x509_key_mem")
}

const struct vg_gnutls *vg_gnutls_load(char *err, size_t errlen)
{
    pthread_once(&once, load);
    if (load_error) {
        if (errlen) snprintf(err, errlen, "%s", load_error);
        return NULL;
    }
    return &G;
}
