/* fleetview.c — every node the controller knows with its domain and state,
 * and the dashboard's summary (spares, breaker, accounting); see fleetview.h. */
#include "controller/fleetview.h"
#include "controller/accounting.h"
#include "controller/clock.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define DAY_MS (24LL * 3600 * 1000)
#define ACCT_WINDOW_MS (30 * DAY_MS)
#define SUMMARY_INCIDENTS 100
#define RETURNED_MS DAY_MS   /* a node shows `returned` this long after its repair, or until its next incident */

/* The states, least to most pressing: a node shows the most pressing. */
enum { ST_HEALTHY, ST_SPARE, ST_RETURNED, ST_SUSPECT, ST_UNAVAILABLE, ST_HELD, ST_FAILED, ST_ISOLATED, ST_RMA,
       ST_REPAIRING, ST_N };
static const char *const state_names[ST_N] = { "healthy", "spare",    "returned", "suspect", "unavailable",
                                               "held",    "failed",   "isolated", "rma",     "repairing" };

struct vg_fleetview {
    struct vg_fleetview_opts o;
    pthread_mutex_t lock;
    /* the scheduler's last node list */
    struct vg_orch_node *sched;
    size_t nsched;
    bool reading, read_ok;
    int64_t read_mono, read_at;
    char read_err[256];
    unsigned long reads;
    /* the accounting, cached */
    json_t *acct;
    int64_t acct_mono;
};

/* One node being assembled. */
struct fnode {
    char name[64], domain[64];
    int state;
    int64_t incident;             /* the open incident its state comes from; 0: none */
    bool in_pool;
    const struct vg_orch_node *sched;
    const json_t *counts;         /* its row of vg_store_nodes, or NULL */
    const json_t *returned;       /* its row of vg_store_returns, or NULL */
};

struct fleet {
    struct fnode *n;
    size_t len, cap;
    struct vg_orch_node *sched;   /* a copy of the view's list */
    size_t nsched;
    bool sched_ok;
    int64_t sched_at;
    char sched_err[256];
    json_t *index;                /* name → its index in n */
    json_t *counts, *view;        /* vg_store_nodes, vg_executor_view (or NULL) */
    json_t *returns;              /* vg_store_returns over the last RETURNED_MS */
};

const char *vg_fleetview_incident_state(const char *st, bool repairing)
{
    int s = vg_inc_state_parse(st);
    if (repairing || s == VG_INC_REPAIRING) return state_names[ST_REPAIRING];
    switch (s) {
    case VG_INC_RMA: return state_names[ST_RMA];
    case VG_INC_ACTING: case VG_INC_ISOLATED: case VG_INC_UNREPAIRED: return state_names[ST_ISOLATED];
    case VG_INC_FAILED: return state_names[ST_FAILED];
    case VG_INC_HELD: return state_names[ST_HELD];
    default: return state_names[ST_SUSPECT];   /* open, recorded, dry run */
    }
}

static int state_index(const char *name)
{
    for (int i = 0; i < ST_N; i++)
        if (!strcmp(state_names[i], name)) return i;
    return ST_HEALTHY;
}

void vg_fleetview_set_exec(struct vg_fleetview *v, struct vg_executor *exec)
{
    __atomic_store_n(&v->o.exec, exec, __ATOMIC_RELEASE);
}

struct vg_fleetview *vg_fleetview_new(const struct vg_fleetview_opts *o)
{
    struct vg_fleetview *v = vg_xcalloc(1, sizeof *v);
    v->o = *o;
    if (!v->o.orch_max_age_ms) v->o.orch_max_age_ms = 3000;
    if (!v->o.acct_max_age_ms) v->o.acct_max_age_ms = 10000;
    pthread_mutex_init(&v->lock, NULL);
    return v;
}

void vg_fleetview_free(struct vg_fleetview *v)
{
    if (!v) return;
    free(v->sched);
    json_decref(v->acct);
    pthread_mutex_destroy(&v->lock);
    free(v);
}

/* Reads the scheduler's node list when the last is older than the bound and
 * no other request is reading it; otherwise the last one stands. */
