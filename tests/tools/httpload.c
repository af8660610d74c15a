/* httpload.c — HTTP load and attack client for vigil serve's tests and bench
 * (plain sockets, so the client itself never limits the figures; GnuTLS for
 * the HMAC and SHA-256 of the credentials):
 *   httpload post  PORT CONNS SECONDS EVENTS AUTH [SRCS [RATE]]
 *       CONNS keep-alive connections, connection i posting the messages of
 *       node benchI, of EVENTS events each, back to back for SECONDS (closed
 *       loop: the server's saturation), or with RATE > 0 RATE messages a
 *       second each on a fixed schedule (open loop, as agents send: a
 *       message's latency counts from when it was due, so a server that
 *       falls behind is not excused by the client waiting for it); prints
 *       requests, 202s, events acknowledged per second, p50 and p99 latency
 *       in ms, and the answers by status.
 *   AUTH: "secret:FILE" each node's own token, derived from the cluster
 *       secret in FILE (wire/auth.h), with a nonce INSTANCE-COUNTER per
 *       connection; a plain FILE: one token for every node (the shared
 *       token); "munge:SOCKET": MUNGE, as agents send it — each message with
 *       a credential minted by the munged at SOCKET over the node and the
 *       body's SHA-256 (Authorization: MUNGE); "munge-pre:SOCKET" (open loop
 *       only): every credential the run will send minted before it starts,
 *       as each agent's own munged would on its own node, so the run
 *       measures the server's side alone; "none": no credential.
 *   httpload beat  PORT CONNS SECONDS AUTH NODES [RATE]
 *       NODES agents' heartbeats (POST /v1/heartbeat, nodes bench0 …
 *       benchNODES-1), each node beating RATE times a second (default 1) on
 *       a fixed schedule, over CONNS keep-alive connections (connection i
 *       beats for nodes i, i+CONNS, … in turn); the same figures as post
 *       (beats answered 200 per second, p50 and p99 from when each was due).
 *   httpload flood PORT CONNS SECONDS AUTH NODE [fresh]
 *       CONNS connections posting bad messages ("{}") as NODE back to back:
 *       the nonce flood of a token holder (fresh: every request under a new
 *       nonce instance, as random nonces were) or, with AUTH none, the
 *       unauthenticated flood; prints requests and the answers by status.
 *   httpload get   PORT CONNS SECONDS PATH [SRCS]   the same load on a GET (a baseline)
 *   httpload slow  PORT CONNS SECONDS [SRCS]
 *       CONNS connections sending one header byte a second; prints how many
 *       connected and how many the server closed within SECONDS.
 *   httpload stall PORT CONNS SECONDS BYTES [SRCS [AUTH NODE]]
 *       CONNS uploads announcing BYTES (a MUNGE-looking body), sending the
 *       first 64 KiB and stalling (with AUTH: each with NODE's valid
 *       credential); prints the answers they got.
 *   httpload bulk PORT CONNS COUNT PATH AUTH NODE TEMPLATE
 *       COUNT POSTs to PATH over CONNS keep-alive connections, each as NODE
 *       with AUTH's credential and the body the file TEMPLATE, every "@N@"
 *       in NODE and TEMPLATE replaced by the request's number (0 … COUNT-1:
 *       new node names, say); prints requests, the answers by class and the
 *       body bytes offered (refused_unsent: of those, the bodies over 1 MiB
 *       the server refused at their headers, after `Expect: 100-continue`,
 *       so they were never sent).
 * HTTPLOAD_BEARER in the environment: sent with each GET as the bearer token.
 * HTTPLOAD_QUIET_AFTER_MS (beat): the last node stops beating that long into
 * the run, as a node that crashed; its last beat's time (ms since the epoch,
 * when it was answered) is printed on stderr then, as "quiet NODE
 * last_beat_ms=T".
 * SRCS: spread the connections over this many source addresses 127.0.1.1…
 * (default 1), since the server bounds connections per client address. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <gnutls/crypto.h>
#include <munge.h>
#include <unistd.h>

static int port, srcs = 1, events = 1, seconds;
static unsigned run_id;   /* in each message's spool id: runs against one store are new data */
static double rate;   /* messages a second per connection; 0: back to back */
static const char *path = "/healthz", *token, *munge_socket, *secret, *flood_node;
static int no_auth, fresh_nonces;
static int beat_nodes, beat_conns;    /* beat: the nodes, over this many connections */
static int munge_pre;                 /* credentials minted before the run */
static pthread_barrier_t minted, go;  /* with munge_pre: all minted; t_end set */
static int64_t t_end;
static int64_t quiet_after_us = -1;   /* beat: the last node falls silent this far into the run */
static int64_t last_beat_ms;          /* the realtime of the last node's last answered beat */
static bool quiet_said;

