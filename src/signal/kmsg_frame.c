/* kmsg_frame.c — the framing of one kernel-log line: its prefixes (a
 * /dev/kmsg record, a syslog or RFC 5424 header, dmesg --decode's facility)
 * and its timestamps in every form dmesg, journald and syslog daemons print —
 * boot-relative "[ 1234.567890]", ctime "[Sun Feb 23 16:24:18 2025]" (-T,
 * localized), reltime "[Feb23 16:24]" then "[  +0.000844]" (-H, --reltime),
 * with --show-delta's " <    0.000844>", ISO 8601 — several stamps in a row
 * included.  See kmsg_int.h. */
#include "signal/kmsg_int.h"
#include "util/strutil.h"
#include <ctype.h>
#include <string.h>

static int delta_suffix(const char *p);

/* ---- time ---------------------------------------------------------------- */

static int64_t days_from_civil(int y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static bool civil_ms(int y, int mo, int d, int h, int mi, int s, int ms, int64_t *out)
{
    if (y < 1970 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
        return false;
    *out = ((days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60000LL + s * 1000LL + ms;
    return true;
}

static int digits(const char *p, int n, int *v)
{
    int x = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)p[i])) return 0;
        x = x * 10 + (p[i] - '0');
    }
    *v = x;
    return n;
}

/* "HH:MM:SS" then an optional .frac/,frac; returns bytes used or 0. */
static int parse_hms(const char *p, int *h, int *mi, int *s, int *ms)
{
    if (!digits(p, 2, h) || p[2] != ':' || !digits(p + 3, 2, mi) || p[5] != ':' || !digits(p + 6, 2, s))
        return 0;
    int n = 8;
    *ms = 0;
    if (p[n] == '.' || p[n] == ',') {
        int i = n + 1, scale = 100;
        while (isdigit((unsigned char)p[i])) {
            *ms += (p[i] - '0') * scale;
            scale /= 10;
            i++;
        }
        if (i == n + 1) return 0;
        n = i;
    }
    return n;
}

/* RFC 3339 / ISO 8601 ("2024-11-25T10:00:00,123456+00:00", "…Z", "+0000" or
 * no zone = UTC); returns bytes used or 0. */
static int parse_iso(const char *p, int64_t *ms)
{
    int y, mo, d, h, mi, s, f;
    if (!digits(p, 4, &y) || p[4] != '-' || !digits(p + 5, 2, &mo) || p[7] != '-' || !digits(p + 8, 2, &d) ||
        (p[10] != 'T' && p[10] != ' '))
        return 0;
    int n = parse_hms(p + 11, &h, &mi, &s, &f);
    if (!n) return 0;
    n += 11;
    int off = 0;
    if (p[n] == 'Z') n++;
    else if (p[n] == '+' || p[n] == '-') {
        int oh, om;
        int sign = p[n] == '-' ? -1 : 1;
        if (!digits(p + n + 1, 2, &oh)) return 0;
        int m = n + 3;
        if (p[m] == ':') m++;
        if (!digits(p + m, 2, &om)) return 0;
        off = sign * (oh * 60 + om);
        n = m + 2;
    }
    if (!civil_ms(y, mo, d, h, mi, s, f, ms)) return 0;
    *ms -= off * 60000LL;
    return n;
}

/* Month abbreviations in the locales journalctl and dmesg -T print. */
static const struct { const char *name; int month; } months[] = {
    { "jan", 1 }, { "feb", 2 }, { "mar", 3 }, { "apr", 4 }, { "may", 5 }, { "jun", 6 },
    { "jul", 7 }, { "aug", 8 }, { "sep", 9 }, { "oct", 10 }, { "nov", 11 }, { "dec", 12 },
    /* de */ { "m\xc3\xa4r", 3 }, { "mrz", 3 }, { "mai", 5 }, { "okt", 10 }, { "dez", 12 },
    /* fr */ { "janv", 1 }, { "f\xc3\xa9vr", 2 }, { "f\xc3\xa9v", 2 }, { "mars", 3 }, { "avr", 4 },
    { "juin", 6 }, { "juil", 7 }, { "ao\xc3\xbbt", 8 }, { "sept", 9 }, { "d\xc3\xa9" "c", 12 },
    /* es, it, pt, nl */ { "ene", 1 }, { "abr", 4 }, { "ago", 8 }, { "dic", 12 }, { "gen", 1 },
    { "mag", 5 }, { "giu", 6 }, { "lug", 7 }, { "set", 9 }, { "ott", 10 }, { "fev", 2 },
    { "out", 10 }, { "mrt", 3 }, { "mei", 5 },
};

