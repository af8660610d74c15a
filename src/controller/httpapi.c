/* httpapi.c — the controller's HTTP server on libmicrohttpd: connections,
 * limits, deadlines, authentication (who a request speaks for) and agent
 * messages; see httpapi.h.  The read endpoints are in httpread.c. */
#include "controller/httpapi_int.h"
#include "util/condwait.h"
#include "util/mhdso.h"
#include "controller/budget.h"
#include "controller/clock.h"
#include "controller/commit.h"
#include "controller/domains.h"
#include "controller/nodereport.h"
#include "controller/nodeset.h"
#include "controller/store.h"
#include "controller/storeguard.h"
#include "core/event.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include "wire/limits.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* One TCP connection, for the deadline reaper. */
struct conn {
    struct conn *prev, *next;
    int fd;
    int64_t deadline; /* mono ms; 0: none (the server is answering) */
};

/* One POST request. */
struct vg_upload {
    struct vg_http *h;
    struct MHD_Connection *c;
    struct sbuf body;
    size_t reserved;      /* body bytes taken from the budget, under key */
    char key[64];         /* whose share of the budget: the node spoken for, else the address */
    struct vg_auth_id id; /* what the request's credential proves */
    int code;             /* the answer once decided (0: not yet) */
    json_t *resp;
    bool queued;          /* handed to the committer, connection suspended */
    const struct vg_route *route;   /* its route (httproutes.c) */
    struct vg_commit_req req;
};

/* Rejected requests: a few lines per window, the rest counted (an
 * unauthenticated flood must not bury the controller's own lines). */
static struct vg_lograte rejected_log = VG_LOGRATE("rejected request", 10000, 10);
/* libmicrohttpd's own lines (a client over the per-address limit, a TLS
 * handshake cut short): per connection, so bounded like the rejections. */
static struct vg_lograte mhd_log = VG_LOGRATE("libmicrohttpd", 10000, 5);
/* Requests taken on the shared token: said now and then, not per request. */
static struct vg_lograte shared_log = VG_LOGRATE("shared token", 600000, 1);

enum MHD_Result vg_http_reply(struct MHD_Connection *c, unsigned code, const char *type, char *body)
{
    struct MHD_Response *r = vg_mhd->create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    vg_mhd->add_response_header(r, "Content-Type", type);
    enum MHD_Result ok = vg_mhd->queue_response(c, code, r);
    vg_mhd->destroy_response(r);
    return ok;
}

enum MHD_Result vg_http_reply_json(struct MHD_Connection *c, unsigned code, json_t *j)
{
    char *s = json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII);
    json_decref(j);
    return vg_http_reply(c, code, "application/json", s ? s : vg_xstrdup("null"));
}

enum MHD_Result vg_http_error(struct MHD_Connection *c, unsigned code, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return vg_http_reply_json(c, code, json_pack("{s:s}", "error", why));
}

void vg_http_count(struct vg_http *h, unsigned long *counter, unsigned long add)
{
    pthread_mutex_lock(&h->lock);
    *counter += add;
    pthread_mutex_unlock(&h->lock);
}

static const char *peer(struct MHD_Connection *c, char *buf, size_t n)
{
    const union MHD_ConnectionInfo *ci = vg_mhd->get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    buf[0] = 0;
    if (ci && ci->client_addr && ci->client_addr->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)ci->client_addr)->sin_addr, buf, (socklen_t)n);
    return buf[0] ? buf : "?";
}

static struct conn *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci = vg_mhd->get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

static void set_deadline(struct vg_http *h, struct MHD_Connection *c, int64_t deadline)
{
    struct conn *k = conn_of(c);
    if (!k) return;
    pthread_mutex_lock(&h->conns_lock);
    k->deadline = deadline;
    pthread_mutex_unlock(&h->conns_lock);
}

