/* fuzz_auth.c — libFuzzer target for what the controller reads of a
 * request's credential before its body: any bytes as the header values
 * (Authorization, X-Vigil-Node, X-Vigil-Time, X-Vigil-Nonce, split at
 * newlines) checked in token mode against a cluster secret, the nonce used
 * in its node's window; and the same bytes as a MUNGE credential's payload.
 * A request taken names a node of 1 to 63 printable characters, and a
 * payload taken gives a node and a 64-hex-character digest. */
#include "wire/auth.h"
#include "wire/replay.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check_node(const char *n)
{
    size_t len = strlen(n);
    if (len == 0 || len > 63) abort();
    for (; *n; n++)
        if (*n <= ' ' || *n > '~') abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct vg_auth a;
    static int ready;
    if (!ready) {
        a.mode = VG_AUTH_TOKEN;
        strcpy(a.secret, "fuzz-secret-fuzz-secret-fuzz-secret");
        strcpy(a.shared, "shared-token-fuzz");
        a.replay = vg_replay_new();
        ready = 1;
    }
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    char *f[4] = { NULL, NULL, NULL, NULL }, *p = text;
    for (int i = 0; i < 4 && p; i++) {
        f[i] = p;
        p = strchr(p, '\n');
        if (p) *p++ = 0;
    }
    struct vg_auth_request r = { f[0], f[1], f[2], f[3] };
    struct vg_auth_id id;
    char err[256];
    if (vg_auth_verify(&a, &r, 1764409200000, &id, err, sizeof err) == 0) {
        check_node(id.node);
        if (!id.bound && !id.shared) abort();
        vg_auth_replay(&a, &id, 1764409200000, err, sizeof err);
    }
    uint64_t in, c;
    if (f[3] && vg_replay_parse(f[3], &in, &c) == 0 && c == 0) abort();
    memset(&id, 0, sizeof id);
    if (vg_auth_munge_payload((const char *)data, (int)(size > 4096 ? 4096 : size), &id) == 0) {
        check_node(id.node);
        if (strlen(id.sha256) != 64 || strspn(id.sha256, "0123456789abcdef") != 64) abort();
    }
    free(text);
    return 0;
}
