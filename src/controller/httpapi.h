/* httpapi.h — the controller's HTTP API on libmicrohttpd:
 *   POST /v1/events     an agent message (auth.h), → 202 / 400 / 401
 *   GET  /v1/incidents  ?node=N&open=1&limit=K  → JSON array
 *   GET  /v1/incidents/ID                        → one incident
 *   GET  /v1/nodes                               → per-node summary
 *   GET  /metrics                                → Prometheus text format
 *   GET  /healthz                                → "ok" */
#ifndef VG_HTTPAPI_H
#define VG_HTTPAPI_H
#include "wire/auth.h"
#include "controller/ingest.h"

struct vg_http;

/* listen: "ADDR:PORT" (PORT 0 picks a free one).  Returns NULL with err set. */
struct vg_http *vg_http_start(const char *listen, struct vg_auth *auth, struct vg_ingest *ingest, char *err,
                              size_t errlen);
unsigned vg_http_port(const struct vg_http *h);
void vg_http_stop(struct vg_http *h);

#endif
