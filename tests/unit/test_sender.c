/* test_sender.c — the agent's delivery against a real HTTP server
 * (libmicrohttpd, in this process) that answers like a controller with
 * smaller limits: every message the agent sends fits wire/limits.h's caps and
 * carries the spool id; a 413 or a 400 naming a limit makes the agent split
 * the message and send the parts (no retry loop, nothing dropped); another
 * 400 drops it; a spooled record from an older agent above the caps is split
 * before it is sent; msg_split's runs; the largest event the agent can
 * build is far below the byte cap (fixed-size fields); the spool's cap drops
 * record-only events, never a fault, and tells the controller how many; and
 * an agent restored with its memory (fork: two futures of one state) finds
 * its reused seqs in a real controller's answer and sends its fault as new.
 * Failover: a second server in front of the fake in the --controller list
 * (refusing connections, answering 503, hanging past the POST timeout after
 * storing the message, answering 401 or 403): the messages reach the fake,
 * in order, once, and stay with it until it fails in turn. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "agent/agent_int.h"
#include "controller/httpapi.h"
#include "controller/store.h"
#include "wire/limits.h"
#include "util/sbuf.h"
#include "util/strutil.h"

/* The fake controller: its limits, and what it accepted. */
static struct {
    size_t max_body, max_events;
    bool refuse_malformed;    /* answer 400 (no limit named) to everything */
    pthread_mutex_t lock;
    unsigned posts, accepted, refused;
    size_t largest;           /* the largest body it was sent */
    size_t most_events;       /* the most events in one message */
    unsigned char seen[4096]; /* how often each event (by its gpu index) was accepted */
    bool other_spool;         /* a message carried another spool id than `spool` */
    char spool[64];
    json_int_t told;          /* the messages' "dropped" fields, summed */
    bool unavailable;         /* answer 503 to everything */
    int64_t order[64];        /* the seqs of the messages accepted, in order */
    unsigned norder;
    /* the store the fake shares with the server in front of it: the
     * (spool, seq) of the messages that one stored; the fake answers them as
     * duplicates, as controllers sharing a store do */
    struct { char spool[64]; int64_t seq; } held[16];
    unsigned nheld;
} ctl;

struct upload {
    struct sbuf body;
};

static enum MHD_Result answer(struct MHD_Connection *c, unsigned code, const char *body)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

/* Whether the shared store holds message m (ctl.lock held). */
static bool held(const json_t *m)
{
    const char *sp = json_string_value(json_object_get(m, "spool"));
    json_int_t seq = json_integer_value(json_object_get(m, "seq"));
    for (unsigned i = 0; i < ctl.nheld; i++)
        if (sp && !strcmp(ctl.held[i].spool, sp) && ctl.held[i].seq == seq) return true;
    return false;
}

/* Each event counted as accepted, by its gpu index (ctl.lock held). */
static void count_events(const json_t *events)
{
    for (size_t i = 0; i < json_array_size(events); i++) {
        json_int_t g = json_integer_value(json_object_get(json_array_get(events, i), "gpu"));
        if (g >= 0 && g < (json_int_t)sizeof ctl.seen) ctl.seen[g]++;
    }
}

/* m stored by the server in front: its events counted, its (spool, seq) in
 * the shared store (ctl.lock held). */
