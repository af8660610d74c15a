/* schednodes.c — the nodes the scheduler knows: a sorted copy of its node
 * list, read again when old or when a name misses; see schednodes.h. */
#include "controller/schednodes.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef char name_t[64];

struct vg_schednodes {
    struct vg_orch *orch;
    int max_age_ms, miss_gap_ms;
    pthread_mutex_t lock;
    name_t *names;            /* sorted */
    size_t n;
    bool read_ok, reading;
    int64_t read_mono;        /* the last read's end, successful or not; 0: never */
    uint64_t generation;
    unsigned long reads, failures;
    char err[256];
};

struct vg_schednodes *vg_schednodes_new(struct vg_orch *orch, int max_age_ms, int miss_gap_ms)
{
    struct vg_schednodes *s = vg_xcalloc(1, sizeof *s);
    s->orch = orch;
    s->max_age_ms = max_age_ms > 0 ? max_age_ms : VG_SCHEDNODES_MAX_AGE_MS;
    s->miss_gap_ms = miss_gap_ms > 0 ? miss_gap_ms : VG_SCHEDNODES_MISS_GAP_MS;
    vg_strlcpy(s->err, "the scheduler's node list has not been read yet", sizeof s->err);
    pthread_mutex_init(&s->lock, NULL);
    return s;
}

void vg_schednodes_free(struct vg_schednodes *s)
{
    if (!s) return;
    vg_orch_close(s->orch);
    free(s->names);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

static int by_name(const void *a, const void *b) { return strcmp(a, b); }

/* One read of the list (outside the lock; one reader at a time). */
static void read_list(struct vg_schednodes *s)
{
    struct vg_orch_node *ns = NULL;
    size_t nn = 0;
    int rc = s->orch ? s->orch->ops->nodes(s->orch, NULL, 0, &ns, &nn) : -1;
    name_t *names = NULL;
    size_t k = 0;
    if (!rc) {
        names = vg_xcalloc(nn + 1, sizeof *names);
        for (size_t i = 0; i < nn; i++)
            if (ns[i].name[0]) vg_strlcpy(names[k++], ns[i].name, sizeof names[0]);
        qsort(names, k, sizeof *names, by_name);
    }
    free(ns);
    pthread_mutex_lock(&s->lock);
    s->reads++;
    s->reading = false;
    s->read_mono = vg_mono_ms();
    if (!rc) {
        if (k != s->n || (k && memcmp(names, s->names, k * sizeof *names))) s->generation++;
        free(s->names);
        s->names = names;
        s->n = k;
        s->read_ok = true;
    } else {
        s->failures++;
        vg_strlcpy(s->err, s->orch ? s->orch->err : "no scheduler", sizeof s->err);
    }
    pthread_mutex_unlock(&s->lock);
}

/* Under the lock: claims the read when due (the caller then reads, unlocked). */
static bool claim(struct vg_schednodes *s, int max_age_ms)
{
    if (s->reading || (s->read_mono && vg_mono_ms() - s->read_mono < max_age_ms)) return false;
    s->reading = true;
    return true;
}

int vg_schednodes_poll(struct vg_schednodes *s, char *err, size_t errlen)
{
    pthread_mutex_lock(&s->lock);
    bool go = claim(s, s->max_age_ms);
    pthread_mutex_unlock(&s->lock);
    if (go) read_list(s);
    pthread_mutex_lock(&s->lock);
    bool ok = s->read_ok;
    if (!ok && err) vg_strlcpy(err, s->err, errlen);
    pthread_mutex_unlock(&s->lock);
    return ok ? 0 : -1;
}

static bool listed(const struct vg_schednodes *s, const char *node)
{
    return strlen(node) < sizeof(name_t) && s->n && bsearch(node, s->names, s->n, sizeof *s->names, by_name);
}

int vg_schednodes_has(struct vg_schednodes *s, const char *node, char *err, size_t errlen)
{
    vg_schednodes_poll(s, NULL, 0);
    pthread_mutex_lock(&s->lock);
    bool found = listed(s, node);
    bool go = !found && claim(s, s->miss_gap_ms);   /* a node added since the last read */
    pthread_mutex_unlock(&s->lock);
    if (go) read_list(s);
    pthread_mutex_lock(&s->lock);
    found = listed(s, node);
    int rc = found ? 1 : s->read_ok ? 0 : -1;
    if (rc < 0 && err) vg_strlcpy(err, s->err, errlen);
    pthread_mutex_unlock(&s->lock);
    return rc;
}

size_t vg_schednodes_list(struct vg_schednodes *s, char ***out, uint64_t *generation)
{
    vg_schednodes_poll(s, NULL, 0);
    pthread_mutex_lock(&s->lock);
    size_t n = s->n;
    *out = vg_xcalloc(n + 1, sizeof **out);
    for (size_t i = 0; i < n; i++) (*out)[i] = vg_xstrdup(s->names[i]);
    if (generation) *generation = s->generation;
    pthread_mutex_unlock(&s->lock);
    return n;
}

size_t vg_schednodes_count(struct vg_schednodes *s)
{
    vg_schednodes_poll(s, NULL, 0);
    pthread_mutex_lock(&s->lock);
    size_t n = s->n;
    pthread_mutex_unlock(&s->lock);
    return n;
}

uint64_t vg_schednodes_generation(struct vg_schednodes *s)
{
    pthread_mutex_lock(&s->lock);
    uint64_t g = s->generation;
    pthread_mutex_unlock(&s->lock);
    return g;
}

void vg_schednodes_metrics(struct vg_schednodes *s, struct sbuf *out)
{
    if (!s) return;
    pthread_mutex_lock(&s->lock);
    sbuf_printf(out,
                "# HELP vigil_scheduler_nodes Nodes the scheduler lists (the only ones the intake and the "
                "heartbeat monitor believe).\n# TYPE vigil_scheduler_nodes gauge\nvigil_scheduler_nodes %zu\n"
                "# HELP vigil_scheduler_node_list_reads_total Reads of the scheduler's node list for the intake "
                "and the heartbeat monitor.\n# TYPE vigil_scheduler_node_list_reads_total counter\n"
                "vigil_scheduler_node_list_reads_total %lu\n"
                "# HELP vigil_scheduler_node_list_failures_total Of those, the reads that failed.\n"
                "# TYPE vigil_scheduler_node_list_failures_total counter\nvigil_scheduler_node_list_failures_total %lu\n",
                s->n, s->reads, s->failures);
    pthread_mutex_unlock(&s->lock);
}