static int64_t now_ms(int clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int dial(int i)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    struct sockaddr_in src = { .sin_family = AF_INET };
    src.sin_addr.s_addr = htonl(0x7f000101u + (uint32_t)(i % srcs));
    if (srcs > 1 && bind(fd, (struct sockaddr *)&src, sizeof src)) {
        close(fd);
        return -1;
    }
    struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    dst.sin_addr.s_addr = htonl(0x7f000001u);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&dst, sizeof dst)) {
        close(fd);
        return -1;
    }
    return fd;
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0) return -1;
        p += w, n -= (size_t)w;
    }
    return 0;
}

/* Reads one response; returns its status, or -1. */
static int read_response(int fd, char *buf, size_t cap)
{
    size_t have = 0;
    char *end = NULL;
    while (!(end = memmem(buf, have, "\r\n\r\n", 4))) {
        if (have == cap) return -1;
        ssize_t r = recv(fd, buf + have, cap - have, 0);
        if (r <= 0) return -1;
        have += (size_t)r;
    }
    int status = atoi(buf + 9);
    long len = 0;
    char *cl = strcasestr(buf, "\r\ncontent-length:");
    if (cl && cl < end) len = atol(cl + 17);
    size_t body = have - (size_t)(end + 4 - buf);
    while ((long)body < len) {
        ssize_t r = recv(fd, buf, cap, 0);
        if (r <= 0) return -1;
        body += (size_t)r;
    }
    return status;
}

struct worker {
    int id;
    long requests, ok;
    long status[6];    /* answers: 2xx, 400, 401, 403, 503, other */
    int *lat;          /* latency of each request, µs */
    size_t nlat, cap;
};

#define BODY_MAX (64 + 160 * 1000)   /* a message of 1,000 events */

/* An agent message of `events` events from worker id, sequence seq. */
static int message(int id, long seq, char *body, size_t cap)
{
    int b = snprintf(body, cap, "{\"node\":\"bench%d\",\"spool\":\"%032x\",\"seq\":%ld,\"events\":[", id,
                     (unsigned)id + run_id, seq);
    for (int e = 0; e < events && e < 1000; e++)
        b += snprintf(body + b, cap - (size_t)b,
                      "%s{\"kind\":\"xid\",\"code\":13,\"gpu\":%d,\"action\":\"restart-app\",\"source\":\"kmsg\"}",
                      e ? "," : "", e % 8);
    return b + snprintf(body + b, cap - (size_t)b, "]}");
}

static void hex(const unsigned char *d, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", d[i]);
}

/* A MUNGE credential speaking for node over body, from the munged at
 * munge_socket; NULL if none. */
static char *mint(const char *node, const char *body, int len)
{
    unsigned char d[32];
    char payload[160], sha[65];
    gnutls_hash_fast(GNUTLS_DIG_SHA256, body, (size_t)len, d);
    hex(d, sizeof d, sha);
    int plen = snprintf(payload, sizeof payload, "vigil-1 node=%s sha256=%s", node, sha);
    munge_ctx_t ctx = munge_ctx_create();
    char *cred = NULL;
    munge_ctx_set(ctx, MUNGE_OPT_SOCKET, munge_socket);
    if (munge_encode(&cred, ctx, payload, plen) != EMUNGE_SUCCESS) {
        free(cred);
        cred = NULL;
    }
    munge_ctx_destroy(ctx);
    return cred;
}

