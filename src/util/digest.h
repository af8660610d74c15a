/* digest.h — SHA-256 and HMAC-SHA256 (GnuTLS's, loaded on first use:
 * util/gnutlsso.h), as lowercase hex: the per-node tokens derived from a
 * cluster secret and the body digest a MUNGE credential carries (wire/auth.h). */
#ifndef VG_DIGEST_H
#define VG_DIGEST_H
#include <stddef.h>

#define VG_SHA256_HEX 65   /* 64 hex characters and the NUL */

/* HMAC-SHA256 of msg under key into hex.  0, or -1 with err set (GnuTLS
 * cannot be loaded). */
int vg_hmac_sha256_hex(const void *key, size_t keylen, const void *msg, size_t len, char hex[VG_SHA256_HEX],
                       char *err, size_t errlen);
/* SHA-256 of msg into hex.  0 or -1 (err set). */
int vg_sha256_hex(const void *msg, size_t len, char hex[VG_SHA256_HEX], char *err, size_t errlen);

#endif