static void mhd_logger(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    line[strcspn(line, "\n")] = 0;
    vg_warn_limited(&mhd_log, "http: %s", line);
}

/* A refusal: counted under counter, logged at a bounded rate. */
static void note_refusal(struct vg_http *h, struct vg_upload *up, unsigned long *counter, const char *why)
{
    char addr[64];
    vg_http_count(h, counter, 1);
    vg_warn_limited(&rejected_log, "rejected POST %s from %s: %s", up->route->path, peer(up->c, addr, sizeof addr),
                    why);
}

/* Refuses the request with code: counted under counter, logged (at a
 * bounded rate), the reason in up->resp.  Returns code. */
static int refuse(struct vg_http *h, struct vg_upload *up, unsigned long *counter, int code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int refuse(struct vg_http *h, struct vg_upload *up, unsigned long *counter, int code, const char *fmt, ...)
{
    char why[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    note_refusal(h, up, counter, why);
    json_decref(up->resp);
    up->resp = json_pack("{s:s}", "error", why);
    return code;
}

/* Takes n more body bytes from the budget (the client's share and the
 * whole); 0, or the refusal's status. */
static int take(struct vg_http *h, struct vg_upload *up, size_t n)
{
    int rc = vg_budget_take(h->budget, up->key, n);
    if (rc == 0) {
        up->reserved += n;
        return 0;
    }
    if (rc == 1)
        return refuse(h, up, &h->rejected_busy, 503, "busy: more than %zu body bytes in flight; retry",
                      vg_budget_total(h->budget));
    return refuse(h, up, &h->rejected_busy, 503, "busy: more than %zu body bytes in flight from %s; retry",
                  vg_budget_share(h->budget), up->key);
}

static void release(struct vg_http *h, struct vg_upload *up)
{
    vg_budget_give(h->budget, up->key, up->reserved);
    up->reserved = 0;
}

/* The most body bytes a POST may carry (its route's), so a bigger one is
 * refused at its headers, before a byte of it is read. */
static size_t body_limit(const struct vg_upload *up)
{
    return up->route->max_body;
}

/* May the request name node (sender: the node its credential speaks for, ""
 * none: auth none, any node the scheduler lists)?  vg_nodeset_may_name
 * decides; 0, or the refusal's status. */
static int may_name(struct vg_http *h, struct vg_upload *up, const char *node, const char *sender)
{
    char err[320];
    int code = vg_nodeset_may_name(h->o.nodes, "node", node, sender, err, sizeof err);
    if (!code) return 0;
    return refuse(h, up, code == 400 ? &h->rejected_input : code == 403 ? &h->rejected_identity : &h->rejected_busy,
                  code, "%s", err);
}

/* The node the credential speaks for may speak here: the scheduler lists it
 * and, with MUNGE, the credential was made at its address.  0, or the
 * refusal's status. */
static int node_allowed(struct vg_http *h, struct vg_upload *up)
{
    if (!up->id.node[0]) return 0;
    int rc = may_name(h, up, up->id.node, NULL);
    if (rc || !h->o.nodes) return rc;
    if (h->auth->mode == VG_AUTH_MUNGE && vg_nodeset_has_addr(h->o.nodes, up->id.node, up->id.origin4) != 1) {
        char a[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &up->id.origin4, a, sizeof a);
        return refuse(h, up, &h->rejected_identity, 403,
                      "munge: the credential was made at %s, which is not node %s's address in the scheduler", a,
                      up->id.node);
    }
    return 0;
}

/* Decides the answer of a POST before its body is read: the limit, the
 * credential, the node it speaks for, the nonce, the budget.  Returns 0 when
 * the body may come, else the status (up->resp set). */
static int post_headers(struct vg_http *h, struct MHD_Connection *c, struct vg_upload *up)
{
    char err[256];
    const char *cl = vg_mhd->lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    long len = 0;
    if (cl && (!vg_parse_long(cl, &len) || len < 0)) len = 0;
    if ((unsigned long)len > body_limit(up))
        return refuse(h, up, &h->rejected_input, 413, "body: %ld bytes is over the limit of %zu", len, body_limit(up));
    struct vg_auth_request r = {
        .authorization = vg_mhd->lookup_connection_value(c, MHD_HEADER_KIND, "Authorization"),
        .node = vg_mhd->lookup_connection_value(c, MHD_HEADER_KIND, "X-Vigil-Node"),
        .time = vg_mhd->lookup_connection_value(c, MHD_HEADER_KIND, "X-Vigil-Time"),
        .nonce = vg_mhd->lookup_connection_value(c, MHD_HEADER_KIND, "X-Vigil-Nonce"),
    };
    int64_t now = vg_now_ms();
    if (vg_auth_verify(h->auth, &r, now, &up->id, err, sizeof err))
        return refuse(h, up, &h->rejected_auth, 401, "%s", err);
    int rc = node_allowed(h, up);
    if (rc) return rc;
    if (up->id.shared)
        vg_warn_limited(&shared_log, "node %s was taken on the cluster's shared token, which proves no node's name: "
                                     "give each agent its own token (vigil token)", up->id.node);
    pthread_mutex_lock(&h->auth_lock);
    rc = vg_auth_replay(h->auth, &up->id, now, err, sizeof err);
    pthread_mutex_unlock(&h->auth_lock);
    if (rc) return refuse(h, up, &h->rejected_auth, 401, "%s", err);
    char addr[64];
    vg_strlcpy(up->key, up->id.node[0] ? up->id.node : peer(c, addr, sizeof addr), sizeof up->key);
    return take(h, up, (size_t)len);
}

/* Body bytes: kept within the limit and the budget.  Returns 0, or the
 * status of the answer (up->resp set). */
static int post_data(struct vg_http *h, struct vg_upload *up, const char *data, size_t n)
{
    if (up->body.len + n > body_limit(up))
        return refuse(h, up, &h->rejected_input, 413, "body: %zu bytes is over the limit of %zu", up->body.len + n,
                      body_limit(up));
    int rc = up->body.len + n > up->reserved ? take(h, up, up->body.len + n - up->reserved) : 0;
    if (rc) return rc;
    sbuf_add(&up->body, data, n);
    return 0;
}

/* Writer thread: the message is committed (or failed); wake its connection. */
static void committed(void *arg, int code, json_t *resp)
{
    struct vg_upload *up = arg;
    struct vg_http *h = up->h;
    if (code == 202) vg_http_count(h, &h->accepted_events, json_array_size(json_object_get(resp, "incidents")));
    else vg_http_count(h, &h->rejected_storage, 1);
    up->resp = resp;
    up->code = code;
    vg_mhd->resume_connection(up->c);
}

/* The answer to a heartbeat: {"ok": true}, and while the agent folds
 * repeated events (folds: how many it holds open) the time its node was last
 * returned to service, so it closes the folds begun before then and a fault
 * that comes back is a new incident at once, not a repeat of the old one. */
static json_t *beat_answer(struct vg_http *h, const char *node, json_int_t folds)
{
    json_t *ans = json_pack("{s:b}", "ok", 1);
    int64_t at = folds > 0 ? vg_store_last_return(h->o.reader, node) : 0;
    if (at > 0) json_object_set_new(ans, "returned", vg_json_time(at));
    return ans;
}

/* A heartbeat ({"node": NAME, "jobs": "12,345", "folds": N, "domain": D},
 * all but node optional): noted in memory, nothing stored. */
enum MHD_Result vg_http_post_beat(struct vg_http *h, struct MHD_Connection *c, struct vg_upload *up, char *json)
{
    json_t *j = json_loads(json, 0, NULL);
    free(json);
    const char *node = json_string_value(json_object_get(j, "node"));
    json_t *jv = json_object_get(j, "jobs");
    const char *jobs = jv ? json_string_value(jv) : "";
    json_t *dv = json_object_get(j, "domain");
    const char *domain = dv ? json_string_value(dv) : NULL;
    enum MHD_Result r;
    int code = 0;
    if ((code = may_name(h, up, node, up->id.node))) {   /* a node name, the sender's, the scheduler's */
        r = vg_http_reply_json(c, (unsigned)code, json_incref(up->resp));
    } else if (!jobs || strlen(jobs) >= VG_EVENT_JOBS || !vg_event_jobs_ok(jobs)) {
        vg_http_count(h, &h->rejected_input, 1);
        r = vg_http_error(c, 400, "jobs: not job ids separated by commas (at most 63 bytes)");
    } else if (dv && !vg_domain_name_ok(domain)) {
        vg_http_count(h, &h->rejected_input, 1);
        r = vg_http_error(c, 400, "domain: not a domain name (1-63 letters, digits and -_.:/)");
    } else {
        char err[320];
        code = h->o.on_beat(h->o.beat_ctx, node, jobs, domain, err, sizeof err);
        if (code) note_refusal(h, up, code == 403 ? &h->rejected_identity : &h->rejected_busy, err);
        r = code ? vg_http_error(c, (unsigned)code, "%s", err)
                 : vg_http_reply_json(c, 200, beat_answer(h, node, json_integer_value(json_object_get(j, "folds"))));
    }
    json_decref(j);
    return r;
}

/* A node's audit report or burn-in passes (nodereport.h: record), every node
 * they name bound to the node the request's credential speaks for (none: auth
 * none, which may name any node the scheduler lists). */
static enum MHD_Result node_report(struct vg_http *h, struct MHD_Connection *c, struct vg_upload *up, char *json,
                                   int (*record)(struct vg_nodereports *, const char *, const char *, json_t **))
{
    json_t *resp = NULL;
    const char *sender = up->id.node[0] ? up->id.node : NULL;
    int code = record(h->o.reports, json, sender, &resp);
    free(json);
    if (code != 200)
        note_refusal(h, up, code == 400 ? &h->rejected_input : code == 403 ? &h->rejected_identity : &h->rejected_storage,
                     json_string_value(json_object_get(resp, "error")));
    return vg_http_reply_json(c, (unsigned)code, resp);
}

enum MHD_Result vg_http_post_inventory(struct vg_http *h, struct MHD_Connection *c, struct vg_upload *up, char *json)
{
    return node_report(h, c, up, json, vg_nodereports_inventory);
}

enum MHD_Result vg_http_post_burnin(struct vg_http *h, struct MHD_Connection *c, struct vg_upload *up, char *json)
{
    return node_report(h, c, up, json, vg_nodereports_burnin);
}

/* The whole body is here: check it against the credential, then its route
 * takes it. */
static enum MHD_Result post_complete(struct vg_http *h, struct MHD_Connection *c, struct vg_upload *up)
{
    char err[256];
    const char *body = up->body.s ? up->body.s : "";
    if (vg_auth_body(&up->id, body, up->body.len, err, sizeof err)) {
        int code = refuse(h, up, &h->rejected_auth, 401, "%s", err);
        return vg_http_reply_json(c, (unsigned)code, json_incref(up->resp));
    }
    char *json = vg_xstrndup(body, up->body.len);
    sbuf_free(&up->body);
    release(h, up);
    return up->route->post(h, c, up, json);
}

/* An agent message: validated, then handed to the committer; answered once
 * it is committed (committed()). */
enum MHD_Result vg_http_post_events(struct vg_http *h, struct MHD_Connection *c, struct vg_upload *up, char *json)
{
    char addr[64];
    json_t *resp = NULL;
    int64_t now = vg_clock_ms();   /* the detected stamp: never before an earlier one */
    int code = vg_ingest_parse(h->ingest, json, now, &up->req.msg, &resp);
    free(json);
    if (code) {
        vg_http_count(h, &h->rejected_input, 1);
        vg_warn_limited(&rejected_log, "bad POST /v1/events from %s: %s", peer(c, addr, sizeof addr),
                        json_string_value(json_object_get(resp, "error")));
        return vg_http_reply_json(c, (unsigned)code, resp);
    }
    if ((code = may_name(h, up, up->req.msg.node, up->id.node))) return vg_http_reply_json(c, (unsigned)code, json_incref(up->resp));
    up->req.now = now;
    up->req.done = committed;
    up->req.arg = up;
    pthread_mutex_lock(&h->lock);
    if (h->closing) {
        pthread_mutex_unlock(&h->lock);
        return vg_http_error(c, 503, "stopping: the controller is shutting down; retry");
    }
    up->queued = true;
    vg_mhd->suspend_connection(c); /* before the hand-over: the writer may resume it at once */
    vg_committer_submit(h->ingest->committer, &up->req);
    pthread_mutex_unlock(&h->lock);
    return MHD_YES;
}

/* con_cls of the other requests, answered on the handler's second call (an
 * answer on the first would close a keep-alive connection). */
static char not_a_post;

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *data, size_t *size, void **con_cls)
{
    (void)version;
    struct vg_http *h = cls;
    struct vg_upload *up = *con_cls;
    if (*con_cls == &not_a_post) {
        if (!*size) {
            /* the request is in: the deadline was for its arrival; the read is bounded by its own
             * limits (pages, sizes), never cut for taking longer than a request may take to arrive */
            set_deadline(h, c, 0);
            return vg_http_route_get(h, c, url);
        }
        *size = 0; /* a body on a GET is ignored */
        return MHD_YES;
    }
    if (!up) {
        vg_http_count(h, &h->requests, 1);
        bool post = !strcmp(method, "POST");
        const struct vg_route *route = post ? vg_http_route(h, method, url) : NULL;
        /* the upload pipeline below is the agents': a credential from the headers, then the body */
        if (route && route->need != VG_NEED_AGENT) route = NULL;
        if (!route && strcmp(method, "GET") && strcmp(method, "HEAD")) /* at once: no body is read */
            return vg_http_error(c, 405, "method %s not allowed on %s", method, url);
        if (!route) {
            *con_cls = &not_a_post;
            return MHD_YES;
        }
        up = *con_cls = vg_xcalloc(1, sizeof *up);
        up->h = h;
        up->c = c;
        up->route = route;
        const char *lost = route->stored ? vg_storeguard_lost(h->ingest->guard) : NULL;
        if (lost) {   /* nothing is acknowledged into a store that is gone: the sender keeps its data */
            vg_http_count(h, &h->rejected_storage, 1);
            up->resp = json_pack("{s:s+}", "error", "storage: the store is lost: ", lost);
            up->code = 503;
        } else
            up->code = post_headers(h, c, up);
        /* An early answer: the body is never read. */
        if (up->code) return vg_http_reply_json(c, (unsigned)up->code, json_incref(up->resp));
        return MHD_YES;
    }
    if (*size) {
        if (!up->code) up->code = post_data(h, up, data, *size);
        *size = 0;
        return MHD_YES;
    }
    if (up->queued) { /* resumed by the committer */
        up->queued = false;
        set_deadline(h, c, 0);
        json_t *resp = up->resp;
        up->resp = NULL;
        return vg_http_reply_json(c, (unsigned)up->code, resp);
    }
    set_deadline(h, c, 0);
    if (up->code) return vg_http_reply_json(c, (unsigned)up->code, json_incref(up->resp));
    return post_complete(h, c, up);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode t)
{
    (void)t;
    struct vg_http *h = cls;
    struct vg_upload *up = *con_cls;
    /* The next request on this connection gets a deadline of its own. */
    set_deadline(h, c, vg_mono_ms() + h->o.deadline_ms);
    if (!up || *con_cls == (void *)&not_a_post) return;
    release(h, up);
    sbuf_free(&up->body);
    json_decref(up->resp);
    vg_message_free(&up->req.msg);
    free(up);
    *con_cls = NULL;
}

/* Keeps the list of connections the reaper watches. */
static void notify_conn(void *cls, struct MHD_Connection *c, void **socket_context,
                        enum MHD_ConnectionNotificationCode toe)
{
    struct vg_http *h = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci = vg_mhd->get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        struct conn *k = vg_xcalloc(1, sizeof *k);
        k->fd = ci ? ci->connect_fd : -1;
        k->deadline = vg_mono_ms() + h->o.deadline_ms;
        pthread_mutex_lock(&h->conns_lock);
        k->next = h->conns;
        if (h->conns) h->conns->prev = k;
        h->conns = k;
        pthread_mutex_unlock(&h->conns_lock);
        *socket_context = k;
    } else if (*socket_context) {
        struct conn *k = *socket_context;
        /* Under the lock: the reaper never shuts down a descriptor MHD has closed. */
        pthread_mutex_lock(&h->conns_lock);
        if (k->prev) k->prev->next = k->next;
        else h->conns = k->next;
        if (k->next) k->next->prev = k->prev;
        pthread_mutex_unlock(&h->conns_lock);
        free(k);
        *socket_context = NULL;
    }
}

