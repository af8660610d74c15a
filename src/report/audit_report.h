/* audit_report.h — the result of `vigil audit` (inventory + findings) and its
 * renderings: JSON document, terminal table grouped by severity, Markdown;
 * and the fleet merge of several nodes' JSON reports (audit_merge.c). */
#ifndef VG_AUDIT_REPORT_H
#define VG_AUDIT_REPORT_H
#include "advisory/advisory.h"
#include "inventory/inventory.h"
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct vg_audit {
    struct vg_inventory inv;
    struct vg_finding *findings; /* CVEs, most severe first */
    size_t nfindings;
    struct vg_finding *outdated; /* end of life / below the recommended minimum */
    size_t noutdated;
    size_t cap_f, cap_o;
    char date[16];               /* the audit date EOL is judged on */
    int64_t generated_ms;
};

/* Matches every component of a->inv against db (findings keep pointers into
 * both, which must outlive a) and sorts the findings. */
void vg_audit_run(struct vg_audit *a, const struct vg_advdb *db);
void vg_audit_free(struct vg_audit *a);
/* Number of CVE findings at or above sev. */
size_t vg_audit_count_at_least(const struct vg_audit *a, enum vg_severity sev);

json_t *vg_audit_json(const struct vg_audit *a);
json_t *vg_audit_components_json(const struct vg_inventory *inv);
void vg_audit_print(const struct vg_audit *a, FILE *f, bool markdown);
void vg_audit_print_components(const struct vg_inventory *inv, FILE *f, bool markdown);

/* `vigil audit merge REPORT.json…|DIR [--json|--format table|json|markdown]
 * [--fail-on SEV]`: returns the exit code. */
int vg_audit_merge(int argc, char **argv);

#endif
