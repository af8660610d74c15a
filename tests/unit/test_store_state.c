/* test_store_state.c — the incidents' states and what the executor keeps in
 * the store to resume after a restart (store_state.c), on a real SQLite file:
 * a store written before the state was an enum migrated (each free-text state
 * as state + detail, rows kept), the list a restarted executor works from, the
 * breaker's window read back from committed plans, a controller id made once,
 * and steps never recorded before an incident's latest (a wall clock stepped
 * back cannot make a duration negative in the store or the report). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "controller/accounting.h"
#include "controller/store.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include "helpers/store_target.h"

static char db[64], target[512];

static int setup(void **state)
{
    (void)state;
    strcpy(db, "/tmp/vigil-state-XXXXXX");
    int fd = mkstemp(db);
    if (fd < 0) return -1;
    close(fd);
    unlink(db);
    if (store_on_pg) store_target("", target, sizeof target);
    else snprintf(target, sizeof target, "%s", db);
    return store_target_reset();
}

static int teardown(void **state)
{
    (void)state;
    char p[96];
    unlink(db);
    snprintf(p, sizeof p, "%s-wal", db);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", db);
    unlink(p);
    return 0;
}

static struct vg_store *open_db(void)
{
    char err[256];
    struct vg_store *st;
    if (vg_store_open(target, &st, err, sizeof err)) fail_msg("%s", err);
    return st;
}

static int64_t accept(struct vg_store *st, const char *node, int64_t seq, int64_t now)
{
    struct vg_event e;
    vg_event_init(&e);
    vg_strlcpy(e.node, node, sizeof e.node);
    vg_strlcpy(e.kind, "xid", sizeof e.kind);
    e.code = 79;
    e.gpu = 0;
    e.action = VG_ACT_REBOOT;
    e.time_ms = e.seen_ms = now;
    int64_t id;
    bool is_new, dup;
    assert_int_equal(vg_store_accept(st, node, "", seq, 0, &e, now, 60000, &id, &is_new, &dup), 0);
    return id;
}

static void sh(const char *sql)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "sqlite3 %s \"%s\"", db, sql);
    assert_int_equal(system(cmd), 0);
}

/* A store written by the previous release: its free-text states become a
 * state and a detail; every row and step kept. */
static void test_migrates_free_text_states(void **state)
{
    (void)state;
    sh("CREATE TABLE incidents(id INTEGER PRIMARY KEY AUTOINCREMENT, node TEXT NOT NULL, key TEXT NOT NULL,"
       " kind TEXT NOT NULL, code INTEGER, pci TEXT, gpu INTEGER, action TEXT NOT NULL, count INTEGER NOT NULL,"
       " first INTEGER, last INTEGER, event TEXT NOT NULL, state TEXT NOT NULL, open INTEGER NOT NULL DEFAULT 1);"
       "CREATE TABLE steps(incident INTEGER NOT NULL, step TEXT NOT NULL, at INTEGER NOT NULL, detail TEXT,"
       " PRIMARY KEY(incident, step));"
       "INSERT INTO incidents(node, key, kind, action, count, event, state, open) VALUES"
       " ('n1', 'k', 'xid', 'reboot', 1, '{}', 'isolated: domain rule: r1 has 3 of 4 nodes unavailable (> 2)', 1),"
       " ('n2', 'k', 'xid', 'reboot', 1, '{}', 'held: breaker: 3 isolations', 1),"
       " ('n3', 'k', 'xid', 'reboot', 1, '{}', 'failed, retrying in 4 s (attempt 3): connect failure', 1),"
       " ('n4', 'k', 'xid', 'reboot', 1, '{}', 'health check failed, node stays isolated: false: failed', 1),"
       " ('n5', 'k', 'xid', 'reboot', 1, '{}', 'handed off for RMA (/x.json); repair failed', 1),"
       " ('n6', 'k', 'xid', 'ignore', 1, '{}', 'recorded: ignore: recorded only (below drain_at)', 1),"
       " ('n7', 'k', 'xid', 'reboot', 1, '{}', 'dry run: would drain (vigil: xid 79)', 1),"
       " ('n8', 'k', 'xid', 'reboot', 1, '{}', 'closed', 0),"
       " ('n9', 'k', 'xid', 'reboot', 1, '{}', 'isolated', 1);"
       "INSERT INTO steps VALUES (1, 'detected', 1000, 'kmsg'), (1, 'isolated', 2000, 'DOWN n1');");
    struct vg_store *st = open_db();
    static const char *const want[][3] = {
        { "n1", "isolated", "domain rule: r1 has 3 of 4 nodes unavailable (> 2)" },
        { "n2", "held", "breaker: 3 isolations" },
        { "n3", "failed", "retrying in 4 s (attempt 3): connect failure" },
        { "n4", "unrepaired", "health check failed, node stays isolated: false: failed" },
        { "n5", "rma", "handed off for RMA (/x.json); repair failed" },
        { "n6", "recorded", "ignore: recorded only (below drain_at)" },
        { "n7", "dry-run", "would drain (vigil: xid 79)" },
        { "n8", "closed", "" },
        { "n9", "isolated", "" },
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        json_t *inc = vg_store_incident(st, (int64_t)i + 1);
        assert_non_null(inc);
        assert_string_equal(vg_json_str(inc, "node", ""), want[i][0]);
        assert_string_equal(vg_json_str(inc, "state", ""), want[i][1]);
        assert_string_equal(vg_json_str(inc, "detail", "?"), want[i][2]);
        if (i == 0) assert_true(json_is_object(json_object_get(json_object_get(inc, "steps"), "isolated")));
        json_decref(inc);
    }
    vg_store_close(st);
    st = open_db();   /* a second open changes nothing */
    json_t *inc = vg_store_incident(st, 2);
    assert_string_equal(vg_json_str(inc, "detail", ""), "breaker: 3 isolations");
    json_decref(inc);
    vg_store_close(st);
}