static void store(const json_t *m)
{
    count_events(json_object_get(m, "events"));
    if (ctl.nheld == sizeof ctl.held / sizeof ctl.held[0]) return;
    const char *sp = json_string_value(json_object_get(m, "spool"));
    vg_strlcpy(ctl.held[ctl.nheld].spool, sp ? sp : "", sizeof ctl.held[0].spool);
    ctl.held[ctl.nheld++].seq = json_integer_value(json_object_get(m, "seq"));
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *data, size_t *size, void **con_cls)
{
    (void)cls, (void)url, (void)method, (void)version;
    struct upload *up = *con_cls;
    if (!up) {
        *con_cls = vg_xcalloc(1, sizeof *up);
        return MHD_YES;
    }
    if (*size) {
        sbuf_add(&up->body, data, *size);
        *size = 0;
        return MHD_YES;
    }
    char msg[160];
    pthread_mutex_lock(&ctl.lock);
    ctl.posts++;
    if (up->body.len > ctl.largest) ctl.largest = up->body.len;
    enum MHD_Result r;
    json_t *m = json_loadb(up->body.s ? up->body.s : "", up->body.len, 0, NULL);
    json_t *events = json_object_get(m, "events");
    size_t n = json_array_size(events);
    if (n > ctl.most_events) ctl.most_events = n;
    if (up->body.len > ctl.max_body) {
        snprintf(msg, sizeof msg, "{\"error\":\"body: %zu bytes, above the limit of %zu\"}", up->body.len,
                 ctl.max_body);
        r = answer(c, 413, msg);
        ctl.refused++;
    } else if (n > ctl.max_events) {
        snprintf(msg, sizeof msg, "{\"error\":\"message: %zu events, above the limit of %zu\"}", n, ctl.max_events);
        r = answer(c, 400, msg);
        ctl.refused++;
    } else if (ctl.unavailable) {
        r = answer(c, 503, "{\"error\":\"stopping: the controller is shutting down; retry\"}");
    } else if (ctl.refuse_malformed || !n) {
        r = answer(c, 400, "{\"error\":\"message: events[0]: field 'kind': missing\"}");
    } else if (held(m)) {
        snprintf(msg, sizeof msg, "{\"duplicates\":%zu}", n);
        r = answer(c, 202, msg);
    } else {
        const char *sp = json_string_value(json_object_get(m, "spool"));
        if (!sp || strcmp(sp, ctl.spool)) ctl.other_spool = true;
        ctl.told += json_integer_value(json_object_get(m, "dropped"));
        count_events(events);
        ctl.accepted++;
        if (ctl.norder < sizeof ctl.order / sizeof ctl.order[0])
            ctl.order[ctl.norder++] = json_integer_value(json_object_get(m, "seq"));
        r = answer(c, 202, "{\"duplicates\":0}");
    }
    json_decref(m);
    pthread_mutex_unlock(&ctl.lock);
    return r;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode t)
{
    (void)cls, (void)c, (void)t;
    struct upload *up = *con_cls;
    if (!up) return;
    sbuf_free(&up->body);
    free(up);
    *con_cls = NULL;
}

static struct MHD_Daemon *daemon_;
static char url[64], dir[64], spool_path[128];

static int setup(void **st)
{
    (void)st;
    pthread_mutex_init(&ctl.lock, NULL);
    daemon_ = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, handler, NULL,
                               MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_END);
    if (!daemon_) return -1;
    const union MHD_DaemonInfo *i = MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_BIND_PORT);
    snprintf(url, sizeof url, "http://127.0.0.1:%u", i ? i->port : 0);
    strcpy(dir, "/tmp/vigil-sender-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(spool_path, sizeof spool_path, "%s/spool", dir);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    MHD_stop_daemon(daemon_);
    unlink(spool_path);
    rmdir(dir);
    return 0;
}

static void reset(size_t max_body, size_t max_events)
{
    pthread_mutex_lock(&ctl.lock);
    ctl.max_body = max_body, ctl.max_events = max_events;
    ctl.refuse_malformed = false;
    ctl.posts = ctl.accepted = ctl.refused = 0;
    ctl.largest = ctl.most_events = 0;
    memset(ctl.seen, 0, sizeof ctl.seen);
    ctl.other_spool = false;
    ctl.told = 0;
    ctl.unavailable = false;
    ctl.norder = ctl.nheld = 0;
    pthread_mutex_unlock(&ctl.lock);
}

static struct vg_agent_opts opts;

/* An agent with only its delivery part: a spool, auth none, the fake's URL. */
static struct agent *agent_at(const char *controller, const char *spool, size_t spool_max)
{
    opts = (struct vg_agent_opts){ .node = "n7", .controller = controller, .auth_mode = "none", .spool = spool,
                                   .retry_max_ms = 100, .spool_max = spool_max };
    struct agent *a = vg_xcalloc(1, sizeof *a);
    a->o = &opts;
    vg_strlcpy(a->node, "n7", sizeof a->node);
    char err[256];
    assert_int_equal(snd_init(a, err, sizeof err), 0);
    vg_strlcpy(ctl.spool, vg_spool_id(a->spool), sizeof ctl.spool);
    return a;
}