static void refresh(struct vg_fleetview *v)
{
    if (!v->o.orch) return;
    pthread_mutex_lock(&v->lock);
    bool go = !v->reading && (!v->read_mono || vg_mono_ms() - v->read_mono >= v->o.orch_max_age_ms);
    if (go) v->reading = true;
    pthread_mutex_unlock(&v->lock);
    if (!go) return;
    struct vg_orch_node *ns = NULL;
    size_t nn = 0;
    int rc = v->o.orch->ops->nodes(v->o.orch, NULL, 0, &ns, &nn);
    pthread_mutex_lock(&v->lock);
    v->reads++;
    v->reading = false;
    v->read_mono = vg_mono_ms();
    if (!rc) {
        free(v->sched);
        v->sched = ns;
        v->nsched = nn;
        v->read_ok = true;
        v->read_at = vg_now_ms();
        v->read_err[0] = 0;
    } else {
        free(ns);
        v->read_ok = false;
        vg_strlcpy(v->read_err, v->o.orch->err, sizeof v->read_err);
    }
    pthread_mutex_unlock(&v->lock);
}

static struct fnode *node_of(struct fleet *f, const char *name)
{
    json_t *at = json_object_get(f->index, name);
    if (at) return &f->n[json_integer_value(at)];
    if (!name[0] || strlen(name) >= sizeof f->n[0].name) return NULL;
    if (f->len == f->cap) f->n = vg_xrealloc(f->n, (f->cap = f->cap ? 2 * f->cap : 64) * sizeof *f->n);
    json_object_set_new(f->index, name, json_integer((json_int_t)f->len));
    struct fnode *n = &f->n[f->len++];
    memset(n, 0, sizeof *n);
    vg_strlcpy(n->name, name, sizeof n->name);
    return n;
}

static void raise_state(struct fnode *n, int st, int64_t incident)
{
    if (st > n->state) n->state = st, n->incident = incident;
}

static bool in_ids(const json_t *ids, int64_t id)
{
    size_t i;
    json_t *x;
    json_array_foreach(ids, i, x) if (json_integer_value(x) == id) return true;
    return false;
}

/* "n2" before "n10": digit runs compare as numbers. */
static int natural_cmp(const char *a, const char *b)
{
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            while (*a == '0') a++;
            while (*b == '0') b++;
            size_t la = 0, lb = 0;
            while (isdigit((unsigned char)a[la])) la++;
            while (isdigit((unsigned char)b[lb])) lb++;
            if (la != lb) return la < lb ? -1 : 1;
            int c = strncmp(a, b, la);
            if (c) return c;
            a += la, b += lb;
        } else {
            if (*a != *b) return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
            a++, b++;
        }
    }
    return *a ? 1 : *b ? -1 : 0;
}

static int by_domain_then_name(const void *x, const void *y)
{
    const struct fnode *a = x, *b = y;
    if (!a->domain[0] != !b->domain[0]) return a->domain[0] ? -1 : 1;   /* no domain: last */
    int c = natural_cmp(a->domain, b->domain);
    return c ? c : natural_cmp(a->name, b->name);
}

/* Every node known, with its state. */
static void gather(struct vg_fleetview *v, struct fleet *f)
{
    memset(f, 0, sizeof *f);
    f->index = json_object();
    refresh(v);
    pthread_mutex_lock(&v->lock);
    if (v->nsched) {
        f->sched = vg_xcalloc(v->nsched, sizeof *f->sched);
        memcpy(f->sched, v->sched, v->nsched * sizeof *f->sched);
    }
    f->nsched = v->nsched;
    f->sched_ok = v->read_ok;
    f->sched_at = v->read_at;
    vg_strlcpy(f->sched_err, v->read_err, sizeof f->sched_err);
    pthread_mutex_unlock(&v->lock);
    const struct vg_policy *p = v->o.policy;
    for (size_t i = 0; i < f->nsched; i++) {
        struct fnode *n = node_of(f, f->sched[i].name);
        if (!n) continue;
        n->sched = &f->sched[i];
        if (f->sched[i].drain || f->sched[i].down) raise_state(n, vg_orch_ours(&f->sched[i]) ? ST_ISOLATED : ST_UNAVAILABLE, 0);
    }
    for (size_t i = 0; p && i < p->nspares; i++) node_of(f, p->spares[i]);
    for (size_t i = 0; p && i < p->ndomain; i++) node_of(f, p->domain_nodes[i]);
    struct vg_executor *exec = __atomic_load_n(&v->o.exec, __ATOMIC_ACQUIRE);
    f->view = exec ? vg_executor_view(exec) : NULL;
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(f->view, "pool"), i, x) {
        struct fnode *n = node_of(f, json_string_value(x));
        if (n) n->in_pool = true, raise_state(n, ST_SPARE, 0);
    }
    f->counts = vg_store_nodes(v->o.reader);
    json_array_foreach(f->counts, i, x) {
        struct fnode *n = node_of(f, vg_json_str(x, "node", ""));
        if (n) n->counts = x;
    }
    f->returns = vg_store_returns(v->o.reader, vg_clock_ms() - RETURNED_MS);
    json_array_foreach(f->returns, i, x) {
        struct fnode *n = node_of(f, vg_json_str(x, "node", ""));
        if (n) n->returned = x, raise_state(n, ST_RETURNED, 0);
    }
    json_t *open = vg_store_open_states(v->o.reader), *rep = json_object_get(f->view, "repairing");
    json_array_foreach(open, i, x) {
        struct fnode *n = node_of(f, vg_json_str(x, "node", ""));
        int64_t id = vg_json_int(x, "id", 0);
        if (n) raise_state(n, state_index(vg_fleetview_incident_state(vg_json_str(x, "state", ""), in_ids(rep, id))), id);
    }
    json_decref(open);
    for (size_t k = 0; k < f->len; k++) {
        struct fnode *n = &f->n[k];
        const char *d = p ? vg_policy_domain(p, n->name) : NULL;
        if (!d && n->sched && n->sched->domain[0]) d = n->sched->domain;
        if (!d && p) d = vg_domains_of(p->learned, n->name);
        vg_strlcpy(n->domain, d ? d : "", sizeof n->domain);
    }
    json_decref(f->index);   /* the order changes next */
    f->index = NULL;
    if (f->len) qsort(f->n, f->len, sizeof *f->n, by_domain_then_name);
}

