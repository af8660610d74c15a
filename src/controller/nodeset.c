/* nodeset.c — the scheduler's node list, cached and refreshed by a thread
 * of its own; see nodeset.h. */
#include "controller/nodeset.h"
#include "controller/ingest.h"
#include "util/condwait.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <arpa/inet.h>
#include <netdb.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define ADDRS_MAX 4
#define MISS_WAIT_MS 10000   /* the longest a lookup waits for the read its miss started */

struct entry {
    char name[64];
    char addr[64];               /* as the scheduler gave it */
    uint32_t addr4[ADDRS_MAX];   /* resolved, network byte order */
    int naddr;
};

struct vg_nodeset {
    struct vg_orch *orch;
    int refresh_ms, miss_ms;
    pthread_t thread;
    bool started;                /* the thread runs */
    pthread_rwlock_t rw;         /* entries, n, read, generation */
    struct entry *entries;       /* sorted by name */
    size_t n;
    bool read;                   /* a read has succeeded */
    uint64_t generation;         /* changes whenever the names do */
    pthread_mutex_t mu;          /* what follows */
    pthread_cond_t cond;
    bool stopping, want, asked; /* want: an unknown name was asked about; asked: a read at once */
    bool reading;                /* a read is under way */
    int64_t last_read;           /* vg_mono_ms() of the last attempt's start */
    unsigned long reads, failures, ended;   /* ended: attempts over, successful or not */
    char err[256];
};

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

static const struct entry *find(const struct entry *e, size_t n, const char *name)
{
    struct entry key;
    if (!e || !n) return NULL;
    vg_strlcpy(key.name, name, sizeof key.name);
    return bsearch(&key, e, n, sizeof *e, by_name);
}

static void resolve(struct entry *e)
{
    struct in_addr a;
    e->naddr = 0;
    if (!e->addr[0]) return;
    if (inet_pton(AF_INET, e->addr, &a) == 1) {
        e->addr4[e->naddr++] = a.s_addr;
        return;
    }
    struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res = NULL;
    if (getaddrinfo(e->addr, NULL, &hints, &res)) return;
    for (struct addrinfo *r = res; r && e->naddr < ADDRS_MAX; r = r->ai_next) {
        uint32_t v = ((const struct sockaddr_in *)r->ai_addr)->sin_addr.s_addr;
        bool dup = false;
        for (int i = 0; i < e->naddr; i++) dup |= e->addr4[i] == v;
        if (!dup) e->addr4[e->naddr++] = v;
    }
    freeaddrinfo(res);
}

/* One read of the scheduler's list; the new set replaces the old one. */
static void refresh(struct vg_nodeset *ns)
{
    struct vg_orch_node *nodes = NULL;
    size_t k = 0;
    int rc = ns->orch->ops->nodes(ns->orch, NULL, 0, &nodes, &k);
    pthread_mutex_lock(&ns->mu);
    ns->reads++;
    ns->failures += rc != 0;
    vg_strlcpy(ns->err, rc ? ns->orch->err : "", sizeof ns->err);
    pthread_mutex_unlock(&ns->mu);
    if (rc) {
        static struct vg_lograte log = VG_LOGRATE("scheduler node list", 60000, 1);
        vg_warn_limited(&log, "scheduler: cannot read its node list (%s)%s", ns->orch->err,
                        ns->read ? "; the last one read is kept" : ": nodes are answered 503 until it is read");
        free(nodes);
        return;
    }
    struct entry *e = vg_xcalloc(k ? k : 1, sizeof *e);
    for (size_t i = 0; i < k; i++) {
        vg_strlcpy(e[i].name, nodes[i].name, sizeof e[i].name);
        vg_strlcpy(e[i].addr, nodes[i].addr, sizeof e[i].addr);
    }
    free(nodes);
    qsort(e, k, sizeof *e, by_name);
    /* resolve only the addresses that changed since the last read */
    pthread_rwlock_rdlock(&ns->rw);
    for (size_t i = 0; i < k; i++) {
        const struct entry *old = find(ns->entries, ns->n, e[i].name);
        if (old && !strcmp(old->addr, e[i].addr)) {
            memcpy(e[i].addr4, old->addr4, sizeof e[i].addr4);
            e[i].naddr = old->naddr;
        } else {
            e[i].naddr = -1;
        }
    }
    pthread_rwlock_unlock(&ns->rw);
    for (size_t i = 0; i < k; i++)
        if (e[i].naddr < 0) resolve(&e[i]);
    pthread_rwlock_wrlock(&ns->rw);
    bool same = ns->read && k == ns->n;
    for (size_t i = 0; same && i < k; i++) same = !strcmp(e[i].name, ns->entries[i].name);
    if (!same) ns->generation++;
    struct entry *gone = ns->entries;
    ns->entries = e;
    ns->n = k;
    ns->read = true;
    pthread_rwlock_unlock(&ns->rw);
    free(gone);
}

