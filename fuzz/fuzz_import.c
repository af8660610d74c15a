/* fuzz_import.c — libFuzzer target for the advisory importers (CSAF, OSV,
 * vigil's own format, chosen by the importer table as `vigil advisories
 * import` chooses them): the input is parsed as JSON and imported into an
 * empty database, which is then saved to JSON and matched against a few
 * versions.  Any crash or sanitizer report is a bug. */
#include "advisory/importer.h"
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *doc = json_loadb((const char *)data, size, 0, NULL);
    if (!doc) return 0;
    struct vg_advdb *db = vg_advdb_new();
    struct vg_import_report rep;
    memset(&rep, 0, sizeof rep);
    char err[256];
    const struct vg_importer *imp = vg_importer_for(doc);
    if (imp) imp->import(doc, "fuzz.json", db, &rep, err, sizeof err);
    json_decref(vg_advdb_to_json(db));
    static const char *const versions[] = { "0", "1.2.3", "535.183.01", "28.39.3000", "1:2.0-1", "" };
    for (size_t i = 0; i < vg_advdb_count(db); i++) {
        struct vg_component c;
        memset(&c, 0, sizeof c);
        strncpy(c.name, vg_advdb_get(db, i)->component, sizeof c.name - 1);
        for (size_t v = 0; v < sizeof versions / sizeof versions[0]; v++) {
            strncpy(c.version, versions[v], sizeof c.version - 1);
            strncpy(c.upstream, versions[v], sizeof c.upstream - 1);
            vg_advdb_match(db, &c, NULL, NULL);
        }
    }
    vg_import_report_free(&rep);
    vg_advdb_free(db);
    json_decref(doc);
    return 0;
}
