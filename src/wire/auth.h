/* auth.h — authentication of agent → controller requests.  Every request
 * names the node it speaks for (`X-Vigil-Node`), and its credential proves
 * that name, so a node speaks only for itself:
 *   token: `Authorization: Bearer <the node's token>`, the node's token
 *          being HMAC-SHA256(cluster secret, "vigil-node-token:1:" NODE) in
 *          hex (`vigil token`): the controller keeps the one secret, each
 *          agent only its own token.  With `X-Vigil-Time` (ms since the
 *          epoch, within ±5 min) and `X-Vigil-Nonce` (INSTANCE-COUNTER, used
 *          once: replay.h).  The cluster's old shared token is still taken
 *          where the controller is told to (it then proves no node name).
 *   munge: `Authorization: MUNGE <credential>`, the credential's payload
 *          "vigil-1 node=NODE sha256=DIGEST" — the node and the SHA-256 of
 *          the body — so the controller checks the credential (munged
 *          refuses a replayed one; the uid must be the allowed one, root by
 *          default) before it reads a byte of the body, and the body against
 *          the digest after.  The credential's origin address (where munged
 *          encoded it) is for the controller to check against the node's
 *          address in the scheduler.
 *   none:  no check (tests on loopback only; the controller warns).
 * The body is the JSON document in every mode. */
#ifndef VG_AUTH_H
#define VG_AUTH_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum vg_auth_mode { VG_AUTH_NONE = 0, VG_AUTH_MUNGE, VG_AUTH_TOKEN };

#define VG_AUTH_SECRET_MIN 32   /* characters of a cluster secret, at least */

struct vg_auth {
    enum vg_auth_mode mode;
    char node[64];          /* client: the node it speaks for */
    char token[256];        /* client, token mode: the node's token (or the shared one) */
    char secret[256];       /* server, token mode: the cluster secret ("" none) */
    char shared[256];       /* server, token mode: the old shared token, taken when set */
    char munge_socket[256]; /* "" = munged's default socket */
    unsigned allowed_uid;   /* server, munge mode: the uid agents run as (0) */
    uint64_t instance;      /* client, token mode: this process's nonce instance */
    uint64_t counter;       /* client, token mode: requests sent */
    struct vg_replay *replay;/* server, token mode: the nodes' nonce windows */
};

struct vg_auth_conf {
    const char *mode;              /* "munge" (default), "token" or "none" */
    const char *node;              /* client: the node it speaks for */
    const char *token_file;        /* client, token mode: its token (first line, mode 0600) */
    const char *secret_file;       /* server, token mode: the cluster secret */
    const char *shared_token_file; /* server, token mode: the old shared token, still taken */
    const char *munge_socket;
};

/* Sets up from c.  Returns 0, or -1 with a one-line message naming the file
 * or value. */
int vg_auth_init(struct vg_auth *a, const struct vg_auth_conf *c, char *err, size_t errlen);
void vg_auth_free(struct vg_auth *a);
/* Reads a secret file's first line into out (n bytes): the file must not be
 * readable by group or others, the secret at least min characters.  Returns
 * 0 or -1 with a message naming the file. */
int vg_auth_read_secret(const char *path, size_t min, char *out, size_t n, char *err, size_t errlen);
/* Reads a token file (vg_auth_read_secret with at least 16 characters). */
int vg_auth_read_token(const char *path, char *token, size_t n, char *err, size_t errlen);
/* Node's token under secret (hex, 64 characters).  0, or -1 (err set). */
int vg_auth_node_token(const char *secret, const char *node, char out[65], char *err, size_t errlen);

/* Client side: the headers for a request whose body is json (NULL-terminated,
 * malloc'd strings in a malloc'd array).  Returns 0 or -1 (err set). */
int vg_auth_wrap(struct vg_auth *a, const char *json, char ***headers, char *err, size_t errlen);
void vg_auth_free_headers(char **headers);

/* Server side.  What a request's headers carry (NULL when absent). */
struct vg_auth_request {
    const char *authorization, *node, *time, *nonce;
};
/* What they prove. */
struct vg_auth_id {
    char node[64];          /* the node the request speaks for; "" when it names none (auth none) */
    bool bound;             /* the credential proves node (a node's token; MUNGE: its origin still to check) */
    bool shared;            /* taken on the old shared token: node is only claimed */
    uint32_t origin4;       /* MUNGE: the credential's origin address (network byte order); 0 none */
    char sha256[65];        /* MUNGE: the digest the body must have; "" none */
    uint64_t instance, counter; /* token: the nonce, for vg_auth_replay */
};
/* Checks the credential before any body byte is read; keeps no state (the
 * nonce is used by vg_auth_replay, once the node is known to the caller).
 * Returns 0 with *id filled, or -1 with the reason in err.  Thread-safe. */
int vg_auth_verify(const struct vg_auth *a, const struct vg_auth_request *r, int64_t now_ms, struct vg_auth_id *id,
                   char *err, size_t errlen);
/* Token mode: uses id's nonce up (replay.h); other modes: 0.  -1 with the
 * reason in err.  Not thread-safe (one caller at a time). */
int vg_auth_replay(struct vg_auth *a, const struct vg_auth_id *id, int64_t now_ms, char *err, size_t errlen);
/* After the body: it matches what the credential says (MUNGE: its digest).
 * 0, or -1 with the reason in err. */
int vg_auth_body(const struct vg_auth_id *id, const char *body, size_t len, char *err, size_t errlen);
/* Parses a MUNGE credential's payload, "vigil-1 node=NAME sha256=HEX" (len
 * bytes, not NUL-terminated) into id->node and id->sha256: 0, or -1 when it
 * is not one (the fuzz target drives it too). */
int vg_auth_munge_payload(const char *p, int len, struct vg_auth_id *id);
/* Constant-time comparison of a presented secret with the expected one. */
bool vg_auth_secret_equal(const char *presented, const char *expected);

#endif
