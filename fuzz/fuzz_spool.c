/* fuzz_spool.c — libFuzzer target for the agent's spool reader: any bytes as
 * a spool file; every message it keeps must be a whole record, and a spool id
 * it reads must be VG_SPOOL_ID_LEN lowercase hex characters. */
#include "agent/spool.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vg_spool_data d;
    vg_spool_parse((const char *)data, size, &d);
    for (size_t i = 0; i < d.n; i++)
        if (!d.msgs[i].json || strchr(d.msgs[i].json, '\n') || d.msgs[i].seq >= d.next_seq) abort();
    if (d.id[0] && (strlen(d.id) != VG_SPOOL_ID_LEN || strspn(d.id, "0123456789abcdef") != VG_SPOOL_ID_LEN))
        abort();
    vg_spool_data_free(&d);
    return 0;
}
