/* controller.c — the controller's start and stop, in order (controller.h):
 * the policy and the catalog; the store's file made ready, locked and
 * checked (SQLite), its four connections and their watch; the nodes the
 * scheduler lists; the nodes' reports, the fleet audit and the cluster view;
 * the intake's group commit; the HTTP server; then acting — at once on
 * SQLite, through the election on PostgreSQL.  The stop runs the other way:
 * nothing starts acting, the heartbeat monitor stops (it feeds the intake),
 * the HTTP server answers what it took, the committer stores what is queued,
 * the executor stops, a leader resigns, and the store's lock goes last. */
#include "controller/controller_int.h"
#include "controller/commit.h"
#include "controller/domains.h"
#include "controller/election.h"
#include "controller/executor.h"
#include "controller/fleetview.h"
#include "controller/nodereport.h"
#include "controller/nodeset.h"
#include "controller/store.h"
#include "controller/store_file.h"
#include "controller/storeguard.h"
#include "util/log.h"
#include "util/strutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

struct vg_orch *vg_controller_orch(const struct vg_controller *c, const struct vg_orch_conf *conf, char *err,
                                   size_t errlen)
{
    return c->o.orch_ops ? vg_orch_open_ops(c->o.orch_ops, conf, err, errlen)
                         : vg_orch_open(c->o.orchestrator, conf, err, errlen);
}

/* The kinds the catalog knows, each once (the intake's vocabulary). */
static size_t catalog_kinds(const struct vg_catalog *cat, const char ***out)
{
    size_t n = 0, total = vg_catalog_count(cat);
    const char **kinds = vg_xcalloc(total ? total : 1, sizeof *kinds);
    for (size_t i = 0; i < total; i++) {
        const char *k = vg_catalog_at(cat, i)->kind;
        size_t j = 0;
        while (j < n && strcmp(kinds[j], k)) j++;
        if (j == n) kinds[n++] = k;
    }
    *out = kinds;
    return n;
}

/* http(s)://HOST:PORT for the address listened on: the host name when that
 * is every address (0.0.0.0, [::]). */
static void listen_url(const char *listen, bool tls, unsigned port, char *buf, size_t n)
{
    char host[256] = "";
    const char *colon = strrchr(listen, ':');
    if (colon && (size_t)(colon - listen) < sizeof host) memcpy(host, listen, (size_t)(colon - listen)), host[colon - listen] = 0;
    if (!host[0] || !strcmp(host, "0.0.0.0") || !strcmp(host, "[::]") || !strcmp(host, "*"))
        if (gethostname(host, sizeof host - 1)) strcpy(host, "localhost");
    snprintf(buf, n, "%s://%s:%u", tls ? "https" : "http", host, port);
}

/* Room for the connection limit: the soft descriptor limit up to the hard one. */
static unsigned raise_nofile(unsigned want)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl)) return want;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)want + 64)
        want = rl.rlim_cur > 128 ? (unsigned)(rl.rlim_cur - 64) : 64;
    return want;
}

/* The policy, the catalog, the executor's handle on the scheduler; the
 * store's file ready, locked and checked, its connections open and watched.
 * 0, or -1 with err. */
static int open_store(struct vg_controller *c, char *err, size_t errlen)
{
    const char *db = c->o.db;
    if (c->o.policy_file && vg_policy_load(&c->policy, c->o.policy_file, err, errlen)) return -1;
    /* the one source of verdicts, with the site policy, as the agents load it */
    if (!(c->cat = vg_catalog_open(NULL, c->o.catalog_file, c->o.fault_policy, err, errlen))) return -1;
    char why[400];
    if (!(c->orch = vg_controller_orch(c, &c->o.orch_conf, why, sizeof why))) {
        snprintf(err, errlen, "serve: %s", why);
        return -1;
    }
    c->nkinds = catalog_kinds(c->cat, &c->kinds);
    c->file_store = !strcmp(vg_store_engine(db), "sqlite");
    if (c->file_store && vg_store_file_prepare(db, err, errlen)) return -1;
    /* One writer: the store's lock first (nothing is read or moved aside under
     * another controller), then a corrupt store refused or moved aside. */
    c->guard = vg_storeguard_lock(db, why, sizeof why);
    if (c->guard && vg_storeguard_verify(c->guard, c->o.new_store, why, sizeof why)) {
        vg_storeguard_close(c->guard);
        c->guard = NULL;
    }
    if (!c->guard || vg_store_open(db, &c->store, why, sizeof why) || vg_store_open(db, &c->wstore, why, sizeof why) ||
        vg_store_open(db, &c->astore, why, sizeof why) || vg_store_open_reader(db, &c->reader, why, sizeof why)) {
        snprintf(err, errlen, "serve: %s", why);
        return -1;
    }
    vg_storeguard_watch(c->guard, (struct vg_store *const[]){ c->store, c->wstore, c->astore, c->reader }, 4);
    return 0;
}

/* Everything that reads or takes what the nodes send, then the HTTP server
 * and acting.  0, or -1 with err. */
/* GET /v1/audit: the command's merge, over the scheduler's nodes. */
static json_t *fleet(void *ctx, struct vg_store *reader)
{
    struct vg_controller *c = ctx;
    return c->o.fleet(c->o.fleet_ctx, reader, c->nodes);
}

