/* httpread.c — the controller's read endpoints: incidents (paginated),
 * nodes, the dashboard's summary, metrics, the dashboard page, healthz, the
 * fleet's audit and burn-in history (routed by httproutes.c; each but healthz
 * and the page needs the read token, see httpapi.h).  Reads go through their
 * own store connection. */
#include "controller/httpapi_int.h"
#include "controller/budget.h"
#include "controller/burnin_hist.h"
#include "util/mhdso.h"
#include "controller/commit.h"
#include "controller/dashboard.h"
#include "controller/fleetview.h"
#include "controller/nodeset.h"
#include "util/jsonutil.h"
#include "controller/storeguard.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include "wire/replay.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define VG_READ_LIMIT_MAX 1000
#define VG_READ_LIMIT_DEFAULT 100
#define VG_READ_COOKIE "vigil_read"

bool vg_http_read_allowed(struct vg_http *h, struct MHD_Connection *c)
{
    if (!h->o.read_token) return h->auth->mode == VG_AUTH_NONE;
    const char *authz = vg_mhd->lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if (authz && vg_startswith(authz, "Bearer ") && vg_auth_secret_equal(authz + 7, h->o.read_token)) return true;
    const char *cookie = vg_mhd->lookup_connection_value(c, MHD_COOKIE_KIND, VG_READ_COOKIE);
    return cookie && vg_auth_secret_equal(cookie, h->o.read_token);
}

static const char *arg(struct MHD_Connection *c, const char *name)
{
    return vg_mhd->lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
}

/* A filter's integer argument (code, gpu): absent -1, else 0 or more; false when it is not one. */
static bool filter_int(const char *v, int *out)
{
    long n = -1;
    if (v && (!vg_parse_long(v, &n) || n < 0 || n > INT32_MAX)) return false;
    *out = (int)n;
    return true;
}

/* A PCI address as the agents send it: hex digits, ':' and '.' (0000:3b:00.0). */
static bool pci_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= sizeof ((struct vg_event *)0)->pci) return false;
    for (; *s; s++)
        if (!strchr("0123456789abcdefABCDEF:.", *s)) return false;
    return true;
}

/* A kind the catalog knows (any name of an event's kind when the intake takes any kind). */
static bool kind_ok(const struct vg_ingest *in, const char *kind)
{
    if (in->kinds) {
        for (size_t k = 0; k < in->nkinds; k++)
            if (!strcmp(in->kinds[k], kind)) return true;
        return false;
    }
    size_t n = strlen(kind);
    if (n == 0 || n >= sizeof ((struct vg_event *)0)->kind) return false;
    for (; *kind; kind++)
        if (!(*kind >= 'a' && *kind <= 'z') && !(*kind >= '0' && *kind <= '9') && *kind != '-') return false;
    return true;
}

/* `&name=value` onto the next page's address when the request had it (the
 * value passed the checks above: nothing in it needs escaping). */
static void link_arg(struct sbuf *b, const char *name, const char *v)
{
    if (v) sbuf_printf(b, "&%s=%s", name, v);
}

