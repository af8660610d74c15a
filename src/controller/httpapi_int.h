/* httpapi_int.h — what the HTTP server's files (httpapi.c: connections and
 * agents' POSTs; httpread.c: the read endpoints; httproutes.c: the routes)
 * share. */
#ifndef VG_HTTPAPI_INT_H
#define VG_HTTPAPI_INT_H
#include "controller/httpapi.h"
#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>

struct conn;
struct vg_committer;
struct vg_budget;

struct vg_http {
    struct vg_http_opts o;
    struct MHD_Daemon *d;
    struct vg_auth *auth;
    struct vg_ingest *ingest;
    struct vg_committer *own_committer; /* the ingest had none: started here, stopped at the end */
    pthread_mutex_t lock;      /* counters, closing */
    pthread_mutex_t auth_lock; /* the token nonce windows */
    pthread_mutex_t conns_lock;/* conns, deadlines, stopping */
    pthread_cond_t stop_cond;
    pthread_t reaper;
    bool reaper_started, stopping, closing;
    struct conn *conns;
    struct vg_budget *budget;  /* body bytes buffered at once */
    /* rejected_identity: a node not the credential's, or one the scheduler does not list */
    unsigned long requests, rejected_auth, rejected_identity, rejected_input, rejected_storage, rejected_busy,
        accepted_events;
    unsigned long deadline_closed; /* under conns_lock */
};

enum MHD_Result vg_http_reply(struct MHD_Connection *c, unsigned code, const char *type, char *body);
enum MHD_Result vg_http_reply_json(struct MHD_Connection *c, unsigned code, json_t *j);
enum MHD_Result vg_http_error(struct MHD_Connection *c, unsigned code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void vg_http_count(struct vg_http *h, unsigned long *counter, unsigned long add);
/* The read token from `Authorization: Bearer` or the dashboard's cookie (or
 * none needed: auth none and no read token). */
bool vg_http_read_allowed(struct vg_http *h, struct MHD_Connection *c);

/* What a route needs of a request before its handler runs. */
enum vg_route_need {
    VG_NEED_NONE,    /* nothing (the dashboard's page asks for the read token itself, as a page) */
    VG_NEED_READ,    /* the read token */
    VG_NEED_AGENT,   /* an agent's credential (wire/auth.h), checked from the headers */
};

struct vg_upload;   /* one POST request (httpapi.c) */

/* One route (httproutes.c's table). */
struct vg_route {
    const char *method;   /* "GET" (HEAD too) or "POST" */
    const char *path;
    bool prefix;          /* path is a prefix ("/v1/incidents/" + ID) */
    enum vg_route_need need;
    bool (*served)(const struct vg_http *h);   /* NULL: always; false: as if no route had the path */
    enum MHD_Result (*get)(struct vg_http *h, struct MHD_Connection *c, const char *url);
    /* POST: the whole body (json, the handler's to free), its credential checked */
    enum MHD_Result (*post)(struct vg_http *h, struct MHD_Connection *c, struct vg_upload *up, char *json);
    size_t max_body;      /* POST: bigger bodies are refused (413) at their headers */
    bool stored;          /* POST: refused (503) while the store is lost */
};

/* The route of method and url; NULL: none. */
const struct vg_route *vg_http_route(const struct vg_http *h, const char *method, const char *url);
/* GET and HEAD requests, through the table. */
enum MHD_Result vg_http_route_get(struct vg_http *h, struct MHD_Connection *c, const char *url);

/* The handlers (httpapi.c: POSTs; httpread.c: reads). */
enum MHD_Result vg_http_post_events(struct vg_http *h, struct MHD_Connection *c, struct vg_upload *up, char *json);
enum MHD_Result vg_http_post_beat(struct vg_http *h, struct MHD_Connection *c, struct vg_upload *up, char *json);
enum MHD_Result vg_http_post_inventory(struct vg_http *h, struct MHD_Connection *c, struct vg_upload *up, char *json);
enum MHD_Result vg_http_post_burnin(struct vg_http *h, struct MHD_Connection *c, struct vg_upload *up, char *json);
enum MHD_Result vg_http_get_healthz(struct vg_http *h, struct MHD_Connection *c, const char *url);
enum MHD_Result vg_http_get_dashboard(struct vg_http *h, struct MHD_Connection *c, const char *url);
enum MHD_Result vg_http_get_metrics(struct vg_http *h, struct MHD_Connection *c, const char *url);
enum MHD_Result vg_http_get_nodes(struct vg_http *h, struct MHD_Connection *c, const char *url);
enum MHD_Result vg_http_get_summary(struct vg_http *h, struct MHD_Connection *c, const char *url);
enum MHD_Result vg_http_get_audit(struct vg_http *h, struct MHD_Connection *c, const char *url);
enum MHD_Result vg_http_get_burnin(struct vg_http *h, struct MHD_Connection *c, const char *url);
enum MHD_Result vg_http_get_incidents(struct vg_http *h, struct MHD_Connection *c, const char *url);
enum MHD_Result vg_http_get_incident(struct vg_http *h, struct MHD_Connection *c, const char *url);

#endif
