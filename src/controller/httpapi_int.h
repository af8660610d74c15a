/* httpapi_int.h — what the HTTP server's two files (httpapi.c: connections
 * and agent messages; httpread.c: the read endpoints) share. */
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
    struct vg_committer *committer;
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
/* GET and HEAD requests. */
enum MHD_Result vg_http_route_get(struct vg_http *h, struct MHD_Connection *c, const char *url);

#endif
