/* fuzz_version.c — libFuzzer target for the version comparators: the input is
 * two NUL-separated strings; for every ecosystem cmp(a,a) must be 0 and
 * cmp(a,b) must have the opposite sign of cmp(b,a).  Aborts on a violation. */
#include "core/version.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int sgn(int x) { return (x > 0) - (x < 0); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 2);
    if (!buf) return 0;
    memcpy(buf, data, size);
    buf[size] = 0;
    buf[size + 1] = 0;
    const char *a = buf, *b = buf + strlen(buf) + 1;
    if (b > buf + size) b = buf + size + 1;
    for (int e = 0; e < VG_ECO_COUNT; e++) {
        if (vg_version_cmp((enum vg_ecosystem)e, a, a) != 0) abort();
        if (sgn(vg_version_cmp((enum vg_ecosystem)e, a, b)) != -sgn(vg_version_cmp((enum vg_ecosystem)e, b, a)))
            abort();
        char up[64];
        vg_version_upstream((enum vg_ecosystem)e, a, up, sizeof up);
    }
    free(buf);
    return 0;
}
