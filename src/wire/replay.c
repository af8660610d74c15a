/* replay.c — per-node nonce windows; see replay.h. */
#include "wire/replay.h"
#include "util/strutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct instance {
    uint64_t id;
    uint64_t top;      /* the highest counter used; 0: slot free */
    uint64_t below;    /* bit k: counter top-1-k was used */
    int64_t last;      /* when it was last used */
};

struct window {
    char node[64];
    struct instance in[VG_REPLAY_INSTANCES];
};

/* An open-addressing table of pointers to windows, keyed by node name (a
 * window is allocated when its node first speaks). */
struct vg_replay {
    struct window **w;
    size_t cap, n;
};

struct vg_replay *vg_replay_new(void) { return vg_xcalloc(1, sizeof(struct vg_replay)); }

void vg_replay_free(struct vg_replay *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->cap; i++) free(r->w[i]);
    free(r->w);
    free(r);
}

size_t vg_replay_nodes(const struct vg_replay *r) { return r->n; }

int vg_replay_parse(const char *nonce, uint64_t *instance, uint64_t *counter)
{
    uint64_t id = 0, c = 0;
    int i = 0;
    for (; i < 16; i++) {
        char ch = nonce[i];
        int v = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
        if (v < 0) return -1;
        id = id << 4 | (uint64_t)v;
    }
    if (nonce[i++] != '-') return -1;
    int digits = 0;
    for (; nonce[i] >= '0' && nonce[i] <= '9' && digits < 18; i++, digits++) c = c * 10 + (uint64_t)(nonce[i] - '0');
    if (!digits || nonce[i] || c == 0) return -1;
    *instance = id;
    *counter = c;
    return 0;
}

static uint64_t hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return h;
}

static struct window **slot(struct window **w, size_t cap, const char *node)
{
    size_t i = hash(node) & (cap - 1);
    while (w[i] && strcmp(w[i]->node, node)) i = (i + 1) & (cap - 1);
    return &w[i];
}

static struct window *window_of(struct vg_replay *r, const char *node)
{
    if ((r->n + 1) * 4 > r->cap * 3) {   /* keep the load under 3/4 */
        size_t cap = r->cap ? r->cap * 2 : 64;
        struct window **w = vg_xcalloc(cap, sizeof *w);
        for (size_t i = 0; i < r->cap; i++)
            if (r->w[i]) *slot(w, cap, r->w[i]->node) = r->w[i];
        free(r->w);
        r->w = w;
        r->cap = cap;
    }
    struct window **w = slot(r->w, r->cap, node);
    if (!*w) {
        *w = vg_xcalloc(1, sizeof **w);
        vg_strlcpy((*w)->node, node, sizeof (*w)->node);
        r->n++;
    }
    return *w;
}

int vg_replay_use(struct vg_replay *r, const char *node, uint64_t instance, uint64_t counter, int64_t now_ms,
                  char *err, size_t errlen)
{
    struct window *w = window_of(r, node);
    struct instance *in = NULL, *free_slot = NULL;
    for (int i = 0; i < VG_REPLAY_INSTANCES; i++) {
        struct instance *x = &w->in[i];
        if (x->top && now_ms - x->last > VG_REPLAY_KEEP_MS) x->top = 0;   /* past the window: forgotten */
        if (x->top && x->id == instance) in = x;
        else if (!x->top && !free_slot) free_slot = x;
    }
    if (!in) {
        if (!free_slot) {
            snprintf(err, errlen, "node %s: more than %d client processes within %d min (nonce instances)", node,
                     VG_REPLAY_INSTANCES, VG_REPLAY_KEEP_MS / 60000);
            return -1;
        }
        *free_slot = (struct instance){ .id = instance, .top = counter, .last = now_ms };
        return 0;
    }
    if (counter > in->top) {
        uint64_t shift = counter - in->top;
        /* the old top becomes bit shift-1 */
        in->below = shift >= VG_REPLAY_SPAN ? 0 : (in->below << shift) | (1ULL << (shift - 1));
        in->top = counter;
    } else {
        uint64_t back = in->top - counter;   /* 0: the top itself */
        if (back == 0 || back > VG_REPLAY_SPAN || (in->below >> (back - 1) & 1)) {
            snprintf(err, errlen, "node %s: nonce %016llx-%llu %s", node, (unsigned long long)instance,
                     (unsigned long long)counter, back > VG_REPLAY_SPAN ? "is older than the window" : "replayed");
            return -1;
        }
        in->below |= 1ULL << (back - 1);
    }
    in->last = now_ms;
    return 0;
}
