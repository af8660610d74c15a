/* fuzz_versiontext.c — libFuzzer target for the readers of version text on
 * disk (src/inventory/versiontext.c): nvcc's banner and a wheel's METADATA.
 * Any input either yields well-formed strings (a release with a dot that
 * starts with a digit, a non-empty name, a version starting with a digit)
 * or nothing — never a crash or a read past the input. */
#include "inventory/inventory.h"
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size ? size : 1);
    if (!buf) return 0;
    memcpy(buf, data, size); /* not NUL-terminated: the readers take a length */
    char rel[32], build[32], name[64], ver[32];
    if (vg_nvcc_banner(buf, size, rel, sizeof rel, build, sizeof build)) {
        if (!isdigit((unsigned char)rel[0]) || !strchr(rel, '.') || strlen(rel) >= sizeof rel) abort();
        if (build[0] && !isdigit((unsigned char)build[0])) abort();
    }
    if (vg_wheel_metadata(buf, size, name, sizeof name, ver, sizeof ver)) {
        if (!name[0] || !isdigit((unsigned char)ver[0]) || strlen(name) >= sizeof name) abort();
    }
    long code = 0;
    for (size_t i = 0; i < size && i < 8; i++) code = code * 10 + data[i] % 10;
    if (vg_cuda_version_code(code, ver, sizeof ver) && !strchr(ver, '.')) abort();
    free(buf);
    return 0;
}
