/* timeutil.h — wall and monotonic clocks in milliseconds, and RFC 3339 UTC
 * timestamps with milliseconds (the JSON contract). */
#ifndef VG_TIMEUTIL_H
#define VG_TIMEUTIL_H
#include <stdbool.h>
#include <stdint.h>

int64_t vg_now_ms(void);   /* CLOCK_REALTIME, ms since the epoch */
int64_t vg_mono_ms(void);  /* CLOCK_MONOTONIC */
void vg_sleep_ms(int64_t ms);
/* "2026-11-29T15:18:08.123Z" into buf (at least 32 bytes). */
void vg_format_time(int64_t ms, char *buf);
/* Parses RFC 3339 ("…Z" or "±hh:mm", optional fraction); false if malformed
 * or not a date of the calendar (2026-02-30, 2026-13-45). */
bool vg_parse_time(const char *s, int64_t *ms);
/* RFC 3339 as above, or a day "YYYY-MM-DD" (its midnight UTC): what the date
 * options of the commands take (--since, --until, --now, --date…). */
bool vg_parse_day_or_time(const char *s, int64_t *ms);
/* A duration: "N" seconds, or "Nd" / "Nh" / "Nm" / "Ns" (at most 10 years);
 * what the policy files take (the catalog's windows, the repair ladder's). */
bool vg_duration_ms(const char *s, int64_t *ms);

#endif
