/* test_controller.c — the controller's store (real SQLite file), intake, and
 * HTTP API (real libmicrohttpd server on loopback, real libcurl client): who
 * a request may speak for (per-node tokens, the scheduler's nodes). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "wire/auth.h"
#include "wire/client.h"
#include "controller/commit.h"
#include "controller/httpapi.h"
#include "controller/ingest.h"
#include "controller/nodeset.h"
#include "controller/store.h"
#include "controller/store_int.h"
#include "helpers/fake_orch.h"
#include "helpers/store_target.h"
#include "util/sbuf.h"
#include "util/timeutil.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/vigil-ctl-XXXXXX");
    return mkdtemp(dir) && !store_target_reset() ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static struct vg_store *open_store(void)
{
    char path[512], err[256];
    store_target(dir, path, sizeof path);
    struct vg_store *st;
    if (vg_store_open(path, &st, err, sizeof err)) fail_msg("%s", err);
    return st;
}

static const char *msg79 =
    "{\"node\":\"n2\",\"seq\":7,\"events\":[{\"kind\":\"xid\",\"code\":79,\"pci\":\"0000:18:00.0\",\"gpu\":1,"
    "\"action\":\"drain-rma\",\"source\":\"kmsg\",\"time\":\"2026-11-29T10:00:00.000Z\","
    "\"raw\":\"NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.\"}]}";

static void test_store_fold_and_duplicates(void **state)
{
    (void)state;
    struct vg_store *st = open_store();
    struct vg_ingest in = { .store = st, .window_ms = 60000 };
    json_t *resp;
    int64_t now = vg_now_ms();
    assert_int_equal(vg_ingest_message(&in, msg79, now, &resp), 202);
    assert_int_equal(json_array_size(json_object_get(resp, "new")), 1);
    int64_t id = json_integer_value(json_array_get(json_object_get(resp, "incidents"), 0));
    json_decref(resp);
    /* The same delivery again (a spool retry): a duplicate, nothing new. */
    assert_int_equal(vg_ingest_message(&in, msg79, now + 5, &resp), 202);
    assert_int_equal(json_integer_value(json_object_get(resp, "duplicates")), 1);
    assert_int_equal(json_array_size(json_object_get(resp, "new")), 0);
    json_decref(resp);
    /* The same fault in a new message within the window folds into the incident. */
    char *again = strdup(msg79);
    memcpy(strstr(again, "\"seq\":7"), "\"seq\":8", 7);
    assert_int_equal(vg_ingest_message(&in, again, now + 10, &resp), 202);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(resp, "incidents"), 0)), id);
    json_decref(resp);
    free(again);
    assert_int_equal(vg_store_step(st, id, VG_STEP_ISOLATED, now + 100, "scontrol down"), 0);
    assert_int_equal(vg_store_step(st, id, VG_STEP_ISOLATED, now + 900, "again"), 0); /* first time wins */
    json_t *inc = vg_store_incident(st, id);
    assert_non_null(inc);
    assert_int_equal(json_integer_value(json_object_get(inc, "count")), 2);
    assert_string_equal(json_string_value(json_object_get(inc, "action")), "drain-rma");
    json_t *steps = json_object_get(inc, "steps");
    assert_true(json_is_object(json_object_get(steps, "detected")));
    assert_string_equal(json_string_value(json_object_get(json_object_get(steps, "isolated"), "detail")),
                        "scontrol down");
    assert_true(json_is_null(json_object_get(steps, "returned")));
    json_decref(inc);
    int64_t total, open, msgs;
    assert_int_equal(vg_store_counts(st, &total, &open, &msgs), 0);
    assert_int_equal(total, 1);
    assert_int_equal(msgs, 2);
    assert_int_equal(vg_store_set_state(st, id, VG_INC_CLOSED, NULL), 0);
    assert_int_equal(vg_store_counts(st, &total, &open, &msgs), 0);
    assert_int_equal(open, 0);
    vg_store_close(st);
    /* Reopened: everything is still there. */
    st = open_store();
    json_t *all = vg_store_incidents(st, "n2", false, 0);
    assert_int_equal(json_array_size(all), 1);
    json_decref(all);
    vg_store_close(st);
}

static int64_t accept_xid(struct vg_store *st, int64_t seq, int64_t first, int64_t last, int count, bool *is_new)
{
    struct vg_event e;
    vg_event_init(&e);
    strcpy(e.kind, "xid");
    e.code = 79;
    strcpy(e.pci, "0000:18:00.0");
    e.action = VG_ACT_REBOOT;
    e.time_ms = e.first_ms = first;
    e.last_ms = last;
    e.count = count;
    int64_t id;
    bool dup;
    assert_int_equal(vg_store_accept(st, "n2", "", seq, 0, &e, last + 100, 60000, &id, is_new, &dup), 0);
    assert_false(dup);
    return id;
}

/* Repeats from before the node's return (an agent's folded count, sent once
 * it learns of the return) join the closed incident instead of opening one
 * on a node just back in service; a repeat after the return opens a new one. */
