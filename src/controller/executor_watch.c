/* executor_watch.c — the incidents taken up by the executor, once each, and
 * the store watch of a controller that shares its store with others: an
 * agent's event may reach any of them, and only the leader acts, so the
 * leader looks in the store for incidents nobody decided on yet (every
 * interval, and at once when its own intake wakes it). */
#include "controller/executor_int.h"
#include "util/condwait.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/strutil.h"
#include <stdlib.h>
#include <string.h>

/* The index where id is, or would go, in the sorted list. */
static size_t slot_of(const struct vg_executor *x, int64_t id)
{
    size_t lo = 0, hi = x->ntaken;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->taken[mid] < id) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

bool vg_exec_take(struct vg_executor *x, int64_t id)
{
    pthread_mutex_lock(&x->taken_lock);
    size_t i = slot_of(x, id);
    bool fresh = i == x->ntaken || x->taken[i] != id;
    if (fresh) {
        if (x->ntaken == x->captaken) {
            x->captaken = x->captaken ? 2 * x->captaken : 64;
            x->taken = vg_xrealloc(x->taken, x->captaken * sizeof *x->taken);
        }
        memmove(x->taken + i + 1, x->taken + i, (x->ntaken - i) * sizeof *x->taken);
        x->taken[i] = id;
        x->ntaken++;
    }
    pthread_mutex_unlock(&x->taken_lock);
    return fresh;
}

static void look(struct vg_executor *x)
{
    json_t *fresh = vg_store_undecided(x->store), *inc;
    size_t i;
    json_array_foreach(fresh, i, inc) {
        int64_t id = vg_json_int(inc, "id", 0);
        if (!vg_exec_take(x, id)) continue;
        struct item *it = vg_exec_stored_item(inc);
        if (!it) {
            vg_err("incident %lld: its event does not read back; left as it is", (long long)id);
            continue;
        }
        vg_info("incident %lld (%s): taken up from the store", (long long)id, it->node);
        vg_exec_push(&x->work, it);
    }
    json_decref(fresh);
}

static void *watch_main(void *arg)
{
    struct vg_executor *x = arg;
    pthread_mutex_lock(&x->taken_lock);
    while (!x->watch_stop) {
        pthread_mutex_unlock(&x->taken_lock);
        look(x);
        pthread_mutex_lock(&x->taken_lock);
        if (!x->watch_stop) vg_cond_wait_ms(&x->watch_wake, &x->taken_lock, x->watch_ms);
    }
    pthread_mutex_unlock(&x->taken_lock);
    return NULL;
}

void vg_exec_watch_start(struct vg_executor *x, int interval_ms)
{
    x->watch_ms = interval_ms;
    vg_cond_init_mono(&x->watch_wake);
    x->watching = pthread_create(&x->watcher, NULL, watch_main, x) == 0;
}

void vg_exec_watch_stop(struct vg_executor *x)
{
    if (!x->watching) return;
    pthread_mutex_lock(&x->taken_lock);
    x->watch_stop = true;
    pthread_cond_signal(&x->watch_wake);
    pthread_mutex_unlock(&x->taken_lock);
    pthread_join(x->watcher, NULL);
    pthread_cond_destroy(&x->watch_wake);
    x->watching = false;
}
