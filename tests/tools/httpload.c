/* httpload.c — HTTP load and attack client for vigil serve's tests and bench
 * (plain sockets, no library, so the client itself never limits the figures):
 *   httpload post  PORT CONNS SECONDS EVENTS TOKENFILE [SRCS [RATE]]
 *       CONNS keep-alive connections, each posting agent messages of EVENTS
 *       events (token auth) back to back for SECONDS (closed loop: the
 *       server's saturation), or with RATE > 0 RATE messages a second each
 *       on a fixed schedule (open loop, as agents send: a message's latency
 *       counts from when it was due, so a server that falls behind is not
 *       excused by the client waiting for it); prints requests, 202s,
 *       events acknowledged per second, p50 and p99 latency in ms.
 *       TOKENFILE "munge:SOCKET": MUNGE instead of the token, as agents send
 *       it — each message a credential minted by the munged at SOCKET over
 *       the JSON (Content-Type application/x-munge-credential).
 *       "munge-pre:SOCKET" (open loop only): every credential the run will
 *       send minted before it starts, as each agent's own munged would on
 *       its own node, so the run measures the server's side alone.
 *   httpload get   PORT CONNS SECONDS PATH [SRCS]   the same load on a GET (a baseline)
 *   httpload slow  PORT CONNS SECONDS [SRCS]
 *       CONNS connections sending one header byte a second; prints how many
 *       connected and how many the server closed within SECONDS.
 *   httpload stall PORT CONNS SECONDS BYTES [SRCS]
 *       CONNS uploads announcing BYTES (a MUNGE-looking body), sending the
 *       first 64 KiB and stalling; prints the answers they got.
 *   httpload flood PORT CONNS COUNT PATH TOKENFILE TEMPLATE
 *       COUNT POSTs to PATH over CONNS keep-alive connections (token auth),
 *       each body the file TEMPLATE with every "@N@" replaced by the
 *       request's number (0 … COUNT-1: new node names, say); prints requests,
 *       the answers by class and the body bytes offered (refused_unsent: of
 *       those, the bodies over 1 MiB the server refused at their headers, after
 *       `Expect: 100-continue`, so they were never sent).
 * HTTPLOAD_BEARER in the environment: sent with each GET as the bearer token.
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
#include <munge.h>
#include <unistd.h>

static int port, srcs = 1, events = 1, seconds;
static double rate;   /* messages a second per connection; 0: back to back */
static const char *path = "/healthz", *token, *munge_socket;
static int munge_pre;                 /* credentials minted before the run */
static pthread_barrier_t minted, go;  /* with munge_pre: all minted; t_end set */
static int64_t t_end;

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
    int *lat;          /* latency of each request, µs */
    size_t nlat, cap;
};

#define BODY_MAX (64 + 160 * 1000)   /* a message of 1,000 events */

/* An agent message of `events` events from worker id, sequence seq. */
static int message(int id, long seq, char *body, size_t cap)
{
    int b = snprintf(body, cap, "{\"node\":\"bench%d\",\"spool\":\"%032x\",\"seq\":%ld,\"events\":[", id,
                     (unsigned)id, seq);
    for (int e = 0; e < events && e < 1000; e++)
        b += snprintf(body + b, cap - (size_t)b,
                      "%s{\"kind\":\"xid\",\"code\":13,\"gpu\":%d,\"action\":\"restart-app\",\"source\":\"kmsg\"}",
                      e ? "," : "", e % 8);
    return b + snprintf(body + b, cap - (size_t)b, "]}");
}

/* A MUNGE credential over body from the munged at munge_socket; NULL if none. */
static char *mint(const char *body, int len)
{
    munge_ctx_t ctx = munge_ctx_create();
    char *cred = NULL;
    munge_ctx_set(ctx, MUNGE_OPT_SOCKET, munge_socket);
    if (munge_encode(&cred, ctx, body, len) != EMUNGE_SUCCESS) {
        free(cred);
        cred = NULL;
    }
    munge_ctx_destroy(ctx);
    return cred;
}

