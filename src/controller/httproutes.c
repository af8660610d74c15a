/* httproutes.c — the controller's HTTP routes: one table of {method, path,
 * what the request needs, handler}, and the dispatch of GET and HEAD
 * requests through it (POSTs: httpapi.c takes the route at the request's
 * headers).  The endpoints themselves are in httpapi.c (agents' POSTs) and
 * httpread.c (reads); httpapi.h lists them. */
#include "controller/httpapi_int.h"
#include "controller/nodereport.h"
#include "util/strutil.h"
#include "wire/limits.h"
#include <string.h>

static bool has_beats(const struct vg_http *h) { return h->o.on_beat != NULL; }
static bool has_reports(const struct vg_http *h) { return h->o.reports != NULL; }
static bool has_view(const struct vg_http *h) { return h->o.view != NULL; }

/* Every POST needs an agent's credential, checked from its headers before any
 * body byte is read (httpapi.c). */
static const struct vg_route routes[] = {
    { "POST", "/v1/events", false, VG_NEED_AGENT, NULL, .post = vg_http_post_events, .max_body = VG_WIRE_MAX_BODY,
      .stored = true },
    { "POST", "/v1/heartbeat", false, VG_NEED_AGENT, has_beats, .post = vg_http_post_beat,
      .max_body = VG_WIRE_MAX_BODY },
    { "POST", "/v1/inventory", false, VG_NEED_AGENT, has_reports, .post = vg_http_post_inventory,
      .max_body = VG_NODE_REPORT_MAX_BODY, .stored = true },
    { "POST", "/v1/burnin", false, VG_NEED_AGENT, has_reports, .post = vg_http_post_burnin,
      .max_body = VG_NODE_REPORT_MAX_BODY, .stored = true },
    { "GET", "/healthz", false, VG_NEED_NONE, NULL, .get = vg_http_get_healthz },
    { "GET", "/", false, VG_NEED_NONE, NULL, .get = vg_http_get_dashboard },   /* asks for the token itself */
    { "GET", "/metrics", false, VG_NEED_READ, NULL, .get = vg_http_get_metrics },
    { "GET", "/v1/nodes", false, VG_NEED_READ, NULL, .get = vg_http_get_nodes },
    { "GET", "/v1/summary", false, VG_NEED_READ, has_view, .get = vg_http_get_summary },
    { "GET", "/v1/audit", false, VG_NEED_READ, NULL, .get = vg_http_get_audit },
    { "GET", "/v1/burnin", false, VG_NEED_READ, NULL, .get = vg_http_get_burnin },
    { "GET", "/v1/incidents", false, VG_NEED_READ, NULL, .get = vg_http_get_incidents },
    { "GET", "/v1/incidents/", true, VG_NEED_READ, NULL, .get = vg_http_get_incident },
};

const struct vg_route *vg_http_route(const struct vg_http *h, const char *method, const char *url)
{
    if (!strcmp(method, "HEAD")) method = "GET";
    for (size_t i = 0; i < sizeof routes / sizeof *routes; i++) {
        const struct vg_route *r = &routes[i];
        if (strcmp(r->method, method) || (r->served && !r->served(h))) continue;
        if (r->prefix ? vg_startswith(url, r->path) : !strcmp(url, r->path)) return r;
    }
    return NULL;
}

/* GET and HEAD: the read token is asked of every path but the open ones,
 * those no route serves included (a path's existence is not told without
 * it). */
enum MHD_Result vg_http_route_get(struct vg_http *h, struct MHD_Connection *c, const char *url)
{
    const struct vg_route *r = vg_http_route(h, "GET", url);
    if (r && r->need == VG_NEED_NONE) return r->get(h, c, url);
    if (!vg_http_read_allowed(h, c)) {
        vg_http_count(h, &h->rejected_auth, 1);
        return vg_http_error(c, 401, "reads need the read token (Authorization: Bearer)");
    }
    if (r) return r->get(h, c, url);
    return vg_http_reply_json(c, 404, json_pack("{s:s, s:s}", "error", "no such endpoint", "path", url));
}