static struct agent *agent_new(void) { return agent_at(url, spool_path, 0); }

static void agent_free(struct agent *a)
{
    snd_close(a);
    free(a);
}

/* n events as a kernel-log XID on n GPUs (index i = gpu i), raw text of a
 * real record's length. */
static void make_event(struct vg_event *e, int i)
{
    vg_event_init(e);
    vg_strlcpy(e->node, "n7", sizeof e->node);
    vg_strlcpy(e->source, "kmsg", sizeof e->source);
    vg_strlcpy(e->kind, "xid", sizeof e->kind);
    e->code = 13;
    e->gpu = i;
    snprintf(e->pci, sizeof e->pci, "%04x:%02x:00.0", i / 256, i % 256);
    e->seen_ms = e->first_ms = e->last_ms = 1732528800000LL + i;
    e->count = 1;
    snprintf(e->raw, sizeof e->raw,
             "NVRM: Xid (PCI:%.12s): 13, Graphics SM Warp Exception on (GPC 0, TPC 1): Out Of Range Address", e->pci);
}

static void queue_events(struct agent *a, int n)
{
    for (int i = 0; i < n; i++) {
        struct vg_event e;
        make_event(&e, i);
        snd_queue(a, &e);
    }
}

static void assert_each_once(int n)
{
    for (int i = 0; i < n; i++)
        if (ctl.seen[i] != 1) fail_msg("event %d accepted %u times", i, ctl.seen[i]);
}

/* 3,000 events in one loop turn: several messages, each within the caps. */
static void test_caps(void **st)
{
    (void)st;
    unlink(spool_path);
    reset(VG_WIRE_MAX_BODY, VG_WIRE_MAX_EVENTS);
    struct agent *a = agent_new();
    queue_events(a, 3000);
    snd_flush(a);
    assert_true(vg_spool_pending(a->spool) >= 3);
    snd_deliver(a, true);
    assert_int_equal(vg_spool_pending(a->spool), 0);
    assert_true(ctl.largest <= VG_WIRE_SEND_BYTES);
    assert_true(ctl.most_events <= VG_WIRE_SEND_EVENTS);
    assert_int_equal(ctl.refused, 0);
    assert_false(ctl.other_spool);
    assert_each_once(3000);
    assert_int_equal(a->dropped, 0);
    agent_free(a);
}

/* A controller with smaller limits: 413 and 400 naming the limit split the
 * message until the parts fit; all arrive once, none is dropped. */
static void test_refused_as_too_large(void **st)
{
    (void)st;
    unlink(spool_path);
    reset(40000, 70);
    struct agent *a = agent_new();
    queue_events(a, 3000);
    snd_flush(a);
    snd_deliver(a, true);
    assert_int_equal(vg_spool_pending(a->spool), 0);
    assert_true(ctl.refused > 0);   /* it did refuse some */
    assert_true(ctl.accepted >= 3000 / 70);
    assert_each_once(3000);
    assert_int_equal(a->dropped, 0);
    assert_int_equal(a->failed_posts, 0);
    agent_free(a);
}

/* A single event refused as too large cannot be split: it is dropped (loudly)
 * so the messages behind it still go; any other 400 drops the message. */
static void test_single_event_and_malformed(void **st)
{
    (void)st;
    unlink(spool_path);
    reset(100, VG_WIRE_MAX_EVENTS);
    struct agent *a = agent_new();
    queue_events(a, 1);
    snd_flush(a);
    snd_deliver(a, true);
    assert_int_equal(a->dropped, 1);
    assert_int_equal(vg_spool_pending(a->spool), 0);
    reset(VG_WIRE_MAX_BODY, VG_WIRE_MAX_EVENTS);
    ctl.refuse_malformed = true;
    queue_events(a, 5);
    snd_flush(a);
    snd_deliver(a, true);
    assert_int_equal(a->dropped, 2);
    assert_int_equal(ctl.posts, 1);   /* a malformed message is not split */
    agent_free(a);
}

/* A spool written by an older agent: one record of 3,000 events (above both
 * caps), no spool id.  It is split before it is sent; nothing is lost. */
