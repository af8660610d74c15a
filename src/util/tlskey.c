/* tlskey.c — a client certificate against its private key, with GnuTLS's
 * gnutls_certificate_set_x509_key_mem (it refuses a key that does not match
 * the certificate: GNUTLS_E_CERTIFICATE_KEY_MISMATCH); see tlskey.h. */
#include "util/tlskey.h"
#include "util/gnutlsso.h"
#include <stdio.h>

int vg_tls_keypair_check(const char *cert, size_t certlen, const char *key, size_t keylen, char *err, size_t n)
{
    const struct vg_gnutls *g = vg_gnutls_load(NULL, 0);
    gnutls_certificate_credentials_t cred;
    if (!g || g->cert_alloc(&cred) < 0) return 1;
    gnutls_datum_t c = { (unsigned char *)cert, (unsigned)certlen }, k = { (unsigned char *)key, (unsigned)keylen };
    int rc = g->cert_set_key_mem(cred, &c, &k, GNUTLS_X509_FMT_PEM);
    g->cert_free(cred);
    if (rc >= 0) return 0;
    snprintf(err, n, "%s", g->strerror(rc));
    return -1;
}
