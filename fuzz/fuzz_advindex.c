/* fuzz_advindex.c — libFuzzer target for the compact advisory index
 * (advisories.idx): any input either loads, and then matches a few versions
 * of every component it holds (without a model, as an AMD part, as a NIC),
 * or is refused with a message; never a crash or a read out of bounds. */
#include "advisory/advisory.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1);
    if (!buf) return 0;
    memcpy(buf, data, size);
    buf[size] = 0;
    struct vg_advdb *db = NULL;
    char err[256];
    if (vg_advdb_parse_index(buf, size, "fuzz.idx", NULL, &db, err, sizeof err) == 0) {
        static const char *const versions[] = { "0", "1.2.3", "6.8.0-120.120", "1:2.0-1", "unknown" };
        static const char *const models[] = { "", "MI300X", "ConnectX-7" };
        for (size_t i = 0; i < vg_advdb_count(db); i++) {
            struct vg_component c;
            memset(&c, 0, sizeof c);
            strncpy(c.name, vg_advdb_get(db, i)->component, sizeof c.name - 1);
            for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
                strncpy(c.model, models[m], sizeof c.model - 1);
                for (size_t v = 0; v < sizeof versions / sizeof versions[0]; v++) {
                    strncpy(c.version, versions[v], sizeof c.version - 1);
                    vg_advdb_match(db, &c, NULL, NULL);
                }
            }
        }
        vg_advdb_free(db);
    }
    free(buf);
    return 0;
}
