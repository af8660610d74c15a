/* repeat.c — counts events against the catalog's repeat rules; see repeat.h. */
#include "catalog/repeat.h"
#include "util/strutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct slot {
    bool used;
    char key[160];            /* node|device|rule kind */
    int64_t t[VG_CATALOG_AFTER_MAX];   /* the times counted, a ring */
    int n, next;
    int64_t touched;          /* the stage's tick when last counted */
};

struct vg_repeat {
    const struct vg_catalog *cat;
    struct slot s[VG_REPEAT_SLOTS];
    int64_t tick;
};

struct vg_repeat *vg_repeat_new(const struct vg_catalog *cat)
{
    struct vg_repeat *r = vg_xcalloc(1, sizeof *r);
    r->cat = cat;
    return r;
}

void vg_repeat_free(struct vg_repeat *r) { free(r); }

static struct slot *slot_of(struct vg_repeat *r, const char *key)
{
    struct slot *lru = &r->s[0];
    for (int i = 0; i < VG_REPEAT_SLOTS; i++) {
        struct slot *s = &r->s[i];
        if (s->used && !strcmp(s->key, key)) return s;
        bool better = !s->used ? lru->used : lru->used && s->touched < lru->touched;   /* free, else oldest */
        if (better) lru = s;
    }
    memset(lru, 0, sizeof *lru);
    lru->used = true;
    vg_strlcpy(lru->key, key, sizeof lru->key);
    return lru;
}

/* Adds `count` times t to the slot's ring after dropping those older than
 * the window; whether it now holds the rule's count. */
static bool count_in(struct slot *s, const struct vg_catalog_entry *rule, int64_t t, int count)
{
    int keep = 0;
    int64_t kept[VG_CATALOG_AFTER_MAX];
    for (int i = 0; i < s->n; i++) {
        int64_t x = s->t[(s->next - s->n + i + VG_CATALOG_AFTER_MAX) % VG_CATALOG_AFTER_MAX];
        if (t - x < rule->after_ms) kept[keep++] = x;
    }
    memcpy(s->t, kept, (size_t)keep * sizeof *kept);
    s->n = keep;
    s->next = keep % VG_CATALOG_AFTER_MAX;
    for (int i = 0; i < count && s->n < rule->after_n; i++) {
        s->t[s->next] = t;
        s->next = (s->next + 1) % VG_CATALOG_AFTER_MAX;
        s->n++;
    }
    return s->n >= rule->after_n;
}

int vg_repeat_add(struct vg_repeat *r, const struct vg_event *e, struct vg_event *out, int max)
{
    int made = 0;
    int64_t t = e->time_ms ? e->time_ms : e->seen_ms;
    int count = e->count > 0 ? e->count : 1;
    char dev[24];
    if (e->pci[0]) vg_strlcpy(dev, e->pci, sizeof dev);
    else snprintf(dev, sizeof dev, "gpu%d", e->gpu);
    r->tick++;
    for (size_t i = 0; i < vg_catalog_count(r->cat) && made < max; i++) {
        const struct vg_catalog_entry *rule = vg_catalog_at(r->cat, i);
        if (!rule->after_n || !strcmp(rule->kind, e->kind) || !vg_catalog_is_cause(rule, e)) continue;
        char key[160];
        snprintf(key, sizeof key, "%s|%s|%s", e->node, dev, rule->kind);
        struct slot *s = slot_of(r, key);
        s->touched = r->tick;
        if (!count_in(s, rule, t, count)) continue;
        s->n = s->next = 0;   /* the count starts again */
        struct vg_event *d = &out[made++];
        *d = *e;
        vg_strlcpy(d->kind, rule->kind, sizeof d->kind);
        d->action = VG_ACT_IGNORE;
        d->count = 1;
        d->first_ms = d->last_ms = 0;
        vg_event_key(e, d->cause, sizeof d->cause);
        const char *window = strchr(rule->after, '/');
        char head[128];
        snprintf(head, sizeof head, "%d %s events on %s within %s: ", rule->after_n, e->kind,
                 e->pci[0] || e->gpu >= 0 ? dev : "this node", window ? window + 1 : rule->after);
        size_t hl = vg_strlcpy(d->raw, head, sizeof d->raw);
        vg_strlcpy(d->raw + hl, e->raw, sizeof d->raw - hl);
    }
    return made;
}
