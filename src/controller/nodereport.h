/* nodereport.h — what a node sends besides events and heartbeats, as the
 * controller takes it in: its audit report (POST /v1/inventory, {"node",
 * "report": <vigil audit --json>}: the latest kept per node) and burn-in
 * passes (POST /v1/burnin, a `vigil burnin --json` document: the newest
 * VG_BURNIN_KEEP per node, burnin_hist.h).  Before anything is kept:
 *  - every node it names is, when the request's credential names a node
 *    (sender), that node, and one the scheduler lists: a node speaks only
 *    for itself (vg_nodeset_may_name: 403 otherwise, 503 while the
 *    scheduler's list has never been read);
 *  - every string is printable text within its length (no control, bidi or
 *    line-separator character); an audit report holds at most
 *    VG_REPORT_MAX_ITEMS entries in each list, component names and versions
 *    of at most 128 bytes, finding ids that are words ("CVE-2024-6387"), and
 *    at most VG_REPORT_MAX_BYTES in all (400 naming the field);
 *  - the store is under its size alarm: above it no report is kept (507),
 *    and an ALERT is logged once each time the store crosses it. */
#ifndef VG_NODEREPORT_H
#define VG_NODEREPORT_H
#include "controller/nodeset.h"
#include "controller/store.h"
#include "util/sbuf.h"
#include <jansson.h>
#include <stdint.h>

#define VG_REPORT_MAX_ITEMS 4096          /* components, findings, outdated … each */
#define VG_REPORT_MAX_BYTES (1u << 20)    /* one node's audit report */
/* A POST of a node report: bigger is refused at its headers (413), its body
 * never read; room for a 1 MiB report as a MUNGE credential (base64). */
#define VG_NODE_REPORT_MAX_BODY ((size_t)2 << 20)
#define VG_STORE_ALARM_DEFAULT_MB 4096

struct vg_nodereports_opts {
    struct vg_store *store;       /* the reports' own connection */
    struct vg_nodeset *nodes;     /* the scheduler's nodes */
    int64_t alarm_bytes;          /* the store's size alarm; 0: none */
};

struct vg_nodereports;

struct vg_nodereports *vg_nodereports_new(const struct vg_nodereports_opts *o);
void vg_nodereports_free(struct vg_nodereports *r);
/* One report from sender (the node the request's credential speaks for;
 * NULL or "": a credential that names none, auth none, which may name any
 * node the scheduler lists).  Returns the HTTP status, with *resp {"ok": true, …} or
 * {"error": "FIELD: what"}. */
int vg_nodereports_inventory(struct vg_nodereports *r, const char *json, const char *sender, json_t **resp);
int vg_nodereports_burnin(struct vg_nodereports *r, const char *json, const char *sender, json_t **resp);
/* Prometheus lines: the store's size and alarm, reports kept and refused. */
void vg_nodereports_metrics(struct vg_nodereports *r, struct sbuf *out);

#endif