/* The token node gives: derived from the secret, or the one shared token. */
static void token_of(const char *node, char out[80])
{
    if (!secret) {
        snprintf(out, 80, "%s", token);
        return;
    }
    char msg[128];
    unsigned char d[32];
    int n = snprintf(msg, sizeof msg, "vigil-node-token:1:%s", node);
    gnutls_hmac_fast(GNUTLS_MAC_SHA256, secret, strlen(secret), msg, (size_t)n, d);
    hex(d, sizeof d, out);
}

/* The request line and headers of a POST to url as node, with its
 * credentials (instance, counter: the nonce); cred: a MUNGE credential;
 * extra: more header lines ("Name: value\r\n"), or NULL. */
static int post_head(char *req, const char *url, const char *node, const char *cred, uint64_t instance,
                     long counter, size_t len, const char *extra)
{
    int n = sprintf(req, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Vigil-Node: %s\r\n"
                         "Content-Length: %zu\r\n", url, node, len);
    if (cred) {
        n += sprintf(req + n, "Authorization: MUNGE %s\r\n", cred);
    } else if (!no_auth) {
        char tok[80];
        token_of(node, tok);
        n += sprintf(req + n, "Authorization: Bearer %s\r\nX-Vigil-Time: %lld\r\nX-Vigil-Nonce: %016llx-%ld\r\n",
                     tok, (long long)now_ms(CLOCK_REALTIME), (unsigned long long)instance, counter);
    }
    return n + sprintf(req + n, "%s\r\n", extra ? extra : "");
}

static uint64_t random64(void)
{
    uint64_t v = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (!f || fread(&v, sizeof v, 1, f) != 1) v = (uint64_t)now_ms(CLOCK_REALTIME) * 2654435761u ^ (uint64_t)getpid();
    if (f) fclose(f);
    return v;
}

/* beat: how many nodes connection id beats for (nodes id, id+beat_conns, …). */
static int beat_share(int id) { return (beat_nodes - id + beat_conns - 1) / beat_conns; }

