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
 * its reused seqs in a real controller's answer and sends its fault as new. */
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
    } else if (ctl.refuse_malformed || !n) {
        r = answer(c, 400, "{\"error\":\"message: events[0]: field 'kind': missing\"}");
    } else {
        const char *sp = json_string_value(json_object_get(m, "spool"));
        if (!sp || strcmp(sp, ctl.spool)) ctl.other_spool = true;
        ctl.told += json_integer_value(json_object_get(m, "dropped"));
        for (size_t i = 0; i < n; i++) {
            json_int_t g = json_integer_value(json_object_get(json_array_get(events, i), "gpu"));
            if (g >= 0 && g < (json_int_t)sizeof ctl.seen) ctl.seen[g]++;
        }
        ctl.accepted++;
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
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