static void *load(void *arg)
{
    struct worker *w = arg;
    char *buf = malloc(1 << 16), *req = malloc(64 + (size_t)events * 160 + 1024), *body = malloc(BODY_MAX);
    int fd = -1;
    long seq = 0;
    char **pre = NULL;   /* munge_pre: the run's credentials, minted now */
    int npre = munge_pre ? (int)(rate * seconds) + 2 : 0, ipre = 0;
    if (munge_pre) {
        pre = calloc((size_t)npre, sizeof *pre);
        for (int k = 0; k < npre; k++) pre[k] = mint(body, message(w->id, k + 1, body, BODY_MAX));
        if (pthread_barrier_wait(&minted) == PTHREAD_BARRIER_SERIAL_THREAD)
            t_end = now_ms(CLOCK_MONOTONIC) + seconds * 1000;
        pthread_barrier_wait(&go);
    }
    /* open loop: message k is due at start + phase + k / rate (the phase spreads the connections) */
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    int64_t start_us = (int64_t)start.tv_sec * 1000000 + start.tv_nsec / 1000,
            step_us = rate > 0 ? (int64_t)(1e6 / rate) : 0, due_us = start_us + (step_us ? (w->id * 7919) % step_us : 0);
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
        if (token) {
            int b = munge_pre ? 0 : message(w->id, ++seq, body, BODY_MAX);
            if (munge_socket) {   /* the credential is the body */
                if (munge_pre && ipre == npre) break;
                char *cred = munge_pre ? pre[ipre++] : mint(body, b);
                if (!cred) {
                    w->requests++;
                    continue;
                }
                n = sprintf(req, "POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-munge-credential\r\n"
                                 "Content-Length: %zu\r\n\r\n%s", strlen(cred), cred);
                if (!munge_pre) free(cred);   /* the minted ones are freed with pre */
            } else
            n = sprintf(req,
                        "POST /v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nX-Vigil-Time: %lld\r\n"
                        "X-Vigil-Nonce: %d-%d-%ld\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
                        token, (long long)now_ms(CLOCK_REALTIME), (int)getpid(), w->id, seq, b, body);
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
    long req = 0, ok = 0;
    size_t n = 0;
    for (int i = 0; i < conns; i++) {
        pthread_join(t[i], NULL);
        req += w[i].requests, ok += w[i].ok, n += w[i].nlat;
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
    printf("requests=%ld ok=%ld ok_per_s=%.0f events_per_s=%.0f p50_ms=%.2f p99_ms=%.2f\n", req, ok,
           (double)ok / seconds, token ? (double)ok * events / seconds : 0.0, p50, p99);
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

/* Uploads that announce `bytes`, send 64 KiB of a MUNGE-looking body, and stall. */
static int run_stall(int conns, long bytes)
{
    int *fd = calloc((size_t)conns, sizeof *fd);
    static char chunk[64 << 10];
    memset(chunk, 'A', sizeof chunk);
    memcpy(chunk, "MUNGE:", 6);
    int connected = 0, s2xx = 0, s401 = 0, s413 = 0, s503 = 0, other = 0;
    char head[256];
    int hn = snprintf(head, sizeof head, "POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: %ld\r\n\r\n", bytes);
    for (int i = 0; i < conns; i++) {
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
            else if (st == 413) s413++;
            else if (st == 503) s503++;
            else other++;
        }
        close(fd[i]);
    }
    printf("answered_401=%d answered_413=%d answered_503=%d answered_2xx=%d other=%d\n", s401, s413, s503, s2xx,
           other);
    free(fd);
    return 0;
}

/* flood: the template split at its "@N@" marks, and the next request's number. */
static char **tpl_parts;
static size_t tpl_n;
static long flood_next, flood_count;
static pthread_mutex_t flood_lock = PTHREAD_MUTEX_INITIALIZER;
struct flood_tally { long requests, s2xx, s4xx, s5xx, other, bytes, unread; };

static void *flood(void *arg)
{
    struct flood_tally *t = arg;
    size_t cap = 64;
    for (size_t i = 0; i < tpl_n; i++) cap += strlen(tpl_parts[i]) + 24;
    char *body = malloc(cap), *head = malloc(1024), *buf = malloc(1 << 16);
    int fd = -1;
    for (;;) {
        pthread_mutex_lock(&flood_lock);
        long k = flood_next < flood_count ? flood_next++ : -1;
        pthread_mutex_unlock(&flood_lock);
        if (k < 0) break;
        size_t b = 0;
        for (size_t i = 0; i < tpl_n; i++)
            b += (size_t)sprintf(body + b, i + 1 < tpl_n ? "%s%ld" : "%s", tpl_parts[i], k);
        int status = -1;
        bool expect = b > (1 << 20);   /* as curl does: the body only once the server asks for it */
        for (int attempt = 0; attempt < 2 && status < 0; attempt++) {   /* once more on a fresh connection */
            if (fd < 0 && (fd = dial(0)) < 0) break;
            int hn = snprintf(head, 1024,
                              "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nX-Vigil-Time: %lld\r\n"
                              "X-Vigil-Nonce: f%d-%ld-%d\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n%s\r\n",
                              path, token, (long long)now_ms(CLOCK_REALTIME), (int)getpid(), k, attempt, b,
                              expect ? "Expect: 100-continue\r\n" : "");
            status = send_all(fd, head, (size_t)hn) ? -1 : expect ? read_response(fd, buf, 1 << 16) : 100;
            if (status == 100) status = send_all(fd, body, b) ? -1 : read_response(fd, buf, 1 << 16);
            else if (status > 0) t->unread += (long)b;   /* answered at the headers: the body never sent */
            if (status < 0 || (expect && status != 200)) close(fd), fd = -1;
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
    free(head);
    free(buf);
    return NULL;
}

static int run_flood(int conns, const char *template_file)
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
    for (char *p = text;; tpl_n++) {
        tpl_parts = realloc(tpl_parts, (tpl_n + 1) * sizeof *tpl_parts);
        tpl_parts[tpl_n] = p;
        char *m = strstr(p, "@N@");
        if (!m) { tpl_n++; break; }
        *m = 0;
        p = m + 3;
    }
    struct flood_tally *t = calloc((size_t)conns, sizeof *t), sum = { 0 };
    pthread_t *th = calloc((size_t)conns, sizeof *th);
    for (int i = 0; i < conns; i++) pthread_create(&th[i], NULL, flood, &t[i]);
    for (int i = 0; i < conns; i++) {
        pthread_join(th[i], NULL);
        sum.requests += t[i].requests, sum.s2xx += t[i].s2xx, sum.s4xx += t[i].s4xx, sum.s5xx += t[i].s5xx;
        sum.other += t[i].other, sum.bytes += t[i].bytes, sum.unread += t[i].unread;
    }
    printf("requests=%ld answered_2xx=%ld answered_4xx=%ld answered_5xx=%ld other=%ld bytes=%ld refused_unsent=%ld\n",
           sum.requests, sum.s2xx, sum.s4xx, sum.s5xx, sum.other, sum.bytes, sum.unread);
    free(t);
    free(th);
    free(tpl_parts);
    free(text);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: httpload post|get|slow|stall|flood PORT CONNS SECONDS|COUNT …\n");
        return 2;
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    port = atoi(argv[2]);
    int conns = atoi(argv[3]);
    seconds = atoi(argv[4]);
    const char *m = argv[1];
    if (!strcmp(m, "post") && argc >= 7) {
        events = atoi(argv[5]);
        static char tok[256];
        if (!strncmp(argv[6], "munge:", 6)) {
            munge_socket = argv[6] + 6;
        } else if (!strncmp(argv[6], "munge-pre:", 10)) {
            munge_socket = argv[6] + 10;
            munge_pre = 1;
        } else {
            FILE *f = fopen(argv[6], "r");
            if (!f || !fgets(tok, sizeof tok, f)) return 2;
            fclose(f);
            tok[strcspn(tok, "\r\n")] = 0;
        }
        token = tok;
        if (argc > 7) srcs = atoi(argv[7]);
        if (argc > 8) rate = atof(argv[8]);
        if (munge_pre && rate <= 0) {
            fprintf(stderr, "httpload: munge-pre needs a RATE (open loop)\n");
            return 2;
        }
        return run_load(conns);
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
    if (!strcmp(m, "flood") && argc >= 8) {
        static char tok[256];
        FILE *f = fopen(argv[6], "r");
        if (!f || !fgets(tok, sizeof tok, f)) return 2;
        fclose(f);
        tok[strcspn(tok, "\r\n")] = 0;
        token = tok;
        path = argv[5];
        flood_count = atol(argv[4]);
        return run_flood(conns, argv[7]);
    }
    if (!strcmp(m, "stall") && argc >= 6) {
        if (argc > 6) srcs = atoi(argv[6]);
        return run_stall(conns, atol(argv[5]));
    }
    fprintf(stderr, "httpload: bad arguments\n");
    return 2;
}
