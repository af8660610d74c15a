/* test_election.c — the controllers' lease on a real PostgreSQL server
 * (tests/run starts one): one leader of two, a follower taking a lapsed
 * lease with the next term, the old leader told it lost, a plan committed
 * under a stale term refused (the fence) and one under the current term
 * kept, and a resigning leader's lease passing at once. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "controller/election.h"
#include "controller/store_int.h"
#include "core/event.h"
#include "helpers/store_target.h"
#include "util/strutil.h"
#include "util/timeutil.h"

struct seen {
    int leads, losts;
    int64_t term;
};

static void on_lead(void *ctx, int64_t term)
{
    struct seen *s = ctx;
    __atomic_add_fetch(&s->leads, 1, __ATOMIC_SEQ_CST);
    __atomic_store_n(&s->term, term, __ATOMIC_SEQ_CST);
}

static void on_lost(void *ctx, int64_t term, const char *why)
{
    (void)term;
    (void)why;
    __atomic_add_fetch(&((struct seen *)ctx)->losts, 1, __ATOMIC_SEQ_CST);
}

static char target[512];

static int setup(void **state)
{
    (void)state;
    store_on_pg = true;
    store_target("", target, sizeof target);
    return store_target_reset();
}

static struct vg_election *elect(const char *url, struct seen *s)
{
    char err[256];
    struct vg_election *e = vg_election_start(&(struct vg_election_opts){ .target = target, .url = url, .lease_ms = 900,
                                                                          .renew_ms = 200, .margin_ms = 300,
                                                                          .on_lead = on_lead, .on_lost = on_lost, .ctx = s },
                                              err, sizeof err);
    if (!e) fail_msg("%s", err);
    return e;
}

static bool wait_until(bool (*cond)(void *), void *arg, int ms)
{
    for (int64_t end = vg_mono_ms() + ms; vg_mono_ms() < end; vg_sleep_ms(10))
        if (cond(arg)) return true;
    return false;
}

static bool leading(void *e) { return vg_election_leading(e, NULL); }
static bool lost_once(void *s) { return __atomic_load_n(&((struct seen *)s)->losts, __ATOMIC_SEQ_CST) > 0; }

static int64_t one_incident(struct vg_store *st)
{
    struct vg_event e;
    vg_event_init(&e);
    vg_strlcpy(e.node, "n1", sizeof e.node);
    vg_strlcpy(e.kind, "xid", sizeof e.kind);
    e.code = 79;
    e.action = VG_ACT_DRAIN_RMA;
    int64_t id;
    bool fresh, dup;
    assert_int_equal(vg_store_accept(st, "n1", "", 1, 0, &e, vg_now_ms(), 60000, &id, &fresh, &dup), 0);
    return id;
}

static void test_one_leader_fenced_takeover(void **state)
{
    (void)state;
    struct seen sa = { 0 }, sb = { 0 };
    struct vg_election *a = elect("http://a", &sa);
    assert_true(wait_until(leading, a, 5000));
    struct vg_election *b = elect("http://b", &sb);
    vg_sleep_ms(500);   /* more than two of b's looks */
    assert_false(vg_election_leading(b, NULL));
    char role[16], url[64];
    int64_t term;
    vg_election_role(b, role, sizeof role, &term, url, sizeof url);
    assert_string_equal(role, "follower");
    assert_string_equal(url, "http://a");
    assert_int_equal(term, 1);

    char err[256];
    struct vg_store *st;
    if (vg_store_open(target, &st, err, sizeof err)) fail_msg("%s", err);
    int64_t id = one_incident(st);
    vg_store_fence(st, vg_election_holder(a), 1);
    if (vg_store_set_plan(st, id, "{\"op\":\"down\"}", 1, "boot", 1, NULL)) fail_msg("%s", vg_store_error(st));

    /* the lease made to lapse (a clock jump, a hand edit): b takes it with term 2 */
    assert_int_equal(vg_store_run(st, vg_store_prep(st, "UPDATE leader SET expires_at = now() - interval '1 second'", "")), 0);
    assert_true(wait_until(lost_once, &sa, 5000));   /* a hears it at its next renewal */
    assert_false(vg_election_leading(a, NULL));
    /* b takes it (a, which lost it, gives way for a lease): term 2, or 3 when a
     * claimed its own lapsed lease first (and stopped: its term changed) */
    assert_true(wait_until(leading, b, 5000));
    int64_t tb = __atomic_load_n(&sb.term, __ATOMIC_SEQ_CST);
    assert_true(tb == 2 || tb == 3);

    /* a's late decision under term 1 is refused; b's under term 2 is kept */
    assert_int_equal(vg_store_set_state(st, id, VG_INC_OPEN, NULL), 0);
    assert_int_equal(vg_store_set_plan(st, id, "{\"op\":\"stale\"}", 2, "boot", 2, NULL), -1);
    assert_true(vg_store_fenced(st));
    json_t *inc = vg_store_incident(st, id);
    assert_string_equal(json_string_value(json_object_get(inc, "state")), "open");
    json_decref(inc);
    vg_store_fence(st, vg_election_holder(b), tb);
    assert_int_equal(vg_store_set_plan(st, id, "{\"op\":\"down\"}", 3, "boot", 3, NULL), 0);
    assert_false(vg_store_fenced(st));
    inc = vg_store_incident(st, id);
    assert_string_equal(json_string_value(json_object_get(inc, "state")), "acting");
    json_decref(inc);

    /* b resigns: a (still electing) takes the lease at its next look, the term one higher */
    vg_election_free(b);
    assert_true(wait_until(leading, a, 2000));
    assert_int_equal(__atomic_load_n(&sa.term, __ATOMIC_SEQ_CST), tb + 1);
    assert_int_equal(sb.losts, 0);   /* resigning is not losing */
    vg_election_free(a);
    vg_store_close(st);
}

/* a lease no longer than a renewal and the margin is refused */
static void test_bad_timings(void **state)
{
    (void)state;
    char err[256] = "";
    assert_null(vg_election_start(&(struct vg_election_opts){ .target = target, .lease_ms = 1000, .renew_ms = 600,
                                                              .margin_ms = 400 },
                                  err, sizeof err));
    assert_non_null(strstr(err, "must be longer"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_one_leader_fenced_takeover, setup),
        cmocka_unit_test_setup(test_bad_timings, setup),
    };
    return cmocka_run_group_tests_name("election on PostgreSQL", tests, NULL, NULL);
}