static void test_store_repeats_before_return(void **state)
{
    (void)state;
    struct vg_store *st = open_store();
    const int64_t T = 1795000000000LL;
    bool is_new;
    int64_t id = accept_xid(st, 1, T, T, 1, &is_new);
    assert_true(is_new);
    assert_int_equal(vg_store_last_return(st, "n2"), 0);
    assert_int_equal(vg_store_step(st, id, VG_STEP_RETURNED, T + 30000, "back in service"), 0);
    assert_int_equal(vg_store_set_state(st, id, VG_INC_CLOSED, ""), 0);
    assert_int_equal(vg_store_last_return(st, "n2"), T + 30000);
    assert_int_equal(vg_store_last_return(st, "n9"), 0);
    /* two repeats while the node was out, counted after the return */
    assert_int_equal(accept_xid(st, 2, T, T + 5000, 2, &is_new), id);
    assert_false(is_new);
    json_t *inc = vg_store_incident(st, id);
    assert_int_equal(json_integer_value(json_object_get(inc, "count")), 3);
    assert_string_equal(json_string_value(json_object_get(inc, "state")), "closed");
    json_decref(inc);
    /* a repeat 1 s before the step, which a resume outside vigil can trail by
     * its reconcile period: maybe after the node was back, so a new incident */
    int64_t id2 = accept_xid(st, 3, T, T + 29000, 1, &is_new);
    assert_true(is_new);
    assert_true(id2 > id);
    assert_int_equal(vg_store_set_state(st, id2, VG_INC_CLOSED, ""), 0);
    /* the fold's count holding a repeat after the return: a new incident */
    int64_t id3 = accept_xid(st, 4, T, T + 31000, 1, &is_new);
    assert_true(is_new);
    assert_true(id3 > id2);
    /* and the next repeat joins that open one */
    assert_int_equal(accept_xid(st, 5, T + 32000, T + 32000, 1, &is_new), id3);
    assert_false(is_new);
    vg_store_close(st);
}

struct xid_spec {
    int gpu;
    int64_t first, last;
    int count;
};

/* XID 79 events of these GPUs, times and counts (GPU 0 by its PCI address). */
static void xid_events(struct vg_event *ev, const struct xid_spec *spec, int n)
{
    for (int i = 0; i < n; i++) {
        vg_event_init(&ev[i]);
        strcpy(ev[i].kind, "xid");
        ev[i].code = 79;
        if (!spec[i].gpu) strcpy(ev[i].pci, "0000:18:00.0");
        ev[i].gpu = spec[i].gpu;
        ev[i].time_ms = ev[i].first_ms = spec[i].first;
        ev[i].last_ms = spec[i].last;
        ev[i].count = spec[i].count;
    }
}

/* A closed incident of an XID 79 on node (its `returned` step at T + 30 s). */
static int64_t closed_xid(struct vg_store *st, const char *node, int64_t T)
{
    struct vg_event e;
    xid_events(&e, &(struct xid_spec){ 0, T, T, 1 }, 1);
    int64_t id;
    bool is_new, dup;
    assert_int_equal(vg_store_accept(st, node, "", 1, 0, &e, T + 100, 60000, &id, &is_new, &dup), 0);
    assert_int_equal(vg_store_step(st, id, VG_STEP_RETURNED, T + 30000, "back in service"), 0);
    assert_int_equal(vg_store_set_state(st, id, VG_INC_CLOSED, ""), 0);
    return id;
}

/* The n events as one message (seq) of node m, got[] what became of each,
 * and one by one of node e, whose store is the same so far: each event
 * fares alike, and afterwards every incident of the two nodes is alike. */
static void message_as_one_by_one(struct vg_store *st, const char *m, const char *e, int64_t seq,
                                  const struct vg_event *ev, int n, int64_t now, struct vg_accepted *got)
{
    assert_int_equal(vg_store_begin(st), 0);
    assert_int_equal(vg_store_accept_message(st, m, "", seq, ev, (size_t)n, now, 60000, got), 0);
    assert_int_equal(vg_store_commit(st), 0);
    int64_t ids[16];
    assert_true(n <= 16);
    for (int i = 0; i < n; i++) {
        bool is_new, dup;
        assert_int_equal(vg_store_accept(st, e, "", seq, i, &ev[i], now, 60000, &ids[i], &is_new, &dup), 0);
        assert_false(dup);
        assert_false(got[i].duplicate);
        assert_int_equal(got[i].is_new, is_new);
        for (int k = 0; k < i; k++) assert_int_equal(got[i].incident == got[k].incident, ids[i] == ids[k]);
    }
    json_t *mi = vg_store_incidents(st, m, false, 0), *ei = vg_store_incidents(st, e, false, 0);
    assert_int_equal(json_array_size(mi), json_array_size(ei));
    static const char *const fields[] = { "count", "first", "last", "state" };
    for (size_t i = 0; i < json_array_size(mi); i++)
        for (size_t f = 0; f < sizeof fields / sizeof *fields; f++)
            assert_true(json_equal(json_object_get(json_array_get(mi, i), fields[f]),
                                   json_object_get(json_array_get(ei, i), fields[f])));
    json_decref(mi);
    json_decref(ei);
}

/* A message's events, read once per key and written once per incident,
 * fold exactly as the same events accepted one by one: each sees what the
 * ones before it did (an incident one opened is joined by the next; a
 * repeat from before the node's return joins the closed incident), and the
 * message delivered again is all duplicates. */
