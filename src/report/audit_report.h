/* audit_report.h — the result of `vigil audit` (inventory + findings) and its
 * renderings: JSON document, terminal table grouped by severity, Markdown;
 * and the fleet merge of several nodes' JSON reports (audit_merge.c). */
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

/* `vigil audit merge REPORT.json…|DIR [--json|--format table|json|markdown]
 * [--fail-on SEV]`: returns the exit code. */
int vg_audit_merge(int argc, char **argv);

#endif