static void *load(void *arg)
{
    struct worker *w = arg;
    char *buf = malloc(1 << 16), *req = malloc(64 + (size_t)events * 160 + 1024), *body = malloc(BODY_MAX);
    int fd = -1;
    long seq = 0;
    char **pre = NULL;   /* munge_pre: the run's credentials, minted now */
    int npre = munge_pre ? (int)(rate * seconds) + 2 : 0, ipre = 0;
    uint64_t instance = random64();
    if (munge_pre) {
        char node[32];
        snprintf(node, sizeof node, "bench%d", w->id);
        pre = calloc((size_t)npre, sizeof *pre);
        for (int k = 0; k < npre; k++) pre[k] = mint(node, body, message(w->id, k + 1, body, BODY_MAX));
        if (pthread_barrier_wait(&minted) == PTHREAD_BARRIER_SERIAL_THREAD)
            t_end = now_ms(CLOCK_MONOTONIC) + seconds * 1000;
        pthread_barrier_wait(&go);
    }
    /* open loop: message k is due at start + phase + k / rate (the phase spreads the connections) */
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    int64_t start_us = (int64_t)start.tv_sec * 1000000 + start.tv_nsec / 1000,
            step_us = rate > 0 ? (int64_t)(1e6 / (beat_nodes ? rate * beat_share(w->id) : rate)) : 0, due_us = start_us + (step_us ? (w->id * 7919) % step_us : 0);
    while (now_ms(CLOCK_MONOTONIC) < t_end) {
        if (step_us) {
            struct timespec nw;
            clock_gettime(CLOCK_MONOTONIC, &nw);
            int64_t now_us = (int64_t)nw.tv_sec * 1000000 + nw.tv_nsec / 1000;
            if (due_us > now_us) usleep((useconds_t)(due_us - now_us));
        }
        if (fd < 0 && (fd = dial(w->id)) < 0) {
            usleep(10000);
            continue;
        }
        int n;
        char node[32];
        int who = beat_nodes ? w->id + (int)(seq % beat_share(w->id)) * beat_conns : w->id;
        snprintf(node, sizeof node, "bench%d", who);
        if (beat_nodes && who == beat_nodes - 1 && quiet_after_us >= 0 && due_us - start_us >= quiet_after_us) {
            if (!quiet_said)   /* its crash, once: the time it last beat */
                fprintf(stderr, "quiet %s last_beat_ms=%lld\n", node, (long long)last_beat_ms), quiet_said = true;
            ++seq, due_us += step_us;
            continue;
        }
        if (token) {
            int b = munge_pre ? 0 : beat_nodes ? (++seq, snprintf(body, BODY_MAX, "{\"node\":\"%s\",\"jobs\":\"\"}", node))
                                               : message(w->id, ++seq, body, BODY_MAX);
            char *cred = NULL;
            if (munge_socket) {
                if (munge_pre && ipre == npre) break;
                if (munge_pre) b = message(w->id, ipre + 1, body, BODY_MAX);   /* the body pre[ipre] signs */
                cred = munge_pre ? pre[ipre++] : mint(node, body, b);
                if (!cred) {
                    w->requests++;
                    continue;
                }
            }
            n = post_head(req, beat_nodes ? "/v1/heartbeat" : "/v1/events", node, cred, instance, seq, (size_t)b, NULL);
            memcpy(req + n, body, (size_t)b);
            n += b;
            if (cred && !munge_pre) free(cred);   /* the minted ones are freed with pre */
        } else {
            const char *bearer = getenv("HTTPLOAD_BEARER");
            n = sprintf(req, "GET %s HTTP/1.1\r\nHost: x\r\n%s%.300s%s\r\n", path, bearer ? "Authorization: Bearer " : "",
                        bearer ? bearer : "", bearer ? "\r\n" : "");
        }
        struct timespec a, z;
        clock_gettime(CLOCK_MONOTONIC, &a);
        int status = send_all(fd, req, (size_t)n) ? -1 : read_response(fd, buf, 1 << 16);
        clock_gettime(CLOCK_MONOTONIC, &z);
        if (step_us) {   /* from when it was due */
            a.tv_sec = (time_t)(due_us / 1000000), a.tv_nsec = (long)(due_us % 1000000) * 1000;
            due_us += step_us;
        }
        w->requests++;
        if (status < 0) {
            close(fd);
            fd = -1;
            continue;
        }
        if (status == 200 || status == 202) w->ok++;
        if (beat_nodes && who == beat_nodes - 1 && status == 200) last_beat_ms = now_ms(CLOCK_REALTIME);
        w->status[status / 100 == 2 ? 0 : status == 400 ? 1 : status == 401 ? 2 : status == 403 ? 3 : status == 503 ? 4 : 5]++;
        if (w->nlat == w->cap) w->lat = realloc(w->lat, (w->cap = w->cap ? w->cap * 2 : 1024) * sizeof *w->lat);
        w->lat[w->nlat++] = (int)((z.tv_sec - a.tv_sec) * 1000000 + (z.tv_nsec - a.tv_nsec) / 1000);
    }
    if (fd >= 0) close(fd);
    for (int k = 0; k < npre; k++) free(pre[k]);
    free(pre);
    free(body);
    free(buf);
    free(req);
    return NULL;
}

/* Bad messages as flood_node, back to back until the run's end. */
static void *flood(void *arg)
{
    struct worker *w = arg;
    char *buf = malloc(1 << 16), req[1024];
    int fd = -1;
    long counter = 0;
    uint64_t instance = random64();
    while (now_ms(CLOCK_MONOTONIC) < t_end) {
        if (fd < 0 && (fd = dial(w->id)) < 0) {
            usleep(10000);
            continue;
        }
        if (fresh_nonces) instance = random64(), counter = 0;
        char *cred = munge_socket ? mint(flood_node, "{}", 2) : NULL;
        int n = post_head(req, "/v1/events", flood_node, cred, instance, ++counter, 2, NULL);
        free(cred);
        memcpy(req + n, "{}", 2);
        int status = send_all(fd, req, (size_t)n + 2) ? -1 : read_response(fd, buf, 1 << 16);
        w->requests++;
        if (status < 0) {
            close(fd);
            fd = -1;
            continue;
        }
        w->status[status / 100 == 2 ? 0 : status == 400 ? 1 : status == 401 ? 2 : status == 403 ? 3 : status == 503 ? 4 : 5]++;
    }
    if (fd >= 0) close(fd);
    free(buf);
    return NULL;
}

