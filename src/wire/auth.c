/* auth.c — MUNGE or token authentication of agent requests; see auth.h. */
#include "wire/auth.h"
#include "wire/replay.h"
#include "util/digest.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <munge.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

#define VG_AUTH_SKEW_MS (5 * 60 * 1000)
#define TOKEN_CONTEXT "vigil-node-token:1:"   /* what a node's token is an HMAC of, before the name */
#define MUNGE_PAYLOAD_MAX 256

int vg_auth_read_secret(const char *path, size_t min, char *out, size_t n, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) < 0 || vg_read_line(NULL, path, out, n) < 0) {
        snprintf(err, errlen, "%s: cannot read the file", path);
        return -1;
    }
    if (st.st_mode & 077) {
        snprintf(err, errlen, "%s: must not be readable by group or others (mode %03o)", path,
                 (unsigned)(st.st_mode & 0777));
        return -1;
    }
    if (strlen(out) < min) {
        snprintf(err, errlen, "%s: shorter than %zu characters", path, min);
        return -1;
    }
    return 0;
}

int vg_auth_read_token(const char *path, char *token, size_t n, char *err, size_t errlen)
{
    return vg_auth_read_secret(path, 16, token, n, err, errlen);
}

int vg_auth_node_token(const char *secret, const char *node, char out[65], char *err, size_t errlen)
{
    char msg[sizeof TOKEN_CONTEXT + 64];
    int len = snprintf(msg, sizeof msg, "%s%s", TOKEN_CONTEXT, node);
    if (len < 0 || (size_t)len >= sizeof msg) return snprintf(err, errlen, "node name too long"), -1;
    return vg_hmac_sha256_hex(secret, strlen(secret), msg, (size_t)len, out, err, errlen);
}

/* A node name as a header may carry it: 1 to 63 printable ASCII characters,
 * no space (the intake checks the name's form; the scheduler, that it exists). */
static bool node_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > 63) return false;
    for (; *s; s++)
        if (*s <= ' ' || *s > '~') return false;
    return true;
}

static uint64_t random64(void)
{
    uint64_t v = 0;
    if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        v = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) * 6364136223846793005u;
    }
    return v;
}

int vg_auth_init(struct vg_auth *a, const struct vg_auth_conf *c, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    if (c->munge_socket) vg_strlcpy(a->munge_socket, c->munge_socket, sizeof a->munge_socket);
    if (c->node && (!node_ok(c->node) || strlen(c->node) >= sizeof a->node)) {
        snprintf(err, errlen, "auth: '%s' is not a node name", c->node);
        return -1;
    }
    if (c->node) vg_strlcpy(a->node, c->node, sizeof a->node);
    if (!c->mode || !strcmp(c->mode, "munge")) {
        a->mode = VG_AUTH_MUNGE;
        return 0;
    }
    if (!strcmp(c->mode, "none")) {
        a->mode = VG_AUTH_NONE;
        return 0;
    }
    if (strcmp(c->mode, "token")) {
        snprintf(err, errlen, "auth: unknown mode '%s' (munge, token or none)", c->mode);
        return -1;
    }
    a->mode = VG_AUTH_TOKEN;
    a->instance = random64();
    if (c->secret_file &&
        vg_auth_read_secret(c->secret_file, VG_AUTH_SECRET_MIN, a->secret, sizeof a->secret, err, errlen))
        return -1;
    if (c->shared_token_file && vg_auth_read_token(c->shared_token_file, a->shared, sizeof a->shared, err, errlen))
        return -1;
    if (c->token_file && vg_auth_read_token(c->token_file, a->token, sizeof a->token, err, errlen)) return -1;
    if (!a->secret[0] && !a->shared[0] && !a->token[0]) {
        snprintf(err, errlen, "auth: token mode needs a token file (an agent) or the cluster secret (the controller)");
        return -1;
    }
    if (a->secret[0] || a->shared[0]) a->replay = vg_replay_new();
    return 0;
}

