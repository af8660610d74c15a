/* digest.c — SHA-256 and HMAC-SHA256 through GnuTLS; see digest.h. */
#include "util/digest.h"
#include "util/gnutlsso.h"
#include <stdio.h>

static void to_hex(const unsigned char *d, size_t n, char *hex)
{
    static const char x[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) hex[2 * i] = x[d[i] >> 4], hex[2 * i + 1] = x[d[i] & 15];
    hex[2 * n] = 0;
}

int vg_hmac_sha256_hex(const void *key, size_t keylen, const void *msg, size_t len, char hex[VG_SHA256_HEX],
                       char *err, size_t errlen)
{
    const struct vg_gnutls *g = vg_gnutls_load(err, errlen);
    unsigned char d[32];
    if (!g) return -1;
    int rc = g->hmac_fast(GNUTLS_MAC_SHA256, key, keylen, msg, len, d);
    if (rc < 0) return snprintf(err, errlen, "HMAC-SHA256: %s", g->strerror(rc)), -1;
    to_hex(d, sizeof d, hex);
    return 0;
}

int vg_sha256_hex(const void *msg, size_t len, char hex[VG_SHA256_HEX], char *err, size_t errlen)
{
    const struct vg_gnutls *g = vg_gnutls_load(err, errlen);
    unsigned char d[32];
    if (!g) return -1;
    int rc = g->hash_fast(GNUTLS_DIG_SHA256, msg, len, d);
    if (rc < 0) return snprintf(err, errlen, "SHA-256: %s", g->strerror(rc)), -1;
    to_hex(d, sizeof d, hex);
    return 0;
}
