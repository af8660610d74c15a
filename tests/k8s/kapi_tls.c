/* kapi_tls.c — who a client certificate says the caller is, as the
 * Kubernetes API server's x509 authenticator does: the certificate the
 * client presented in the TLS handshake must verify against the --client-ca
 * bundle (libmicrohttpd asks for it with MHD_OPTION_HTTPS_MEM_TRUST and
 * loads that bundle into the session's credentials), and the user is its
 * subject's Common Name.  Read through GnuTLS from the connection's session. */
#include "kapi.h"
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <stdio.h>
#include <string.h>

enum kapi_cert kapi_tls_user(struct MHD_Connection *c, char *user, size_t n)
{
    user[0] = 0;
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (!ci || !ci->tls_session) return KAPI_CERT_NONE;
    gnutls_session_t s = ci->tls_session;
    unsigned nc = 0;
    const gnutls_datum_t *peers = gnutls_certificate_get_peers(s, &nc);
    if (!peers || !nc) return KAPI_CERT_NONE;
    unsigned status = 0;
    if (gnutls_certificate_verify_peers2(s, &status) < 0 || status) return KAPI_CERT_BAD;
    gnutls_x509_crt_t crt;
    if (gnutls_x509_crt_init(&crt) < 0) return KAPI_CERT_BAD;
    enum kapi_cert rc = KAPI_CERT_BAD;
    size_t len = n;
    if (gnutls_x509_crt_import(crt, &peers[0], GNUTLS_X509_FMT_DER) >= 0 &&
        gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, user, &len) >= 0 && user[0])
        rc = KAPI_CERT_OK;
    gnutls_x509_crt_deinit(crt);
    if (rc != KAPI_CERT_OK) user[0] = 0;
    return rc;
}
