/* fuzz_serve_policy.c — the controller's policy file parser on arbitrary bytes. */
#include "controller/policy.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    struct vg_policy p;
    char err[256];
    vg_policy_defaults(&p);
    vg_policy_parse(&p, text, "fuzz", err, sizeof err);
    vg_policy_free(&p);
    free(text);
    return 0;
}