/* `vigil report` on a store no controller has opened since: read as it is
 * (an empty detail), the file not written. */
static void test_old_store_read_only(void **state)
{
    (void)state;
    sh("CREATE TABLE incidents(id INTEGER PRIMARY KEY AUTOINCREMENT, node TEXT NOT NULL, key TEXT NOT NULL,"
       " kind TEXT NOT NULL, code INTEGER, pci TEXT, gpu INTEGER, action TEXT NOT NULL, count INTEGER NOT NULL,"
       " first INTEGER, last INTEGER, event TEXT NOT NULL, state TEXT NOT NULL, open INTEGER NOT NULL DEFAULT 1);"
       "CREATE TABLE steps(incident INTEGER NOT NULL, step TEXT NOT NULL, at INTEGER NOT NULL, detail TEXT,"
       " PRIMARY KEY(incident, step));"
       "INSERT INTO incidents(node, key, kind, action, count, event, state) VALUES"
       " ('n1', 'k', 'xid', 'reboot', 1, '{}', 'held: breaker: 3 isolations');"
       "INSERT INTO steps VALUES (1, 'detected', 1000, 'kmsg');");
    char err[256];
    struct vg_store *st;
    if (vg_store_open_reader(db, &st, err, sizeof err)) fail_msg("%s", err);
    json_t *all = vg_store_incidents(st, NULL, false, 0);
    assert_int_equal(json_array_size(all), 1);
    assert_string_equal(vg_json_str(json_array_get(all, 0), "state", ""), "held: breaker: 3 isolations");
    assert_string_equal(vg_json_str(json_array_get(all, 0), "detail", "?"), "");
    json_decref(all);
    vg_store_close(st);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "sqlite3 %s \"SELECT count(*) FROM pragma_table_info('incidents') WHERE name='detail'\" | grep -qx 0", db);
    assert_int_equal(system(cmd), 0);   /* not migrated by a reader */
}

/* What a restarted executor works from: the open incidents in a state it
 * resumes or watches, with the plan, the rung, a pending jobs read, the
 * attempts and the epoch; recorded, held and closed ones are not there. */
static void test_work_list(void **state)
{
    (void)state;
    struct vg_store *st = open_db();
    int64_t now = vg_now_ms();
    int64_t a = accept(st, "n1", 1, now), b = accept(st, "n2", 2, now), c = accept(st, "n3", 3, now),
            d = accept(st, "n4", 4, now), e = accept(st, "n5", 5, now);
    assert_int_equal(vg_store_set_plan(st, a, "{\"op\":\"down\",\"isolate\":[\"n1\",\"n2\"],\"promote\":[\"n9\"]}", now,
                                       "boot-x", 1234, "T1"), 0);
    assert_int_equal(vg_store_step(st, a, VG_STEP_ISOLATED, now, "DOWN"), 0);
    assert_int_equal(vg_store_set_rung(st, a, 2, true, "rung 3 of 3: power-cycle ok; health check"), 0);
    assert_int_equal(vg_store_set_jobs_unread(st, a, now - 5), 0);
    assert_int_equal(vg_store_set_failed(st, b, "retrying in 2 s (attempt 2): down", 2), 0);
    assert_int_equal(vg_store_set_state(st, c, VG_INC_HELD, "breaker"), 0);
    assert_int_equal(vg_store_set_state(st, d, VG_INC_CLOSED, NULL), 0);
    json_t *w = vg_store_work(st);
    assert_int_equal(json_array_size(w), 3);   /* a, b and e (open) */
    json_t *x = json_array_get(w, 0);
    assert_int_equal(vg_json_int(x, "id", 0), a);
    assert_string_equal(vg_json_str(x, "state", ""), "repairing");
    assert_int_equal(vg_json_int(x, "rung", -9), 2);
    assert_true(json_is_true(json_object_get(x, "rung_done")));
    assert_int_equal(vg_json_int(x, "jobs_unread", 0), now - 5);
    assert_string_equal(vg_json_str(x, "epoch", ""), "T1");
    assert_true(json_is_true(json_object_get(x, "took_out")));
    assert_string_equal(vg_json_str(json_object_get(x, "plan"), "op", ""), "down");
    x = json_array_get(w, 1);
    assert_string_equal(vg_json_str(x, "state", ""), "failed");
    assert_int_equal(vg_json_int(x, "attempts", 0), 2);
    assert_true(json_is_null(json_object_get(x, "plan")));
    assert_int_equal(vg_json_int(x, "rung", 0), -1);
    x = json_array_get(w, 2);
    assert_int_equal(vg_json_int(x, "id", 0), e);
    assert_string_equal(vg_json_str(x, "state", ""), "open");
    assert_false(json_is_true(json_object_get(x, "took_out")));
    json_decref(w);
    /* the breaker's window: the plan's nodes, with its boot clock; a failed plan is not counted */
    json_t *iso = vg_store_isolations_since(st, now - 1000);
    assert_int_equal(json_array_size(iso), 2);
    assert_string_equal(vg_json_str(json_array_get(iso, 0), "node", ""), "n1");
    assert_string_equal(vg_json_str(json_array_get(iso, 1), "node", ""), "n2");
    assert_string_equal(vg_json_str(json_array_get(iso, 1), "boot", ""), "boot-x");
    assert_int_equal(vg_json_int(json_array_get(iso, 1), "boot_ms", 0), 1234);
    json_decref(iso);
    iso = vg_store_isolations_since(st, now + 1);   /* outside the window */
    assert_int_equal(json_array_size(iso), 0);
    json_decref(iso);
    vg_store_close(st);
}