enum MHD_Result vg_http_get_incidents(struct vg_http *h, struct MHD_Connection *c, const char *url)
{
    (void)url;
    const char *node = arg(c, "node"), *open = arg(c, "open"), *lim = arg(c, "limit"), *bef = arg(c, "before");
    const char *kind = arg(c, "kind"), *code = arg(c, "code"), *pci = arg(c, "pci"), *gpu = arg(c, "gpu");
    long limit = VG_READ_LIMIT_DEFAULT, before = 0;
    struct vg_incident_filter f = { .node = node, .kind = kind, .pci = pci };
    if (lim && (!vg_parse_long(lim, &limit) || limit < 1 || limit > VG_READ_LIMIT_MAX))
        return vg_http_error(c, 400, "limit: must be an integer from 1 to %d", VG_READ_LIMIT_MAX);
    if (bef && (!vg_parse_long(bef, &before) || before < 1))
        return vg_http_error(c, 400, "before: must be a positive incident id");
    if (node && !vg_ingest_node_ok(node)) return vg_http_error(c, 400, "node: not a node name");
    if (open && strcmp(open, "0") && strcmp(open, "1")) return vg_http_error(c, 400, "open: must be 0 or 1");
    if (kind && !kind_ok(h->ingest, kind)) return vg_http_error(c, 400, "kind: not a kind the catalog knows");
    if (!filter_int(code, &f.code)) return vg_http_error(c, 400, "code: must be an integer from 0");
    if (pci && !pci_ok(pci)) return vg_http_error(c, 400, "pci: not a PCI address (0000:3b:00.0)");
    if (!filter_int(gpu, &f.gpu)) return vg_http_error(c, 400, "gpu: must be an integer from 0");
    f.open_only = open && !strcmp(open, "1");
    json_t *page = vg_store_incidents_page(h->o.reader, &f, before, (int)limit);
    size_t n = json_array_size(page);
    char *body = json_dumps(page, JSON_COMPACT | JSON_ENSURE_ASCII);
    int64_t last = n ? json_integer_value(json_object_get(json_array_get(page, n - 1), "id")) : 0;
    json_decref(page);
    struct MHD_Response *r = vg_mhd->create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    vg_mhd->add_response_header(r, "Content-Type", "application/json");
    if (n == (size_t)limit && last > 1) { /* a full page: the cursor to the next one, with the same filters */
        struct sbuf link = SBUF_INIT;
        sbuf_printf(&link, "</v1/incidents?limit=%ld&before=%lld", limit, (long long)last);
        link_arg(&link, "node", node);
        link_arg(&link, "open", f.open_only ? "1" : NULL);
        link_arg(&link, "kind", kind);
        if (f.code >= 0) sbuf_printf(&link, "&code=%d", f.code);
        link_arg(&link, "pci", pci);
        if (f.gpu >= 0) sbuf_printf(&link, "&gpu=%d", f.gpu);
        sbuf_puts(&link, ">; rel=\"next\"");
        char *l = sbuf_take(&link);
        vg_mhd->add_response_header(r, "Link", l);
        free(l);
    }
    enum MHD_Result ok = vg_mhd->queue_response(c, 200, r);
    vg_mhd->destroy_response(r);
    return ok;
}

