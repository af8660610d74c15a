/* client.h — the agent's side of the controller API: POST a message to
 * /v1/events with libcurl, authenticated per auth.h. */
#ifndef VG_CLIENT_H
#define VG_CLIENT_H
#include "wire/auth.h"

/* Posts json to url.  Returns 0 when an HTTP answer came (its status in
 * *status, its body in *resp, malloc'd, may be NULL), -1 when none did
 * (controller unreachable, timeout, auth wrapping failed; err says why). */
int vg_client_post(const char *url, const struct vg_auth *auth, const char *json, int timeout_ms, long *status,
                   char **resp, char *err, size_t errlen);
/* GET url, with `Authorization: Bearer <bearer>` unless bearer is NULL or
 * empty (the controller's read token); same conventions. */
int vg_client_get(const char *url, const char *bearer, int timeout_ms, long *status, char **resp, char *err,
                  size_t errlen);

#endif
