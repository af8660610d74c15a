/* fuzz_escape.c — the terminal and Markdown escaping of outside text
 * (report/escape.c) on arbitrary bytes: what comes out is valid UTF-8 with
 * no control character, no bidirectional control or line separator, and in
 * Markdown no raw markup character. */
#include "report/escape.h"
#include "util/strutil.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = vg_xstrndup((const char *)data, size);
    for (int md = 0; md < 2; md++) {
        struct sbuf b = SBUF_INIT;
        if (md) vg_md_escape(&b, text);
        else vg_term_escape(&b, text);
        const char *out = b.s ? b.s : "";
        if (!vg_utf8_printable(out)) abort();
        for (const char *p = out; md && *p; p++)
            if (strchr("<>`|[]", *p) && (p == out || p[-1] != '\\')) abort();
        sbuf_free(&b);
    }
    free(text);
    return 0;
}