static int run_flood(int conns)
{
    struct worker *w = calloc((size_t)conns, sizeof *w);
    pthread_t *t = calloc((size_t)conns, sizeof *t);
    t_end = now_ms(CLOCK_MONOTONIC) + seconds * 1000;
    for (int i = 0; i < conns; i++) {
        w[i].id = i;
        pthread_create(&t[i], NULL, flood, &w[i]);
    }
    long req = 0, st[6] = { 0 };
    for (int i = 0; i < conns; i++) {
        pthread_join(t[i], NULL);
        req += w[i].requests;
        for (int k = 0; k < 6; k++) st[k] += w[i].status[k];
    }
    printf("requests=%ld req_per_s=%.0f answered_2xx=%ld answered_400=%ld answered_401=%ld answered_403=%ld "
           "answered_503=%ld other=%ld\n", req, (double)req / seconds, st[0], st[1], st[2], st[3], st[4], st[5]);
    free(w);
    free(t);
    return req > 0 ? 0 : 1;
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

static int run_load(int conns)
{
    struct worker *w = calloc((size_t)conns, sizeof *w);
    pthread_t *t = calloc((size_t)conns, sizeof *t);
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, 512 << 10);
    t_end = now_ms(CLOCK_MONOTONIC) + seconds * 1000;   /* munge_pre: set again once all are minted */
    if (munge_pre) {
        pthread_barrier_init(&minted, NULL, (unsigned)conns);
        pthread_barrier_init(&go, NULL, (unsigned)conns);
    }
    for (int i = 0; i < conns; i++) {
        w[i].id = i;
        pthread_create(&t[i], &at, load, &w[i]);
    }
    long req = 0, ok = 0, st[6] = { 0 };
    size_t n = 0;
    for (int i = 0; i < conns; i++) {
        pthread_join(t[i], NULL);
        req += w[i].requests, ok += w[i].ok, n += w[i].nlat;
        for (int k = 0; k < 6; k++) st[k] += w[i].status[k];
    }
    int *all = malloc((n ? n : 1) * sizeof *all);
    size_t k = 0;
    for (int i = 0; i < conns; i++) {
        memcpy(all + k, w[i].lat, w[i].nlat * sizeof *all);
        k += w[i].nlat;
        free(w[i].lat);
    }
    qsort(all, n, sizeof *all, cmp_int);
    double p50 = n ? all[(n - 1) / 2] / 1000.0 : 0, p99 = n ? all[(size_t)((double)(n - 1) * 0.99)] / 1000.0 : 0;
    printf("requests=%ld ok=%ld ok_per_s=%.0f events_per_s=%.0f p50_ms=%.2f p99_ms=%.2f req_per_s=%.0f "
           "answered_2xx=%ld answered_400=%ld answered_401=%ld answered_403=%ld answered_503=%ld other=%ld\n",
           req, ok, (double)ok / seconds, token ? (double)ok * events / seconds : 0.0, p50, p99, (double)req / seconds,
           st[0], st[1], st[2], st[3], st[4], st[5]);
    free(all);
    free(w);
    free(t);
    return ok > 0 ? 0 : 1;
}

