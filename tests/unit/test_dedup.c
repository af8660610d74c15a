/* test_dedup.c — incident folding within the window, causal links from the
 * catalog's caused_by column (45 after 149, 154 after anything, 79 after an
 * AER fatal), no link across GPUs or outside the window, the storm guard,
 * and the folds closed when the node is returned to service. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include "catalog/catalog.h"
#include "catalog/dedup.h"
#include "util/strutil.h"

static struct vg_catalog *cat;
static struct vg_event out[64];
static int nout;

static void collect(const struct vg_event *e, void *arg)
{
    (void)arg;
    if (nout < 64) out[nout] = *e;
    nout++;
}

static int setup(void **s)
{
    (void)s;
    char err[256];
    cat = vg_catalog_load(NULL, err, sizeof err);
    return cat ? 0 : -1;
}

static int teardown(void **s)
{
    (void)s;
    vg_catalog_free(cat);
    return 0;
}

static struct vg_event mk(const char *kind, int code, const char *pci, int64_t t)
{
    struct vg_event e;
    vg_event_init(&e);
    vg_strlcpy(e.kind, kind, sizeof e.kind);
    e.code = code;
    vg_strlcpy(e.pci, pci, sizeof e.pci);
    e.time_ms = t;
    snprintf(e.raw, sizeof e.raw, "%s %d", kind, code);
    vg_catalog_classify(cat, &e);
    return e;
}

static const int64_t T0 = 1732528800000LL; /* 2024-11-25T10:00:00Z */

static void test_fold_window(void **s)
{
    (void)s;
    nout = 0;
    struct vg_dedup_opts o = { 60000, 0, 0 };
    struct vg_dedup *d = vg_dedup_new(&o, cat, collect, NULL);
    for (int i = 0; i < 5; i++) {
        struct vg_event e = mk("xid", 119, "0000:9b:00.0", T0 + i * 6000);
        vg_dedup_add(d, &e);
    }
    struct vg_event other = mk("xid", 119, "0000:3b:00.0", T0 + 1000); /* another GPU: its own incident */
    vg_dedup_add(d, &other);
    struct vg_event late = mk("xid", 119, "0000:9b:00.0", T0 + 24000 + 61000); /* past the window */
    vg_dedup_add(d, &late);
    vg_dedup_finish(d);
    assert_int_equal(nout, 3);
    assert_string_equal(out[0].pci, "0000:9b:00.0");
    assert_int_equal(out[0].count, 5);
    assert_int_equal(out[0].first_ms, T0);
    assert_int_equal(out[0].last_ms, T0 + 24000);
    assert_int_equal(out[1].count, 1);
    assert_string_equal(out[1].pci, "0000:3b:00.0");
    assert_int_equal(out[2].count, 1);
    assert_int_equal(out[2].first_ms, T0 + 85000);
    const struct vg_dedup_stats *st = vg_dedup_stats(d);
    assert_int_equal(st->in, 7);
    assert_int_equal(st->folded, 4);
    assert_int_equal(st->emitted, 3);
    vg_dedup_free(d);
}

static void test_causal_links(void **s)
{
    (void)s;
    nout = 0;
    struct vg_dedup *d = vg_dedup_new(NULL, cat, collect, NULL);
    struct vg_event a = mk("xid", 149, "0000:18:00.0", T0);
    struct vg_event b = mk("xid", 45, "0000:18:00.0", T0 + 2000);
    struct vg_event c = mk("xid", 45, "0000:19:00.0", T0 + 2000);     /* other GPU: no cause */
    struct vg_event f = mk("aer-fatal", -1, "0000:3b:00.0", T0 + 3000);
    struct vg_event g = mk("xid", 79, "0000:3b:00.0", T0 + 3500);
    struct vg_event h = mk("xid", 154, "0000:3b:00.0", T0 + 4000);
    struct vg_event x = mk("xid", 13, "0000:3b:00.0", T0 + 4500);    /* 13 has no caused_by */
    vg_dedup_add(d, &a);
    vg_dedup_add(d, &b);
    vg_dedup_add(d, &c);
    vg_dedup_add(d, &f);
    vg_dedup_add(d, &g);
    vg_dedup_add(d, &h);
    vg_dedup_add(d, &x);
    vg_dedup_finish(d);
    assert_int_equal(nout, 7);
    assert_string_equal(out[0].cause, "");
    assert_string_equal(out[1].cause, "xid:149@0000:18:00.0");
    assert_string_equal(out[2].cause, "");
    assert_string_equal(out[3].cause, "");
    assert_string_equal(out[4].cause, "aer-fatal:-1@0000:3b:00.0");
    assert_string_equal(out[5].cause, "xid:79@0000:3b:00.0"); /* the most recent earlier event */
    assert_string_equal(out[6].cause, "");
    assert_int_equal(vg_dedup_stats(d)->linked, 3);
    vg_dedup_free(d);
}

