/* fuzz_amdcve.c — libFuzzer target for AMD's advisories: the input is read
 * as AMD's free-text fix ("ROCm 6.3.1") and as a part name ("AMD Instinct™
 * MI300X"), and, when it is a CVE JSON 5 record, imported; the database's
 * index is then written and read back (models and undecided reasons are
 * free text inside its range fields) and matched for a few parts.  What the
 * callers rely on is checked: a read fix is "X.Y[.Z]", a part key is
 * lowercase "mi<digits><letters>", the index read back holds every range.
 * A broken promise aborts. */
#include "advisory/advdb_int.h"
#include "advisory/importer.h"
#include "util/sbuf.h"
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void check_text(const char *s)
{
    char v[64], key[32];
    if (vg_amd_fix_version(s, v, sizeof v)) {
        if (!isdigit((unsigned char)v[0]) || !strchr(v, '.') || strspn(v, "0123456789.") != strlen(v)) abort();
    }
    vg_amd_part_key(s, key, sizeof key);
    if (key[0] && (strncmp(key, "mi", 2) || !isdigit((unsigned char)key[2]))) abort();
    for (const char *p = key; *p; p++)
        if (!isdigit((unsigned char)*p) && !islower((unsigned char)*p)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s) return 0;
    memcpy(s, data, size);
    s[size] = 0;
    check_text(s);
    free(s);
    json_t *doc = json_loadb((const char *)data, size, 0, NULL);
    if (!doc) return 0;
    if (!vg_importer_cve5.detect(doc)) {
        json_decref(doc);
        return 0;
    }
    struct vg_advdb *db = vg_advdb_new(), *back = NULL;
    struct vg_import_report rep;
    memset(&rep, 0, sizeof rep);
    char err[256];
    vg_importer_cve5.import(doc, "fuzz.json", db, &rep, err, sizeof err);
    char path[] = "/tmp/fuzz-amdcve-XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0) {
        close(fd);
        if (vg_advdb_save_index(db, "s", path, err, sizeof err) == 0 &&
            vg_advdb_load_index(path, "s", &back, err, sizeof err) == 0) {
            if (vg_advdb_count(back) != vg_advdb_count(db)) abort();
            for (size_t i = 0; i < vg_advdb_count(db); i++)
                if (vg_advdb_get(back, i)->nranges != vg_advdb_get(db, i)->nranges) abort();
            vg_advdb_free(back);
        }
        unlink(path);
    }
    static const char *const parts[] = { "MI300X", "MI250", "", "MI300A" };
    for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
        struct vg_component c;
        memset(&c, 0, sizeof c);
        strcpy(c.name, "rocm");
        strcpy(c.version, "6.1.2");
        strcpy(c.model, parts[p]);
        vg_advdb_match(db, &c, NULL, NULL);
    }
    vg_import_report_free(&rep);
    vg_advdb_free(db);
    json_decref(doc);
    return 0;
}
