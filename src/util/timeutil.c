/* timeutil.c — clocks and RFC 3339 formatting; see timeutil.h. */
#include "util/timeutil.h"
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int64_t clock_ms(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t vg_now_ms(void) { return clock_ms(CLOCK_REALTIME); }
int64_t vg_mono_ms(void) { return clock_ms(CLOCK_MONOTONIC); }

void vg_sleep_ms(int64_t ms)
{
    if (ms <= 0) return;
    struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0) {}
}

void vg_format_time(int64_t ms, char *buf)
{
    time_t s = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
    int frac = (int)(ms - (int64_t)s * 1000);
    struct tm tm;
    gmtime_r(&s, &tm);
    size_t n = strftime(buf, 32, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, 32 - n, ".%03dZ", frac % 1000);
}

static bool digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i])) return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

/* Days in month M (1-12) of year Y, proleptic Gregorian. */
static int month_days(int Y, int M)
{
    static const int d[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    bool leap = (Y % 4 == 0 && Y % 100 != 0) || Y % 400 == 0;
    return M == 2 && leap ? 29 : d[M - 1];
}

bool vg_parse_time(const char *s, int64_t *ms)
{
    int Y, M, D, h, m, sec;
    if (strlen(s) < 19 || !digits(s, 4, &Y) || s[4] != '-' || !digits(s + 5, 2, &M) ||
        s[7] != '-' || !digits(s + 8, 2, &D) || (s[10] != 'T' && s[10] != ' ') ||
        !digits(s + 11, 2, &h) || s[13] != ':' || !digits(s + 14, 2, &m) || s[16] != ':' ||
        !digits(s + 17, 2, &sec))
        return false;
    if (M < 1 || M > 12 || D < 1 || D > month_days(Y, M) || h > 23 || m > 59 || sec > 60) return false;
    const char *p = s + 19;
    int frac = 0;
    if (*p == '.' || *p == ',') {
        p++;
        int nd = 0;
        while (isdigit((unsigned char)*p)) {
            if (nd < 3) frac = frac * 10 + (*p - '0');
            nd++;
            p++;
        }
        if (!nd) return false;
        for (; nd < 3; nd++) frac *= 10;
    }
    int off = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int oh, om;
        int sign = *p == '-' ? -1 : 1;
        if (!digits(p + 1, 2, &oh)) return false;
        const char *q = p + 3;
        if (*q == ':') q++;
        if (!digits(q, 2, &om)) return false;
        off = sign * (oh * 60 + om);
        p = q + 2;
    } else if (*p) {
        return false;
    }
    if (*p) return false;
    struct tm tm = { 0 };
    tm.tm_year = Y - 1900;
    tm.tm_mon = M - 1;
    tm.tm_mday = D;
    tm.tm_hour = h;
    tm.tm_min = m;
    tm.tm_sec = sec;
    time_t t = timegm(&tm);
    *ms = ((int64_t)t - (int64_t)off * 60) * 1000 + frac;
    return true;
}

bool vg_parse_day_or_time(const char *s, int64_t *ms)
{
    char buf[32];
    if (strlen(s) == 10) {   /* YYYY-MM-DD: that day's midnight, UTC */
        snprintf(buf, sizeof buf, "%sT00:00:00Z", s);
        s = buf;
    }
    return vg_parse_time(s, ms);
}

bool vg_duration_ms(const char *s, int64_t *ms)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || errno || v < 0 || v > 3650L * 24 * 3600) return false;
    int64_t unit = !strcmp(end, "d") ? 24LL * 3600 * 1000 : !strcmp(end, "h") ? 3600 * 1000 : !strcmp(end, "m") ? 60 * 1000
                 : !*end || !strcmp(end, "s") ? 1000 : 0;
    *ms = (int64_t)v * unit;
    return unit != 0;
}