/* Closes connections whose request is not in by its deadline, however
 * steadily its bytes trickle in (slowloris). */
static void *reaper(void *arg)
{
    struct vg_http *h = arg;
    pthread_mutex_lock(&h->conns_lock);
    while (!h->stopping) {
        int64_t now = vg_mono_ms();
        unsigned long closed = 0;
        for (struct conn *k = h->conns; k; k = k->next)
            if (k->deadline && now > k->deadline && k->fd >= 0) {
                shutdown(k->fd, SHUT_RDWR);
                k->deadline = 0;
                closed++;
            }
        h->deadline_closed += closed;
        vg_lograte_tick(&rejected_log);   /* the count of a flood that stopped */
        vg_lograte_tick(&mhd_log);
        vg_cond_wait_ms(&h->stop_cond, &h->conns_lock, 200);
    }
    pthread_mutex_unlock(&h->conns_lock);
    return NULL;
}

static int parse_listen(const char *listen, struct sockaddr_in *sa, char *err, size_t errlen)
{
    char host[64];
    const char *colon = strrchr(listen, ':');
    long port;
    if (!colon || (size_t)(colon - listen) >= sizeof host || !vg_parse_long(colon + 1, &port) || port < 0 ||
        port > 65535) {
        snprintf(err, errlen, "listen: '%s' is not ADDR:PORT", listen);
        return -1;
    }
    memcpy(host, listen, (size_t)(colon - listen));
    host[colon - listen] = 0;
    *sa = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    if (inet_pton(AF_INET, host[0] ? host : "0.0.0.0", &sa->sin_addr) != 1) {
        snprintf(err, errlen, "listen: '%s' is not an IPv4 address", host);
        return -1;
    }
    return 0;
}

