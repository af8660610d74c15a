/* fuzz_ingest.c — the controller's intake (agent message JSON → incidents in
 * an in-memory SQLite store) on arbitrary bytes. */
#include "controller/ingest.h"
#include "controller/store.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct vg_store *st;
    char err[256];
    if (!st && vg_store_open(":memory:", &st, err, sizeof err)) abort();
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    struct vg_ingest in = { .store = st, .window_ms = 60000 };
    json_t *resp = NULL;
    int code = vg_ingest_message(&in, text, 1764430688123LL, &resp);
    if (code != 202 && code != 400) abort();
    json_decref(resp);
    free(text);
    return 0;
}