/* A month token (letters and UTF-8, optional trailing '.'); returns bytes used or 0. */
static int parse_month(const char *p, int *month)
{
    char tok[12];
    int n = 0;
    while (n < (int)sizeof tok - 1 && p[n] && p[n] != ' ' && p[n] != '.' &&
           (isalpha((unsigned char)p[n]) || (unsigned char)p[n] >= 0x80)) {
        tok[n] = (char)tolower((unsigned char)p[n]);
        n++;
    }
    tok[n] = '\0';
    if (n < 3) return 0;
    for (size_t i = 0; i < sizeof months / sizeof months[0]; i++)
        if (strcmp(tok, months[i].name) == 0) {
            *month = months[i].month;
            return p[n] == '.' ? n + 1 : n;
        }
    return 0;
}

/* "Nov 25 10:00:00[.frac]" (syslog, no year); returns bytes used or 0. */
/* "Nov 25", "Dec  4", "Feb23": a month token, spaces, a day of one or two
 * digits; returns bytes used or 0. */
static int parse_month_day(const char *p, int *mo, int *d)
{
    int n = parse_month(p, mo);
    if (!n) return 0;
    while (p[n] == ' ') n++;
    if (!isdigit((unsigned char)p[n])) return 0;
    *d = p[n++] - '0';
    if (isdigit((unsigned char)p[n])) *d = *d * 10 + (p[n++] - '0');
    return n;
}

static int parse_syslog_time(const char *p, int year, int64_t *ms)
{
    int mo, d, h, mi, s, f;
    int n = parse_month_day(p, &mo, &d);
    if (!n || p[n] != ' ') return 0;
    n++;
    int t = parse_hms(p + n, &h, &mi, &s, &f);
    if (!t || !civil_ms(year, mo, d, h, mi, s, f, ms)) return 0;
    return n + t;
}

/* "[Sun Feb 23 16:24:18 2025]" (dmesg -T / --ctime), with --show-delta's
 * suffix or not; returns bytes used or 0. */
static int parse_ctime_bracket(const char *p, int64_t *ms)
{
    int n = 1, mo, d, h, mi, s, f, y;
    while (isalpha((unsigned char)p[n]) || (unsigned char)p[n] >= 0x80 || p[n] == '.') n++;
    if (n == 1 || p[n] != ' ') return 0;
    n++;
    int m = parse_month_day(p + n, &mo, &d);
    if (!m) return 0;
    n += m;
    if (p[n++] != ' ') return 0;
    int t = parse_hms(p + n, &h, &mi, &s, &f);
    if (!t) return 0;
    n += t;
    if (p[n++] != ' ' || !digits(p + n, 4, &y)) return 0;
    n += 4;
    n += delta_suffix(p + n);
    if (p[n] != ']' || !civil_ms(y, mo, d, h, mi, s, f, ms)) return 0;
    return n + 1;
}

/* Digits after a '.' or ',' (at p) as µs; returns bytes used (0: none). */
static int frac_us(const char *p, int64_t *us)
{
    int n = 0, fd = 0;
    *us = 0;
    if (p[0] != '.' && p[0] != ',') return 0;
    for (n = 1; isdigit((unsigned char)p[n]); n++)
        if (fd < 6) *us = *us * 10 + (p[n] - '0'), fd++;
    if (n == 1) return 0;
    while (fd < 6) *us *= 10, fd++;
    return n;
}

/* Seconds with a fraction ("1234.567890", "0,000844") as µs; returns bytes used or 0. */
static int seconds_us(const char *p, int64_t *us)
{
    int n = 0;
    int64_t sec = 0, frac = 0;
    if (!isdigit((unsigned char)p[0])) return 0;
    while (isdigit((unsigned char)p[n]) && sec < 100000000000LL) sec = sec * 10 + (p[n++] - '0');
    n += frac_us(p + n, &frac);
    *us = sec * 1000000 + frac;
    return n;
}

/* " <    0.000844>" (dmesg --show-delta) inside a stamp's bracket; returns bytes used (0: none). */
static int delta_suffix(const char *p)
{
    int n = 0;
    int64_t us;
    while (p[n] == ' ') n++;
    if (p[n] != '<') return 0;
    n++;
    while (p[n] == ' ') n++;
    int d = seconds_us(p + n, &us);
    if (!d || p[n + d] != '>') return 0;
    return n + d + 1;
}