static void test_old_oversized_record(void **st)
{
    (void)st;
    json_t *events = json_array();
    for (int i = 0; i < 3000; i++) {
        struct vg_event e;
        make_event(&e, i);
        json_array_append_new(events, vg_event_to_json(&e));
    }
    json_t *m = json_pack("{s:s, s:i, s:o}", "node", "n7", "seq", 5, "events", events);
    char *text = json_dumps(m, JSON_COMPACT);
    json_decref(m);
    assert_true(strlen(text) > VG_WIRE_SEND_BYTES);
    FILE *f = fopen(spool_path, "w");
    assert_non_null(f);
    fprintf(f, "vigil-spool 1 next=6\nM 5 %zu %s\n", strlen(text), text);
    fclose(f);
    free(text);
    reset(VG_WIRE_MAX_BODY, VG_WIRE_MAX_EVENTS);
    struct agent *a = agent_new();
    assert_int_equal(vg_spool_pending(a->spool), 1);
    snd_deliver(a, true);
    assert_int_equal(vg_spool_pending(a->spool), 0);
    assert_true(ctl.accepted >= 4);
    assert_true(ctl.largest <= VG_WIRE_SEND_BYTES);
    assert_true(ctl.most_events <= VG_WIRE_SEND_EVENTS);
    assert_false(ctl.other_spool);   /* the parts carry the spool's id */
    assert_each_once(3000);
    assert_int_equal(a->dropped, 0);
    agent_free(a);
}

static void test_msg_split(void **st)
{
    (void)st;
    json_t *ev = json_array();
    size_t *ends;
    assert_int_equal(msg_split(ev, 10, 100, &ends), 0);
    free(ends);
    for (int i = 0; i < 5; i++) json_array_append_new(ev, json_string("abcdefgh"));   /* 10 bytes each */
    assert_int_equal(msg_split(ev, 2, 1000, &ends), 3);
    assert_int_equal(ends[0], 2);
    assert_int_equal(ends[1], 4);
    assert_int_equal(ends[2], 5);
    free(ends);
    /* [a,b] = 2 + 10 + 1 + 10 = 23 bytes: 23 fits, 22 does not */
    assert_int_equal(msg_split(ev, 100, 23, &ends), 3);
    free(ends);
    assert_int_equal(msg_split(ev, 100, 22, &ends), 5);
    free(ends);
    /* an event above the byte cap alone is a run of its own, not left out */
    assert_int_equal(msg_split(ev, 100, 5, &ends), 5);
    assert_int_equal(ends[4], 5);
    free(ends);
    json_decref(ev);
}

/* The largest event the agent can build: every text field full, of
 * characters JSON escapes six-fold.  Far below the byte cap, so one event
 * never needs to be split. */
static void test_largest_event(void **st)
{
    (void)st;
    struct vg_event e;
    vg_event_init(&e);
    char *fields[] = { e.node, e.source, e.kind, e.pci, e.cause, e.raw };
    size_t sizes[] = { sizeof e.node, sizeof e.source, sizeof e.kind, sizeof e.pci, sizeof e.cause, sizeof e.raw };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        memset(fields[i], 0x01, sizes[i] - 1);
        fields[i][sizes[i] - 1] = 0;
    }
    e.time_ms = e.seen_ms = e.first_ms = e.last_ms = 253402300799999LL;   /* 9999-12-31 */
    e.code = e.gpu = e.count = 2147483647;
    json_t *j = vg_event_to_json(&e);
    size_t n = json_dumpb(j, NULL, 0, JSON_COMPACT);
    json_decref(j);
    assert_true(n > 3000);               /* the escapes did happen */
    assert_true(n < VG_WIRE_SEND_BYTES / 32);
}

/* The spool's cap while the controller is away: record-only events go,
 * oldest first; every fault stays and arrives once; the drops are counted
 * and the controller is told each one. */
