/* fuzz_advsources.c — libFuzzer target for the two text parsers of the
 * advisory sources: the sources manifest (data/sources/MANIFEST) and the
 * Debian security tracker's DSA/DLA lists.  Any input is either accepted
 * (every manifest row well-formed; every Debian record a Debian release with
 * a fixed version) or refused with a message — never a crash or a read past
 * the input. */
#include "advisory/importer.h"
#include "util/log.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vg_log_level(-1);
    char *buf = malloc(size + 1);
    if (!buf) return 0;
    memcpy(buf, data, size);
    buf[size] = 0;
    struct vg_source *src;
    size_t n;
    char err[256];
    if (vg_manifest_parse(buf, size, "MANIFEST", &src, &n, err, sizeof err) == 0) {
        for (size_t i = 0; i < n; i++)
            if (!src[i].name[0] || !src[i].path[0] || src[i].path[0] == '/' || strstr(src[i].path, "..")) abort();
        free(src);
    } else if (!strstr(err, "MANIFEST")) {
        abort();
    }
    struct vg_advdb *db = vg_advdb_new();
    struct vg_import_report rep;
    memset(&rep, 0, sizeof rep);
    memcpy(buf, data, size);   /* the manifest parser split it in place */
    if (vg_debian_list_import(buf, size, "list", db, &rep, err, sizeof err) == 0) {
        for (size_t i = 0; i < vg_advdb_count(db); i++) {
            const struct vg_advisory *a = vg_advdb_get(db, i);
            if (strncmp(a->distro, "Debian:", 7) || !a->nranges) abort();
            for (size_t k = 0; k < a->nranges; k++)   /* one per line (a record listed twice merges) */
                if (!a->ranges[k].fixed[0]) abort();
        }
    }
    vg_import_report_free(&rep);
    vg_advdb_free(db);
    free(buf);
    return 0;
}
