/* serve_auth.h — `vigil serve`'s credentials from its options (serve_auth.c):
 * the agents' authentication (MUNGE; per-node tokens from the cluster
 * secret; the old shared token only when told), the listener's TLS pair, and
 * the refusals and warnings that go with them. */
#ifndef VG_SERVE_AUTH_H
#define VG_SERVE_AUTH_H
#include "wire/auth.h"
#include <stdbool.h>

struct vg_serve_creds {
    const char *listen, *mode, *secret_file, *token_file, *munge_socket, *tls_cert, *tls_key;
    bool allow_shared;
};

/* Sets up auth and reads the TLS pair (*cert_pem, *key_pem malloc'd, or
 * NULL without TLS).  0, or VG_EXIT_INPUT after one line naming the option
 * or file (nothing then to free). */
int vg_serve_creds(const struct vg_serve_creds *c, struct vg_auth *auth, char **cert_pem, char **key_pem);
/* The listener is a 127.x.x.x address. */
bool vg_serve_loopback(const char *listen);

#endif
