/* httpapi.c — the controller's HTTP endpoints on libmicrohttpd; see httpapi.h. */
#include "controller/httpapi.h"
#include "util/log.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VG_HTTP_MAX_BODY (4u << 20)

struct vg_http {
    struct MHD_Daemon *d;
    struct vg_auth *auth;
    struct vg_ingest *ingest;
    pthread_mutex_t lock;   /* one request touches the store and the auth state at a time */
    unsigned long requests, rejected_auth, rejected_input, accepted_events;
};

struct upload {
    struct sbuf body;
    bool too_big;
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *type, char *body)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(r, "Content-Type", type);
    enum MHD_Result ok = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result reply_json(struct MHD_Connection *c, unsigned code, json_t *j)
{
    char *s = json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII);
    json_decref(j);
    return reply(c, code, "application/json", s ? s : vg_xstrdup("null"));
}

static const char *peer(struct MHD_Connection *c, char *buf, size_t n)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    buf[0] = 0;
    if (ci && ci->client_addr && ci->client_addr->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)ci->client_addr)->sin_addr, buf, (socklen_t)n);
    return buf[0] ? buf : "?";
}

static enum MHD_Result post_events(struct vg_http *h, struct MHD_Connection *c, struct upload *up)
{
    char err[256], addr[64];
    if (up->too_big) {
        h->rejected_input++;
        return reply_json(c, 413, json_pack("{s:s}", "error", "body larger than 4 MiB"));
    }
    const char *authz = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    const char *xt = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Vigil-Time");
    const char *xn = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Vigil-Nonce");
    char *json = NULL;
    int64_t now = vg_now_ms();
    if (vg_auth_unwrap(h->auth, up->body.s ? up->body.s : "", up->body.len, authz, xt, xn, now, &json, err,
                       sizeof err)) {
        h->rejected_auth++;
        vg_warn("rejected POST /v1/events from %s: %s", peer(c, addr, sizeof addr), err);
        return reply_json(c, 401, json_pack("{s:s}", "error", err));
    }
    json_t *resp = NULL;
    int code = vg_ingest_message(h->ingest, json, now, &resp);
    free(json);
    if (code == 202) h->accepted_events += json_array_size(json_object_get(resp, "incidents"));
    else {
        h->rejected_input++;
        vg_warn("bad POST /v1/events from %s: %s", peer(c, addr, sizeof addr),
                json_string_value(json_object_get(resp, "error")));
    }
    return reply_json(c, (unsigned)code, resp);
}

static enum MHD_Result metrics(struct vg_http *h, struct MHD_Connection *c)
{
    int64_t inc = 0, open = 0, msgs = 0;
    vg_store_counts(h->ingest->store, &inc, &open, &msgs);
    struct sbuf b = SBUF_INIT;
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
                "vigil_rejected_total{reason=\"auth\"} %lu\nvigil_rejected_total{reason=\"input\"} %lu\n",
                (long long)inc, (long long)open, (long long)msgs, h->requests, h->rejected_auth, h->rejected_input);
    if (h->ingest->metrics) h->ingest->metrics(h->ingest->ctx, &b);
    return reply(c, 200, "text/plain; version=0.0.4", sbuf_take(&b));
}

static enum MHD_Result route(struct vg_http *h, struct MHD_Connection *c, const char *url, const char *method,
                             struct upload *up)
{
    bool get = !strcmp(method, "GET");
    if (!strcmp(url, "/v1/events") && !strcmp(method, "POST")) return post_events(h, c, up);
    if (get && !strcmp(url, "/healthz")) return reply(c, 200, "text/plain", vg_xstrdup("ok\n"));
    if (get && !strcmp(url, "/metrics")) return metrics(h, c);
    if (get && !strcmp(url, "/v1/nodes")) return reply_json(c, 200, vg_store_nodes(h->ingest->store));
    if (get && !strcmp(url, "/v1/incidents")) {
        const char *node = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "node");
        const char *open = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "open");
        const char *lim = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "limit");
        long limit = 0;
        if (lim && !vg_parse_long(lim, &limit))
            return reply_json(c, 400, json_pack("{s:s}", "error", "limit: not an integer"));
        return reply_json(c, 200,
                          vg_store_incidents(h->ingest->store, node, open && !strcmp(open, "1"), (int)limit));
    }
    if (get && vg_startswith(url, "/v1/incidents/")) {
        long id;
        json_t *j = vg_parse_long(url + 14, &id) ? vg_store_incident(h->ingest->store, id) : NULL;
        if (j) return reply_json(c, 200, j);
        return reply_json(c, 404, json_pack("{s:s}", "error", "no such incident"));
    }
    return reply_json(c, 404, json_pack("{s:s, s:s}", "error", "no such endpoint", "path", url));
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *data, size_t *size, void **con_cls)
{
    (void)version;
    struct vg_http *h = cls;
    struct upload *up = *con_cls;
    if (!up) {
        *con_cls = vg_xcalloc(1, sizeof *up);
        return MHD_YES;
    }
    if (*size) {
        if (up->body.len + *size > VG_HTTP_MAX_BODY) up->too_big = true;
        else sbuf_add(&up->body, data, *size);
        *size = 0;
        return MHD_YES;
    }
    pthread_mutex_lock(&h->lock);
    h->requests++;
    enum MHD_Result r = route(h, c, url, method, up);
    pthread_mutex_unlock(&h->lock);
    return r;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode t)
{
    (void)cls, (void)c, (void)t;
    struct upload *up = *con_cls;
    if (!up) return;
    sbuf_free(&up->body);
    free(up);
    *con_cls = NULL;
}

struct vg_http *vg_http_start(const char *listen, struct vg_auth *auth, struct vg_ingest *ingest, char *err,
                              size_t errlen)
{
    char host[64];
    const char *colon = strrchr(listen, ':');
    long port;
    if (!colon || (size_t)(colon - listen) >= sizeof host || !vg_parse_long(colon + 1, &port) || port < 0 ||
        port > 65535) {
        snprintf(err, errlen, "listen: '%s' is not ADDR:PORT", listen);
        return NULL;
    }
    memcpy(host, listen, (size_t)(colon - listen));
    host[colon - listen] = 0;
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    if (inet_pton(AF_INET, host[0] ? host : "0.0.0.0", &sa.sin_addr) != 1) {
        snprintf(err, errlen, "listen: '%s' is not an IPv4 address", host);
        return NULL;
    }
    struct vg_http *h = vg_xcalloc(1, sizeof *h);
    h->auth = auth;
    h->ingest = ingest;
    pthread_mutex_init(&h->lock, NULL);
    h->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, (uint16_t)port, NULL, NULL,
                            handler, h, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_NOTIFY_COMPLETED,
                            completed, h, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30, MHD_OPTION_END);
    if (!h->d) {
        snprintf(err, errlen, "listen: cannot listen on %s", listen);
        pthread_mutex_destroy(&h->lock);
        free(h);
        return NULL;
    }
    return h;
}

unsigned vg_http_port(const struct vg_http *h)
{
    const union MHD_DaemonInfo *i = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    return i ? i->port : 0;
}

void vg_http_stop(struct vg_http *h)
{
    if (!h) return;
    MHD_stop_daemon(h->d);
    pthread_mutex_destroy(&h->lock);
    free(h);
}
