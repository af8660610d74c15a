/* fuzz_ctllist.c — libFuzzer target for the agent's --controller list
 * (agent/controllers.c): any text either gives 1 to VG_AGENT_CONTROLLERS_MAX
 * distinct http:// or https:// base URLs, none ending in '/', or is refused
 * with a message; never a crash or a read out of bounds. */
#include "agent/agent_int.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *list = malloc(size + 1);
    struct agent *a = calloc(1, sizeof *a);
    if (!list || !a) {
        free(list);
        free(a);
        return 0;
    }
    memcpy(list, data, size);
    list[size] = 0;
    char err[256] = "", url[700];
    if (ctl_init(a, list, err, sizeof err) == 0) {
        if (a->nctl < 1 || a->nctl > VG_AGENT_CONTROLLERS_MAX || a->cur != 0) abort();
        for (int i = 0; i < a->nctl; i++) {
            const char *b = a->ctl[i];
            size_t l = strlen(b);
            if (strncmp(b, "http://", 7) && strncmp(b, "https://", 8)) abort();
            if (l && b[l - 1] == '/') abort();
            for (int j = 0; j < i; j++)
                if (!strcmp(a->ctl[j], b)) abort();
        }
        ctl_url(a, "/v1/events", url, sizeof url);
    } else if (!err[0]) {
        abort();   /* refused without saying why */
    }
    free(list);
    free(a);
    return 0;
}