struct vg_http *vg_http_start(const struct vg_http_opts *o, struct vg_auth *auth, struct vg_ingest *ingest,
                              char *err, size_t errlen)
{
    struct sockaddr_in sa;
    if (parse_listen(o->listen, &sa, err, errlen) || !vg_mhd_load(err, errlen)) return NULL;
    bool tls = o->tls_cert && o->tls_key;
    if (tls && vg_mhd->is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
        snprintf(err, errlen, "--tls-cert: this libmicrohttpd was built without TLS");
        return NULL;
    }
    struct vg_http *h = vg_xcalloc(1, sizeof *h);
    h->o = *o;
    if (!h->o.reader) h->o.reader = ingest->store;
    if (!h->o.max_connections) h->o.max_connections = 1024;
    if (!h->o.max_per_client) h->o.max_per_client = 32;
    if (!h->o.deadline_ms) h->o.deadline_ms = 10000;
    if (!h->o.body_budget) h->o.body_budget = 32u << 20;
    if (!h->o.client_budget) h->o.client_budget = 2 * (size_t)VG_WIRE_MAX_BODY;
    h->budget = vg_budget_new(h->o.body_budget, h->o.client_budget);
    h->auth = auth;
    h->ingest = ingest;
    pthread_mutex_init(&h->lock, NULL);
    pthread_mutex_init(&h->auth_lock, NULL);
    pthread_mutex_init(&h->conns_lock, NULL);
    vg_cond_init_mono(&h->stop_cond);
    if (!ingest->committer) h->own_committer = ingest->committer = vg_committer_start(ingest);
    if (ingest->committer && pthread_create(&h->reaper, NULL, reaper, h) == 0) {
        h->reaper_started = true;
        /* HTTPS: the certificate and key as PEM text (libmicrohttpd keeps pointers to them) */
        struct MHD_OptionItem tls_opts[] = {
            { tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, (void *)h->o.tls_cert },
            { MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)h->o.tls_key },
            { MHD_OPTION_END, 0, NULL },
        };
        h->d = vg_mhd->start_daemon(
            MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG |
                (tls ? MHD_USE_TLS : 0),
            0, NULL,
            NULL, handler, h, MHD_OPTION_EXTERNAL_LOGGER, mhd_logger, NULL,   /* first: every line of its own goes through it */
            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_THREAD_POOL_SIZE,
            (unsigned)8, MHD_OPTION_NOTIFY_COMPLETED, completed, h, MHD_OPTION_NOTIFY_CONNECTION, notify_conn, h,
            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(16u << 10), MHD_OPTION_CONNECTION_LIMIT, h->o.max_connections,
            MHD_OPTION_PER_IP_CONNECTION_LIMIT, h->o.max_per_client, MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)1024,
            MHD_OPTION_ARRAY, tls_opts, MHD_OPTION_END);
    }
    if (!h->d) {
        snprintf(err, errlen, tls ? "listen: cannot serve HTTPS on %s (is --tls-key the key of --tls-cert, both PEM?)"
                                  : "listen: cannot listen on %s", o->listen);
        h->d = NULL;
        vg_http_stop(h);
        return NULL;
    }
    return h;
}