static void test_store_message_folds_in_order(void **state)
{
    (void)state;
    struct vg_store *st = open_store();
    const int64_t T = 1795000000000LL;
    static const struct xid_spec spec[] = {
        { 0, T, T + 5000, 2 },            /* before the return: joins the closed incident */
        { 0, T + 31000, T + 31000, 1 },   /* after it: opens one */
        { 1, T + 31000, T + 31000, 1 },   /* another GPU: its own */
        { 0, T + 32000, T + 32000, 1 },   /* joins event 1's */
        { 1, T + 200000, T + 200000, 1 }, /* past the window of event 2's: a new one */
        { 0, T + 33000, T + 33000, 3 },   /* joins event 1's again */
        { 0, T + 1000, T + 6000, 1 },     /* from before the return, but one is open: joins that */
        { 1, T + 250000, T + 250000, 1 }, /* within the window of event 4's: joins it */
        { 1, T + 300000, T + 300000, 1 }, /* within the window of event 7, its last now: joins it */
    };
    enum { N = sizeof spec / sizeof *spec };
    struct vg_event ev[N];
    xid_events(ev, spec, N);
    int64_t closed = closed_xid(st, "m1", T);
    closed_xid(st, "e1", T);
    struct vg_accepted got[N], again[N];
    message_as_one_by_one(st, "m1", "e1", 2, ev, N, T + 400000, got);
    assert_int_equal(got[0].incident, closed);
    assert_true(got[1].is_new && got[2].is_new && got[4].is_new);
    assert_int_equal(got[3].incident, got[1].incident);
    assert_int_equal(got[5].incident, got[1].incident);
    assert_int_equal(got[6].incident, got[1].incident);
    assert_true(got[4].incident != got[2].incident);
    assert_int_equal(got[7].incident, got[4].incident);
    assert_int_equal(got[8].incident, got[4].incident);
    json_t *m = vg_store_incidents(st, "m1", false, 0);
    assert_int_equal(json_array_size(m), 4);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(m, 3), "count")), 1 + 2);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(m, 2), "count")), 1 + 1 + 3 + 1);
    json_decref(m);
    /* delivered again: all duplicates, the same incidents, nothing changed */
    int64_t total, open, msgs, total2, open2, msgs2;
    assert_int_equal(vg_store_counts(st, &total, &open, &msgs), 0);
    assert_int_equal(vg_store_begin(st), 0);
    assert_int_equal(vg_store_accept_message(st, "m1", "", 2, ev, N, T + 500000, 60000, again), 0);
    assert_int_equal(vg_store_commit(st), 0);
    for (int i = 0; i < N; i++) {
        assert_true(again[i].duplicate);
        assert_false(again[i].is_new);
        assert_int_equal(again[i].incident, got[i].incident);
    }
    assert_int_equal(vg_store_counts(st, &total2, &open2, &msgs2), 0);
    assert_int_equal(total2, total);
    assert_int_equal(msgs2, msgs);
    assert_int_equal(msgs, 2 + 2 * N);
    /* an open incident older than the closed one: the first event joins the
     * open one, the next, too late for it, the closed one (read only then) */
    static const struct xid_spec before[] = {
        { 0, T, T, 1 },                   /* opens A */
        { 0, T + 100000, T + 100000, 1 }, /* past A's window: opens B, closed below */
    };
    static const struct xid_spec then[] = {
        { 0, T + 10000, T + 10000, 1 },   /* joins A, the newest open one */
        { 0, T + 120000, T + 120000, 1 }, /* past A's window, within B's before its return: joins B */
    };
    struct vg_event ev2[2];
    const char *nodes[] = { "m2", "e2" };
    int64_t b[2];
    xid_events(ev2, before, 2);
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < 2; i++) {
            bool is_new, dup;
            assert_int_equal(vg_store_accept(st, nodes[k], "", 1, i, &ev2[i], T, 60000, &b[k], &is_new, &dup), 0);
            assert_true(is_new);
        }
        assert_int_equal(vg_store_step(st, b[k], VG_STEP_RETURNED, T + 200000, "back in service"), 0);
        assert_int_equal(vg_store_set_state(st, b[k], VG_INC_CLOSED, ""), 0);
    }
    xid_events(ev2, then, 2);
    message_as_one_by_one(st, "m2", "e2", 2, ev2, 2, T + 300000, got);
    assert_false(got[0].is_new || got[1].is_new);
    assert_true(got[0].incident != b[0]);
    assert_int_equal(got[1].incident, b[0]);
    vg_store_close(st);
}

static void test_ingest_rejects_bad_messages(void **state)
{
    (void)state;
    struct vg_store *st = open_store();
    struct vg_ingest in = { .store = st, .window_ms = 60000 };
    const char *bad[] = {
        "not json",
        "{\"seq\":1,\"events\":[{\"kind\":\"xid\"}]}",
        "{\"node\":\"n1\",\"seq\":-1,\"events\":[{\"kind\":\"xid\"}]}",
        "{\"node\":\"n1\",\"seq\":1,\"events\":[]}",
        "{\"node\":\"n1\",\"seq\":1,\"events\":[{\"kind\":\"xid\"},{\"code\":3}]}",
        "{\"node\":\"n1\",\"seq\":1,\"events\":[{\"kind\":\"xid\",\"action\":\"explode\"}]}",
    };
    const char *field[] = { "invalid JSON", "node", "seq", "events", "events[1]", "action" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *resp;
        assert_int_equal(vg_ingest_message(&in, bad[i], vg_now_ms(), &resp), 400);
        assert_non_null(strstr(json_string_value(json_object_get(resp, "error")), field[i]));
        json_decref(resp);
    }
    int64_t total, open, msgs;
    vg_store_counts(st, &total, &open, &msgs);
    assert_int_equal(total, 0); /* all or nothing: the half-valid message stored nothing */
    vg_store_close(st);
}

