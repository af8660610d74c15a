/* tlskey.c — a client certificate against its private key, with GnuTLS's
 * gnutls_certificate_set_x509_key_mem (it refuses a key that does not match
 * the certificate: GNUTLS_E_CERTIFICATE_KEY_MISMATCH); see tlskey.h. */
#include "util/tlskey.h"
#include <dlfcn.h>
#include <gnutls/gnutls.h>
#include <pthread.h>
#include <stdio.h>

static struct {
    int (*alloc)(gnutls_certificate_credentials_t *);
    void (*free)(gnutls_certificate_credentials_t);
    int (*set_key_mem)(gnutls_certificate_credentials_t, const gnutls_datum_t *, const gnutls_datum_t *,
                       gnutls_x509_crt_fmt_t);
    const char *(*strerror)(int);
} G;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;

static void load(void)
{
    void *lib = dlopen("libgnutls.so.30", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    *(void **)&G.alloc = dlsym(lib, "gnutls_certificate_allocate_credentials");
    *(void **)&G.free = dlsym(lib, "gnutls_certificate_free_credentials");
    *(void **)&G.set_key_mem = dlsym(lib, "gnutls_certificate_set_x509_key_mem");
    *(void **)&G.strerror = dlsym(lib, "gnutls_strerror");
    loaded = G.alloc && G.free && G.set_key_mem && G.strerror;
}

int vg_tls_keypair_check(const char *cert, size_t certlen, const char *key, size_t keylen, char *err, size_t n)
{
    pthread_once(&once, load);
    gnutls_certificate_credentials_t cred;
    if (!loaded || G.alloc(&cred) < 0) return 1;
    gnutls_datum_t c = { (unsigned char *)cert, (unsigned)certlen }, k = { (unsigned char *)key, (unsigned)keylen };
    int rc = G.set_key_mem(cred, &c, &k, GNUTLS_X509_FMT_PEM);
    G.free(cred);
    if (rc >= 0) return 0;
    snprintf(err, n, "%s", G.strerror(rc));
    return -1;
}
