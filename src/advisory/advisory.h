/* advisory.h — the offline advisory database: load it, match components
 * against it.  Entries come from the project's importers (CSAF 2.0, OSV) and a
 * curated file of sourced facts; every entry keeps its source URL.  Besides
 * CVEs the database holds driver-branch end-of-life dates and a minimum
 * recommended version per component. */
#ifndef VG_ADVISORY_H
#define VG_ADVISORY_H
#include "advisory/version.h"
#include "inventory/inventory.h"
#include <stdbool.h>
#include <stddef.h>

enum vg_severity { VG_SEV_NONE = 0, VG_SEV_LOW, VG_SEV_MEDIUM, VG_SEV_HIGH, VG_SEV_CRITICAL };
const char *vg_severity_name(enum vg_severity s);      /* "none" "low" "medium" "high" "critical" */
bool vg_severity_parse(const char *s, enum vg_severity *out);

struct vg_range {          /* affected when introduced <= v < fixed (or <= last_affected) */
    char introduced[64];   /* "" = from the beginning */
    char fixed[64];        /* "" = no fix known */
    char last_affected[64];/* "" unless the source gives only a last affected version */
};

struct vg_advisory {
    char id[48];           /* CVE-2024-0132, GHSA-…, or the bulletin id when no CVE */
    char component[48];    /* canonical component id (inventory.h) */
    enum vg_ecosystem eco;
    enum vg_severity severity;
    double cvss;
    char *summary;
    char url[256];         /* source URL — always set */
    char published[16];    /* YYYY-MM-DD */
    struct vg_range *ranges;
    size_t nranges;
};

struct vg_advdb;

enum vg_finding_kind { VG_FIND_CVE, VG_FIND_EOL, VG_FIND_BELOW_MIN };

struct vg_finding {
    enum vg_finding_kind kind;
    const struct vg_component *comp;
    const struct vg_advisory *adv;   /* VG_FIND_CVE only */
    enum vg_severity severity;
    char fixed[64];                  /* the version to upgrade to, "" when none known */
    bool backport_possible;          /* distro package: only the upstream number was
                                        compared; the distribution may have backported the fix */
    char note[256];                  /* EOL / below-minimum explanation */
    char url[256];
};

typedef void (*vg_finding_cb)(const struct vg_finding *f, void *ctx);

/* Loads the database from a file (the bundled one: vg_data_path("advisories.json")).
 * On error returns -1 with a one-line message (file, line/field) in err. */
int vg_advdb_load(const char *path, struct vg_advdb **db, char *err, size_t errlen);
void vg_advdb_free(struct vg_advdb *db);
size_t vg_advdb_count(const struct vg_advdb *db);
/* Calls cb for every finding on one component: CVEs whose ranges contain its
 * version, then end-of-life and below-minimum findings.  Returns the count. */
int vg_advdb_match(const struct vg_advdb *db, const struct vg_component *c, vg_finding_cb cb, void *ctx);

#endif
