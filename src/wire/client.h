/* client.h — the controller API's client side (agents, `vigil audit fleet`,
 * `vigil report`, `vigil burnin --controller`, the drill): POST a message
 * authenticated per auth.h, GET with the read token, over libcurl.  An
 * https:// controller is verified against the system's CAs, or only against
 * the certificate authority set with vg_client_set_ca (`--ca F`), else the
 * one $VIGIL_CA names. */
#ifndef VG_CLIENT_H
#define VG_CLIENT_H
#include "wire/auth.h"

/* Verify https:// controllers against the CA certificate(s) in this PEM file
 * (NULL: the system's).  Process-wide: set once by the command's options. */
void vg_client_set_ca(const char *ca_file);
/* Posts json to url.  Returns 0 when an HTTP answer came (its status in
 * *status, its body in *resp, malloc'd, may be NULL), -1 when none did
 * (controller unreachable, TLS verification failed, timeout, auth failed;
 * err says why). */
int vg_client_post(const char *url, struct vg_auth *auth, const char *json, int timeout_ms, long *status,
                   char **resp, char *err, size_t errlen);
/* GET url, with `Authorization: Bearer <bearer>` unless bearer is NULL or
 * empty (the controller's read token); same conventions. */
int vg_client_get(const char *url, const char *bearer, int timeout_ms, long *status, char **resp, char *err,
                  size_t errlen);

#endif