static void fleet_free(struct fleet *f)
{
    free(f->n);
    free(f->sched);
    json_decref(f->counts);
    json_decref(f->view);
    json_decref(f->returns);
}

static json_t *nodes_json(const struct fleet *f)
{
    json_t *arr = json_array();
    for (size_t k = 0; k < f->len; k++) {
        const struct fnode *n = &f->n[k];
        const json_t *c = n->counts;
        json_t *j = json_pack("{s:s, s:s, s:b, s:I, s:I}", "node", n->name, "state", state_names[n->state], "spare",
                              n->in_pool, "incidents", (json_int_t)vg_json_int(c, "incidents", 0), "open_incidents",
                              (json_int_t)vg_json_int(c, "open_incidents", 0));
        vg_json_set_str(j, "domain", n->domain);
        json_object_set(j, "worst_open_action", c && json_object_get(c, "worst_open_action")
                                                    ? json_object_get(c, "worst_open_action") : json_null());
        json_object_set(j, "last_event", c && json_object_get(c, "last_event") ? json_object_get(c, "last_event")
                                                                                : json_null());
        json_object_set_new(j, "incident", n->incident ? json_integer(n->incident) : json_null());
        json_object_set_new(j, "returned", n->returned ? json_deep_copy(n->returned) : json_null());
        json_object_del(json_object_get(j, "returned"), "node");
        vg_json_set_str(j, "scheduler_state", n->sched ? n->sched->state : NULL);
        vg_json_set_str(j, "reason", n->sched ? n->sched->reason : NULL);
        json_array_append_new(arr, j);
    }
    return arr;
}

json_t *vg_fleetview_nodes(struct vg_fleetview *v)
{
    struct fleet f;
    gather(v, &f);
    json_t *j = nodes_json(&f);
    fleet_free(&f);
    return j;
}

/* vg_accounting over the last 30 days, or since the controller's first
 * record when that is later, recomputed at most every acct_max_age_ms. */
static json_t *accounting(struct vg_fleetview *v, size_t nodes)
{
    pthread_mutex_lock(&v->lock);
    if (!v->acct || vg_mono_ms() - v->acct_mono >= v->o.acct_max_age_ms) {
        int64_t now = vg_clock_ms();   /* never behind the store's stamps: a clock stepped back does not hide an outage */
        json_t *incs = vg_store_incidents_since(v->o.reader, now - ACCT_WINDOW_MS);
        struct vg_acct_opts ao = { .since_ms = now - ACCT_WINDOW_MS, .until_ms = now,
                                   .first_ms = vg_store_first_record(v->o.reader), .nodes = nodes,
                                   .policy = v->o.policy, .until_now = true };
        json_t *doc = vg_accounting(incs, &ao);
        json_decref(incs);
        json_t *keep = json_object();
        static const char *const keys[] = { "window", "nodes", "incidents", "interruptions", "availability",
                                            "mttr_s", "mtbi_s", "node_hours_lost", "causes", "racks", "rma_handoffs",
                                            "unmeasured" };
        for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
            json_object_set(keep, keys[i], json_object_get(doc, keys[i]));
        json_decref(doc);
        json_decref(v->acct);
        v->acct = keep;
        v->acct_mono = vg_mono_ms();
    }
    json_t *a = json_deep_copy(v->acct);
    pthread_mutex_unlock(&v->lock);
    return a;
}