enum MHD_Result vg_http_get_metrics(struct vg_http *h, struct MHD_Connection *c, const char *url)
{
    (void)url;
    int64_t inc = 0, open = 0, msgs = 0;
    unsigned long committed = 0, commits = 0, failures = 0;
    vg_store_counts(h->o.reader, &inc, &open, &msgs);
    vg_committer_counts(h->ingest->committer, &committed, &commits, &failures);
    pthread_mutex_lock(&h->conns_lock);
    unsigned long deadline_closed = h->deadline_closed;
    pthread_mutex_unlock(&h->conns_lock);
    pthread_mutex_lock(&h->auth_lock);
    size_t windows = h->auth->replay ? vg_replay_nodes(h->auth->replay) : 0;
    pthread_mutex_unlock(&h->auth_lock);
    struct sbuf b = SBUF_INIT;
    pthread_mutex_lock(&h->lock);
    sbuf_printf(&b,
                "# HELP vigil_incidents_total Incidents recorded.\n# TYPE vigil_incidents_total counter\n"
                "vigil_incidents_total %lld\n"
                "# HELP vigil_incidents_open Incidents not yet closed.\n# TYPE vigil_incidents_open gauge\n"
                "vigil_incidents_open %lld\n"
                "# HELP vigil_events_stored_total Agent events stored (deduplicated deliveries).\n"
                "# TYPE vigil_events_stored_total counter\nvigil_events_stored_total %lld\n"
                "# HELP vigil_http_requests_total HTTP requests served.\n# TYPE vigil_http_requests_total counter\n"
                "vigil_http_requests_total %lu\n"
                "# HELP vigil_rejected_total Requests rejected, by reason.\n# TYPE vigil_rejected_total counter\n"
                "vigil_rejected_total{reason=\"auth\"} %lu\nvigil_rejected_total{reason=\"identity\"} %lu\n"
                "vigil_rejected_total{reason=\"input\"} %lu\n"
                "vigil_rejected_total{reason=\"storage\"} %lu\nvigil_rejected_total{reason=\"busy\"} %lu\n"
                "# HELP vigil_http_deadline_closed_total Connections closed for missing their request deadline.\n"
                "# TYPE vigil_http_deadline_closed_total counter\nvigil_http_deadline_closed_total %lu\n"
                "# HELP vigil_http_body_bytes_inflight Request body bytes buffered now.\n"
                "# TYPE vigil_http_body_bytes_inflight gauge\nvigil_http_body_bytes_inflight %zu\n"
                "# HELP vigil_auth_nonce_windows Nodes with a token nonce window (bounded by the scheduler's nodes).\n"
                "# TYPE vigil_auth_nonce_windows gauge\nvigil_auth_nonce_windows %zu\n"
                "# HELP vigil_store_commits_total Transactions committed (each holds one or more messages).\n"
                "# TYPE vigil_store_commits_total counter\nvigil_store_commits_total %lu\n"
                "# HELP vigil_store_messages_total Agent messages committed.\n"
                "# TYPE vigil_store_messages_total counter\nvigil_store_messages_total %lu\n"
                "# HELP vigil_agent_spool_dropped_events_total Record-only events agents' spools dropped at their cap.\n"
                "# TYPE vigil_agent_spool_dropped_events_total counter\nvigil_agent_spool_dropped_events_total %lu\n",
                (long long)inc, (long long)open, (long long)msgs, h->requests, h->rejected_auth,
                h->rejected_identity, h->rejected_input, h->rejected_storage, h->rejected_busy, deadline_closed,
                vg_budget_inflight(h->budget), windows, commits, committed,
                __atomic_load_n(&h->ingest->spool_dropped, __ATOMIC_RELAXED));
    pthread_mutex_unlock(&h->lock);
    if (h->ingest->metrics) h->ingest->metrics(h->ingest->ctx, &b);
    return vg_http_reply(c, 200, "text/plain; version=0.0.4", sbuf_take(&b));
}

/* `/`: the live dashboard (dashboard.h).  `/?token=T` (the read token) sets
 * the cookie and redirects to `/`, so the token leaves the address bar. */
enum MHD_Result vg_http_get_dashboard(struct vg_http *h, struct MHD_Connection *c, const char *url)
{
    (void)url;
    const char *token = vg_mhd->lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
    if (token && h->o.read_token && vg_auth_secret_equal(token, h->o.read_token)) {
        char cookie[400];
        snprintf(cookie, sizeof cookie, VG_READ_COOKIE "=%s; HttpOnly; SameSite=Strict; Path=/%s", h->o.read_token,
                 h->o.tls_cert ? "; Secure" : "");
        struct MHD_Response *r = vg_mhd->create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        vg_mhd->add_response_header(r, "Set-Cookie", cookie);
        vg_mhd->add_response_header(r, "Location", "/");
        enum MHD_Result ok = vg_mhd->queue_response(c, 303, r);
        vg_mhd->destroy_response(r);
        return ok;
    }
    if (!vg_http_read_allowed(h, c)) {
        vg_http_count(h, &h->rejected_auth, 1);
        return vg_http_reply(c, 401, "text/html; charset=utf-8",
                             vg_xstrdup("<!doctype html><title>vigil</title><p>Open <code>/?token=READ-TOKEN</code> "
                                        "once (the token of <code>vigil serve --read-token-file</code>).\n"));
    }
    /* a fresh nonce per page: only the page's own script and style run */
    unsigned char rnd[16];
    char nonce[2 * sizeof rnd + 1];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) return vg_http_error(c, 503, "random: unavailable");
    for (size_t i = 0; i < sizeof rnd; i++) snprintf(nonce + 2 * i, 3, "%02x", rnd[i]);
    char *page = vg_dashboard_page(nonce), *csp = vg_dashboard_csp(nonce);
    struct MHD_Response *r = vg_mhd->create_response_from_buffer(strlen(page), page, MHD_RESPMEM_MUST_FREE);
    vg_mhd->add_response_header(r, "Content-Type", "text/html; charset=utf-8");
    vg_mhd->add_response_header(r, "Content-Security-Policy", csp);
    vg_mhd->add_response_header(r, "X-Content-Type-Options", "nosniff");
    vg_mhd->add_response_header(r, "Referrer-Policy", "no-referrer");
    vg_mhd->add_response_header(r, "Cache-Control", "no-store");
    enum MHD_Result ok = vg_mhd->queue_response(c, 200, r);
    vg_mhd->destroy_response(r);
    free(csp);
    return ok;
}