/* Under mu: waits on cond at most until the monotonic time end_ms. */
static void wait_until(struct vg_nodeset *ns, int64_t end_ms)
{
    int64_t left = end_ms - vg_mono_ms();
    if (left <= 0) return;
    vg_cond_wait_ms(&ns->cond, &ns->mu, left);
}

static void *reader(void *arg)
{
    struct vg_nodeset *ns = arg;
    pthread_mutex_lock(&ns->mu);
    while (!ns->stopping) {
        int64_t now = vg_mono_ms();
        pthread_rwlock_rdlock(&ns->rw);
        bool read = ns->read;
        pthread_rwlock_unlock(&ns->rw);
        /* unread: try again every miss_ms; read: every refresh_ms, or
         * miss_ms after the last read when a name was missed; at once when
         * asked (vg_nodeset_refresh) */
        int64_t due = ns->last_read + (!read || ns->want ? ns->miss_ms : ns->refresh_ms);
        if (!ns->last_read || ns->asked || now >= due) {
            ns->want = ns->asked = false;
            ns->last_read = now;
            ns->reading = true;
            pthread_mutex_unlock(&ns->mu);
            refresh(ns);
            pthread_mutex_lock(&ns->mu);
            ns->reading = false;
            ns->ended++;
            pthread_cond_broadcast(&ns->cond);
            continue;
        }
        wait_until(ns, due);
    }
    pthread_mutex_unlock(&ns->mu);
    return NULL;
}

struct vg_nodeset *vg_nodeset_start(struct vg_orch *orch, int refresh_ms, int miss_ms)
{
    struct vg_nodeset *ns = vg_xcalloc(1, sizeof *ns);
    ns->orch = orch;
    ns->refresh_ms = refresh_ms > 0 ? refresh_ms : VG_NODESET_REFRESH_MS;
    ns->miss_ms = miss_ms > 0 ? miss_ms : VG_NODESET_MISS_MS;
    pthread_rwlock_init(&ns->rw, NULL);
    pthread_mutex_init(&ns->mu, NULL);
    vg_cond_init_mono(&ns->cond);
    ns->started = pthread_create(&ns->thread, NULL, reader, ns) == 0;
    if (!ns->started) {
        vg_nodeset_stop(ns);
        return NULL;
    }
    return ns;
}

void vg_nodeset_stop(struct vg_nodeset *ns)
{
    if (!ns) return;
    pthread_mutex_lock(&ns->mu);
    ns->stopping = true;
    pthread_cond_broadcast(&ns->cond);
    pthread_mutex_unlock(&ns->mu);
    if (ns->started) pthread_join(ns->thread, NULL);
    vg_orch_close(ns->orch);
    pthread_cond_destroy(&ns->cond);
    pthread_mutex_destroy(&ns->mu);
    pthread_rwlock_destroy(&ns->rw);
    free(ns->entries);
    free(ns);
}

/* Under mu: waits until ended reaches until, at most timeout_ms: true when it did. */
static bool wait_ended(struct vg_nodeset *ns, unsigned long until, int timeout_ms)
{
    int64_t end = vg_mono_ms() + timeout_ms;
    while (ns->ended < until && !ns->stopping && vg_mono_ms() < end) wait_until(ns, end);
    return ns->ended >= until;
}

/* An unknown name was asked about: the list is read again soon.  When no
 * read is under way or asked for and the last began miss_ms ago or more,
 * this lookup starts one and waits for it (true: look again); any other
 * answers from the list held. */
static bool missed(struct vg_nodeset *ns)
{
    pthread_mutex_lock(&ns->mu);
    bool mine = !ns->want && !ns->reading && vg_mono_ms() - ns->last_read >= ns->miss_ms;
    if (!ns->want) {
        ns->want = true;
        pthread_cond_broadcast(&ns->cond);
    }
    if (mine) mine = wait_ended(ns, ns->ended + 1, MISS_WAIT_MS);
    pthread_mutex_unlock(&ns->mu);
    return mine;
}

/* 1 found (*out copied), 0 not listed, -1 never read. */
static int held(struct vg_nodeset *ns, const char *node, struct entry *out)
{
    pthread_rwlock_rdlock(&ns->rw);
    int rc = -1;
    if (ns->read) {
        const struct entry *e = find(ns->entries, ns->n, node);
        rc = e != NULL;
        if (e) *out = *e;
    }
    pthread_rwlock_unlock(&ns->rw);
    return rc;
}

static int lookup(struct vg_nodeset *ns, const char *node, struct entry *out)
{
    int rc = held(ns, node, out);
    if (rc == 0 && missed(ns)) rc = held(ns, node, out);
    return rc;
}

int vg_nodeset_known(struct vg_nodeset *ns, const char *node)
{
    struct entry e;
    return lookup(ns, node, &e);
}