/* "[ 1234.567890]" or "[ 1234.567890 <    0.000844>]"; returns bytes used (0
 * when not one) and the offset in µs. */
static int parse_rel_bracket(const char *p, int64_t *us)
{
    int n = 1;
    while (p[n] == ' ') n++;
    int d = seconds_us(p + n, us);
    if (!d) return 0;
    n += d;
    n += delta_suffix(p + n);
    return p[n] == ']' ? n + 1 : 0;
}

/* "[<    0.000844>]" (dmesg --time-format delta): a delta alone, no time; returns bytes used or 0. */
static int parse_delta_bracket(const char *p)
{
    int n = delta_suffix(p + 1);
    return n && p[1 + n] == ']' ? n + 2 : 0;
}

/* dmesg -H / --reltime: "[Feb23 16:24]" or "[Dec 4 03:33]" (strftime "%b%e
 * %H:%M", local time to the minute, no year) when the minute changes, else
 * "[  +0.000844]" / "[ +12.000001]", the time since the line before.  The
 * minute line sets k->reltime_us and each delta adds to it: the times are
 * those of the minute lines plus the deltas (none before the first minute
 * line).  Returns bytes used (0 when not one), *abs_ms = 0 when unknown. */
static int parse_reltime(struct vg_kmsg *k, const char *p, int64_t *abs_ms)
{
    int n = 1;
    *abs_ms = 0;
    while (p[n] == ' ') n++;
    if (p[n] == '+' || p[n] == '-') {
        int64_t sign = p[n] == '-' ? -1 : 1, us;
        int d = seconds_us(p + n + 1, &us);
        if (!d || p[n + 1 + d] != ']') return 0;
        if (k->reltime_us > 0) {
            k->reltime_us += sign * us;
            *abs_ms = k->reltime_us / 1000;
        }
        return n + d + 2;
    }
    int mo, d, h, mi;
    int m = parse_month_day(p + n, &mo, &d);
    if (!m) return 0;
    n += m;
    if (p[n++] != ' ' || !digits(p + n, 2, &h) || p[n + 2] != ':' || !digits(p + n + 3, 2, &mi) || p[n + 5] != ']')
        return 0;
    if (!civil_ms(k->o.year, mo, d, h, mi, 0, 0, abs_ms)) return 0;
    k->reltime_us = *abs_ms * 1000;
    return n + 6;
}

/* ---- framing --------------------------------------------------------------- */

/* Skips "host kernel: " / "kernel: " / "kernel[123]: " after a syslog stamp. */
static const char *after_tag(const char *p)
{
    while (*p == ' ') p++;
    const char *colon = NULL;
    /* at most two tokens: [host] tag: */
    for (int tok = 0; tok < 2 && *p; tok++) {
        const char *e = p;
        while (*e && *e != ' ') e++;
        if (e > p && e[-1] == ':') {
            colon = e;
            break;
        }
        if (!*e) break;
        p = e + 1;
    }
    if (!colon) return NULL;
    while (*colon == ' ') colon++;
    return colon;
}

