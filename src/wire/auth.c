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

#define VG_NONCE_MAX (1u << 20) /* nonces remembered at most (32 bytes each) */

/* A used nonce: two 64-bit hashes of its text (a false "replayed" needs both
 * to collide), when it was used, the next entry of its hash chain. */
struct vg_nonce {
    uint64_t h1, h2;
    int64_t at;
    int32_t next;
};

/* A ring of nonces in the order they were used (so the expired ones are at
 * its head), indexed by a chained hash table over the same slots: lookup,
 * insert and expiry are O(1), and the size is bounded by the time window. */
struct vg_nonces {
    struct vg_nonce *ring;
    int32_t *bucket;
    size_t cap, head, count;
};

int vg_auth_read_token(const char *path, char *token, size_t n, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) < 0 || vg_read_line(NULL, path, token, n) < 0) {
        snprintf(err, errlen, "%s: cannot read the token file", path);
        return -1;
    }
    if (st.st_mode & 077) {
        snprintf(err, errlen, "%s: token file must not be readable by group or others (mode %03o)", path,
                 (unsigned)(st.st_mode & 0777));
        return -1;
    }
    if (strlen(token) < 16) {
        snprintf(err, errlen, "%s: token shorter than 16 characters", path);
        return -1;
    }
    return 0;
}

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
    return vg_auth_read_token(token_file, a->token, sizeof a->token, err, errlen);
}

void vg_auth_free(struct vg_auth *a)
{
    if (a->nonces) {
        free(a->nonces->ring);
        free(a->nonces->bucket);
        free(a->nonces);
    }
    a->nonces = NULL;
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

bool vg_auth_secret_equal(const char *presented, const char *expected)
{
    size_t la = strlen(presented), lb = strlen(expected);
    unsigned char d = la != lb;
    for (size_t i = 0; i < la; i++) d |= (unsigned char)(presented[i] ^ expected[i % (lb ? lb : 1)]);
    return d == 0;
}

static uint64_t fnv1a(const char *s, uint64_t h)
{
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return h;
}

static void nonce_link(struct vg_nonces *n, size_t slot)
{
    size_t b = n->ring[slot].h1 & (n->cap - 1);
    n->ring[slot].next = n->bucket[b];
    n->bucket[b] = (int32_t)slot;
}

/* Doubles the ring, keeping the order, and rebuilds the hash chains. */
static void nonce_grow(struct vg_nonces *n)
{
    size_t cap = n->cap ? n->cap * 2 : 256;
    struct vg_nonce *ring = vg_xcalloc(cap, sizeof *ring);
    for (size_t i = 0; i < n->count; i++) ring[i] = n->ring[(n->head + i) & (n->cap - 1)];
    free(n->ring);
    free(n->bucket);
    n->ring = ring;
    n->cap = cap;
    n->head = 0;
    n->bucket = vg_xmalloc(cap * sizeof *n->bucket);
    for (size_t b = 0; b < cap; b++) n->bucket[b] = -1;
    for (size_t i = 0; i < n->count; i++) nonce_link(n, i);
}

static int nonce_use(struct vg_auth *a, const char *nonce, int64_t now, char *err, size_t errlen)
{
    if (!a->nonces) a->nonces = vg_xcalloc(1, sizeof *a->nonces);
    struct vg_nonces *n = a->nonces;
    /* Forget the nonces used longer ago than any time a request may carry. */
    while (n->count && now - n->ring[n->head].at > 2 * VG_AUTH_SKEW_MS) {
        size_t slot = n->head;
        int32_t *p = &n->bucket[n->ring[slot].h1 & (n->cap - 1)];
        while (*p != (int32_t)slot) p = &n->ring[*p].next;
        *p = n->ring[slot].next;
        n->head = (n->head + 1) & (n->cap - 1);
        n->count--;
    }
    uint64_t h1 = fnv1a(nonce, 0xcbf29ce484222325ULL), h2 = fnv1a(nonce, 0x84222325cbf29ce4ULL);
    if (n->cap)
        for (int32_t i = n->bucket[h1 & (n->cap - 1)]; i >= 0; i = n->ring[i].next)
            if (n->ring[i].h1 == h1 && n->ring[i].h2 == h2) {
                snprintf(err, errlen, "replayed nonce %s", nonce);
                return -1;
            }
    if (n->count >= VG_NONCE_MAX) {
        snprintf(err, errlen, "more than %u requests within %d min: nonce cache full", VG_NONCE_MAX,
                 2 * VG_AUTH_SKEW_MS / 60000);
        return -1;
    }
    if (n->count == n->cap) nonce_grow(n);
    size_t slot = (n->head + n->count++) & (n->cap - 1);
    n->ring[slot] = (struct vg_nonce){ .h1 = h1, .h2 = h2, .at = now };
    nonce_link(n, slot);
    return 0;
}

int vg_auth_headers(struct vg_auth *a, const char *authorization, const char *xtime, const char *xnonce,
                    int64_t now_ms, char *err, size_t errlen)
{
    if (a->mode != VG_AUTH_TOKEN) return 0;
    if (!authorization || !vg_startswith(authorization, "Bearer ") ||
        !vg_auth_secret_equal(authorization + 7, a->token)) {
        snprintf(err, errlen, "missing or wrong bearer token");
        return -1;
    }
    long t;
    if (!xtime || !vg_parse_long(xtime, &t) || (t - now_ms > VG_AUTH_SKEW_MS) || (now_ms - t > VG_AUTH_SKEW_MS)) {
        snprintf(err, errlen, "X-Vigil-Time missing or more than 5 min off");
        return -1;
    }
    if (!xnonce || !*xnonce || strlen(xnonce) >= 80) {
        snprintf(err, errlen, "X-Vigil-Nonce missing");
        return -1;
    }
    return nonce_use(a, xnonce, now_ms, err, errlen);
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
    if (vg_auth_headers(a, authorization, xtime, xnonce, now_ms, err, errlen)) return -1;
    *json = vg_xstrndup(body, len);
    return 0;
}