unsigned vg_http_port(const struct vg_http *h)
{
    const union MHD_DaemonInfo *i = vg_mhd->get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    return i ? i->port : 0;
}

void vg_http_stop(struct vg_http *h)
{
    if (!h) return;
    if (h->d) {
        MHD_socket s = vg_mhd->quiesce_daemon(h->d); /* no new connections from here on */
        if (s != MHD_INVALID_SOCKET) close(s);
    }
    pthread_mutex_lock(&h->lock);
    h->closing = true; /* no new message reaches the committer */
    pthread_mutex_unlock(&h->lock);
    /* answers (resumes) every message it holds */
    if (h->own_committer) vg_committer_stop(h->own_committer), h->ingest->committer = NULL;
    else if (h->ingest->committer) vg_committer_flush(h->ingest->committer);
    if (h->reaper_started) {
        pthread_mutex_lock(&h->conns_lock);
        h->stopping = true;
        pthread_cond_signal(&h->stop_cond);
        pthread_mutex_unlock(&h->conns_lock);
        pthread_join(h->reaper, NULL);
    }
    if (h->d) vg_mhd->stop_daemon(h->d);
    pthread_cond_destroy(&h->stop_cond);
    pthread_mutex_destroy(&h->conns_lock);
    pthread_mutex_destroy(&h->auth_lock);
    pthread_mutex_destroy(&h->lock);
    vg_budget_free(h->budget);
    free(h);
}