/* Item 1 of issue 14: a new spool life restarts seq at 1 and is new data. */
static void test_spool_identity(void **state)
{
    (void)state;
    struct vg_store *st = open_store();
    struct vg_ingest in = { .store = st, .window_ms = 0 };
    const char *fmt = "{\"node\":\"n1\",%s\"seq\":1,\"events\":[{\"kind\":\"xid\",\"code\":%d,\"gpu\":0}]}";
    char a[256], b[256], old[256];
    snprintf(a, sizeof a, fmt, "\"spool\":\"0123456789abcdef0123456789abcdef\",", 79);
    snprintf(b, sizeof b, fmt, "\"spool\":\"fedcba9876543210fedcba9876543210\",", 48);
    snprintf(old, sizeof old, fmt, "", 63);
    json_t *resp;
    assert_int_equal(vg_ingest_message(&in, a, vg_now_ms(), &resp), 202);
    json_decref(resp);
    assert_int_equal(vg_ingest_message(&in, b, vg_now_ms(), &resp), 202); /* same seq, new spool */
    assert_int_equal(json_integer_value(json_object_get(resp, "duplicates")), 0);
    assert_int_equal(json_array_size(json_object_get(resp, "new")), 1);
    json_decref(resp);
    assert_int_equal(vg_ingest_message(&in, old, vg_now_ms(), &resp), 202); /* no spool: spool "" */
    assert_int_equal(json_integer_value(json_object_get(resp, "duplicates")), 0);
    json_decref(resp);
    assert_int_equal(vg_ingest_message(&in, b, vg_now_ms(), &resp), 202); /* a redelivery */
    assert_int_equal(json_integer_value(json_object_get(resp, "duplicates")), 1);
    json_decref(resp);
    const char *bad = "{\"node\":\"n1\",\"spool\":\"XYZ\",\"seq\":1,\"events\":[{\"kind\":\"xid\"}]}";
    assert_int_equal(vg_ingest_message(&in, bad, vg_now_ms(), &resp), 400);
    assert_non_null(strstr(json_string_value(json_object_get(resp, "error")), "spool"));
    json_decref(resp);
    vg_store_close(st);
}

/* A store written before the spool id: the column is added, old rows kept
 * (spool ""), and an old agent's redelivery is still a duplicate. */
static void test_store_migration(void **state)
{
    (void)state;
    char path[128], cmd[512];
    snprintf(path, sizeof path, "%s/incidents.db", dir);
    snprintf(cmd, sizeof cmd,
             "sqlite3 %s \"CREATE TABLE messages(node TEXT NOT NULL, seq INTEGER NOT NULL, idx INTEGER NOT NULL,"
             " received INTEGER NOT NULL, incident INTEGER, PRIMARY KEY(node, seq, idx));"
             " INSERT INTO messages VALUES('n2', 7, 0, 1, 1);\"",
             path);
    assert_int_equal(system(cmd), 0);
    struct vg_store *st = open_store();
    struct vg_ingest in = { .store = st, .window_ms = 60000 };
    json_t *resp;
    assert_int_equal(vg_ingest_message(&in, msg79, vg_now_ms(), &resp), 202);
    assert_int_equal(json_integer_value(json_object_get(resp, "duplicates")), 1);
    json_decref(resp);
    int64_t total, open, msgs;
    assert_int_equal(vg_store_counts(st, &total, &open, &msgs), 0);
    assert_int_equal(msgs, 1);
    vg_store_close(st);
}

/* Items 10 and 11: fields validated at intake, never truncated, named in the answer. */
static void test_ingest_validates_fields(void **state)
{
    (void)state;
    struct vg_store *st = open_store();
    static const char *const kinds[] = { "xid", "gpu-lost" };
    struct vg_ingest in = { .store = st, .window_ms = 60000, .kinds = kinds, .nkinds = 2 };
    const char *bad[] = {
        "{\"node\":\"n1\\nvigil: forged\",\"seq\":1,\"events\":[{\"kind\":\"xid\"}]}",
        "{\"node\":\"n1\",\"seq\":1,\"events\":[{\"kind\":\"xid\\n\"}]}",
        "{\"node\":\"n1\",\"seq\":1,\"events\":[{\"kind\":\"xid\",\"pci\":\"0000:18:00.0\\t\"}]}",
        "{\"node\":\"n1\",\"seq\":1,\"events\":[{\"kind\":\"xid\",\"raw\":\"a\\r\"}]}",
        "{\"node\":\"n1\",\"seq\":1,\"events\":[{\"kind\":\"boom\"}]}",
        "{\"node\":\"n1\",\"seq\":1,\"events\":[{\"kind\":\"xidxidxidxidxidxidxid\\u00e9\\u00e9\"}]}",
        "{\"node\":\"n1\",\"seq\":1,\"events\":[{\"kind\":\"xid\",\"cause\":\"\\u0085\"}]}",
        "{\"node\":\"n/1\",\"seq\":1,\"events\":[{\"kind\":\"xid\"}]}",
        /* an option to any command that would take the name */
        "{\"node\":\"--help\",\"seq\":1,\"events\":[{\"kind\":\"xid\"}]}",
        /* a right-to-left override and a line separator: reorder or split what a terminal or page shows */
        "{\"node\":\"n1\",\"seq\":1,\"events\":[{\"kind\":\"xid\",\"raw\":\"NVRM: \u202e97 diX\"}]}",
        "{\"node\":\"n1\",\"seq\":1,\"events\":[{\"kind\":\"xid\",\"raw\":\"NVRM\u2028vigil: ALL NODES PATCHED\"}]}",
    };
    const char *field[] = { "'node'", "field 'kind': not printable", "field 'pci'", "field 'raw'",
                            "'boom' is not a kind the catalog knows", "field 'kind': 25 bytes is over the limit of 23",
                            "field 'cause'", "'node'", "'node'", "field 'raw': not printable",
                            "field 'raw': not printable" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *resp;
        assert_int_equal(vg_ingest_message(&in, bad[i], vg_now_ms(), &resp), 400);
        const char *e = json_string_value(json_object_get(resp, "error"));
        if (!strstr(e, field[i])) fail_msg("message %zu: '%s' does not name %s", i, e, field[i]);
        json_decref(resp);
    }
    /* Over VG_WIRE_MAX_EVENTS: the answer says which limit, with the figure. */
    struct sbuf big = SBUF_INIT;
    sbuf_puts(&big, "{\"node\":\"n1\",\"seq\":1,\"events\":[");
    for (int i = 0; i < 10001; i++) sbuf_puts(&big, i ? ",{\"kind\":\"xid\"}" : "{\"kind\":\"xid\"}");
    sbuf_puts(&big, "]}");
    json_t *resp;
    assert_int_equal(vg_ingest_message(&in, big.s, vg_now_ms(), &resp), 400);
    assert_string_equal(json_string_value(json_object_get(resp, "error")), "events: 10001 is over the limit of 10000");
    json_decref(resp);
    sbuf_free(&big);
    int64_t total, open, msgs;
    vg_store_counts(st, &total, &open, &msgs);
    assert_int_equal(total, 0);
    vg_store_close(st);
}

