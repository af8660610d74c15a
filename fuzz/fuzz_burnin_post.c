/* fuzz_burnin_post.c — the controller's burn-in results intake (a `vigil
 * burnin --json` document → rows in an in-memory SQLite store, then the
 * history built from them) on arbitrary bytes. */
#include "controller/burnin_hist.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct vg_store *st;
    static unsigned runs;
    char err[256] = "";
    if (st && ++runs % 256 == 0) vg_store_close(st), st = NULL;   /* the history stays small */
    if (!st && vg_store_open(":memory:", &st, err, sizeof err)) abort();
    json_t *doc = json_loadb((const char *)data, size, 0, NULL);
    int n = vg_burnin_record(st, doc, "post", NULL, 1764430688123LL, err, sizeof err);
    if (n == -2) abort();   /* an in-memory store does not fail */
    if (n < 0 && !err[0]) abort();   /* a refusal names its field */
    json_decref(doc);
    json_t *h = vg_burnin_history(st, NULL, 0, 1764430688123LL, 4, NULL, 0);
    if (!json_is_object(h)) abort();
    json_decref(h);
    return 0;
}
