/* test_auth.c — wire authentication: per-node tokens derived from the
 * cluster secret (checked against openssl's HMAC), the old shared token only
 * when the controller takes it, per-node nonce windows (a flood from one
 * node never locks out another; 12,500 nodes beating leave nothing to
 * fill), the MUNGE payload, and the SHA-256 a body is checked against. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "wire/auth.h"
#include "wire/replay.h"
#include "util/digest.h"
#include "util/timeutil.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/vigil-auth-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *file(const char *name, const char *text, mode_t mode)
{
    static char path[4][128];
    static int k;
    char *p = path[k++ % 4];
    snprintf(p, 128, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    fprintf(f, "%s\n", text);
    fclose(f);
    chmod(p, mode);
    return p;
}

#define SECRET "0123456789abcdef0123456789abcdef-cluster"

/* printf 'vigil-node-token:1:n1' | openssl dgst -sha256 -hmac "$SECRET" */
static void test_node_token(void **state)
{
    (void)state;
    char tok[65], err[256];
    assert_int_equal(vg_auth_node_token(SECRET, "n1", tok, err, sizeof err), 0);
    assert_string_equal(tok, "d4c6b623c81611eddf89129d5a03aff2b9fcb53f3d2564a9575b9f584eba3fdf");
    char other[65];
    assert_int_equal(vg_auth_node_token(SECRET, "n2", other, err, sizeof err), 0);
    assert_string_not_equal(tok, other);
    /* printf abc | sha256sum */
    assert_int_equal(vg_sha256_hex("abc", 3, tok, err, sizeof err), 0);
    assert_string_equal(tok, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void header_of(char **h, const char *name, const char **out)
{
    *out = NULL;
    for (int i = 0; h[i]; i++)
        if (!strncmp(h[i], name, strlen(name)) && h[i][strlen(name)] == ':') *out = h[i] + strlen(name) + 2;
}

/* The headers a client sends, read back as the server sees them. */
static void request_of(char **h, struct vg_auth_request *r)
{
    header_of(h, "Authorization", &r->authorization);
    header_of(h, "X-Vigil-Node", &r->node);
    header_of(h, "X-Vigil-Time", &r->time);
    header_of(h, "X-Vigil-Nonce", &r->nonce);
}

static void test_per_node_tokens(void **state)
{
    (void)state;
    char err[256], tok[65], **h;
    struct vg_auth server, client, thief;
    const char *secret = file("secret", SECRET, 0600);
    assert_int_equal(vg_auth_init(&server, &(struct vg_auth_conf){ .mode = "token", .secret_file = secret }, err,
                                  sizeof err), 0);
    assert_int_equal(vg_auth_node_token(SECRET, "n1", tok, err, sizeof err), 0);
    const char *tf = file("n1.token", tok, 0600);
    assert_int_equal(vg_auth_init(&client, &(struct vg_auth_conf){ .mode = "token", .node = "n1", .token_file = tf },
                                  err, sizeof err), 0);
    /* n1's token presented for n2: refused, whatever the rest */
    assert_int_equal(vg_auth_init(&thief, &(struct vg_auth_conf){ .mode = "token", .node = "n2", .token_file = tf },
                                  err, sizeof err), 0);
    struct vg_auth_request r;
    struct vg_auth_id id;
    int64_t now = vg_now_ms();
    assert_int_equal(vg_auth_wrap(&client, "{}", &h, err, sizeof err), 0);
    request_of(h, &r);
    assert_int_equal(vg_auth_verify(&server, &r, now, &id, err, sizeof err), 0);
    assert_string_equal(id.node, "n1");
    assert_true(id.bound);
    assert_false(id.shared);
    assert_int_equal(vg_auth_replay(&server, &id, now, err, sizeof err), 0);
    assert_int_equal(vg_auth_replay(&server, &id, now, err, sizeof err), -1);   /* the same request again */
    assert_non_null(strstr(err, "replayed"));
    vg_auth_free_headers(h);
    assert_int_equal(vg_auth_wrap(&thief, "{}", &h, err, sizeof err), 0);
    request_of(h, &r);
    assert_int_equal(vg_auth_verify(&server, &r, now, &id, err, sizeof err), -1);
    assert_string_equal(err, "wrong token for node n2");
    vg_auth_free_headers(h);
    /* the old shared token: refused, unless the server takes it — then it proves no node */
    const char *shared = file("shared", "shared-token-shared-token", 0600);
    struct vg_auth old, legacy;
    assert_int_equal(vg_auth_init(&old, &(struct vg_auth_conf){ .mode = "token", .node = "n2", .token_file = shared },
                                  err, sizeof err), 0);
    assert_int_equal(vg_auth_wrap(&old, "{}", &h, err, sizeof err), 0);
    request_of(h, &r);
    assert_int_equal(vg_auth_verify(&server, &r, now, &id, err, sizeof err), -1);
    assert_int_equal(vg_auth_init(&legacy, &(struct vg_auth_conf){ .mode = "token", .secret_file = secret,
                                                                    .shared_token_file = shared }, err, sizeof err), 0);
    assert_int_equal(vg_auth_verify(&legacy, &r, now, &id, err, sizeof err), 0);
    assert_true(id.shared);
    assert_false(id.bound);
    /* five minutes off: refused */
    assert_int_equal(vg_auth_verify(&legacy, &r, now + 6 * 60 * 1000, &id, err, sizeof err), -1);
    assert_non_null(strstr(err, "X-Vigil-Time"));
    /* a nonce as older agents sent it (time-nanoseconds-random): refused, saying why */
    r.nonce = "1764409200000-123456-0a0b0c0d";
    assert_int_equal(vg_auth_verify(&legacy, &r, now, &id, err, sizeof err), -1);
    assert_non_null(strstr(err, "INSTANCE-COUNTER"));
    vg_auth_free_headers(h);
    /* a secret shorter than 32 characters, or readable by others: refused at start */
    struct vg_auth bad;
    assert_int_equal(vg_auth_init(&bad, &(struct vg_auth_conf){ .mode = "token",
                                                                .secret_file = file("short", "0123456789abcdef", 0600) },
                                  err, sizeof err), -1);
    assert_non_null(strstr(err, "shorter than 32"));
    assert_int_equal(vg_auth_init(&bad, &(struct vg_auth_conf){ .mode = "token",
                                                                .secret_file = file("open", SECRET, 0644) },
                                  err, sizeof err), -1);
    assert_non_null(strstr(err, "group or others"));
    assert_int_equal(vg_auth_init(&bad, &(struct vg_auth_conf){ .mode = "kerberos" }, err, sizeof err), -1);
    vg_auth_free(&legacy);
    vg_auth_free(&old);
    vg_auth_free(&thief);
    vg_auth_free(&client);
    vg_auth_free(&server);
}

/* One node floods nonces (the 2^20 + 1 that filled the old global cache and
 * locked every agent out for 10 min): another node is taken all the same,
 * and the flood costs one window. */
static void test_replay_flood(void **state)
{
    (void)state;
    char err[256];
    struct vg_replay *r = vg_replay_new();
    int64_t now = 1764409200000;
    for (uint64_t c = 1; c <= (1u << 20) + 1; c++)
        assert_int_equal(vg_replay_use(r, "attacker", 0xabcdef, c, now + (int64_t)(c / 2000), err, sizeof err), 0);
    assert_int_equal(vg_replay_use(r, "n7", 0x1234, 1, now + 600, err, sizeof err), 0);
    assert_int_equal(vg_replay_nodes(r), 2);
    /* 12,500 nodes at 1 Hz for the whole 10-minute window: one window each, every beat taken */
    for (int64_t t = 0; t < 600; t += 60)
        for (int n = 0; n < 12500; n++) {
            char node[16];
            snprintf(node, sizeof node, "g%d", n);
            assert_int_equal(vg_replay_use(r, node, 0x77 + (uint64_t)n, (uint64_t)t + 1, now + t * 1000, err,
                                           sizeof err), 0);
        }
    assert_int_equal(vg_replay_nodes(r), 12502);
    vg_replay_free(r);
}

static void test_replay_window(void **state)
{
    (void)state;
    char err[256];
    struct vg_replay *r = vg_replay_new();
    int64_t now = 1764409200000;
    assert_int_equal(vg_replay_use(r, "n1", 1, 5, now, err, sizeof err), 0);
    assert_int_equal(vg_replay_use(r, "n1", 1, 3, now, err, sizeof err), 0);    /* late, unused: taken once */
    assert_int_equal(vg_replay_use(r, "n1", 1, 3, now, err, sizeof err), -1);
    assert_int_equal(vg_replay_use(r, "n1", 1, 5, now, err, sizeof err), -1);
    assert_int_equal(vg_replay_use(r, "n1", 1, 100, now, err, sizeof err), 0);
    assert_int_equal(vg_replay_use(r, "n1", 1, 36, now, err, sizeof err), 0);   /* 64 below the top */
    assert_int_equal(vg_replay_use(r, "n1", 1, 35, now, err, sizeof err), -1);  /* past the window */
    assert_non_null(strstr(err, "older than the window"));
    assert_int_equal(vg_replay_use(r, "n2", 1, 5, now, err, sizeof err), 0);    /* another node's own window */
    /* a node's client processes: 16 within 10 min, then refused until one is 10 min idle */
    for (uint64_t i = 2; i <= VG_REPLAY_INSTANCES; i++)
        assert_int_equal(vg_replay_use(r, "n1", i, 1, now + 1000, err, sizeof err), 0);
    assert_int_equal(vg_replay_use(r, "n1", 99, 1, now + 2000, err, sizeof err), -1);
    assert_non_null(strstr(err, "more than 16 client processes"));
    assert_int_equal(vg_replay_use(r, "n1", 99, 1, now + 1000 + VG_REPLAY_KEEP_MS + 1, err, sizeof err), 0);
    uint64_t in, c;
    assert_int_equal(vg_replay_parse("00000000deadbeef-42", &in, &c), 0);
    assert_true(in == 0xdeadbeef && c == 42);
    assert_int_equal(vg_replay_parse("00000000deadbeef-0", &in, &c), -1);
    assert_int_equal(vg_replay_parse("DEADBEEF00000000-1", &in, &c), -1);
    assert_int_equal(vg_replay_parse("00000000deadbeef-1x", &in, &c), -1);
    vg_replay_free(r);
}

/* MUNGE: without munged the client cannot mint, and the server refuses a
 * request with no credential header, naming the old body format. */
static void test_munge_headers(void **state)
{
    (void)state;
    char err[256], **h;
    struct vg_auth server, client;
    assert_int_equal(vg_auth_init(&server, &(struct vg_auth_conf){ .mode = "munge",
                                                                   .munge_socket = "/nonexistent/munge.socket" },
                                  err, sizeof err), 0);
    struct vg_auth_request r = { .node = "n1" };
    struct vg_auth_id id;
    assert_int_equal(vg_auth_verify(&server, &r, vg_now_ms(), &id, err, sizeof err), -1);
    assert_non_null(strstr(err, "Authorization: MUNGE"));
    r.authorization = "MUNGE:AwQDAAA";
    assert_int_equal(vg_auth_verify(&server, &r, vg_now_ms(), &id, err, sizeof err), -1);
    assert_int_equal(vg_auth_init(&client, &(struct vg_auth_conf){ .mode = "munge", .node = "n1",
                                                                   .munge_socket = "/nonexistent/munge.socket" },
                                  err, sizeof err), 0);
    assert_int_equal(vg_auth_wrap(&client, "{}", &h, err, sizeof err), -1);
    assert_non_null(strstr(err, "munge"));
    vg_auth_free_headers(h);
    /* the body is checked against the digest the credential carried */
    struct vg_auth_id signed_id = { .bound = true };
    assert_int_equal(vg_sha256_hex("{\"node\":\"n1\"}", 13, signed_id.sha256, err, sizeof err), 0);
    assert_int_equal(vg_auth_body(&signed_id, "{\"node\":\"n1\"}", 13, err, sizeof err), 0);
    assert_int_equal(vg_auth_body(&signed_id, "{\"node\":\"n2\"}", 13, err, sizeof err), -1);
    assert_non_null(strstr(err, "not the one the credential signs"));
    vg_auth_free(&client);
    vg_auth_free(&server);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_node_token, setup, teardown),
        cmocka_unit_test_setup_teardown(test_per_node_tokens, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replay_flood, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replay_window, setup, teardown),
        cmocka_unit_test_setup_teardown(test_munge_headers, setup, teardown),
    };
    return cmocka_run_group_tests_name("auth", tests, NULL, NULL);
}
