/* audit.h — the result of `vigil audit`: a node's inventory matched against
 * the advisory database.  CVE findings (most severe first), outdated
 * components (end of life, below the recommended minimum), and what the
 * distribution fixed although the upstream version is affected, or whose
 * bundled records are too old to tell; the advisories about the node's
 * device model that no installed version decides (status unknown, with the
 * source's own words).  The
 * renderings are in report/audit_report.h. */
#ifndef VG_AUDIT_H
#define VG_AUDIT_H
#include "advisory/advisory.h"
#include "inventory/inventory.h"
#include <stdint.h>


struct vg_audit {
    struct vg_inventory inv;
    struct vg_finding *findings; /* CVEs, most severe first */
    size_t nfindings;
    struct vg_finding *outdated; /* end of life / below the recommended minimum */
    size_t noutdated;
    struct vg_finding *fixed;    /* upstream-affected, fixed by the distribution (with evidence) */
    size_t nfixed;
    struct vg_finding *undecided;/* upstream-affected, the distribution's records too old to tell */
    size_t nundecided;
    struct vg_finding *unknown;  /* about the node's model, undecidable from what is installed (note: why) */
    size_t nunknown;
    size_t cap_f, cap_o, cap_x, cap_u, cap_k;
    char date[16];               /* the audit date EOL is judged on */
    int64_t generated_ms;
};

/* Matches every component of a->inv against db (findings keep pointers into
 * both, which must outlive a) and sorts the findings. */
void vg_audit_run(struct vg_audit *a, const struct vg_advdb *db);
void vg_audit_free(struct vg_audit *a);
/* Number of CVE findings at or above sev. */
size_t vg_audit_count_at_least(const struct vg_audit *a, enum vg_severity sev);

#endif