static void test_spool_cap(void **st)
{
    (void)st;
    unlink(spool_path);
    reset(VG_WIRE_MAX_BODY, VG_WIRE_MAX_EVENTS);
    enum { CAP = 16 << 10, TURNS = 200, PER = 5 };
    struct agent *a = agent_at(url, spool_path, CAP);
    int faults = 0;
    for (int t = 0; t < TURNS; t++) {
        for (int k = 0; k < PER; k++) {
            struct vg_event e;
            make_event(&e, t * PER + k);
            e.action = VG_ACT_IGNORE;
            snd_queue(a, &e);
        }
        if (t % 20 == 0) {
            struct vg_event e;
            make_event(&e, 2000 + faults++);
            e.action = VG_ACT_DRAIN_RMA;
            snd_queue(a, &e);
        }
        snd_flush(a);   /* spooled, not sent: the controller is out of reach */
        assert_true(vg_spool_bytes(a->spool) <= CAP);
    }
    assert_true(a->spool_dropped > 0);
    assert_false(vg_spool_memory_only(a->spool));
    snd_deliver(a, true);
    assert_int_equal(vg_spool_pending(a->spool), 0);
    for (int f = 0; f < faults; f++) assert_int_equal(ctl.seen[2000 + f], 1);
    unsigned delivered = 0;
    for (int i = 0; i < TURNS * PER; i++) {
        assert_true(ctl.seen[i] <= 1);
        delivered += ctl.seen[i];
    }
    assert_int_equal(delivered + a->spool_dropped, TURNS * PER);
    assert_int_equal(ctl.told, (json_int_t)a->spool_dropped);
    agent_free(a);
}

/* A fault from each future: the process is forked (as a machine restored
 * from a snapshot of its memory goes on from the same state); one future
 * delivers its fault, the other then spools another under the same spool id
 * and seq.  The real controller answers it "duplicate"; the agent sees it
 * never sent that message, starts a new spool life and sends it again: an
 * incident, not a duplicate. */