/* Item 9: the nonce cache stays exact over many requests, and forgets only
 * what is older than any time a request may carry. */
struct answers {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int n, accepted;
};

static void answered(void *arg, int code, json_t *resp)
{
    struct answers *a = arg;
    pthread_mutex_lock(&a->lock);
    a->n++;
    a->accepted += code == 202;
    pthread_cond_signal(&a->cond);
    pthread_mutex_unlock(&a->lock);
    json_decref(resp);
}

/* Group commit: messages that wait while the store is busy go out in one
 * transaction, and each is answered only once it is committed. */
static void test_group_commit(void **state)
{
    (void)state;
    char path[512], err[256];
    store_target(dir, path, sizeof path);
    struct vg_store *st = open_store(), *other = open_store(), *reader;
    assert_int_equal(vg_store_open_reader(path, &reader, err, sizeof err), 0);
    struct vg_ingest in = { .store = st, .window_ms = 60000 };
    struct vg_committer *c = vg_committer_start(&in);
    struct answers a = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
    enum { N = 100 };
    static struct vg_commit_req reqs[N];
    assert_int_equal(vg_store_begin(other), 0); /* another writer holds the lock for a while */
    for (int i = 0; i < N; i++) {
        char m[256];
        json_t *resp = NULL;
        snprintf(m, sizeof m, "{\"node\":\"g%d\",\"seq\":%d,\"events\":[{\"kind\":\"xid\",\"code\":79}]}", i % 7, i);
        assert_int_equal(vg_ingest_parse(&in, m, vg_now_ms(), &reqs[i].msg, &resp), 0);
        reqs[i].now = vg_now_ms();
        reqs[i].done = answered;
        reqs[i].arg = &a;
        vg_committer_submit(c, &reqs[i]);
    }
    pthread_mutex_lock(&a.lock);
    assert_int_equal(a.n, 0); /* nothing answered before it is committed */
    pthread_mutex_unlock(&a.lock);
    assert_int_equal(vg_store_commit(other), 0);
    pthread_mutex_lock(&a.lock);
    while (a.n < N) pthread_cond_wait(&a.cond, &a.lock);
    pthread_mutex_unlock(&a.lock);
    assert_int_equal(a.accepted, N);
    unsigned long msgs, commits, failures;
    vg_committer_counts(c, &msgs, &commits, &failures);
    assert_int_equal(msgs, N);
    assert_true(commits <= 3);
    assert_int_equal(failures, 0);
    int64_t total, open, stored;
    assert_int_equal(vg_store_counts(reader, &total, &open, &stored), 0); /* visible to another connection */
    assert_int_equal(stored, N);
    vg_committer_stop(c);
    vg_store_close(reader);
    vg_store_close(other);
    vg_store_close(st);
}

/* A message the database refuses (a trigger here) is answered 503 with
 * nothing of it stored, its first incident included; the others of its
 * batch are committed and acknowledged. */
static void test_group_commit_refused_message(void **state)
{
    (void)state;
    struct vg_store *st = open_store(), *other = open_store();
    assert_int_equal(st->drv->exec(st, store_on_pg
        ? "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.node = 'bad' THEN"
          " RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$;"
          " CREATE TRIGGER refuse BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION refuse()"
        : "CREATE TRIGGER refuse BEFORE INSERT ON messages WHEN NEW.node = 'bad'"
          " BEGIN SELECT RAISE(ABORT, 'refused'); END"), 0);
    struct vg_ingest in = { .store = st, .window_ms = 60000 };
    struct vg_committer *c = vg_committer_start(&in);
    struct answers a = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
    enum { N = 20, BAD = 7 };
    static struct vg_commit_req reqs[N];
    assert_int_equal(vg_store_begin(other), 0); /* all of them wait: one batch */
    for (int i = 0; i < N; i++) {
        char m[256], node[16];
        json_t *resp = NULL;
        if (i == BAD) strcpy(node, "bad");
        else snprintf(node, sizeof node, "g%d", i % 5);
        snprintf(m, sizeof m, "{\"node\":\"%s\",\"seq\":%d,\"events\":[{\"kind\":\"xid\",\"code\":79},"
                 "{\"kind\":\"xid\",\"code\":48}]}", node, i);
        assert_int_equal(vg_ingest_parse(&in, m, vg_now_ms(), &reqs[i].msg, &resp), 0);
        reqs[i].now = vg_now_ms();
        reqs[i].done = answered;
        reqs[i].arg = &a;
        vg_committer_submit(c, &reqs[i]);
    }
    assert_int_equal(vg_store_commit(other), 0);
    pthread_mutex_lock(&a.lock);
    while (a.n < N) pthread_cond_wait(&a.cond, &a.lock);
    pthread_mutex_unlock(&a.lock);
    assert_int_equal(a.accepted, N - 1);
    unsigned long msgs, commits, failures;
    vg_committer_counts(c, &msgs, &commits, &failures);
    assert_int_equal(msgs, N - 1);
    assert_int_equal(failures, 1);
    vg_committer_stop(c);
    int64_t total, open, stored;
    assert_int_equal(vg_store_counts(st, &total, &open, &stored), 0);
    assert_int_equal(stored, 2 * (N - 1));
    assert_int_equal(total, 5 * 2);   /* g0 … g4, two faults each */
    json_t *bad = vg_store_incidents(st, "bad", false, 0);
    assert_int_equal(json_array_size(bad), 0);
    json_decref(bad);
    vg_store_close(other);
    vg_store_close(st);
}

