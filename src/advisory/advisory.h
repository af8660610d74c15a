/* advisory.h — the offline advisory database: load it, match components
 * against it.  Entries come from the project's importers (CSAF 2.0, OSV) and a
 * curated file of sourced facts; every entry keeps its source URL.  Besides
 * CVEs the database holds driver-branch end-of-life dates and a minimum
 * recommended version per component. */
#ifndef VG_ADVISORY_H
#define VG_ADVISORY_H
#include "core/version.h"
#include "inventory/inventory.h"
#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

enum vg_severity { VG_SEV_NONE = 0, VG_SEV_LOW, VG_SEV_MEDIUM, VG_SEV_HIGH, VG_SEV_CRITICAL };
const char *vg_severity_name(enum vg_severity s);      /* "none" "low" "medium" "high" "critical" */
bool vg_severity_parse(const char *s, enum vg_severity *out);

struct vg_range {          /* affected when introduced <= v < fixed (or <= last_affected) */
    char introduced[64];   /* "" = from the beginning */
    char fixed[64];        /* "" = no fix known */
    char last_affected[64];/* "" unless the source gives only a last affected version */
    char models[160];      /* device models the range is about ("ConnectX-6 DX, ConnectX-7";
                              "MI300X, MI325X"), "" = every model (NIC firmware rows of a CSAF
                              product tree, AMD's per-part rows) */
    char undecided[128];   /* why no installed version decides this range: the source names the fix
                              otherwise than by a release ("AMD names 'BKC 26' for MI300A, not a ROCm
                              release"); "" when the bounds decide */
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
    char distro[40];       /* a distribution's own record: its OSV ecosystem ("Debian:12",
                              "Ubuntu:22.04:LTS"); "" for an upstream advisory */
    char package[64];      /* distribution record: the (source) package it is about */
    char *cves;            /* distribution record: the CVE ids it covers, space-separated ("" = none named) */
    char source[32];       /* the source it was imported from ("nvidia-csaf", "go-vulndb", "debian") */
    struct vg_range *ranges;
    size_t nranges;
};

/* A source of the database: where its records were copied from, and when. */
struct vg_source {
    char name[32];         /* "go-vulndb" */
    char path[128];        /* where its files are, relative to the manifest ("osv/go") */
    char repository[128];  /* "github.com/golang/vulndb" */
    char commit[48];       /* the snapshot's commit, "" when none */
    char snapshot[16];     /* YYYY-MM-DD the copy was taken */
    char about[160];       /* one line: what it holds */
};

struct vg_advdb;

enum vg_finding_kind {
    VG_FIND_CVE,
    VG_FIND_EOL,
    VG_FIND_BELOW_MIN,
    VG_FIND_DISTRO_FIXED,  /* the upstream version is affected, but the distribution fixed it */
    VG_FIND_UNDECIDED,     /* the upstream version is affected, and the distribution's records in the
                              database end before the CVE was published: whether it backported the
                              fix is not known here (not a finding; see the note) */
    VG_FIND_UNKNOWN,       /* the advisory is about the component's model, but its source names no version
                              that decides it, or the installed version could not be read (note: why);
                              never a pass, never counted as a CVE */
};

/* What decided a CVE finding (or a fix by the distribution). */
enum vg_find_evidence {
    VG_EV_UPSTREAM,        /* the upstream version compared with the upstream advisory */
    VG_EV_DISTRO_ADVISORY, /* the distribution's own advisory (evidence_ref: its id) */
    VG_EV_CHANGELOG,       /* the package's changelog names the CVE (evidence_ref: the entry's version) */
};
const char *vg_evidence_name(enum vg_find_evidence e);   /* "upstream" "distro-advisory" "changelog" */

struct vg_finding {
    enum vg_finding_kind kind;
    const struct vg_component *comp;
    const struct vg_advisory *adv;   /* VG_FIND_CVE only */
    enum vg_severity severity;
    char fixed[64];                  /* the version to upgrade to, "" when none known */
    bool backport_possible;          /* distro package: only the upstream number was
                                        compared; the distribution may have backported the fix */
    enum vg_find_evidence evidence;
    char evidence_ref[64];           /* distro advisory id, or the changelog entry's version */
    char note[384];                  /* EOL / below-minimum explanation */
    char url[256];
};

typedef void (*vg_finding_cb)(const struct vg_finding *f, void *ctx);

/* Loads the database from a file (the bundled one: vg_data_path("advisories.json")),
 * through its compact index when one beside it is up to date.
 * On error returns -1 with a one-line message (file, line/field) in err. */
int vg_advdb_load(const char *path, struct vg_advdb **db, char *err, size_t errlen);
void vg_advdb_free(struct vg_advdb *db);
size_t vg_advdb_count(const struct vg_advdb *db);
/* Calls cb for every finding on one component: CVEs whose ranges contain its
 * version, then end-of-life and below-minimum findings.  For a distribution
 * package an upstream CVE is decided by the distribution's own advisory for
 * the node's release when there is one, else by the package's changelog, and
 * only then by the upstream version (VG_FIND_DISTRO_FIXED reports what the
 * distribution fixed).  Returns the count. */
int vg_advdb_match(const struct vg_advdb *db, const struct vg_component *c, vg_finding_cb cb, void *ctx);