static void test_cause_window(void **s)
{
    (void)s;
    nout = 0;
    struct vg_dedup_opts o = { 60000, 10000, 0 };
    struct vg_dedup *d = vg_dedup_new(&o, cat, collect, NULL);
    struct vg_event a = mk("xid", 48, "0000:3b:00.0", T0);
    struct vg_event b = mk("xid", 63, "0000:3b:00.0", T0 + 30000); /* beyond the 10 s cause window */
    vg_dedup_add(d, &a);
    vg_dedup_add(d, &b);
    vg_dedup_finish(d);
    assert_int_equal(nout, 2);
    assert_string_equal(out[1].cause, "");
    vg_dedup_free(d);
}

static void test_storm_guard(void **s)
{
    (void)s;
    nout = 0;
    struct vg_dedup_opts o = { 60000, 0, 10 };
    struct vg_dedup *d = vg_dedup_new(&o, cat, collect, NULL);
    for (int i = 0; i < 50; i++) { /* 50 distinct codes on one GPU within one second */
        struct vg_event e = mk("xid", 1 + i, "0000:3b:00.0", T0 + i);
        vg_dedup_add(d, &e);
    }
    struct vg_event next = mk("xid", 60, "0000:3b:00.0", T0 + 1500); /* the next second */
    vg_dedup_add(d, &next);
    vg_dedup_finish(d);
    assert_int_equal(nout, 11);
    assert_int_equal(vg_dedup_stats(d)->storm_dropped, 40);
    vg_dedup_free(d);
}

/* The node came back at R: the fold of the fault before it is closed (its
 * repeats emitted), one begun after it stays, and the same fault again after
 * R is a new incident, not a repeat of the old one. */
static void test_close_before_return(void **s)
{
    (void)s;
    nout = 0;
    struct vg_dedup_opts o = { 60000, 0, 0 };
    struct vg_dedup *d = vg_dedup_new(&o, cat, collect, NULL);
    struct vg_event a = mk("xid", 79, "0000:18:00.0", T0), rep = mk("xid", 79, "0000:18:00.0", T0 + 5000);
    struct vg_event other = mk("xid", 119, "0000:3b:00.0", T0 + 12000);
    vg_dedup_add(d, &a);
    vg_dedup_add(d, &rep);
    vg_dedup_add(d, &other);
    assert_int_equal(vg_dedup_open_count(d), 2);
    const int64_t R = T0 + 10000;
    assert_int_equal(vg_dedup_close_before(d, R), 1);
    assert_int_equal(nout, 1);
    assert_string_equal(out[0].pci, "0000:18:00.0");
    assert_int_equal(out[0].count, 2);
    assert_int_equal(out[0].last_ms, T0 + 5000);
    assert_int_equal(vg_dedup_open_count(d), 1);
    assert_int_equal(vg_dedup_close_before(d, R), 0);   /* told again: nothing more */
    struct vg_event again = mk("xid", 79, "0000:18:00.0", T0 + 15000);
    uint64_t folded = vg_dedup_stats(d)->folded;
    vg_dedup_add(d, &again);
    assert_int_equal(vg_dedup_stats(d)->folded, folded);   /* a new incident, not folded */
    assert_int_equal(vg_dedup_open_count(d), 2);
    vg_dedup_finish(d);
    assert_int_equal(nout, 3);
    assert_int_equal(out[2].first_ms, T0 + 15000);
    assert_int_equal(out[2].count, 1);
    vg_dedup_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fold_window), cmocka_unit_test(test_causal_links),
        cmocka_unit_test(test_cause_window), cmocka_unit_test(test_storm_guard),
        cmocka_unit_test(test_close_before_return),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
