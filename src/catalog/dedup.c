/* dedup.c — incident folding, causal links and the storm guard; see dedup.h. */
#include "catalog/dedup.h"
#include "util/strutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct slot {
    bool used;
    char key[176];
    char gid[80];        /* node + GPU identity (pci, or gpu index) */
    int64_t first_t, last_t;
    struct vg_event e;
};

struct rate {
    char gid[80];
    int64_t sec;
    int n;
};

struct vg_dedup {
    struct vg_dedup_opts o;
    const struct vg_catalog *cat;
    vg_dedup_emit_fn emit;
    void *arg;
    struct vg_dedup_stats st;
    struct slot open[VG_DEDUP_OPEN];
    struct slot recent[VG_DEDUP_RECENT];   /* closed incidents, a ring */
    int recent_next;
    struct rate rates[VG_DEDUP_GPUS];
    int nrates;
};

struct vg_dedup *vg_dedup_new(const struct vg_dedup_opts *o, const struct vg_catalog *cat,
                              vg_dedup_emit_fn emit, void *arg)
{
    struct vg_dedup *d = vg_xcalloc(1, sizeof *d);
    if (o) d->o = *o;
    if (d->o.window_ms <= 0) d->o.window_ms = 60000;
    if (d->o.cause_window_ms <= 0) d->o.cause_window_ms = d->o.window_ms;
    if (d->o.storm_per_sec == 0) d->o.storm_per_sec = 100;
    d->cat = cat;
    d->emit = emit;
    d->arg = arg;
    return d;
}

void vg_dedup_free(struct vg_dedup *d) { free(d); }

const struct vg_dedup_stats *vg_dedup_stats(const struct vg_dedup *d) { return &d->st; }

static int64_t ev_time(const struct vg_event *e) { return e->time_ms ? e->time_ms : e->seen_ms; }

static void gpu_id(const struct vg_event *e, char *buf, size_t n)
{
    if (e->pci[0]) snprintf(buf, n, "%s|%s", e->node, e->pci);
    else if (e->gpu >= 0) snprintf(buf, n, "%s|gpu%d", e->node, e->gpu);
    else snprintf(buf, n, "%s|", e->node);
}

static void close_slot(struct vg_dedup *d, struct slot *s)
{
    d->st.emitted++;
    if (d->emit) d->emit(&s->e, d->arg);
    d->recent[d->recent_next] = *s;
    d->recent_next = (d->recent_next + 1) % VG_DEDUP_RECENT;
    s->used = false;
}

enum close_what { CLOSE_ALL, CLOSE_IDLE, CLOSE_BEGUN };

/* Closes open incidents, oldest first: all, those idle since before t, or
 * those begun before t.  Returns how many. */
static size_t close_some(struct vg_dedup *d, enum close_what what, int64_t t)
{
    for (size_t n = 0;; n++) {
        struct slot *best = NULL;
        for (int i = 0; i < VG_DEDUP_OPEN; i++) {
            struct slot *s = &d->open[i];
            if (!s->used || (what == CLOSE_IDLE && s->last_t >= t) || (what == CLOSE_BEGUN && s->first_t >= t))
                continue;
            if (!best || s->first_t < best->first_t) best = s;
        }
        if (!best) return n;
        close_slot(d, best);
    }
}

void vg_dedup_tick(struct vg_dedup *d, int64_t now_ms) { close_some(d, CLOSE_IDLE, now_ms - d->o.window_ms); }

void vg_dedup_finish(struct vg_dedup *d) { close_some(d, CLOSE_ALL, 0); }

size_t vg_dedup_close_before(struct vg_dedup *d, int64_t t) { return close_some(d, CLOSE_BEGUN, t); }

size_t vg_dedup_open_count(const struct vg_dedup *d)
{
    size_t n = 0;
    for (int i = 0; i < VG_DEDUP_OPEN; i++) n += d->open[i].used;
    return n;
}