static const char *write_file(const char *name, const char *text)
{
    static char path[2][128];
    static int k;
    char *p = path[k++ % 2];
    snprintf(p, 128, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    fprintf(f, "%s\n", text);
    fclose(f);
    chmod(p, 0600);
    return p;
}

#define SECRET "s3cret-s3cret-s3cret-s3cret-s3cret"

/* A client speaking for node with the token derived for as (node's own, or another's). */
static void client_for(struct vg_auth *a, const char *node, const char *as)
{
    char tok[65], err[256], name[80];
    assert_int_equal(vg_auth_node_token(SECRET, as, tok, err, sizeof err), 0);
    snprintf(name, sizeof name, "%s.token", node);
    assert_int_equal(vg_auth_init(a, &(struct vg_auth_conf){ .mode = "token", .node = node,
                                                             .token_file = write_file(name, tok) }, err, sizeof err), 0);
}

/* The server's token auth on the cluster secret, and n2's agent speaking for itself. */
static void token_auths(struct vg_auth *server, struct vg_auth *n2)
{
    char err[256];
    assert_int_equal(vg_auth_init(server, &(struct vg_auth_conf){ .mode = "token",
                                                                  .secret_file = write_file("secret", SECRET) },
                                  err, sizeof err), 0);
    client_for(n2, "n2", "n2");
}

static long post(unsigned port, struct vg_auth *a, const char *json, char **resp)
{
    char url[128], err[256];
    long status = 0;
    snprintf(url, sizeof url, "http://127.0.0.1:%u/v1/events", port);
    assert_int_equal(vg_client_post(url, a, json, 5000, &status, resp, err, sizeof err), 0);
    return status;
}

static const char *msg_n3 = "{\"node\":\"n3\",\"seq\":1,\"events\":[{\"kind\":\"xid\",\"code\":79}]}";

static void test_http_api(void **state)
{
    (void)state;
    char err[256], url[128];
    struct vg_auth server_auth, client_auth, bad_auth, thief_auth, ghost_auth;
    token_auths(&server_auth, &client_auth);
    memcpy(&bad_auth, &client_auth, sizeof bad_auth);
    strcpy(bad_auth.token, "not-the-right-token");
    client_for(&thief_auth, "n1", "n1");   /* n1's own credential, sending n2's message */
    client_for(&ghost_auth, "n3", "n3");   /* a valid token for a node the scheduler does not list */
    /* the scheduler lists n1 and n2 */
    fake_reset();
    fake_add_node("n1", NULL);
    fake_add_node("n2", NULL);
    struct vg_nodeset *ns = vg_nodeset_start(vg_orch_open_ops(&fake_orch_ops, NULL, err, sizeof err), 0, 0);
    assert_true(vg_nodeset_wait(ns, 5000));
    struct vg_store *st = open_store();
    struct vg_ingest in = { .store = st, .window_ms = 60000 };
    struct vg_http_opts ho = { .listen = "127.0.0.1:0", .read_token = "read-token-read-token", .nodes = ns };
    struct vg_http *h = vg_http_start(&ho, &server_auth, &in, err, sizeof err);
    assert_non_null(h);
    unsigned port = vg_http_port(h);
    assert_true(port > 0);
    long status;
    char *resp;
    assert_int_equal(post(port, &bad_auth, msg79, &resp), 401);
    free(resp);
    assert_int_equal(post(port, &thief_auth, msg79, &resp), 403);
    assert_string_equal(resp, "{\"error\":\"node: 'n2' is not the sender's node (n1): a node speaks only for itself\"}");
    free(resp);
    assert_int_equal(post(port, &ghost_auth, msg_n3, &resp), 403);
    assert_string_equal(resp, "{\"error\":\"node: 'n3' is not a node the scheduler lists\"}");
    free(resp);
    assert_int_equal(post(port, &client_auth, msg79, &resp), 202);
    free(resp);
    assert_int_equal(post(port, &client_auth, "{\"node\":1}", &resp), 400);
    free(resp);
    snprintf(url, sizeof url, "http://127.0.0.1:%u/v1/incidents?node=n2", port);
    /* Reads need the read token; the agents' token does not grant them. */
    assert_int_equal(vg_client_get(url, NULL, 5000, &status, &resp, err, sizeof err), 0);
    assert_int_equal(status, 401);
    free(resp);
    assert_int_equal(vg_client_get(url, client_auth.token, 5000, &status, &resp, err, sizeof err), 0);
    assert_int_equal(status, 401);
    free(resp);
    assert_int_equal(vg_client_get(url, ho.read_token, 5000, &status, &resp, err, sizeof err), 0);
    assert_int_equal(status, 200);
    json_t *arr = json_loads(resp, 0, NULL);
    free(resp);
    assert_int_equal(json_array_size(arr), 1);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(arr, 0), "code")), 79);
    json_decref(arr);
    snprintf(url, sizeof url, "http://127.0.0.1:%u/metrics", port);
    assert_int_equal(vg_client_get(url, ho.read_token, 5000, &status, &resp, err, sizeof err), 0);
    assert_non_null(strstr(resp, "vigil_incidents_total 1\n"));
    assert_non_null(strstr(resp, "vigil_rejected_total{reason=\"auth\"} 3\n"));
    assert_non_null(strstr(resp, "vigil_rejected_total{reason=\"identity\"} 2\n"));
    assert_non_null(strstr(resp, "vigil_auth_nonce_windows 2\n"));   /* n1's and n2's: not the ghost's */
    free(resp);
    snprintf(url, sizeof url, "http://127.0.0.1:%u/v1/nodes", port);
    assert_int_equal(vg_client_get(url, ho.read_token, 5000, &status, &resp, err, sizeof err), 0);
    assert_non_null(strstr(resp, "\"worst_open_action\":\"drain-rma\""));
    free(resp);
    snprintf(url, sizeof url, "http://127.0.0.1:%u/healthz", port);
    assert_int_equal(vg_client_get(url, NULL, 5000, &status, &resp, err, sizeof err), 0);
    assert_int_equal(status, 200); /* open to all */
    free(resp);
    snprintf(url, sizeof url, "http://127.0.0.1:%u/nope", port);
    assert_int_equal(vg_client_get(url, ho.read_token, 5000, &status, &resp, err, sizeof err), 0);
    assert_int_equal(status, 404);
    free(resp);
    vg_http_stop(h);
    /* Nothing listens any more: the client says so instead of hanging. */
    snprintf(url, sizeof url, "http://127.0.0.1:%u/v1/events", port);
    assert_int_equal(vg_client_post(url, &client_auth, msg79, 2000, &status, &resp, err, sizeof err), -1);
    vg_nodeset_stop(ns);
    vg_store_close(st);
    vg_auth_free(&server_auth);
    vg_auth_free(&client_auth);
    vg_auth_free(&thief_auth);
    vg_auth_free(&ghost_auth);
}