static void test_rewound_live_restore(void **st)
{
    (void)st;
    char db[160], err[256];
    snprintf(db, sizeof db, "%s/incidents.db", dir);
    struct vg_store *store;
    assert_int_equal(vg_store_open(db, &store, err, sizeof err), 0);
    struct vg_auth none;
    assert_int_equal(vg_auth_init(&none, &(struct vg_auth_conf){ .mode = "none" }, err, sizeof err), 0);
    struct vg_ingest in = { .store = store, .window_ms = 60000 };
    struct vg_http_opts ho = { .listen = "127.0.0.1:0" };
    struct vg_http *h = vg_http_start(&ho, &none, &in, err, sizeof err);
    assert_non_null(h);
    char real[64];
    snprintf(real, sizeof real, "http://127.0.0.1:%u", vg_http_port(h));
    /* memory-only: the two futures share no file */
    struct agent *a = agent_at(real, "/nonexistent-dir/spool", 0);
    struct vg_event e;
    make_event(&e, 1);
    e.action = VG_ACT_DRAIN_RMA;
    snd_queue(a, &e);
    snd_flush(a);
    snd_deliver(a, true);
    assert_int_equal(vg_spool_pending(a->spool), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        make_event(&e, 2);
        e.action = VG_ACT_DRAIN_RMA;
        snd_queue(a, &e);
        snd_flush(a);
        snd_deliver(a, true);
        _exit(vg_spool_pending(a->spool) == 0 ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_int_equal(status, 0);
    char id[VG_SPOOL_ID_LEN + 1];
    strcpy(id, vg_spool_id(a->spool));
    make_event(&e, 3);
    e.action = VG_ACT_DRAIN_RMA;
    snd_queue(a, &e);
    snd_flush(a);
    snd_deliver(a, true);
    assert_int_equal(vg_spool_pending(a->spool), 0);
    assert_string_not_equal(vg_spool_id(a->spool), id);   /* a new life */
    int64_t total, open, msgs;
    assert_int_equal(vg_store_counts(store, &total, &open, &msgs), 0);
    assert_int_equal(total, 3);   /* gpu 1, gpu 2 (the other future), gpu 3: none taken for a duplicate */
    agent_free(a);
    vg_http_stop(h);
    vg_auth_free(&none);
    vg_store_close(store);
    unlink(db);
    snprintf(db, sizeof db, "%s/incidents.db-wal", dir);
    unlink(db);
    snprintf(db, sizeof db, "%s/incidents.db-shm", dir);
    unlink(db);
}

/* The server in front of the fake in the --controller list: it answers
 * `code` (a 202 stores the message in the store it shares with the fake);
 * with hang it answers nothing until released. */
static struct front {
    struct MHD_Daemon *d;
    char url[64];
    unsigned code;
    bool hang, released;
    unsigned posts;
    pthread_mutex_t lock;
    pthread_cond_t cond;
} fr;

static enum MHD_Result front_handler(void *cls, struct MHD_Connection *c, const char *u, const char *method,
                                     const char *version, const char *data, size_t *size, void **con_cls)
{
    (void)cls, (void)u, (void)method, (void)version;
    struct upload *up = *con_cls;
    if (!up) {
        *con_cls = vg_xcalloc(1, sizeof *up);
        return MHD_YES;
    }
    if (*size) {
        sbuf_add(&up->body, data, *size);
        *size = 0;
        return MHD_YES;
    }
    pthread_mutex_lock(&fr.lock);
    fr.posts++;
    bool hang = fr.hang;
    unsigned code = fr.code;
    pthread_mutex_unlock(&fr.lock);
    json_t *m = json_loadb(up->body.s ? up->body.s : "", up->body.len, 0, NULL);
    if (!hang && code == 202) {
        pthread_mutex_lock(&ctl.lock);
        store(m);
        pthread_mutex_unlock(&ctl.lock);
    }
    json_decref(m);
    if (hang) {
        pthread_mutex_lock(&fr.lock);
        while (!fr.released) pthread_cond_wait(&fr.cond, &fr.lock);
        pthread_mutex_unlock(&fr.lock);
        return MHD_NO;   /* the connection closed with no answer */
    }
    return answer(c, code, code == 202 ? "{\"duplicates\":0}" : code == 503 ? "{\"error\":\"busy; retry\"}"
                                                                           : "{\"error\":\"node: refused\"}");
}

static void front_start(unsigned code, bool hang)
{
    fr.code = code, fr.hang = hang, fr.released = false, fr.posts = 0;
    pthread_mutex_init(&fr.lock, NULL);
    pthread_cond_init(&fr.cond, NULL);
    fr.d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL,
                            front_handler, NULL, MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_END);
    assert_non_null(fr.d);
    const union MHD_DaemonInfo *i = MHD_get_daemon_info(fr.d, MHD_DAEMON_INFO_BIND_PORT);
    snprintf(fr.url, sizeof fr.url, "http://127.0.0.1:%u", i ? i->port : 0);
}

static void front_set(unsigned code)
{
    pthread_mutex_lock(&fr.lock);
    fr.code = code;
    pthread_mutex_unlock(&fr.lock);
}

static void front_stop(void)
{
    pthread_mutex_lock(&fr.lock);
    fr.released = true;
    pthread_cond_broadcast(&fr.cond);
    pthread_mutex_unlock(&fr.lock);
    MHD_stop_daemon(fr.d);
    pthread_cond_destroy(&fr.cond);
    pthread_mutex_destroy(&fr.lock);
}

/* A loopback port nothing listens on: bound, then closed. */
static unsigned closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof sa;
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    close(fd);
    return ntohs(sa.sin_port);
}

/* An agent sending to first, then the fake; n messages of two events each
 * spooled (gpu 2i and 2i+1 in message i). */
static struct agent *agent_pair(const char *first, int n)
{
    static char list[160];
    snprintf(list, sizeof list, "%s,%s", first, url);
    unlink(spool_path);
    struct agent *a = agent_at(list, spool_path, 0);
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 2; k++) {
            struct vg_event e;
            make_event(&e, 2 * i + k);
            snd_queue(a, &e);
        }
        snd_flush(a);
    }
    assert_int_equal(vg_spool_pending(a->spool), n);
    return a;
}

/* All n messages accepted by the fake, once each, in spool order. */
static void assert_all_on_fake(struct agent *a, int n)
{
    assert_int_equal(vg_spool_pending(a->spool), 0);
    assert_int_equal(ctl.norder, n);
    for (int i = 0; i < n; i++) assert_int_equal(ctl.order[i], i + 1);
    assert_each_once(2 * n);
    assert_int_equal(a->dropped, 0);
}

/* The first controller refuses connections: every message goes to the
 * second, in order, once, and the agent stays with it (one switch). */
