/* budget.c — body bytes in flight, in all and per client; see budget.h.
 * A chained hash of the clients holding bytes now (an entry goes when its
 * bytes are given back), so its size follows the open requests. */
#include "controller/budget.h"
#include "util/strutil.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define BUCKETS 256

struct holder {
    struct holder *next;
    size_t bytes;
    char key[64];
};

struct vg_budget {
    pthread_mutex_t lock;
    size_t total, share, inflight;
    struct holder *bucket[BUCKETS];
};

struct vg_budget *vg_budget_new(size_t total, size_t per_client)
{
    struct vg_budget *b = vg_xcalloc(1, sizeof *b);
    pthread_mutex_init(&b->lock, NULL);
    b->total = total;
    b->share = per_client;
    return b;
}

void vg_budget_free(struct vg_budget *b)
{
    if (!b) return;
    for (size_t i = 0; i < BUCKETS; i++)
        for (struct holder *h = b->bucket[i], *next; h; h = next) {
            next = h->next;
            free(h);
        }
    pthread_mutex_destroy(&b->lock);
    free(b);
}

static struct holder **find(struct vg_budget *b, const char *key)
{
    unsigned h = 5381;
    for (const char *p = key; *p; p++) h = h * 33 + (unsigned char)*p;
    struct holder **pp = &b->bucket[h % BUCKETS];
    while (*pp && strncmp((*pp)->key, key, sizeof (*pp)->key - 1)) pp = &(*pp)->next;
    return pp;
}

int vg_budget_take(struct vg_budget *b, const char *key, size_t n)
{
    pthread_mutex_lock(&b->lock);
    struct holder **pp = find(b, key);
    size_t held = *pp ? (*pp)->bytes : 0;
    int rc = b->inflight + n > b->total ? 1 : held + n > b->share ? 2 : 0;
    if (rc == 0 && n) {
        if (!*pp) {
            *pp = vg_xcalloc(1, sizeof **pp);
            vg_strlcpy((*pp)->key, key, sizeof (*pp)->key);
        }
        (*pp)->bytes += n;
        b->inflight += n;
    }
    pthread_mutex_unlock(&b->lock);
    return rc;
}

void vg_budget_give(struct vg_budget *b, const char *key, size_t n)
{
    if (!n) return;
    pthread_mutex_lock(&b->lock);
    struct holder **pp = find(b, key);
    if (*pp) {
        size_t back = n < (*pp)->bytes ? n : (*pp)->bytes;
        (*pp)->bytes -= back;
        b->inflight -= back;
        if (!(*pp)->bytes) {
            struct holder *gone = *pp;
            *pp = gone->next;
            free(gone);
        }
    }
    pthread_mutex_unlock(&b->lock);
}

size_t vg_budget_inflight(struct vg_budget *b)
{
    pthread_mutex_lock(&b->lock);
    size_t n = b->inflight;
    pthread_mutex_unlock(&b->lock);
    return n;
}

size_t vg_budget_total(const struct vg_budget *b) { return b->total; }
size_t vg_budget_share(const struct vg_budget *b) { return b->share; }