static json_t *breaker_json(const struct fleet *f, const struct vg_policy *p, json_t *open)
{
    json_t *b = json_deep_copy(json_object_get(f->view, "breaker"));
    if (!b) return json_null();
    size_t cluster = f->nsched ? f->nsched : f->len, held = 0, i;
    size_t allowed = p ? cluster * (size_t)p->breaker_percent / 100 : 0;
    if (allowed < 1) allowed = 1;
    json_t *x;
    json_array_foreach(open, i, x)
        held += !strcmp(vg_json_str(x, "state", ""), "held") && vg_startswith(vg_json_str(x, "detail", ""), "breaker");
    json_int_t recent = vg_json_int(b, "isolations_in_window", 0);
    json_object_set_new(b, "allowed", json_integer((json_int_t)allowed));
    json_object_set_new(b, "held_open", json_integer((json_int_t)held));
    json_object_set_new(b, "state", json_string(held ? "holding" : (size_t)recent >= allowed ? "at limit" : "armed"));
    return b;
}

json_t *vg_fleetview_summary(struct vg_fleetview *v)
{
    struct fleet f;
    gather(v, &f);
    const struct vg_policy *p = v->o.policy;
    json_t *doc = json_object(), *states = json_object();
    json_object_set_new(doc, "at", vg_json_time(vg_now_ms()));
    json_t *sch = json_pack("{s:s, s:o}", "name", v->o.orch ? v->o.orch->ops->name : "none", "read_at",
                            vg_json_time(f.sched_ok ? f.sched_at : 0));
    vg_json_set_str(sch, "error", f.sched_ok ? NULL : f.sched_err[0] ? f.sched_err : "not read");
    json_object_set_new(doc, "scheduler", sch);
    size_t count[ST_N] = { 0 };
    for (size_t k = 0; k < f.len; k++) count[f.n[k].state]++;
    for (int s = 0; s < ST_N; s++) json_object_set_new(states, state_names[s], json_integer((json_int_t)count[s]));
    json_object_set_new(doc, "nodes", nodes_json(&f));
    json_object_set_new(doc, "states", states);
    json_object_set_new(doc, "domain_max_unavailable", json_integer(p ? p->domain_max_unavailable : 0));
    json_t *open = vg_store_open_states(v->o.reader);
    json_object_set_new(doc, "open_incidents", json_integer((json_int_t)json_array_size(open)));
    json_object_set_new(doc, "incidents", vg_store_incidents(v->o.reader, NULL, true, SUMMARY_INCIDENTS));
    json_t *configured = json_array(), *pool = json_object_get(f.view, "pool");
    for (size_t i = 0; p && i < p->nspares; i++) json_array_append_new(configured, json_string(p->spares[i]));
    json_object_set_new(doc, "spares", json_pack("{s:s, s:O, s:o}", "pool", p ? p->spare_pool : "", "nodes",
                                                 pool ? pool : json_array(), "configured", configured));
    json_object_set_new(doc, "breaker", breaker_json(&f, p, open));
    json_object_set_new(doc, "acting", json_boolean(json_is_true(json_object_get(f.view, "acting"))));
    json_decref(open);
    json_object_set_new(doc, "accounting", accounting(v, f.nsched ? f.nsched : f.len));
    fleet_free(&f);
    return doc;
}

void vg_fleetview_metrics(struct vg_fleetview *v, struct sbuf *out)
{
    struct fleet f;
    gather(v, &f);
    size_t count[ST_N] = { 0 };
    for (size_t k = 0; k < f.len; k++) count[f.n[k].state]++;
    fleet_free(&f);
    sbuf_puts(out, "# HELP vigil_nodes Nodes the controller knows, by state (the dashboard's).\n"
                   "# TYPE vigil_nodes gauge\n");
    for (int s = 0; s < ST_N; s++) sbuf_printf(out, "vigil_nodes{state=\"%s\"} %zu\n", state_names[s], count[s]);
    pthread_mutex_lock(&v->lock);
    unsigned long reads = v->reads;
    pthread_mutex_unlock(&v->lock);
    sbuf_printf(out, "# HELP vigil_view_scheduler_reads_total Node-list reads for the dashboard and vigil_nodes "
                     "(at most one per few seconds).\n# TYPE vigil_view_scheduler_reads_total counter\n"
                     "vigil_view_scheduler_reads_total %lu\n", reads);
}