static void test_failover_refused(void **st)
{
    (void)st;
    reset(VG_WIRE_MAX_BODY, VG_WIRE_MAX_EVENTS);
    char dead[64];
    snprintf(dead, sizeof dead, "http://127.0.0.1:%u", closed_port());
    struct agent *a = agent_pair(dead, 5);
    snd_deliver(a, true);
    assert_all_on_fake(a, 5);
    assert_int_equal(a->cur, 1);
    assert_int_equal(a->failovers, 1);
    assert_int_equal(a->failed_posts, 1);
    assert_int_equal(a->retry_at, 0);   /* retried at once, no backoff */
    agent_free(a);
}

/* The first answers 503: the message goes to the second at once. */
static void test_failover_5xx(void **st)
{
    (void)st;
    reset(VG_WIRE_MAX_BODY, VG_WIRE_MAX_EVENTS);
    front_start(503, false);
    struct agent *a = agent_pair(fr.url, 4);
    snd_deliver(a, true);
    assert_all_on_fake(a, 4);
    assert_int_equal(fr.posts, 1);   /* sticky: only the first message tried the first controller */
    assert_int_equal(a->failovers, 1);
    agent_free(a);
    front_stop();
}

/* The first hangs past the POST timeout on message 1, which it had stored
 * in the shared store all the same (a controller frozen between its commit
 * and its answer; the store is seeded here, so no timing decides it): the
 * message goes to the second, the same (node, spool, seq), acknowledged as
 * a duplicate — and not taken for a rewound spool: no new life, nothing sent
 * twice, nothing lost. */
static void test_failover_hang(void **st)
{
    (void)st;
    reset(VG_WIRE_MAX_BODY, VG_WIRE_MAX_EVENTS);
    front_start(0, true);
    struct agent *a = agent_pair(fr.url, 3);
    opts.post_timeout_ms = 1000;   /* the default is 3 s */
    char id[VG_SPOOL_ID_LEN + 1];
    strcpy(id, vg_spool_id(a->spool));
    vg_strlcpy(ctl.held[0].spool, id, sizeof ctl.held[0].spool);
    ctl.held[0].seq = 1;
    ctl.nheld = 1;
    ctl.seen[0] = ctl.seen[1] = 1;
    snd_deliver(a, true);
    assert_int_equal(vg_spool_pending(a->spool), 0);
    assert_int_equal(ctl.posts, 3);            /* message 1 went to the second too */
    assert_int_equal(ctl.norder, 2);           /* 2 and 3 new to it */
    assert_int_equal(ctl.order[0], 2);
    assert_int_equal(ctl.order[1], 3);
    assert_each_once(6);
    assert_string_equal(vg_spool_id(a->spool), id);   /* no new life */
    assert_int_equal(a->cur, 1);
    assert_int_equal(a->failovers, 1);
    agent_free(a);
    front_stop();
}

/* 401 and 403 come from a live controller: no failover; the message stays
 * spooled for the slow retry, the second controller never hears of it. */
static void test_no_failover_on_refusal(void **st)
{
    (void)st;
    unsigned codes[] = { 401, 403 };
    for (size_t k = 0; k < 2; k++) {
        reset(VG_WIRE_MAX_BODY, VG_WIRE_MAX_EVENTS);
        front_start(codes[k], false);
        struct agent *a = agent_pair(fr.url, 2);
        snd_deliver(a, true);
        assert_int_equal(vg_spool_pending(a->spool), 2);
        assert_int_equal(fr.posts, 1);
        assert_int_equal(ctl.posts, 0);
        assert_int_equal(a->cur, 0);
        assert_int_equal(a->failovers, 0);
        assert_true(a->retry_at > 0);
        agent_free(a);
        front_stop();
    }
}

/* Sticky: once on the second, the agent stays there when the first recovers,
 * and goes back to the first only when the second fails in turn. */
