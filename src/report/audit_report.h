/* audit_report.h — renderings of `vigil audit` (advisory/audit.h): JSON
 * document, terminal table grouped by severity, Markdown; and the fleet view
 * of several nodes' JSON reports (audit_merge.c). */
#ifndef VG_AUDIT_REPORT_H
#define VG_AUDIT_REPORT_H
#include "advisory/audit.h"
#include "inventory/inventory.h"
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

json_t *vg_audit_json(const struct vg_audit *a);
json_t *vg_audit_components_json(const struct vg_inventory *inv);
void vg_audit_print(const struct vg_audit *a, FILE *f, bool markdown);
void vg_audit_print_components(const struct vg_inventory *inv, FILE *f, bool markdown);

/* The fleet view (audit_merge.c): per-node JSON reports merged.  The merge
 * holds at most VG_FLEET_MAX_ENTRIES components, versions (all components
 * together) and findings; the rest are counted ("truncated" in the JSON, a
 * line in the table), not kept, so a fleet whose reports all differ still
 * makes a bounded document. */
#define VG_FLEET_MAX_ENTRIES 50000
struct vg_fleet;
struct vg_fleet *vg_fleet_new(void);
/* Adds a report file, or every *.json of a directory; -1 with a message
 * naming the file (and line) in err. */
int vg_fleet_add_path(struct vg_fleet *fl, const char *path, char *err, size_t errlen);
/* Adds one node's report (a parsed `vigil audit --json` document; name is
 * its node when the report names none).  0, or -1 with err. */
int vg_fleet_add_json(struct vg_fleet *fl, const json_t *doc, const char *name, char *err, size_t errlen);
/* Reads back a merged document (vg_fleet_json's, as GET /v1/audit serves it):
 * 0, or -1 with err naming the field. */
int vg_fleet_load(struct vg_fleet *fl, const json_t *doc, char *err, size_t errlen);
/* Which nodes the view covers (fleet_nodes.c).  vg_fleet_reported records when
 * a node (by the controller's name for it) last sent its report.
 * vg_fleet_coverage decides, at now_ms, which reports are stale (older than
 * stale_after_ms) and which of the known nodes never sent one; the JSON then
 * has "stale", "not_reporting" and "stale_after_s", the table a section.
 * vg_fleet_unseen: how many nodes are stale or not reporting. */
void vg_fleet_reported(struct vg_fleet *fl, const char *node, int64_t at_ms);
void vg_fleet_coverage(struct vg_fleet *fl, const char *const *known, size_t nknown, int64_t now_ms,
                       int64_t stale_after_ms);
int vg_fleet_unseen(const struct vg_fleet *fl);
int vg_fleet_nodes(const struct vg_fleet *fl);
int vg_fleet_skewed(const struct vg_fleet *fl);                 /* components with version skew */
size_t vg_fleet_count_at_least(const struct vg_fleet *fl, enum vg_severity sev);
json_t *vg_fleet_json(struct vg_fleet *fl);
void vg_fleet_print(struct vg_fleet *fl, FILE *f, bool markdown);
void vg_fleet_free(struct vg_fleet *fl);

#endif
