/* serve_auth.c — the controller's credentials and TLS pair from its
 * options; see serve_auth.h. */
#include "cmd/serve_auth.h"
#include "util/log.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PEM_MAX (1u << 20)

bool vg_serve_loopback(const char *listen)
{
    char host[64];
    const char *colon = strrchr(listen, ':');
    if (!colon || (size_t)(colon - listen) >= sizeof host) return false;
    memcpy(host, listen, (size_t)(colon - listen));
    host[colon - listen] = 0;
    struct in_addr a;
    return host[0] && inet_pton(AF_INET, host, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

/* A PEM file's text; a key must not be readable by others. */
static int read_pem(const char *opt, const char *path, bool key, char **out)
{
    struct stat st;
    size_t len;
    *out = NULL;
    if (stat(path, &st) || vg_read_file(NULL, path, PEM_MAX, out, &len) < 0)
        return vg_input_error("%s %s: cannot read it (%s)", opt, path, strerror(errno));
    if (key && (st.st_mode & 004)) {
        free(*out);
        *out = NULL;
        return vg_input_error("%s %s: a private key must not be readable by others (mode %03o)", opt, path,
                              (unsigned)(st.st_mode & 0777));
    }
    if (!strstr(*out, "-----BEGIN ")) {
        free(*out);
        *out = NULL;
        return vg_input_error("%s %s: not PEM text", opt, path);
    }
    return 0;
}

int vg_serve_creds(const struct vg_serve_creds *c, struct vg_auth *auth, char **cert_pem, char **key_pem)
{
    *cert_pem = *key_pem = NULL;
    bool token = c->mode && !strcmp(c->mode, "token");
    if ((c->secret_file || c->token_file) && !token)
        return vg_input_error("serve: --secret-file and --token-file go with --auth token");
    if (c->token_file && !c->allow_shared)
        return vg_input_error("serve: --token-file %s is a shared token, which proves no node's name: give "
                              "--secret-file (each node's token is derived from it: vigil token), or add "
                              "--allow-shared-token to still take it", c->token_file);
    if (c->allow_shared && !c->token_file) return vg_input_error("serve: --allow-shared-token needs --token-file");
    if (!c->tls_cert != !c->tls_key) return vg_input_error("serve: --tls-cert and --tls-key go together");
    if (c->tls_cert && (read_pem("--tls-cert", c->tls_cert, false, cert_pem) ||
                        read_pem("--tls-key", c->tls_key, true, key_pem))) {
        free(*cert_pem);
        *cert_pem = NULL;
        return VG_EXIT_INPUT;
    }
    char err[512];
    struct vg_auth_conf ac = { .mode = c->mode, .secret_file = c->secret_file, .shared_token_file = c->token_file,
                               .munge_socket = c->munge_socket };
    int rc = 0;
    if (token && !c->secret_file && !c->token_file)
        rc = vg_input_error("serve: --auth token needs --secret-file (the cluster secret: vigil token --new-secret)");
    else if (vg_auth_init(auth, &ac, err, sizeof err))
        rc = vg_input_error("%s", err);
    else if (auth->mode == VG_AUTH_NONE && !vg_serve_loopback(c->listen)) {
        vg_auth_free(auth);
        rc = vg_input_error("--auth none: refusing to listen on '%s' without authentication (only 127.x.x.x)",
                            c->listen);
    }
    if (rc) {
        free(*cert_pem);
        free(*key_pem);
        *cert_pem = *key_pem = NULL;
        return rc;
    }
    if (auth->mode == VG_AUTH_NONE) vg_warn("serve: --auth none: any local client may post events");
    if (c->allow_shared)
        vg_warn("serve: --allow-shared-token: any holder of %s can speak for every node; give each agent its own "
                "token (vigil token) and drop it", c->token_file);
    if (!c->tls_cert && !vg_serve_loopback(c->listen))
        vg_warn("serve: listening on %s in plain HTTP: credentials and reports cross the network unencrypted; "
                "give --tls-cert and --tls-key", c->listen);
    return 0;
}
