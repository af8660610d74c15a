/* auth.h — authentication of agent → controller messages.
 *   munge: the message body IS a MUNGE credential whose payload is the JSON
 *          document (the same trust Slurm uses: munged on both ends, one key
 *          per cluster).  munged itself rejects replayed credentials; the
 *          credential's uid must be an allowed one (root by default).
 *   token: the body is the JSON document, sent with `Authorization: Bearer
 *          <token>` (the token read from a file), `X-Vigil-Time` (ms since the
 *          epoch, within ±5 min) and `X-Vigil-Nonce`, which may be used once.
 *   none:  no check (tests on loopback only; the controller warns).
 * A rejected message gets HTTP 401 and a log line saying why. */
#ifndef VG_AUTH_H
#define VG_AUTH_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum vg_auth_mode { VG_AUTH_NONE = 0, VG_AUTH_MUNGE, VG_AUTH_TOKEN };

struct vg_auth {
    enum vg_auth_mode mode;
    char token[256];        /* token mode */
    char munge_socket[256]; /* "" = munged's default socket */
    unsigned allowed_uid;   /* munge mode: the uid agents run as (0) */
    struct vg_nonces *nonces;/* token mode: nonces seen within the window (a hash set, oldest first) */
};

/* Sets up from a mode name ("munge", "token", "none") and, for token mode,
 * a token file (first line; must not be readable by group/other).  Returns 0,
 * or -1 with a one-line message naming the file or value. */
int vg_auth_init(struct vg_auth *a, const char *mode, const char *token_file, const char *munge_socket,
                 char *err, size_t errlen);
void vg_auth_free(struct vg_auth *a);
/* Reads a token file's first line into token (n bytes): the file must not be
 * readable by group or others, the token at least 16 characters.  Returns 0
 * or -1 with a message naming the file. */
int vg_auth_read_token(const char *path, char *token, size_t n, char *err, size_t errlen);

/* Client side: wraps a JSON body.  *body_out is the body to POST (malloc'd);
 * headers (NULL-terminated, malloc'd strings in a malloc'd array) are the
 * extra HTTP headers to send.  Returns 0 or -1 (err set). */
int vg_auth_wrap(const struct vg_auth *a, const char *json, char **body_out, char ***headers, char *err,
                 size_t errlen);
void vg_auth_free_headers(char **headers);

/* Server side, token mode, before the body is read: checks the bearer token,
 * the time and the nonce (which is then used up).  Other modes: 0.  Returns 0
 * or -1 with the reason in err.  Not thread-safe (one caller at a time). */
int vg_auth_headers(struct vg_auth *a, const char *authorization, const char *xtime, const char *xnonce,
                    int64_t now_ms, char *err, size_t errlen);
/* Constant-time comparison of a presented secret with the expected one. */
bool vg_auth_secret_equal(const char *presented, const char *expected);

/* Server side: checks a received body with its Authorization / X-Vigil-Time /
 * X-Vigil-Nonce header values (NULL when absent) at time now_ms.  On success
 * returns 0 and *json (malloc'd) is the JSON document; otherwise -1 with the
 * reason in err. */
int vg_auth_unwrap(struct vg_auth *a, const char *body, size_t len, const char *authorization,
                   const char *xtime, const char *xnonce, int64_t now_ms, char **json, char *err,
                   size_t errlen);

#endif
