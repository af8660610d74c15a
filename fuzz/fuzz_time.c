/* fuzz_time.c — libFuzzer target for the time parsers every date option and
 * every JSON timestamp go through (util/timeutil.h): whatever
 * vg_parse_time or vg_parse_day_or_time accepts is a real instant, which
 * vg_format_time writes as a string both parse back to the same
 * millisecond, and a day is that day's midnight.  Aborts otherwise. */
#include "util/timeutil.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* vg_format_time writes four-digit years: the round trip holds from 1000 to 9999
 * (an offset can carry a parsed time a day past either end) */
#define FIRST_MS (-30610137600000LL) /* 1000-01-02 */
#define LAST_MS 253402128000000LL    /* 9999-12-30 */

static void round_trip(int64_t ms)
{
    if (ms < FIRST_MS || ms > LAST_MS) return;
    char buf[32];
    int64_t again;
    vg_format_time(ms, buf);
    if (!vg_parse_time(buf, &again) || again != ms) abort();
    if (!vg_parse_day_or_time(buf, &again) || again != ms) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s) return 0;
    memcpy(s, data, size);
    s[size] = 0;
    int64_t ms;
    if (vg_parse_time(s, &ms)) round_trip(ms);
    if (vg_parse_day_or_time(s, &ms)) {
        round_trip(ms);
        if (strlen(s) == 10 && ms % 86400000 != 0) abort();   /* a day is its midnight */
    }
    free(s);
    return 0;
}