/* One header byte a second on every connection; counts the ones the server closed. */
static int run_slow(int conns)
{
    int *fd = calloc((size_t)conns, sizeof *fd);
    int connected = 0, closed = 0;
    const char *head = "POST /v1/events HTTP/1.1\r\nHost: x\r\nX-Slow: ";
    for (int i = 0; i < conns; i++) {
        fd[i] = dial(i);
        if (fd[i] >= 0 && send_all(fd[i], head, strlen(head)) == 0) connected++;
        else if (fd[i] >= 0) close(fd[i]), fd[i] = -1;
    }
    printf("connected=%d\n", connected);
    fflush(stdout);
    for (int64_t end = now_ms(CLOCK_MONOTONIC) + seconds * 1000; now_ms(CLOCK_MONOTONIC) < end;) {
        for (int i = 0; i < conns; i++) {
            if (fd[i] < 0) continue;
            char c;
            ssize_t r = recv(fd[i], &c, 1, MSG_DONTWAIT);
            if (r == 0 || (r < 0 && errno != EAGAIN) || r > 0 || send(fd[i], "a", 1, MSG_NOSIGNAL) != 1) {
                close(fd[i]);
                fd[i] = -1;
                closed++;
            }
        }
        sleep(1);
    }
    printf("closed=%d open=%d\n", closed, connected - closed);
    for (int i = 0; i < conns; i++)
        if (fd[i] >= 0) close(fd[i]);
    free(fd);
    return 0;
}

/* Uploads that announce `bytes`, send 64 KiB of a body, and stall: with
 * flood_node, each with that node's valid credential; else with none. */