int vg_nodeset_has_addr(struct vg_nodeset *ns, const char *node, uint32_t addr4)
{
    struct entry e;
    int rc = lookup(ns, node, &e);
    if (rc <= 0) return rc;
    for (int i = 0; i < e.naddr; i++)
        if (e.addr4[i] == addr4) return 1;
    return 0;
}

int vg_nodeset_may_name(struct vg_nodeset *ns, const char *field, const char *node, const char *sender, char *err,
                        size_t errlen)
{
    if (!node || !vg_ingest_node_ok(node)) return snprintf(err, errlen, "%s: missing or not a node name", field), 400;
    if (sender && sender[0] && strcmp(node, sender))
        return snprintf(err, errlen, "%s: '%s' is not the sender's node (%s): a node speaks only for itself", field,
                        node, sender), 403;
    int known = ns ? vg_nodeset_known(ns, node) : 1;
    if (known == 0) return snprintf(err, errlen, "%s: '%s' is not a node the scheduler lists", field, node), 403;
    if (known < 0) {
        char why[256];
        vg_nodeset_error(ns, why, sizeof why);
        return snprintf(err, errlen, "scheduler: its node list is not read yet (%s); retry", why[0] ? why : "reading"),
               503;
    }
    return 0;
}

long vg_nodeset_names(struct vg_nodeset *ns, char ***names, uint64_t *generation)
{
    *names = NULL;
    pthread_rwlock_rdlock(&ns->rw);
    long n = ns->read ? (long)ns->n : -1;
    if (n >= 0) {
        *names = vg_xcalloc((size_t)n + 1, sizeof **names);
        for (long i = 0; i < n; i++) (*names)[i] = vg_xstrdup(ns->entries[i].name);
    }
    if (generation) *generation = ns->generation;
    pthread_rwlock_unlock(&ns->rw);
    return n;
}

size_t vg_nodeset_count(struct vg_nodeset *ns)
{
    pthread_rwlock_rdlock(&ns->rw);
    size_t n = ns->n;
    pthread_rwlock_unlock(&ns->rw);
    return n;
}

uint64_t vg_nodeset_generation(struct vg_nodeset *ns)
{
    pthread_rwlock_rdlock(&ns->rw);
    uint64_t g = ns->generation;
    pthread_rwlock_unlock(&ns->rw);
    return g;
}

void vg_nodeset_names_free(char **names, long n)
{
    for (long i = 0; i < n; i++) free(names[i]);
    free(names);
}

bool vg_nodeset_wait(struct vg_nodeset *ns, int timeout_ms)
{
    int64_t end = vg_mono_ms() + timeout_ms;
    pthread_mutex_lock(&ns->mu);
    for (;;) {
        pthread_rwlock_rdlock(&ns->rw);
        bool read = ns->read;
        pthread_rwlock_unlock(&ns->rw);
        if (read || vg_mono_ms() >= end || ns->stopping) {
            pthread_mutex_unlock(&ns->mu);
            return read;
        }
        wait_until(ns, end);
    }
}

bool vg_nodeset_refresh(struct vg_nodeset *ns, int timeout_ms)
{
    pthread_mutex_lock(&ns->mu);
    /* a read under way began before this call: the one after it */
    unsigned long until = ns->ended + (ns->reading ? 2 : 1);
    ns->asked = true;
    pthread_cond_broadcast(&ns->cond);
    bool done = wait_ended(ns, until, timeout_ms);
    pthread_mutex_unlock(&ns->mu);
    return done;
}

void vg_nodeset_error(struct vg_nodeset *ns, char *buf, size_t n)
{
    pthread_mutex_lock(&ns->mu);
    vg_strlcpy(buf, ns->err, n);
    pthread_mutex_unlock(&ns->mu);
}

void vg_nodeset_metrics(struct vg_nodeset *ns, struct sbuf *out)
{
    pthread_rwlock_rdlock(&ns->rw);
    size_t n = ns->n;
    pthread_rwlock_unlock(&ns->rw);
    pthread_mutex_lock(&ns->mu);
    unsigned long reads = ns->reads, failures = ns->failures;
    pthread_mutex_unlock(&ns->mu);
    sbuf_printf(out,
                "# HELP vigil_scheduler_nodes Nodes the scheduler lists (the nodes the intake takes reports from).\n"
                "# TYPE vigil_scheduler_nodes gauge\nvigil_scheduler_nodes %zu\n"
                "# HELP vigil_scheduler_node_reads_total Reads of the scheduler's node list.\n"
                "# TYPE vigil_scheduler_node_reads_total counter\nvigil_scheduler_node_reads_total %lu\n"
                "# HELP vigil_scheduler_node_read_failures_total Reads of the scheduler's node list that failed.\n"
                "# TYPE vigil_scheduler_node_read_failures_total counter\nvigil_scheduler_node_read_failures_total %lu\n",
                n, reads, failures);
}