static bool storm(struct vg_dedup *d, const char *gid, int64_t t)
{
    if (d->o.storm_per_sec < 0) return false;
    struct rate *r = NULL;
    for (int i = 0; i < d->nrates; i++)
        if (strcmp(d->rates[i].gid, gid) == 0) r = &d->rates[i];
    if (!r) {
        r = &d->rates[d->nrates < VG_DEDUP_GPUS ? d->nrates++ : (int)((uint64_t)t % VG_DEDUP_GPUS)];
        vg_strlcpy(r->gid, gid, sizeof r->gid);
        r->sec = t / 1000;
        r->n = 0;
    }
    if (r->sec != t / 1000) {
        r->sec = t / 1000;
        r->n = 0;
    }
    return ++r->n > d->o.storm_per_sec;
}

/* The most recent earlier incident on the same GPU this event follows from. */
static const struct slot *find_cause(struct vg_dedup *d, const struct vg_event *e, const char *gid,
                                     const char *key, int64_t t)
{
    if (!d->cat) return NULL;
    const struct vg_catalog_entry *ent = vg_catalog_lookup(d->cat, e->kind, e->code);
    if (!ent || !ent->caused_by[0]) return NULL;
    const struct slot *best = NULL;
    for (int pass = 0; pass < 2; pass++) {
        const struct slot *tab = pass ? d->recent : d->open;
        int n = pass ? VG_DEDUP_RECENT : VG_DEDUP_OPEN;
        for (int i = 0; i < n; i++) {
            const struct slot *s = &tab[i];
            if (!s->used || strcmp(s->gid, gid) != 0 || strcmp(s->key, key) == 0) continue;
            if (t - s->last_t > d->o.cause_window_ms || s->first_t > t) continue;
            if (s->e.cause[0] && strcmp(s->e.kind, e->kind) == 0 && s->e.code == e->code) continue;
            if (!vg_catalog_is_cause(ent, &s->e)) continue;
            if (!best || s->last_t > best->last_t) best = s;
        }
    }
    return best;
}

void vg_dedup_add(struct vg_dedup *d, const struct vg_event *e)
{
    d->st.in++;
    int64_t t = ev_time(e);
    vg_dedup_tick(d, t);
    char key[176], gid[80], ek[96];
    gpu_id(e, gid, sizeof gid);
    vg_event_key(e, ek, sizeof ek);
    snprintf(key, sizeof key, "%s|%s", e->node, ek);
    for (int i = 0; i < VG_DEDUP_OPEN; i++) {
        struct slot *s = &d->open[i];
        if (s->used && strcmp(s->key, key) == 0) {
            s->e.count += e->count > 0 ? e->count : 1;
            if (t > s->last_t) s->last_t = t;
            int64_t last = e->last_ms ? e->last_ms : e->time_ms;
            if (last > s->e.last_ms) s->e.last_ms = last;
            if (e->action > s->e.action) s->e.action = e->action;
            d->st.folded++;
            return;
        }
    }
    if (storm(d, gid, t)) {
        d->st.storm_dropped++;
        return;
    }
    struct slot *free_s = NULL, *oldest = NULL;
    for (int i = 0; i < VG_DEDUP_OPEN && !free_s; i++) {
        struct slot *s = &d->open[i];
        if (!s->used) free_s = s;
        else if (!oldest || s->last_t < oldest->last_t) oldest = s;
    }
    if (!free_s) {
        close_slot(d, oldest);
        free_s = oldest;
    }
    struct slot *s = free_s;
    s->used = true;
    s->e = *e;
    if (s->e.count < 1) s->e.count = 1;
    if (!s->e.first_ms) s->e.first_ms = e->time_ms;
    if (!s->e.last_ms) s->e.last_ms = e->time_ms;
    s->first_t = s->last_t = t;
    vg_strlcpy(s->key, key, sizeof s->key);
    vg_strlcpy(s->gid, gid, sizeof s->gid);
    const struct slot *c = find_cause(d, e, gid, key, t);
    if (c && !s->e.cause[0]) {
        vg_event_key(&c->e, s->e.cause, sizeof s->e.cause);
        d->st.linked++;
    }
}
