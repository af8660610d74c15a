/* fuzz_healthz.c — libFuzzer target for a controller's /healthz body as a
 * reader picking the leader parses it (wire/leader.c): any text gives a role
 * of leader, follower or single, a NUL-terminated leader URL and a term; never
 * a crash or a read out of bounds. */
#include "wire/leader.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *body = malloc(size + 1);
    if (!body) return 0;
    memcpy(body, data, size);
    body[size] = 0;
    struct vg_ctl_health h;
    vg_ctl_health_parse(body, &h);
    if (strcmp(h.role, "leader") && strcmp(h.role, "follower") && strcmp(h.role, "single")) abort();
    if (strnlen(h.leader, sizeof h.leader) == sizeof h.leader) abort();
    free(body);
    return 0;
}