/* ?limit=K (1..max, default def) and ?after=NODE, the cursor of a page of
 * nodes.  0, or -1 with the 400 answer queued in *r. */
static int page_args(struct MHD_Connection *c, long def, long max, long *limit, const char **after,
                     enum MHD_Result *r)
{
    const char *lim = vg_mhd->lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "limit");
    *after = vg_mhd->lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "after");
    *limit = def;
    if (lim && (!vg_parse_long(lim, limit) || *limit < 1 || *limit > max))
        return *r = vg_http_error(c, 400, "limit: must be an integer from 1 to %ld", max), -1;
    if (*after && !vg_ingest_node_ok(*after)) return *r = vg_http_error(c, 400, "after: not a node name"), -1;
    return 0;
}

/* A JSON answer with, when next is set, a Link to the next page ("/v1/…?…&after=NEXT"). */
static enum MHD_Result reply_page(struct MHD_Connection *c, json_t *doc, const char *link_prefix, const char *next)
{
    char *body = json_dumps(doc, JSON_COMPACT | JSON_ENSURE_ASCII);
    json_decref(doc);
    if (!body) return vg_http_error(c, 503, "memory: the answer could not be built");
    struct MHD_Response *r = vg_mhd->create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    vg_mhd->add_response_header(r, "Content-Type", "application/json");
    if (next) {
        char link[512];
        snprintf(link, sizeof link, "<%s&after=%s>; rel=\"next\"", link_prefix, next);
        vg_mhd->add_response_header(r, "Link", link);
    }
    enum MHD_Result ok = vg_mhd->queue_response(c, 200, r);
    vg_mhd->destroy_response(r);
    return ok;
}

/* GET /v1/burnin?node=N&days=D&limit=K&after=NODE: the burn-in history over
 * the last D days (default 7): the summary of every node, one page of nodes
 * (default and at most VG_BURNIN_PAGE_MAX), coverage against the nodes the
 * scheduler lists.  Read a row at a time: its memory is the page's. */
enum MHD_Result vg_http_get_burnin(struct vg_http *h, struct MHD_Connection *c, const char *url)
{
    (void)url;
    const char *node = vg_mhd->lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "node");
    const char *days_s = vg_mhd->lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "days"), *after;
    long days = 7, limit;
    enum MHD_Result r;
    if (days_s && (!vg_parse_long(days_s, &days) || days < 1 || days > 3650))
        return vg_http_error(c, 400, "days: '%s' is not a number of days (1..3650)", days_s);
    if (node && !vg_ingest_node_ok(node)) return vg_http_error(c, 400, "node: not a node name");
    if (page_args(c, VG_BURNIN_PAGE_MAX, VG_BURNIN_PAGE_MAX, &limit, &after, &r)) return r;
    size_t cluster = h->o.nodes ? vg_nodeset_count(h->o.nodes) : 0;
    int64_t now = vg_now_ms();
    json_t *doc = vg_burnin_history(h->o.reader, node, now - days * 24 * 3600 * 1000LL, now, node ? 0 : cluster, after,
                                    (int)limit);
    if (!doc) return vg_http_error(c, 503, "storage: the burn-in history cannot be read");
    char prefix[200];
    snprintf(prefix, sizeof prefix, "/v1/burnin?days=%ld&limit=%ld%s%s", days, limit, node ? "&node=" : "",
             node ? node : "");
    const char *next = json_string_value(json_object_get(doc, "next_after"));
    char cursor[64];
    vg_strlcpy(cursor, next ? next : "", sizeof cursor);
    return reply_page(c, doc, prefix, next ? cursor : NULL);
}

