/* auth.c — MUNGE or token authentication of agent messages; see auth.h. */
#include "wire/auth.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <munge.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define VG_AUTH_SKEW_MS (5 * 60 * 1000)

struct vg_nonce {
    char value[80];
    int64_t at;
};

int vg_auth_init(struct vg_auth *a, const char *mode, const char *token_file, const char *munge_socket,
                 char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    if (munge_socket) vg_strlcpy(a->munge_socket, munge_socket, sizeof a->munge_socket);
    if (!mode || !strcmp(mode, "munge")) {
        a->mode = VG_AUTH_MUNGE;
        return 0;
    }
    if (!strcmp(mode, "none")) {
        a->mode = VG_AUTH_NONE;
        return 0;
    }
    if (strcmp(mode, "token")) {
        snprintf(err, errlen, "auth: unknown mode '%s' (munge, token or none)", mode);
        return -1;
    }
    a->mode = VG_AUTH_TOKEN;
    if (!token_file) {
        snprintf(err, errlen, "auth: token mode needs a token file");
        return -1;
    }
    struct stat st;
    if (stat(token_file, &st) < 0 || vg_read_line(NULL, token_file, a->token, sizeof a->token) < 0) {
        snprintf(err, errlen, "%s: cannot read the token file", token_file);
        return -1;
    }
    if (st.st_mode & 077) {
        snprintf(err, errlen, "%s: token file must not be readable by group or others (mode %03o)", token_file,
                 (unsigned)(st.st_mode & 0777));
        return -1;
    }
    if (strlen(a->token) < 16) {
        snprintf(err, errlen, "%s: token shorter than 16 characters", token_file);
        return -1;
    }
    return 0;
}

void vg_auth_free(struct vg_auth *a)
{
    free(a->nonces);
    a->nonces = NULL;
    a->nnonces = a->cap = 0;
}

static munge_ctx_t munge_ctx(const struct vg_auth *a)
{
    munge_ctx_t ctx = munge_ctx_create();
    if (ctx && a->munge_socket[0]) munge_ctx_set(ctx, MUNGE_OPT_SOCKET, a->munge_socket);
    return ctx;
}

/* Room for up to four headers and the terminating NULL. */
static char **headers_new(void) { return vg_xcalloc(5, sizeof(char *)); }

void vg_auth_free_headers(char **headers)
{
    for (int i = 0; headers && headers[i]; i++) free(headers[i]);
    free(headers);
}

int vg_auth_wrap(const struct vg_auth *a, const char *json, char **body_out, char ***headers, char *err,
                 size_t errlen)
{
    *headers = headers_new();
    if (a->mode == VG_AUTH_MUNGE) {
        munge_ctx_t ctx = munge_ctx(a);
        char *cred = NULL;
        munge_err_t e = munge_encode(&cred, ctx, json, (int)strlen(json));
        if (e != EMUNGE_SUCCESS) {
            snprintf(err, errlen, "munge: %s", munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx) : munge_strerror(e));
            munge_ctx_destroy(ctx);
            free(cred);
            return -1;
        }
        munge_ctx_destroy(ctx);
        *body_out = cred;
        (*headers)[0] = vg_xstrdup("Content-Type: application/x-munge-credential");
        return 0;
    }
    *body_out = vg_xstrdup(json);
    (*headers)[0] = vg_xstrdup("Content-Type: application/json");
    if (a->mode == VG_AUTH_TOKEN) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
        char buf[512];
        snprintf(buf, sizeof buf, "Authorization: Bearer %s", a->token);
        (*headers)[1] = vg_xstrdup(buf);
        snprintf(buf, sizeof buf, "X-Vigil-Time: %lld", (long long)now);
        (*headers)[2] = vg_xstrdup(buf);
        snprintf(buf, sizeof buf, "X-Vigil-Nonce: %lld-%ld-%08lx", (long long)now, (long)ts.tv_nsec,
                 (unsigned long)random());
        (*headers)[3] = vg_xstrdup(buf);
    }
    return 0;
}

/* Constant-time comparison of the token. */
static bool token_equal(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    unsigned char d = la != lb;
    for (size_t i = 0; i < la; i++) d |= (unsigned char)(a[i] ^ b[i % (lb ? lb : 1)]);
    return d == 0;
}

static int nonce_use(struct vg_auth *a, const char *nonce, int64_t now, char *err, size_t errlen)
{
    size_t keep = 0;
    for (size_t i = 0; i < a->nnonces; i++) {
        if (now - a->nonces[i].at > 2 * VG_AUTH_SKEW_MS) continue; /* expired */
        if (!strcmp(a->nonces[i].value, nonce)) {
            snprintf(err, errlen, "replayed nonce %s", nonce);
            return -1;
        }
        a->nonces[keep++] = a->nonces[i];
    }
    a->nnonces = keep;
    if (a->nnonces == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 64;
        a->nonces = vg_xrealloc(a->nonces, a->cap * sizeof *a->nonces);
    }
    vg_strlcpy(a->nonces[a->nnonces].value, nonce, sizeof a->nonces[0].value);
    a->nonces[a->nnonces++].at = now;
    return 0;
}

int vg_auth_unwrap(struct vg_auth *a, const char *body, size_t len, const char *authorization,
                   const char *xtime, const char *xnonce, int64_t now_ms, char **json, char *err,
                   size_t errlen)
{
    *json = NULL;
    if (a->mode == VG_AUTH_MUNGE) {
        char *cred = vg_xstrndup(body, len);
        munge_ctx_t ctx = munge_ctx(a);
        void *payload = NULL;
        int plen = 0;
        uid_t uid;
        gid_t gid;
        munge_err_t e = munge_decode(cred, ctx, &payload, &plen, &uid, &gid);
        free(cred);
        if (e != EMUNGE_SUCCESS) {
            snprintf(err, errlen, "munge: %s", munge_strerror(e));
            munge_ctx_destroy(ctx);
            free(payload);
            return -1;
        }
        munge_ctx_destroy(ctx);
        if (uid != a->allowed_uid) {
            snprintf(err, errlen, "munge: credential of uid %u, expected %u", (unsigned)uid, a->allowed_uid);
            free(payload);
            return -1;
        }
        *json = vg_xstrndup(payload ? payload : "", (size_t)plen);
        free(payload);
        return 0;
    }
    if (a->mode == VG_AUTH_TOKEN) {
        if (!authorization || !vg_startswith(authorization, "Bearer ") ||
            !token_equal(authorization + 7, a->token)) {
            snprintf(err, errlen, "missing or wrong bearer token");
            return -1;
        }
        long t;
        if (!xtime || !vg_parse_long(xtime, &t) || (t - now_ms > VG_AUTH_SKEW_MS) ||
            (now_ms - t > VG_AUTH_SKEW_MS)) {
            snprintf(err, errlen, "X-Vigil-Time missing or more than 5 min off");
            return -1;
        }
        if (!xnonce || !*xnonce || strlen(xnonce) >= 80) {
            snprintf(err, errlen, "X-Vigil-Nonce missing");
            return -1;
        }
        if (nonce_use(a, xnonce, now_ms, err, errlen)) return -1;
    }
    *json = vg_xstrndup(body, len);
    return 0;
}
