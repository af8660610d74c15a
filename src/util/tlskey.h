/* tlskey.h — whether a client certificate and its private key belong
 * together, checked when a configuration is read rather than at the first
 * TLS handshake (GnuTLS, loaded with dlopen on first use). */
#ifndef VG_TLSKEY_H
#define VG_TLSKEY_H
#include <stddef.h>

/* cert and key are PEM text.  0: they are a pair; -1: they are not, or one
 * cannot be read as PEM (err says which, in GnuTLS's words); 1: GnuTLS
 * (libgnutls.so.30) cannot be loaded, so nothing was checked. */
int vg_tls_keypair_check(const char *cert, size_t certlen, const char *key, size_t keylen, char *err, size_t n);

#endif
