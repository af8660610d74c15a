/* fleet_int.h — the fleet view's state, shared by audit_merge.c (components,
 * findings) and fleet_nodes.c (which nodes reported, which are stale, which
 * the controller knows but never heard an audit from).  Not for other files. */
#ifndef VG_FLEET_INT_H
#define VG_FLEET_INT_H
#include "report/audit_report.h"
#include <stdint.h>

struct variant {           /* one set of versions of a component on some nodes */
    char *versions;        /* "12.2.2, 12.4.1" */
    int nodes;
};
struct mcomp {
    char *name;
    struct variant *v;
    int nv;
    json_t *vidx;          /* versions → index in v */
};
struct mfind {
    char *id, *component, *fixed, *url;
    enum vg_severity sev;
    int nodes, last_node;
};
struct mreported {         /* a node's latest report, by the name the controller knows it by */
    char *node;
    int64_t at;            /* ms since the epoch */
};
struct vg_fleet {
    struct mcomp *c;
    int nc, nvariants;
    struct mfind *f;
    int nf;
    json_t *cidx, *fidx;   /* name → index in c; "id\ncomponent" → index in f */
    long dropped;          /* entries left out past VG_FLEET_MAX_ENTRIES */
    char **nodes;          /* each report's node (the report's own name for it) */
    int nnodes;
    struct mreported *rep; /* vg_fleet_reported */
    int nrep;
    bool coverage;         /* stale/missing below were decided (the controller's view) */
    int64_t stale_after_ms;
    char **stale;          /* reported, but longer ago than stale_after_ms */
    int nstale;
    char **missing;        /* known to the controller, no report at all */
    int nmissing;
};

/* fleet_nodes.c: the nodes' part of the JSON document and of the table; the
 * nodes' part of a merged document read back (vg_fleet_load); freeing it. */
void vg_fleet_nodes_json(const struct vg_fleet *fl, json_t *doc);
void vg_fleet_nodes_print(const struct vg_fleet *fl, FILE *f, bool md);
int vg_fleet_nodes_load(struct vg_fleet *fl, const json_t *doc, char *err, size_t errlen);
void vg_fleet_nodes_free(struct vg_fleet *fl);

#endif