void vg_auth_free(struct vg_auth *a)
{
    vg_replay_free(a->replay);
    a->replay = NULL;
}

static munge_ctx_t munge_ctx(const struct vg_auth *a)
{
    munge_ctx_t ctx = munge_ctx_create();
    if (ctx && a->munge_socket[0]) munge_ctx_set(ctx, MUNGE_OPT_SOCKET, a->munge_socket);
    return ctx;
}

void vg_auth_free_headers(char **headers)
{
    for (int i = 0; headers && headers[i]; i++) free(headers[i]);
    free(headers);
}

static char *header(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *header(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0) s = NULL;
    va_end(ap);
    return s ? s : vg_xstrdup("X-Vigil-Unused: 1");
}

int vg_auth_wrap(struct vg_auth *a, const char *json, char ***headers, char *err, size_t errlen)
{
    char **h = *headers = vg_xcalloc(6, sizeof(char *));
    int k = 0;
    if (a->mode != VG_AUTH_NONE && !a->node[0])
        return snprintf(err, errlen, "auth: no node name to speak for"), -1;
    h[k++] = vg_xstrdup("Content-Type: application/json");
    if (a->node[0]) h[k++] = header("X-Vigil-Node: %s", a->node);
    if (a->mode == VG_AUTH_MUNGE) {
        char sha[VG_SHA256_HEX], payload[MUNGE_PAYLOAD_MAX];
        if (vg_sha256_hex(json, strlen(json), sha, err, errlen)) return -1;
        int plen = snprintf(payload, sizeof payload, "vigil-1 node=%s sha256=%s", a->node, sha);
        munge_ctx_t ctx = munge_ctx(a);
        char *cred = NULL;
        munge_err_t e = munge_encode(&cred, ctx, payload, plen);
        if (e != EMUNGE_SUCCESS) {
            snprintf(err, errlen, "munge: %s", munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx) : munge_strerror(e));
            munge_ctx_destroy(ctx);
            free(cred);
            return -1;
        }
        munge_ctx_destroy(ctx);
        h[k++] = header("Authorization: MUNGE %s", cred);
        free(cred);
    } else if (a->mode == VG_AUTH_TOKEN) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        h[k++] = header("Authorization: Bearer %s", a->token);
        h[k++] = header("X-Vigil-Time: %lld", (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
        h[k++] = header("X-Vigil-Nonce: %016llx-%llu", (unsigned long long)a->instance,
                        (unsigned long long)++a->counter);
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

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static int verify_token(const struct vg_auth *a, const struct vg_auth_request *r, int64_t now_ms,
                        struct vg_auth_id *id, char *err, size_t errlen)
{
    if (!node_ok(r->node)) return fail(err, errlen, "X-Vigil-Node missing or not a node name");
    vg_strlcpy(id->node, r->node, sizeof id->node);
    const char *presented = r->authorization && vg_startswith(r->authorization, "Bearer ") ? r->authorization + 7 : NULL;
    if (!presented) return fail(err, errlen, "missing bearer token (Authorization: Bearer)");
    char expected[VG_SHA256_HEX];
    if (a->secret[0]) {
        if (vg_auth_node_token(a->secret, r->node, expected, err, errlen)) return -1;
        id->bound = vg_auth_secret_equal(presented, expected);
    }
    if (!id->bound) id->shared = a->shared[0] && vg_auth_secret_equal(presented, a->shared);
    if (!id->bound && !id->shared) return fail(err, errlen, "wrong token for node %s", r->node);
    long t;
    if (!r->time || !vg_parse_long(r->time, &t) || t - now_ms > VG_AUTH_SKEW_MS || now_ms - t > VG_AUTH_SKEW_MS)
        return fail(err, errlen, "X-Vigil-Time missing or more than 5 min off");
    if (!r->nonce || vg_replay_parse(r->nonce, &id->instance, &id->counter))
        return fail(err, errlen, "X-Vigil-Nonce missing or not INSTANCE-COUNTER (an agent older than the controller?)");
    return 0;
}

int vg_auth_munge_payload(const char *p, int len, struct vg_auth_id *id)
{
    static const char head[] = "vigil-1 node=";
    if (len <= 0 || len >= MUNGE_PAYLOAD_MAX || memchr(p, 0, (size_t)len)) return -1;
    char buf[MUNGE_PAYLOAD_MAX];
    memcpy(buf, p, (size_t)len);
    buf[len] = 0;
    if (strncmp(buf, head, sizeof head - 1)) return -1;
    char *node = buf + sizeof head - 1, *sp = strchr(node, ' ');
    if (!sp || strncmp(sp, " sha256=", 8) || strlen(sp + 8) != 64) return -1;
    *sp = 0;
    if (!node_ok(node)) return -1;
    for (const char *h = sp + 8; *h; h++)
        if (!((*h >= '0' && *h <= '9') || (*h >= 'a' && *h <= 'f'))) return -1;
    vg_strlcpy(id->node, node, sizeof id->node);
    vg_strlcpy(id->sha256, sp + 8, sizeof id->sha256);
    return 0;
}

static int verify_munge(const struct vg_auth *a, const struct vg_auth_request *r, struct vg_auth_id *id, char *err,
                        size_t errlen)
{
    if (!r->authorization || !vg_startswith(r->authorization, "MUNGE "))
        return fail(err, errlen, "munge: no credential (Authorization: MUNGE); an agent older than the controller "
                                 "sends it as the body: upgrade it");
    munge_ctx_t ctx = munge_ctx(a);
    void *payload = NULL;
    int plen = 0;
    uid_t uid;
    gid_t gid;
    munge_err_t e = munge_decode(r->authorization + 6, ctx, &payload, &plen, &uid, &gid);
    struct in_addr origin = { 0 };
    if (e == EMUNGE_SUCCESS) munge_ctx_get(ctx, MUNGE_OPT_ADDR4, &origin);
    munge_ctx_destroy(ctx);
    int rc = 0;
    if (e != EMUNGE_SUCCESS) rc = fail(err, errlen, "munge: %s", munge_strerror(e));
    else if (uid != a->allowed_uid)
        rc = fail(err, errlen, "munge: credential of uid %u, expected %u", (unsigned)uid, a->allowed_uid);
    else if (vg_auth_munge_payload(payload, plen, id))
        rc = fail(err, errlen, "munge: the credential's payload is not 'vigil-1 node=NAME sha256=DIGEST'");
    else if (r->node && strcmp(r->node, id->node))
        rc = fail(err, errlen, "munge: X-Vigil-Node %.63s is not the credential's node %s", r->node, id->node);
    free(payload);
    id->origin4 = origin.s_addr;
    id->bound = rc == 0;
    return rc;
}

int vg_auth_verify(const struct vg_auth *a, const struct vg_auth_request *r, int64_t now_ms, struct vg_auth_id *id,
                   char *err, size_t errlen)
{
    memset(id, 0, sizeof *id);
    if (a->mode == VG_AUTH_TOKEN) return verify_token(a, r, now_ms, id, err, errlen);
    if (a->mode == VG_AUTH_MUNGE) return verify_munge(a, r, id, err, errlen);
    if (r->node && node_ok(r->node)) vg_strlcpy(id->node, r->node, sizeof id->node);
    return 0;
}

int vg_auth_replay(struct vg_auth *a, const struct vg_auth_id *id, int64_t now_ms, char *err, size_t errlen)
{
    if (a->mode != VG_AUTH_TOKEN || !a->replay) return 0;
    return vg_replay_use(a->replay, id->node, id->instance, id->counter, now_ms, err, errlen);
}

int vg_auth_body(const struct vg_auth_id *id, const char *body, size_t len, char *err, size_t errlen)
{
    if (!id->sha256[0]) return 0;
    char sha[VG_SHA256_HEX];
    if (vg_sha256_hex(body, len, sha, err, errlen)) return -1;
    if (strcmp(sha, id->sha256)) return fail(err, errlen, "munge: the body is not the one the credential signs");
    return 0;
}