/* GET url with the read token: its status; *n the array's length, or the error in err. */
static long read_incidents(unsigned port, const char *query, const char *token, size_t *n, char *errbuf, size_t len)
{
    char url[256], err[256], *resp = NULL;
    long status = 0;
    snprintf(url, sizeof url, "http://127.0.0.1:%u/v1/incidents?%s", port, query);
    assert_int_equal(vg_client_get(url, token, 5000, &status, &resp, err, sizeof err), 0);
    json_t *j = json_loads(resp, 0, NULL);
    *n = json_is_array(j) ? json_array_size(j) : 0;
    snprintf(errbuf, len, "%s", json_is_object(j) ? json_string_value(json_object_get(j, "error")) : "");
    json_decref(j);
    free(resp);
    return status;
}

/* /v1/incidents narrowed by kind, code, pci and gpu (with node, open and the
 * cursor); a bad filter is a 400 naming its field. */
static void test_http_incident_filters(void **state)
{
    (void)state;
    char err[256];
    struct vg_auth server_auth, client_auth;
    token_auths(&server_auth, &client_auth);
    fake_reset();
    fake_add_node("n2", NULL);
    struct vg_nodeset *ns = vg_nodeset_start(vg_orch_open_ops(&fake_orch_ops, NULL, err, sizeof err), 0, 0);
    assert_true(vg_nodeset_wait(ns, 5000));
    struct vg_store *st = open_store();
    static const char *const kinds[] = { "xid", "ecc-dbe" };
    struct vg_ingest in = { .store = st, .window_ms = 60000, .kinds = kinds, .nkinds = 2 };
    struct vg_http_opts ho = { .listen = "127.0.0.1:0", .read_token = "read-token-read-token", .nodes = ns };
    struct vg_http *h = vg_http_start(&ho, &server_auth, &in, err, sizeof err);
    assert_non_null(h);
    unsigned port = vg_http_port(h);
    char *resp;
    assert_int_equal(post(port, &client_auth,
                          "{\"node\":\"n2\",\"seq\":1,\"events\":["
                          "{\"kind\":\"xid\",\"code\":79,\"pci\":\"0000:3b:00.0\",\"gpu\":1},"
                          "{\"kind\":\"xid\",\"code\":48,\"pci\":\"0000:5e:00.0\",\"gpu\":2},"
                          "{\"kind\":\"ecc-dbe\",\"pci\":\"0000:5e:00.0\",\"gpu\":2}]}",
                          &resp),
                     202);
    json_t *answer = json_loads(resp, 0, NULL), *ids = json_object_get(answer, "incidents");   /* one per event */
    free(resp);
    char below3[96], below2[96];   /* the cursor: the two at 0000:5e:00.0, one page each */
    snprintf(below3, sizeof below3, "pci=0000:5e:00.0&limit=1&before=%lld", (long long)json_integer_value(json_array_get(ids, 2)));
    snprintf(below2, sizeof below2, "pci=0000:5e:00.0&limit=1&before=%lld", (long long)json_integer_value(json_array_get(ids, 1)));
    json_decref(answer);
    const struct { const char *query; size_t n; } ok[] = {
        { "code=79", 1 },           { "code=13", 0 },        { "kind=ecc-dbe", 1 },
        { "kind=xid", 2 },          { "pci=0000:5e:00.0", 2 }, { "pci=0000:5E:00.0", 0 },
        { "gpu=2&kind=xid", 1 },    { "gpu=0", 0 },          { "node=n2&open=1&code=48&gpu=2&pci=0000:5e:00.0", 1 },
        { below3, 1 },              { below2, 0 },
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        size_t n;
        assert_int_equal(read_incidents(port, ok[i].query, ho.read_token, &n, err, sizeof err), 200);
        if (n != ok[i].n) fail_msg("%s: %zu incidents, expected %zu", ok[i].query, n, ok[i].n);
    }
    static const struct { const char *query, *error; } bad[] = {
        { "kind=boom", "kind: not a kind the catalog knows" },
        { "code=x79", "code: must be an integer from 0" },
        { "code=-1", "code: must be an integer from 0" },
        { "gpu=", "gpu: must be an integer from 0" },
        { "pci=0000:3b:00.0%27", "pci: not a PCI address (0000:3b:00.0)" },
        { "pci=0000:3b:00.0:00.0", "pci: not a PCI address (0000:3b:00.0)" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t n;
        assert_int_equal(read_incidents(port, bad[i].query, ho.read_token, &n, err, sizeof err), 400);
        assert_string_equal(err, bad[i].error);
    }
    vg_http_stop(h);
    vg_nodeset_stop(ns);
    vg_store_close(st);
    vg_auth_free(&server_auth);
    vg_auth_free(&client_auth);
}

/* The scheduler cannot be read: nothing is taken on a guess (503, retry),
 * and a node added to the scheduler is heard once the list is read again. */
static void test_http_scheduler_unread(void **state)
{
    (void)state;
    char err[256];
    struct vg_auth server_auth, client_auth;
    token_auths(&server_auth, &client_auth);
    fake_reset();
    fake.down = true;
    fake_add_node("n2", NULL);
    struct vg_nodeset *ns = vg_nodeset_start(vg_orch_open_ops(&fake_orch_ops, NULL, err, sizeof err), 0, 0);
    assert_false(vg_nodeset_wait(ns, 100));
    struct vg_store *st = open_store();
    struct vg_ingest in = { .store = st, .window_ms = 60000 };
    struct vg_http_opts ho = { .listen = "127.0.0.1:0", .nodes = ns };
    struct vg_http *h = vg_http_start(&ho, &server_auth, &in, err, sizeof err);
    assert_non_null(h);
    char *resp;
    assert_int_equal(post(vg_http_port(h), &client_auth, msg79, &resp), 503);
    assert_non_null(strstr(resp, "scheduler: its node list is not read yet"));
    free(resp);
    vg_http_stop(h);
    vg_nodeset_stop(ns);
    vg_store_close(st);
    vg_auth_free(&server_auth);
    vg_auth_free(&client_auth);
}

/* The one decision of whether a request may name a node: a node name, the
 * sender's own, one the scheduler lists (a node added since the last read is
 * found by the read its miss starts); with no scheduler, any node name. */
static void test_nodeset_may_name(void **state)
{
    (void)state;
    char err[256];
    fake_reset();
    fake_add_node("n1", NULL);
    fake_add_node("n2", NULL);
    struct vg_nodeset *ns = vg_nodeset_start(vg_orch_open_ops(&fake_orch_ops, NULL, err, sizeof err), 0, 1);
    assert_true(vg_nodeset_wait(ns, 5000));
    assert_int_equal(vg_nodeset_may_name(ns, "node", "n2", "n2", err, sizeof err), 0);
    assert_int_equal(vg_nodeset_may_name(ns, "node", "n2", NULL, err, sizeof err), 0);
    assert_int_equal(vg_nodeset_may_name(ns, "nodes[1].node", "n2", "n1", err, sizeof err), 403);
    assert_string_equal(err, "nodes[1].node: 'n2' is not the sender's node (n1): a node speaks only for itself");
    assert_int_equal(vg_nodeset_may_name(ns, "node", "ghost1", NULL, err, sizeof err), 403);
    assert_string_equal(err, "node: 'ghost1' is not a node the scheduler lists");
    assert_int_equal(vg_nodeset_may_name(ns, "node", "--help", "n1", err, sizeof err), 400);
    assert_string_equal(err, "node: missing or not a node name");
    assert_int_equal(vg_nodeset_may_name(ns, "node", NULL, NULL, err, sizeof err), 400);
    assert_true(vg_nodeset_refresh(ns, 5000));   /* the read ghost1's miss asked for is over */
    uint64_t gen = vg_nodeset_generation(ns);
    fake_add_node("n3", NULL);   /* added to the scheduler: its first message is heard */
    struct timespec ms2 = { 0, 2000000 };
    nanosleep(&ms2, NULL);       /* past the miss interval (1 ms here) */
    assert_int_equal(vg_nodeset_may_name(ns, "node", "n3", "n3", err, sizeof err), 0);
    assert_true(vg_nodeset_generation(ns) != gen);
    assert_int_equal(vg_nodeset_count(ns), 3);
    char **names;
    long n = vg_nodeset_names(ns, &names, NULL);
    assert_int_equal(n, 3);
    assert_string_equal(names[2], "n3");
    vg_nodeset_names_free(names, n);
    vg_nodeset_stop(ns);
    assert_int_equal(vg_nodeset_may_name(NULL, "node", "anything", NULL, err, sizeof err), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_store_fold_and_duplicates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_repeats_before_return, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_message_folds_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ingest_rejects_bad_messages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spool_identity, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_migration, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ingest_validates_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_group_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_group_commit_refused_message, setup, teardown),
        cmocka_unit_test_setup_teardown(test_http_api, setup, teardown),
        cmocka_unit_test_setup_teardown(test_http_scheduler_unread, setup, teardown),
        cmocka_unit_test_setup_teardown(test_http_incident_filters, setup, teardown),
        cmocka_unit_test(test_nodeset_may_name),
    };
    /* the store's contract on PostgreSQL: the same tests (a SQLite file's
     * migration aside) */
    const struct CMUnitTest on_pg[] = {
        cmocka_unit_test_setup_teardown(test_store_fold_and_duplicates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_repeats_before_return, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_message_folds_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ingest_rejects_bad_messages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spool_identity, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ingest_validates_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_group_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_group_commit_refused_message, setup, teardown),
        cmocka_unit_test_setup_teardown(test_http_api, setup, teardown),
        cmocka_unit_test_setup_teardown(test_http_scheduler_unread, setup, teardown),
        cmocka_unit_test_setup_teardown(test_http_incident_filters, setup, teardown),
    };
    int failed = cmocka_run_group_tests_name("controller", tests, NULL, NULL);
    store_on_pg = true;
    return failed + cmocka_run_group_tests_name("controller on PostgreSQL", on_pg, NULL, NULL);
}
