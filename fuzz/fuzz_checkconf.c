/* fuzz_checkconf.c — libFuzzer target for the `vigil check` config parser:
 * parse, validate against the check table and match every line's host mask;
 * never a crash, a leak or a stall, whatever the input. */
#include "signal/checkconf.h"
#include "signal/checks.h"
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vg_checkconf c;
    char err[512];
    if (vg_checkconf_parse((const char *)data, size, "fuzz.conf", &c, err, sizeof err) == 0) {
        vg_check_validate(&c, err, sizeof err);
        for (size_t i = 0; i < c.n; i++) {
            vg_hostmask_match(c.lines[i].hostmask, "gpu07");
            vg_check_get(&c.lines[i], "port");
        }
    }
    vg_checkconf_free(&c);
    return 0;
}