/* GET /v1/audit?raw=1&limit=K&after=NODE: one page of the nodes' latest
 * reports, [{node, at, report}] by node (default 100, at most 1,000). */
struct raw_page { json_t *arr; };
static int raw_row(void *ctx, const char *node, int64_t at, const char *report)
{
    struct raw_page *p = ctx;
    json_t *rep = json_loads(report, 0, NULL);
    json_array_append_new(p->arr, json_pack("{s:s, s:o, s:o}", "node", node, "at", vg_json_time(at), "report",
                                            rep ? rep : json_null()));
    return 0;
}

static enum MHD_Result audit_raw(struct vg_http *h, struct MHD_Connection *c)
{
    long limit;
    const char *after;
    enum MHD_Result r;
    if (page_args(c, VG_READ_LIMIT_DEFAULT, VG_READ_LIMIT_MAX, &limit, &after, &r)) return r;
    struct raw_page p = { json_array() };
    if (vg_store_audits_each(h->o.reader, after, (int)limit, raw_row, &p)) {
        json_decref(p.arr);
        return vg_http_error(c, 503, "storage: the audit reports cannot be read");
    }
    size_t n = json_array_size(p.arr);
    char prefix[64], cursor[64];
    snprintf(prefix, sizeof prefix, "/v1/audit?raw=1&limit=%ld", limit);
    vg_strlcpy(cursor, n ? vg_json_str(json_array_get(p.arr, n - 1), "node", "") : "", sizeof cursor);
    return reply_page(c, p.arr, prefix, n == (size_t)limit ? cursor : NULL);
}

/* /healthz: "ok" and the controller's lines (several controllers: the role,
 * the term, the leader); 503 once the store is lost. */
enum MHD_Result vg_http_get_healthz(struct vg_http *h, struct MHD_Connection *c, const char *url)
{
    (void)url;
    const char *lost = vg_storeguard_lost(h->ingest->guard);
    if (!lost) {
        struct sbuf b = SBUF_INIT;
        sbuf_puts(&b, "ok\n");
        if (h->o.health) h->o.health(h->o.health_ctx, &b);
        return vg_http_reply(c, 200, "text/plain", sbuf_take(&b));
    }
    char *body;
    if (asprintf(&body, "store lost: %s\n", lost) < 0) body = vg_xstrdup("store lost\n");
    return vg_http_reply(c, 503, "text/plain", body);
}

enum MHD_Result vg_http_get_nodes(struct vg_http *h, struct MHD_Connection *c, const char *url)
{
    (void)url;
    return vg_http_reply_json(c, 200, h->o.view ? vg_fleetview_nodes(h->o.view) : vg_store_nodes(h->o.reader));
}

enum MHD_Result vg_http_get_summary(struct vg_http *h, struct MHD_Connection *c, const char *url)
{
    (void)url;
    return vg_http_reply_json(c, 200, vg_fleetview_summary(h->o.view));
}

/* GET /v1/audit: the fleet's reports merged; ?raw=1 (or no merge): the
 * reports themselves, a page at a time. */
enum MHD_Result vg_http_get_audit(struct vg_http *h, struct MHD_Connection *c, const char *url)
{
    (void)url;
    const char *raw = vg_mhd->lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "raw");
    if ((raw && !strcmp(raw, "1")) || !h->o.fleet) return audit_raw(h, c);
    json_t *doc = h->o.fleet(h->o.fleet_ctx, h->o.reader);
    return doc ? vg_http_reply_json(c, 200, doc) : vg_http_error(c, 503, "storage: the audit reports cannot be read");
}

/* GET /v1/incidents/ID */
enum MHD_Result vg_http_get_incident(struct vg_http *h, struct MHD_Connection *c, const char *url)
{
    long id;
    json_t *j = vg_parse_long(url + strlen("/v1/incidents/"), &id) ? vg_store_incident(h->o.reader, id) : NULL;
    if (j) return vg_http_reply_json(c, 200, j);
    return vg_http_error(c, 404, "no such incident");
}
