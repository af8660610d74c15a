/* fuzz_goodput.c — libFuzzer target for the goodput reader (drill/goodput.h):
 * the bytes as a trainer job's log, line by line, then its figures. */
#include "drill/goodput.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *copy = malloc(size + 1);
    if (!copy) return 0;
    memcpy(copy, data, size);
    copy[size] = 0;
    struct vg_goodput *g = vg_goodput_new("fuzz.log");
    char err[512];
    int rc = 0;
    for (char *save = NULL, *line = strtok_r(copy, "\n", &save); line && !rc; line = strtok_r(NULL, "\n", &save))
        rc = vg_goodput_line(g, line, err, sizeof err);
    if (!rc) json_decref(vg_goodput_finish(g, err, sizeof err));
    vg_goodput_free(g);
    free(copy);
    return 0;
}