static int open_service(struct vg_controller *c, char *err, size_t errlen)
{
    char why[400];
    c->domains = vg_domains_new();
    c->policy.learned = c->domains;
    /* the nodes the scheduler lists: the only ones the intake, the heartbeat
     * monitor, the node reports and the fleet audit believe, read by a thread
     * of its own through a handle of its own */
    struct vg_orch_conf noc = c->o.orch_conf;
    noc.timeout_ms = 5000;
    struct vg_orch *ns_orch = vg_controller_orch(c, &noc, err, errlen);
    c->nodes = ns_orch ? vg_nodeset_start(ns_orch, 0, 0) : NULL;
    if (c->nodes && !vg_nodeset_wait(c->nodes, 3000)) {
        vg_nodeset_error(c->nodes, why, sizeof why);
        vg_warn("serve: the scheduler's node list is not read yet (%s): nodes are answered 503 until it is", why);
    }
    c->hbo = c->o.heartbeat;
    c->hbo.nodes = c->nodes;
    c->reports = vg_nodereports_new(&(struct vg_nodereports_opts){
        .store = c->astore, .nodes = c->nodes, .alarm_bytes = (int64_t)c->o.alarm_mb << 20 });
    /* the dashboard reads the node list through a handle of its own, with a
     * short timeout, so it never waits behind (or delays) an action */
    struct vg_orch_conf voc = c->o.orch_conf;
    voc.timeout_ms = 2000;
    if (!(c->view_orch = vg_controller_orch(c, &voc, why, sizeof why)))
        vg_warn("serve: the dashboard will not read the scheduler: %s", why);
    c->view = vg_fleetview_new(&(struct vg_fleetview_opts){ .reader = c->reader, .policy = &c->policy, .orch = c->view_orch });
    c->ingest = (struct vg_ingest){ .store = c->wstore, .guard = c->guard, .window_ms = c->o.window_s * 1000, .cat = c->cat,
                                    .kinds = c->kinds, .nkinds = c->nkinds, .on_new_incident = vg_controller_on_incident,
                                    .metrics = vg_controller_metrics, .ctx = c };
    /* agents' messages and the controller's own events, one group commit */
    c->ingest.committer = vg_committer_start(&c->ingest);
    c->hopts = (struct vg_http_opts){
        .listen = c->o.listen, .read_token = c->o.read_token, .reader = c->reader, .nodes = c->nodes,
        .tls_cert = c->o.tls_cert, .tls_key = c->o.tls_key, .reports = c->reports, .fleet = c->o.fleet ? fleet : NULL,
        .fleet_ctx = c, .view = c->view, .max_per_client = c->o.max_per_client,
        .max_connections = raise_nofile(c->o.max_connections ? c->o.max_connections : 1024) };
    if (c->hbo.interval_ms > 0) c->hopts.on_beat = vg_controller_on_beat, c->hopts.beat_ctx = c;
    if (!c->file_store) c->hopts.health = vg_controller_health, c->hopts.health_ctx = c;
    if (!c->nodes) return -1;   /* err says why the scheduler's handle did not open */
    if (!c->ingest.committer) {
        snprintf(err, errlen, "serve: the intake's writer thread cannot start");
        return -1;
    }
    if (!(c->http = vg_http_start(&c->hopts, c->o.auth, &c->ingest, err, errlen))) return -1;
    listen_url(c->o.listen, c->o.tls_cert != NULL, vg_http_port(c->http), c->url, sizeof c->url);
    if (c->file_store) {
        vg_controller_act(c);
        return 0;
    }
    /* one of several controllers: it acts once elected */
    c->election = vg_election_start(&(struct vg_election_opts){ .target = c->o.db, .url = c->o.advertise ? c->o.advertise : c->url,
                                                                 .on_lead = vg_controller_on_lead,
                                                                 .on_lost = vg_controller_on_lost, .ctx = c },
                                    err, errlen);
    return c->election ? 0 : -1;
}

struct vg_controller *vg_controller_start(const struct vg_controller_opts *o, char *err, size_t errlen)
{
    struct vg_controller *c = vg_xcalloc(1, sizeof *c);
    c->o = *o;
    vg_policy_defaults(&c->policy);
    if (open_store(c, err, errlen) || open_service(c, err, errlen)) {
        vg_controller_stop(c);
        return NULL;
    }
    return c;
}

unsigned vg_controller_port(const struct vg_controller *c) { return vg_http_port(c->http); }
const char *vg_controller_url(const struct vg_controller *c) { return c->url; }
const char *vg_controller_orchestrator(const struct vg_controller *c) { return c->orch->ops->name; }
struct vg_ingest *vg_controller_intake(struct vg_controller *c) { return &c->ingest; }

bool vg_controller_stop(struct vg_controller *c)
{
    vg_election_stop(c->election);   /* no more elections: nothing starts acting now */
    vg_heartbeats_stop(c->hb);       /* before the intake stops: it feeds it */
    c->hb = NULL;
    vg_http_stop(c->http);           /* answers every message it took */
    vg_committer_stop(c->ingest.committer);   /* stores what is queued */
    vg_orch_close(c->hb_orch);
    vg_nodeset_stop(c->nodes);
    vg_executor_stop(c->exec);
    vg_election_free(c->election);   /* a leader resigns: a follower takes over at its next look */
    bool lost = __atomic_load_n(&c->lost, __ATOMIC_ACQUIRE);
    vg_fleetview_free(c->view);
    vg_nodereports_free(c->reports);
    vg_orch_close(c->view_orch);
    vg_orch_close(c->orch);
    vg_policy_free(&c->policy);
    vg_domains_free(c->domains);
    vg_store_close(c->reader);
    vg_store_close(c->astore);
    vg_store_close(c->wstore);
    vg_store_close(c->store);
    vg_storeguard_close(c->guard);   /* the lock last: the store is closed */
    free(c->kinds);
    vg_catalog_free(c->cat);
    free(c);
    return lost;
}