static void test_failover_sticky(void **st)
{
    (void)st;
    reset(VG_WIRE_MAX_BODY, VG_WIRE_MAX_EVENTS);
    front_start(503, false);
    struct agent *a = agent_pair(fr.url, 1);
    snd_deliver(a, true);
    assert_int_equal(a->cur, 1);
    front_set(202);   /* the first recovers */
    for (int i = 2; i <= 4; i++) {
        struct vg_event e;
        make_event(&e, 100 + i);
        snd_queue(a, &e);
        snd_flush(a);
        snd_deliver(a, true);
    }
    assert_int_equal(fr.posts, 1);   /* none went back to it */
    assert_int_equal(ctl.norder, 4);
    ctl.unavailable = true;          /* now the second fails */
    struct vg_event e;
    make_event(&e, 200);
    snd_queue(a, &e);
    snd_flush(a);
    snd_deliver(a, true);
    assert_int_equal(vg_spool_pending(a->spool), 0);
    assert_int_equal(a->cur, 0);
    assert_int_equal(fr.posts, 2);
    assert_int_equal(ctl.seen[200], 1);   /* stored by the first */
    assert_int_equal(a->failovers, 2);
    agent_free(a);
    front_stop();
}

/* Both fail: one turn through the list, then the backoff. */
static void test_failover_all_down(void **st)
{
    (void)st;
    reset(VG_WIRE_MAX_BODY, VG_WIRE_MAX_EVENTS);
    front_start(503, false);
    ctl.unavailable = true;
    struct agent *a = agent_pair(fr.url, 2);
    snd_deliver(a, true);
    assert_int_equal(vg_spool_pending(a->spool), 2);
    assert_int_equal(fr.posts, 1);
    assert_int_equal(ctl.posts, 1);
    assert_int_equal(a->failed_posts, 2);
    assert_true(a->retry_at > 0);
    assert_int_equal(a->backoff_ms, 100);
    agent_free(a);
    front_stop();
}

/* The list: each URL checked, the bad one named; at most 8. */
static void test_controller_list(void **st)
{
    (void)st;
    struct agent a = { 0 };
    char err[256];
    assert_int_equal(ctl_init(&a, "http://a:1/, https://b:2/v1/events", err, sizeof err), 0);
    assert_int_equal(a.nctl, 2);
    assert_string_equal(a.ctl[0], "http://a:1");
    assert_string_equal(a.ctl[1], "https://b:2");
    assert_int_equal(ctl_init(&a, "https://b:2//v1/events/", err, sizeof err), 0);
    assert_string_equal(a.ctl[0], "https://b:2");
    assert_int_equal(ctl_init(&a, "http://a:1,http:///", err, sizeof err), -1);   /* no host */
    assert_non_null(strstr(err, "'http:///'"));
    assert_int_equal(ctl_init(&a, "http://a:1,ftp://b", err, sizeof err), -1);
    assert_non_null(strstr(err, "'ftp://b'"));
    assert_int_equal(ctl_init(&a, "http://a:1,", err, sizeof err), -1);
    assert_non_null(strstr(err, "empty"));
    assert_int_equal(ctl_init(&a, "http://a:1,http://a:1/", err, sizeof err), -1);
    assert_non_null(strstr(err, "twice"));
    assert_int_equal(ctl_init(&a, "http://h:1,http://h:2,http://h:3,http://h:4,http://h:5,http://h:6,http://h:7,"
                                  "http://h:8", err, sizeof err), 0);
    assert_int_equal(ctl_init(&a, "http://h:1,http://h:2,http://h:3,http://h:4,http://h:5,http://h:6,http://h:7,"
                                  "http://h:8,http://h:9", err, sizeof err), -1);
    assert_non_null(strstr(err, "more than 8"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_caps),
        cmocka_unit_test(test_refused_as_too_large),
        cmocka_unit_test(test_single_event_and_malformed),
        cmocka_unit_test(test_old_oversized_record),
        cmocka_unit_test(test_msg_split),
        cmocka_unit_test(test_largest_event),
        cmocka_unit_test(test_spool_cap),
        cmocka_unit_test(test_rewound_live_restore),
        cmocka_unit_test(test_failover_refused),
        cmocka_unit_test(test_failover_5xx),
        cmocka_unit_test(test_failover_hang),
        cmocka_unit_test(test_no_failover_on_refusal),
        cmocka_unit_test(test_failover_sticky),
        cmocka_unit_test(test_failover_all_down),
        cmocka_unit_test(test_controller_list),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
