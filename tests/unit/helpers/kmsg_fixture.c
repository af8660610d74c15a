/* kmsg_fixture.c — see kmsg_fixture.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "helpers/kmsg_fixture.h"
#include "signal/kmsg.h"
#include "util/rootfs.h"
#include "util/timeutil.h"

#define MAXEV 16
struct got {
    struct vg_event ev[MAXEV];
    int n;
};

static void collect(const struct vg_event *e, void *arg)
{
    struct got *g = arg;
    if (g->n < MAXEV) g->ev[g->n] = *e;
    g->n++;
}

static char *fixture(const char *name, size_t *len)
{
    char path[256], *text = NULL;
    snprintf(path, sizeof path, "tests/fixtures/logs/%s", name);
    if (vg_read_file(NULL, path, 1 << 20, &text, len)) fail_msg("cannot read %s", path);
    assert_non_null(text);
    return text;
}

static void nth_line(const char *text, size_t tlen, int n, char *out, size_t outlen)
{
    const char *p = text, *end = text + tlen;
    for (int i = 1; i < n && p; i++) {
        p = memchr(p, '\n', (size_t)(end - p));
        if (p) p++;
    }
    assert_non_null(p);
    const char *e = memchr(p, '\n', (size_t)(end - p));
    size_t len = e ? (size_t)(e - p) : (size_t)(end - p);
    if (len >= outlen) len = outlen - 1;
    memcpy(out, p, len);
    out[len] = '\0';
}

void kmsg_fixture_run(const char *name, int64_t boot_ms, const struct want *w, int nw, uint64_t lines,
                uint64_t malformed)
{
    kmsg_fixture_run_folded(name, boot_ms, w, NULL, nw, lines, malformed);
}

void kmsg_fixture_run_folded(const char *name, int64_t boot_ms, const struct want *w, const char *const *fold, int nw,
                             uint64_t lines, uint64_t malformed)
{
    size_t len;
    char *text = fixture(name, &len);
    struct got g = { .n = 0 };
    struct vg_kmsg *k = malloc(sizeof *k);
    struct vg_kmsg_opts o = { boot_ms, 2024, "node1" };
    vg_kmsg_init(k, &o, collect, &g);
    vg_kmsg_feed(k, text, len);
    vg_kmsg_finish(k);
    if (g.n != nw) fail_msg("%s: %d events, want %d", name, g.n, nw);
    assert_int_equal(k->lines, lines);
    assert_int_equal(k->malformed, malformed);
    assert_int_equal(k->events, (uint64_t)nw);
    for (int i = 0; i < nw; i++) {
        const struct vg_event *e = &g.ev[i];
        char t[32] = "", raw[512];
        if (e->time_ms) vg_format_time(e->time_ms, t);
        if (strcmp(t, w[i].time ? w[i].time : "") != 0) fail_msg("%s #%d: time %s", name, i, t);
        if (strcmp(e->pci, w[i].pci) != 0) fail_msg("%s #%d: pci '%s'", name, i, e->pci);
        if (e->gpu != w[i].gpu) fail_msg("%s #%d: gpu %d", name, i, e->gpu);
        if (e->code != w[i].code) fail_msg("%s #%d: code %d", name, i, e->code);
        if (strcmp(e->kind, w[i].kind) != 0) fail_msg("%s #%d: kind %s", name, i, e->kind);
        nth_line(text, len, w[i].line, raw, sizeof raw);
        if (fold && fold[i]) strncat(raw, fold[i], sizeof raw - strlen(raw) - 1);
        if (strcmp(e->raw, raw) != 0) fail_msg("%s #%d: raw '%s'", name, i, e->raw);
        assert_string_equal(e->source, "kmsg");
        assert_string_equal(e->node, "node1");
        assert_int_equal(e->count, 1);
    }
    /* Byte-at-a-time feeding must give the same events. */
    struct got g2 = { .n = 0 };
    vg_kmsg_init(k, &o, collect, &g2);
    for (size_t i = 0; i < len; i++) vg_kmsg_feed(k, text + i, 1);
    vg_kmsg_finish(k);
    assert_int_equal(g2.n, g.n);
    assert_int_equal(k->lines, lines);
    assert_int_equal(k->malformed, malformed);
    for (int i = 0; i < g.n && i < MAXEV; i++) {
        assert_string_equal(g2.ev[i].raw, g.ev[i].raw);
        assert_string_equal(g2.ev[i].pci, g.ev[i].pci);
        assert_int_equal(g2.ev[i].time_ms, g.ev[i].time_ms);
    }
    /* So must the portable fast path (the compare loop, where SSSE3 is missing). */
    struct got g3 = { .n = 0 };
    vg_kmsg_init(k, &o, collect, &g3);
    k->nibbles = false;
    vg_kmsg_feed(k, text, len);
    vg_kmsg_finish(k);
    assert_int_equal(g3.n, g.n);
    assert_int_equal(k->lines, lines);
    for (int i = 0; i < g.n && i < MAXEV; i++) assert_string_equal(g3.ev[i].raw, g.ev[i].raw);
    free(k);
    free(text);
}