static void test_controller_id_kept(void **state)
{
    (void)state;
    struct vg_store *st = open_db();
    char a[16] = "", b[16] = "";
    assert_int_equal(vg_store_controller_id(st, a, sizeof a), 0);
    assert_int_equal(strlen(a), 8);
    vg_store_close(st);
    st = open_db();
    assert_int_equal(vg_store_controller_id(st, b, sizeof b), 0);
    assert_string_equal(a, b);
    vg_store_close(st);
}

/* A step stamped before the incident's latest (the wall clock went back 563 s
 * between the detection and the return) is recorded at the latest: MTTR is 0,
 * never -563 s; the report clamps what an older store holds. */
static void test_steps_never_go_back(void **state)
{
    (void)state;
    struct vg_store *st = open_db();
    int64_t now = vg_now_ms();
    int64_t id = accept(st, "n1", 1, now);
    assert_int_equal(vg_store_step(st, id, VG_STEP_ISOLATED, now + 1000, "DOWN"), 0);
    assert_int_equal(vg_store_step(st, id, VG_STEP_RETURNED, now - 563000, "to production"), 0);
    json_t *inc = vg_store_incident(st, id);
    json_t *steps = json_object_get(inc, "steps");
    int64_t detected = vg_json_get_time(json_object_get(steps, "detected"), "at"),
            returned = vg_json_get_time(json_object_get(steps, "returned"), "at");
    assert_int_equal(returned, now + 1000);
    assert_true(returned >= detected);
    json_t *all = json_pack("[o]", inc);
    struct vg_acct_opts o = { .since_ms = now - 3600000, .until_ms = now + 3600000 };
    json_t *doc = vg_accounting(all, &o);
    assert_true(json_real_value(json_object_get(doc, "mttr_s")) >= 0);
    json_decref(doc);
    /* an older store's backwards step: the report still says no negative figure */
    json_object_set_new(json_object_get(steps, "returned"), "at", vg_json_time(now - 563000));
    doc = vg_accounting(all, &o);
    assert_true(json_real_value(json_object_get(doc, "mttr_s")) >= 0);
    json_decref(doc);
    /* a report whose clock reads 563 s before the node went out: availability unknown, never 1 */
    struct vg_acct_opts behind = { .since_ms = now - 3600000, .until_ms = now - 563000, .until_now = true };
    json_object_del(json_object_get(json_array_get(all, 0), "steps"), "returned");
    doc = vg_accounting(all, &behind);
    assert_true(json_is_null(json_object_get(doc, "availability")));
    assert_true(json_real_value(json_object_get(doc, "clock_behind_s")) >= 563.0);
    json_decref(doc);
    json_decref(all);
    vg_store_close(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_migrates_free_text_states, setup, teardown),
        cmocka_unit_test_setup_teardown(test_old_store_read_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_work_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_controller_id_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_steps_never_go_back, setup, teardown),
    };
    const struct CMUnitTest on_pg[] = {   /* the same contract on PostgreSQL (a SQLite file's migration aside) */
        cmocka_unit_test_setup_teardown(test_work_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_controller_id_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_steps_never_go_back, setup, teardown),
    };
    int failed = cmocka_run_group_tests_name("store state", tests, NULL, NULL);
    store_on_pg = true;
    return failed + cmocka_run_group_tests_name("store state on PostgreSQL", on_pg, NULL, NULL);
}