/* ---- end of life and minimum recommended versions ---- */
struct vg_eol {            /* a version is end-of-life when it is on `branch`
                              (or below `below`) and the audit date is >= `date` */
    char component[48];
    char branch[32];       /* "535": versions 535.*; "" = any */
    char below[64];        /* "24.10": versions below it; "" = no bound */
    char date[16];         /* YYYY-MM-DD end of life; "" = already unsupported */
    char url[256];
    char note[256];
};

struct vg_minimum {        /* the oldest version recommended; a branch-specific
                              entry wins over the component-wide one ("" branch) */
    char component[48];
    char branch[32];
    char version[64];
    char url[256];
    char reason[256];
};

/* The audit date (YYYY-MM-DD) EOL dates are compared with.  Default: $VIGIL_NOW
 * (an RFC 3339 time or a date), else today (UTC). */
void vg_advdb_set_date(struct vg_advdb *db, const char *yyyy_mm_dd);
const char *vg_advdb_date(const struct vg_advdb *db);

/* ---- building a database (the importers, `vigil advisories import`) ---- */
struct vg_advdb *vg_advdb_new(void);
/* Adds a copy of a (ranges and summary copied).  An advisory with the same
 * (id, component) gets the ranges it lacks merged in.  Returns the number of
 * new ranges (0: a duplicate). */
int vg_advdb_add(struct vg_advdb *db, const struct vg_advisory *a);
int vg_advdb_add_eol(struct vg_advdb *db, const struct vg_eol *e);         /* 0 = duplicate */
int vg_advdb_add_minimum(struct vg_advdb *db, const struct vg_minimum *m); /* 0 = duplicate */
/* Reads a database document already parsed (file names messages).  Merges into db. */
int vg_advdb_merge_json(struct vg_advdb *db, const json_t *doc, const char *file, char *err, size_t errlen);
json_t *vg_advdb_to_json(const struct vg_advdb *db);
/* Writes the JSON file, and for a path ending in ".json" also the compact
 * index beside it (".idx", advindex.c), stamped with the JSON file's size and
 * hash; vg_advdb_load reads the index instead while the stamp matches. */
int vg_advdb_save(const struct vg_advdb *db, const char *path, char *err, size_t errlen);
int vg_advdb_stamp(const char *json_path, char *stamp, size_t n);   /* -1: unreadable */
int vg_advdb_save_index(const struct vg_advdb *db, const char *stamp, const char *path, char *err, size_t errlen);
/* Loads an index; with stamp set, returns 1 (nothing loaded) when the index
 * was written for another JSON file; -1 with err on a malformed index. */
int vg_advdb_load_index(const char *path, const char *stamp, struct vg_advdb **db, char *err, size_t errlen);
/* The same on the text in buf (len bytes, buf[len] == 0), split in place;
 * path names it in messages. */
int vg_advdb_parse_index(char *buf, size_t len, const char *path, const char *stamp, struct vg_advdb **db, char *err,
                         size_t errlen);

/* The sources the database was built from (the manifest's rows), and the
 * time it was generated (RFC 3339, "" when unknown). */
int vg_advdb_add_source(struct vg_advdb *db, const struct vg_source *s);   /* 0 = replaced an entry of that name */
size_t vg_advdb_source_count(const struct vg_advdb *db);
const struct vg_source *vg_advdb_source(const struct vg_advdb *db, size_t i);
const char *vg_advdb_generated(const struct vg_advdb *db);

/* How current each source is (advstatus.c). */
struct vg_source_status {
    char name[32];
    const struct vg_source *src;  /* its manifest row, NULL when the records name no listed source */
    size_t records;
    size_t undated;               /* records that carry no publication date */
    char newest[16];              /* the newest dated record's publication date, "" when none carries one */
    char newest_id[48];
    long age_days;                /* newest's age on the audit date (the snapshot's when no record
                                     carries a date: age_from_snapshot), -1 unknown */
    bool age_from_snapshot;
    long snapshot_age_days;       /* -1 unknown */
    bool stale;                   /* older than max_age (the copy's age when known, else the newest record's) */
};
/* One row per source (the manifest's, then any other tag the records carry);
 * *out is malloc'd. */
size_t vg_advdb_status(const struct vg_advdb *db, long max_age, struct vg_source_status **out);
/* Days from one YYYY-MM-DD date to a later one (0 when it is not later); -1
 * when either is malformed. */
long vg_days_between(const char *from, const char *to);

/* Read access, in a stable order (component, id). */
const struct vg_advisory *vg_advdb_get(const struct vg_advdb *db, size_t i);
size_t vg_advdb_eol_count(const struct vg_advdb *db);
const struct vg_eol *vg_advdb_eol(const struct vg_advdb *db, size_t i);
size_t vg_advdb_minimum_count(const struct vg_advdb *db);
const struct vg_minimum *vg_advdb_minimum(const struct vg_advdb *db, size_t i);
/* True when version v (compared as eco) lies in range r; "xx." in a bound
 * stands for v's first field (NIC firmware trains: xx.39.5050). */
bool vg_range_contains(enum vg_ecosystem eco, const struct vg_range *r, const char *v);
/* True when the range is about the device model (any model when either is
 * unknown or the range names none). */
bool vg_range_for_model(const struct vg_range *r, const char *model);
const char *vg_finding_kind_name(enum vg_finding_kind k);  /* "cve" "eol" "below-minimum" "fixed-by-distribution"
                                                             "undecided-by-distribution" "unknown" */
/* True when the space-separated list has the word w. */
bool vg_word_in(const char *list, const char *w);

#endif
