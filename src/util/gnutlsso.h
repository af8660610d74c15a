/* gnutlsso.h — GnuTLS, loaded with dlopen on first use (as libcurl and
 * libmicrohttpd are): the HMAC and digest of the wire's credentials
 * (util/digest.h) and the certificate checks of util/tlskey.h.  A command
 * that needs none of them never maps it. */
#ifndef VG_GNUTLSSO_H
#define VG_GNUTLSSO_H
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stddef.h>

struct vg_gnutls {
    __typeof__(gnutls_hmac_fast) *hmac_fast;
    __typeof__(gnutls_hash_fast) *hash_fast;
    __typeof__(gnutls_strerror) *strerror;
    __typeof__(gnutls_certificate_allocate_credentials) *cert_alloc;
    __typeof__(gnutls_certificate_free_credentials) *cert_free;
    __typeof__(gnutls_certificate_set_x509_key_mem) *cert_set_key_mem;
};

/* GnuTLS's functions, loaded once (thread-safe); NULL with err set when
 * libgnutls.so.30 cannot be loaded. */
const struct vg_gnutls *vg_gnutls_load(char *err, size_t errlen);

#endif
