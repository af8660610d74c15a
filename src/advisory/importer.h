/* importer.h — importers that turn published advisory documents into entries
 * of the advisory database, offline: CSAF 2.0 (NVIDIA's bulletins), OSV, CVE
 * JSON 5 (AMD's records), and
 * vigil's own database format (lifecycle data, other databases).  Each is one
 * file filling a struct vg_importer, listed in the table in import.c. */
#ifndef VG_IMPORTER_H
#define VG_IMPORTER_H
#include "advisory/advisory.h"
#include <jansson.h>
#include <stdbool.h>

struct vg_strlist {
    char **v;
    size_t n;
};
void vg_strlist_add(struct vg_strlist *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vg_strlist_free(struct vg_strlist *l);

/* What an import did; accumulated over all files of one run. */
struct vg_import_report {
    int files, skipped_files;
    int advisories;            /* advisory records seen (one per id and component) */
    int ranges_added;          /* new ranges (a duplicate adds none) */
    int duplicates;            /* advisories that added nothing new */
    int eol, minimum;          /* lifecycle entries read */
    int products_skipped;      /* product rows deliberately not imported */
    struct vg_strlist skipped; /* "<file>: <family> (<arch>): <why>" */
    struct vg_strlist unparsed;/* product names no version range could be read from */
    struct vg_strlist warnings;
    const char *source;        /* the source the records being imported are tagged with
                                  (a manifest row's name); NULL: the importer's name */
};
void vg_import_report_free(struct vg_import_report *r);

struct vg_importer {
    const char *name;                 /* "csaf" "osv" "vigil" "debian" "cve5" */
    /* A JSON format: */
    bool (*detect)(const json_t *doc);
    /* Adds what doc holds to db.  Returns 0; -1 when the document cannot be
     * used at all (err says which field); skipped parts go to rep. */
    int (*import)(const json_t *doc, const char *file, struct vg_advdb *db, struct vg_import_report *rep,
                  char *err, size_t errlen);
    /* Or a text format (NULL for the JSON ones), tried before the JSON parse: */
    bool (*detect_text)(const char *text, size_t len);
    int (*import_text)(const char *text, size_t len, const char *file, struct vg_advdb *db,
                       struct vg_import_report *rep, char *err, size_t errlen);
};

extern const struct vg_importer vg_importer_csaf, vg_importer_osv, vg_importer_vigil, vg_importer_debian,
    vg_importer_cve5;

/* AMD's free-text fix in a CVE JSON 5 record (import_cve5.c): "ROCm 6.3.1",
 * "ROCm 6.3" → "6.3.1", "6.3" into ver; false for any other text ("BKC 26",
 * "ROC 6.3", "No fix planned", …), which names no ROCm release. */
bool vg_amd_fix_version(const char *text, char *ver, size_t n);

const struct vg_importer *vg_importer_for(const json_t *doc);
/* Imports one file, or every *.json below a directory (sorted).  Returns 0, or
 * -1 with a one-line message naming the file (and line/field) in err. */
int vg_import_path(const char *path, struct vg_advdb *db, struct vg_import_report *rep, char *err, size_t errlen);

/* The Debian security tracker's DSA/DLA lists (import_debian.c), text, not
 * JSON: detect by the first line ("[01 Jul 2024] DSA-5724-1 …"); import
 * adds a distribution record per release and tracked package. */
bool vg_debian_list_detect(const char *text, size_t len);
int vg_debian_list_import(const char *text, size_t len, const char *file, struct vg_advdb *db,
                          struct vg_import_report *rep, char *err, size_t errlen);

/* The sources manifest (manifest.c): parses its text in place into rows
 * (malloc'd array); -1 with "FILE:LINE: why" in err. */
int vg_manifest_parse(char *text, size_t len, const char *path, struct vg_source **out, size_t *n, char *err,
                      size_t errlen);
/* Imports every source a manifest lists (paths relative to its folder), each
 * record tagged with its source's name, and records the rows in db. */
int vg_import_manifest(const char *path, struct vg_advdb *db, struct vg_import_report *rep, char *err, size_t errlen);

/* Helpers shared by the importers. */
/* Maps a package or product name to a canonical component id, or NULL. */
const char *vg_component_for_name(const char *name);
/* The same for a distribution's source package ("openssh", "glibc",
 * "policykit-1", "docker.io-app", kernel sources "linux", "linux-hwe-6.8", …). */
const char *vg_component_for_distro_package(const char *name);
/* Adds one advisory for (id, component) to db, counting into rep. */
void vg_import_add(struct vg_advdb *db, struct vg_import_report *rep, const struct vg_advisory *a);

#endif