/* The prefix of line s and its first stamp; returns 0, or -1 for a malformed line. */
static int frame_prefix(struct vg_kmsg *k, const char *s, struct vg_kmsg_msg *f)
{
    f->abs_ms = 0;
    f->rel_us = -1;
    f->kmsg = false;
    const char *p = s;
    /* /dev/kmsg: "pri,seq,usec,flags[,…];msg" */
    if (isdigit((unsigned char)*p)) {
        const char *q = p;
        while (isdigit((unsigned char)*q)) q++;
        if (*q == ',') {
            int64_t v[3] = { 0, 0, 0 };
            q = p;
            for (int i = 0; i < 3; i++) {
                if (!isdigit((unsigned char)*q)) return -1;
                while (isdigit((unsigned char)*q)) {
                    if (v[i] < 100000000000000LL) v[i] = v[i] * 10 + (*q - '0');
                    q++;
                }
                if (i < 2 && *q++ != ',') return -1;
            }
            const char *semi = strchr(q, ';');
            if (!semi || semi - q > 32) return -1;
            f->rel_us = v[2];
            f->kmsg = true;
            f->msg = semi + 1;
            return 0;
        }
    }
    /* "<4>" syslog priority, then RFC 5424 ("<4>1 2024-… host kernel - - - msg") or BSD */
    if (*p == '<') {
        const char *q = p + 1;
        while (isdigit((unsigned char)*q)) q++;
        if (*q != '>' || q == p + 1) return -1;
        p = q + 1;
        if (p[0] == '1' && p[1] == ' ') {
            p += 2;
            int n = *p == '-' ? 1 : parse_iso(p, &f->abs_ms);
            if (!n) return -1;
            p += n;
            for (int i = 0; i < 4; i++) { /* hostname app procid msgid */
                if (*p != ' ') return -1;
                p++;
                while (*p && *p != ' ') p++;
            }
            if (*p++ != ' ') return -1;
            if (*p == '[') {
                const char *e = strstr(p, "] ");
                p = e ? e + 2 : p + strlen(p);
            } else if (*p == '-') {
                p++;
                if (*p == ' ') p++;
            } else return -1;
            if (vg_startswith(p, "\xef\xbb\xbf")) p += 3; /* BOM */
            f->msg = p;
            return 0;
        }
    }
    /* "kern  :warn  : " (dmesg --decode) */
    if (islower((unsigned char)*p)) {
        const char *q = p;
        while (islower((unsigned char)*q)) q++;
        while (*q == ' ') q++;
        if (*q == ':') {
            q++;
            while (islower((unsigned char)*q)) q++;
            while (*q == ' ') q++;
            if (*q == ':' && q[1] == ' ') p = q + 2;
        }
    }
    if (*p == '[') {
        int64_t us;
        int n = parse_rel_bracket(p, &us);
        if (n) {
            f->rel_us = us;
            p += n;
        } else if ((n = parse_ctime_bracket(p, &f->abs_ms)) || (n = parse_reltime(k, p, &f->abs_ms)) ||
                   (n = parse_delta_bracket(p))) {
            p += n;
        } else if (isdigit((unsigned char)p[1]) || p[1] == ' ') {
            return -1; /* a broken "[ 12.3" stamp */
        }
        if (*p == ' ') p++;
        f->msg = p;
        return 0;
    }
    int n;
    if (isdigit((unsigned char)*p) && (n = parse_iso(p, &f->abs_ms))) {
        p += n;
        while (*p == ' ') p++;
        /* remote syslog "stamp host kernel: msg" vs dmesg --time-format iso "stamp msg" */
        const char *ker = strstr(p, "kernel");
        if (ker && ker - p < 80) {
            const char *m = after_tag(p);
            if (m) p = m;
        }
        f->msg = p;
        return 0;
    }
    if (isalpha((unsigned char)*p) || (unsigned char)*p >= 0x80) {
        if ((n = parse_syslog_time(p, k->o.year, &f->abs_ms))) {
            const char *m = after_tag(p + n);
            if (!m) return -1;
            p = m;
        }
    }
    f->msg = p;
    return 0;
}


/* Stamps at the start of the message after the first: a printk stamp inside
 * a syslog line ("kernel: [ 1234.5] NVRM: …"), or dmesg given several
 * --time-format ("[17159596.699613] [Fri Dec 22 12:26:24 2023] [  +0.000000]
 * 2023-12-22T12:26:24,559615-08:00 msg").  The first absolute time wins. */
static void more_stamps(struct vg_kmsg *k, struct vg_kmsg_msg *m)
{
    const char *p = m->msg;
    for (int i = 0; i < 4; i++) {
        int64_t us, abs = 0;
        int n = 0;
        if (*p == '[') {
            if ((n = parse_rel_bracket(p, &us))) {
                if (m->rel_us < 0) m->rel_us = us;
            } else if (!(n = parse_ctime_bracket(p, &abs)) && !(n = parse_reltime(k, p, &abs)))
                n = parse_delta_bracket(p);
        } else if (isdigit((unsigned char)*p))
            n = parse_iso(p, &abs);
        if (!n) break;
        if (!m->abs_ms && abs) m->abs_ms = abs;
        p += n;
        while (*p == ' ') p++;
    }
    m->msg = p;
}

int vg_kmsg_frame(struct vg_kmsg *k, const char *line, struct vg_kmsg_msg *m)
{
    m->line = line;
    if (frame_prefix(k, line, m)) return -1;
    more_stamps(k, m);
    return 0;
}