static int run_stall(int conns, long bytes)
{
    int *fd = calloc((size_t)conns, sizeof *fd);
    static char chunk[64 << 10];
    memset(chunk, 'A', sizeof chunk);
    memcpy(chunk, "MUNGE:", 6);
    int connected = 0, s2xx = 0, s401 = 0, s403 = 0, s413 = 0, s503 = 0, other = 0;
    char head[1024];
    uint64_t instance = random64();
    for (int i = 0; i < conns; i++) {
        int hn;
        if (flood_node) {
            char *cred = munge_socket ? mint(flood_node, "", 0) : NULL;
            hn = post_head(head, "/v1/events", flood_node, cred, instance, i + 1, (size_t)bytes, NULL);
            free(cred);
        } else {
            hn = snprintf(head, sizeof head, "POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: %ld\r\n\r\n", bytes);
        }
        fd[i] = dial(i);
        if (fd[i] < 0) continue;
        connected++;
        send_all(fd[i], head, (size_t)hn);
        struct pollfd p = { .fd = fd[i], .events = POLLOUT };
        if (poll(&p, 1, 100) == 1) send(fd[i], chunk, sizeof chunk, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    printf("connected=%d\n", connected);
    fflush(stdout);
    sleep((unsigned)seconds);
    for (int i = 0; i < conns; i++) {
        if (fd[i] < 0) continue;
        char buf[512];
        ssize_t r = recv(fd[i], buf, sizeof buf - 1, MSG_DONTWAIT);
        if (r > 12) {
            int st = atoi(buf + 9);
            if (st / 100 == 2) s2xx++;
            else if (st == 401) s401++;
            else if (st == 403) s403++;
            else if (st == 413) s413++;
            else if (st == 503) s503++;
            else other++;
        }
        close(fd[i]);
    }
    printf("answered_401=%d answered_403=%d answered_413=%d answered_503=%d answered_2xx=%d other=%d\n", s401, s403,
           s413, s503, s2xx, other);
    free(fd);
    return 0;
}

/* AUTH (see the top of the file): 0, or -1 when a file cannot be read. */
static int set_auth(const char *a)
{
    static char tok[256];
    token = tok;   /* posting messages */
    if (!strncmp(a, "munge:", 6)) {
        munge_socket = a + 6;
        return 0;
    }
    if (!strncmp(a, "munge-pre:", 10)) {
        munge_socket = a + 10;
        munge_pre = 1;
        return 0;
    }
    if (!strcmp(a, "none")) {
        no_auth = 1;
        return 0;
    }
    const char *file = !strncmp(a, "secret:", 7) ? a + 7 : a;
    FILE *f = fopen(file, "r");
    if (!f || !fgets(tok, sizeof tok, f)) {
        fprintf(stderr, "httpload: cannot read %s\n", file);
        if (f) fclose(f);
        return -1;
    }
    fclose(f);
    tok[strcspn(tok, "\r\n")] = 0;
    if (file != a) secret = tok;
    return 0;
}

/* bulk: the template and the node split at their "@N@" marks, and the next request's number. */
struct tpl { char **parts; size_t n; };
static struct tpl body_tpl, node_tpl;
static long bulk_next, bulk_count;
static pthread_mutex_t bulk_lock = PTHREAD_MUTEX_INITIALIZER;
struct bulk_tally { long requests, s2xx, s4xx, s5xx, other, bytes, unread; };

/* Splits text (kept: the parts point into it) at its "@N@" marks. */
static void tpl_split(struct tpl *t, char *text)
{
    for (char *p = text;; t->n++) {
        t->parts = realloc(t->parts, (t->n + 1) * sizeof *t->parts);
        t->parts[t->n] = p;
        char *m = strstr(p, "@N@");
        if (!m) { t->n++; break; }
        *m = 0;
        p = m + 3;
    }
}

static size_t tpl_room(const struct tpl *t)
{
    size_t cap = 64;
    for (size_t i = 0; i < t->n; i++) cap += strlen(t->parts[i]) + 24;
    return cap;
}

/* The template with request k's number: its length. */
static size_t tpl_fill(const struct tpl *t, long k, char *out)
{
    size_t b = 0;
    for (size_t i = 0; i < t->n; i++) b += (size_t)sprintf(out + b, i + 1 < t->n ? "%s%ld" : "%s", t->parts[i], k);
    return b;
}

static void *bulk(void *arg)
{
    struct bulk_tally *t = arg;
    char *body = malloc(tpl_room(&body_tpl)), *node = malloc(tpl_room(&node_tpl)), *head = malloc(2048);
    char *buf = malloc(1 << 16);
    int fd = -1;
    long counter = 0;
    uint64_t instance = random64();
    for (;;) {
        pthread_mutex_lock(&bulk_lock);
        long k = bulk_next < bulk_count ? bulk_next++ : -1;
        pthread_mutex_unlock(&bulk_lock);
        if (k < 0) break;
        size_t b = tpl_fill(&body_tpl, k, body);
        tpl_fill(&node_tpl, k, node);
        int status = -1;
        bool expect = b > (1 << 20);   /* as curl does: the body only once the server asks for it */
        for (int attempt = 0; attempt < 2 && status < 0; attempt++) {   /* once more on a fresh connection */
            if (fd < 0 && (fd = dial(0)) < 0) break;
            char *cred = munge_socket ? mint(node, body, (int)b) : NULL;
            int hn = post_head(head, path, node, cred, instance, ++counter, b, expect ? "Expect: 100-continue\r\n" : NULL);
            free(cred);
            status = send_all(fd, head, (size_t)hn) ? -1 : expect ? read_response(fd, buf, 1 << 16) : 100;
            bool cut = false;   /* the body's send failed: the server answered at the headers and closed */
            if (status == 100) cut = send_all(fd, body, b) != 0, status = read_response(fd, buf, 1 << 16);
            else if (status > 0) t->unread += (long)b;   /* answered at the headers: the body never sent */
            if (status < 0 || cut || (expect && status != 200)) close(fd), fd = -1;
        }
        t->requests++;
        t->bytes += (long)b;
        if (status / 100 == 2) t->s2xx++;
        else if (status / 100 == 4) t->s4xx++;
        else if (status / 100 == 5) t->s5xx++;
        else t->other++;
    }
    if (fd >= 0) close(fd);
    free(body);
    free(node);
    free(head);
    free(buf);
    return NULL;
}

static int run_bulk(int conns, char *node, const char *template_file)
{
    FILE *f = fopen(template_file, "r");
    if (!f) return 2;
    static char chunk[1 << 16];
    size_t len = 0, cap = 0, r;
    char *text = NULL;
    while ((r = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + r + 1 > cap) text = realloc(text, cap = 2 * (len + r + 1));
        memcpy(text + len, chunk, r);
        len += r;
    }
    fclose(f);
    if (!text) return 2;
    text[len] = 0;
    tpl_split(&body_tpl, text);
    tpl_split(&node_tpl, node);
    struct bulk_tally *t = calloc((size_t)conns, sizeof *t), sum = { 0 };
    pthread_t *th = calloc((size_t)conns, sizeof *th);
    for (int i = 0; i < conns; i++) pthread_create(&th[i], NULL, bulk, &t[i]);
    for (int i = 0; i < conns; i++) {
        pthread_join(th[i], NULL);
        sum.requests += t[i].requests, sum.s2xx += t[i].s2xx, sum.s4xx += t[i].s4xx, sum.s5xx += t[i].s5xx;
        sum.other += t[i].other, sum.bytes += t[i].bytes, sum.unread += t[i].unread;
    }
    printf("requests=%ld answered_2xx=%ld answered_4xx=%ld answered_5xx=%ld other=%ld bytes=%ld refused_unsent=%ld\n",
           sum.requests, sum.s2xx, sum.s4xx, sum.s5xx, sum.other, sum.bytes, sum.unread);
    free(t);
    free(th);
    free(body_tpl.parts);
    free(node_tpl.parts);
    free(text);
    return sum.requests > 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: httpload post|beat|flood|get|slow|stall|bulk PORT CONNS SECONDS|COUNT …\n");
        return 2;
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    port = atoi(argv[2]);
    run_id = (unsigned)random64();
    int conns = atoi(argv[3]);
    seconds = atoi(argv[4]);
    const char *m = argv[1];
    if (!strcmp(m, "post") && argc >= 7) {
        events = atoi(argv[5]);
        if (set_auth(argv[6])) return 2;
        if (argc > 7) srcs = atoi(argv[7]);
        if (argc > 8) rate = atof(argv[8]);
        if (munge_pre && rate <= 0) {
            fprintf(stderr, "httpload: munge-pre needs a RATE (open loop)\n");
            return 2;
        }
        return run_load(conns);
    }
    if (!strcmp(m, "beat") && argc >= 7) {
        if (set_auth(argv[5]) || munge_socket) return 2;
        beat_nodes = atoi(argv[6]);
        if (getenv("HTTPLOAD_QUIET_AFTER_MS")) quiet_after_us = atoll(getenv("HTTPLOAD_QUIET_AFTER_MS")) * 1000;
        beat_conns = conns;
        rate = argc > 7 ? atof(argv[7]) : 1;
        if (beat_nodes < conns || conns < 1 || rate <= 0) {
            fprintf(stderr, "httpload: beat needs NODES >= CONNS >= 1 and a RATE > 0\n");
            return 2;
        }
        return run_load(conns);
    }
    if (!strcmp(m, "flood") && argc >= 7) {
        if (set_auth(argv[5]) || munge_pre) return 2;
        flood_node = argv[6];
        fresh_nonces = argc > 7 && !strcmp(argv[7], "fresh");
        return run_flood(conns);
    }
    if (!strcmp(m, "get") && argc >= 6) {
        path = argv[5];
        if (argc > 6) srcs = atoi(argv[6]);
        return run_load(conns);
    }
    if (!strcmp(m, "slow")) {
        if (argc > 5) srcs = atoi(argv[5]);
        return run_slow(conns);
    }
    if (!strcmp(m, "bulk") && argc >= 9) {
        if (set_auth(argv[6]) || munge_pre) return 2;
        path = argv[5];
        bulk_count = atol(argv[4]);
        return run_bulk(conns, argv[7], argv[8]);
    }
    if (!strcmp(m, "stall") && argc >= 6) {
        if (argc > 6) srcs = atoi(argv[6]);
        if (argc > 8) {
            if (set_auth(argv[7])) return 2;
            flood_node = argv[8];
        }
        return run_stall(conns, atol(argv[5]));
    }
    fprintf(stderr, "httpload: bad arguments\n");
    return 2;
}
