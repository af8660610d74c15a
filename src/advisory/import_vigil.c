/* import_vigil.c — importer for vigil's own database format (a whole
 * advisories.json, or a fragment such as data/sources/lifecycle.json holding
 * only "eol" and "minimum" entries): merged entry by entry. */
#include "advisory/importer.h"
#include <string.h>

static bool detect(const json_t *doc)
{
    return json_is_object(doc) && json_is_integer(json_object_get(doc, "schema")) &&
           (json_object_get(doc, "advisories") || json_object_get(doc, "eol") || json_object_get(doc, "minimum"));
}

static int import(const json_t *doc, const char *file, struct vg_advdb *db, struct vg_import_report *rep, char *err,
                  size_t errlen)
{
    size_t before_eol = vg_advdb_eol_count(db), before_min = vg_advdb_minimum_count(db);
    if (vg_advdb_merge_json(db, doc, file, err, errlen) < 0) return -1;
    rep->advisories += (int)json_array_size(json_object_get(doc, "advisories"));
    rep->eol += (int)(vg_advdb_eol_count(db) - before_eol);
    rep->minimum += (int)(vg_advdb_minimum_count(db) - before_min);
    return 0;
}

const struct vg_importer vg_importer_vigil = { "vigil", detect, import, NULL, NULL };
