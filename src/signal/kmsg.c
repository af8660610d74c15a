/* kmsg.c — the kernel-log parser (see kmsg.h).  The hot path never looks at
 * ordinary lines: each feed searches the buffer for a few anchors ("NVRM",
 * "SXid", "AER", "PCIe Bus Error") and counts the newlines before the next
 * one; only anchor lines (and /dev/kmsg continuation lines) are parsed. */
#include "signal/kmsg.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>


void vg_kmsg_init(struct vg_kmsg *k, const struct vg_kmsg_opts *o, vg_kmsg_emit_fn emit, void *arg)
{
    memset(k, 0, sizeof *k);
    if (o) k->o = *o;
    if (k->o.year <= 0) {
        time_t t = (time_t)(vg_now_ms() / 1000);
        struct tm tm;
        gmtime_r(&t, &tm);
        k->o.year = tm.tm_year + 1900;
    }
    k->emit = emit;
    k->arg = arg;
}

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
static int parse_syslog_time(const char *p, int year, int64_t *ms)
{
    int mo, d, h, mi, s, f;
    int n = parse_month(p, &mo);
    if (!n || p[n] != ' ') return 0;
    while (p[n] == ' ') n++;
    if (!isdigit((unsigned char)p[n])) return 0;
    d = p[n++] - '0';
    if (isdigit((unsigned char)p[n])) d = d * 10 + (p[n++] - '0');
    if (p[n] != ' ') return 0;
    n++;
    int t = parse_hms(p + n, &h, &mi, &s, &f);
    if (!t || !civil_ms(year, mo, d, h, mi, s, f, ms)) return 0;
    return n + t;
}

/* "[Sun Feb 23 16:24:18 2025]" (dmesg -T / --ctime); returns bytes used or 0. */
static int parse_ctime_bracket(const char *p, int64_t *ms)
{
    int n = 1, mo, d, h, mi, s, f, y;
    while (isalpha((unsigned char)p[n]) || (unsigned char)p[n] >= 0x80 || p[n] == '.') n++;
    if (n == 1 || p[n] != ' ') return 0;
    n++;
    int m = parse_month(p + n, &mo);
    if (!m) return 0;
    n += m;
    while (p[n] == ' ') n++;
    if (!isdigit((unsigned char)p[n])) return 0;
    d = p[n++] - '0';
    if (isdigit((unsigned char)p[n])) d = d * 10 + (p[n++] - '0');
    if (p[n++] != ' ') return 0;
    int t = parse_hms(p + n, &h, &mi, &s, &f);
    if (!t) return 0;
    n += t;
    if (p[n++] != ' ' || !digits(p + n, 4, &y) || p[n + 4] != ']') return 0;
    if (!civil_ms(y, mo, d, h, mi, s, f, ms)) return 0;
    return n + 5;
}

/* "[ 1234.567890]"; returns bytes used (0 when not one) and the offset in µs. */
static int parse_rel_bracket(const char *p, int64_t *us)
{
    int n = 1;
    while (p[n] == ' ') n++;
    if (!isdigit((unsigned char)p[n])) return 0;
    int64_t sec = 0, frac = 0;
    int fd = 0;
    while (isdigit((unsigned char)p[n]) && sec < 100000000000LL) sec = sec * 10 + (p[n++] - '0');
    if (p[n] == '.') {
        n++;
        while (isdigit((unsigned char)p[n])) {
            if (fd < 6) frac = frac * 10 + (p[n] - '0'), fd++;
            n++;
        }
    }
    if (p[n] != ']') return 0;
    while (fd < 6) frac *= 10, fd++;
    *us = sec * 1000000 + frac;
    return n + 1;
}

/* ---- framing --------------------------------------------------------------- */

struct frame {
    const char *msg;    /* the kernel message, after every prefix */
    int64_t abs_ms;     /* 0 = none */
    int64_t rel_us;     /* -1 = none */
    bool kmsg;          /* a /dev/kmsg record (continuation lines may follow) */
};

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

/* Returns 0, or -1 for a malformed line. */
static int parse_frame(struct vg_kmsg *k, const char *s, struct frame *f)
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
        } else if ((n = parse_ctime_bracket(p, &f->abs_ms))) {
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

/* ---- event extraction ------------------------------------------------------ */

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    c = (char)tolower((unsigned char)c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

bool vg_pci_normalize(const char *s, size_t n, char out[16])
{
    if (n >= 4 && strncasecmp(s, "PCI:", 4) == 0) s += 4, n -= 4;
    unsigned part[4] = { 0, 0, 0, 0 };
    int np = 0, nd = 0;
    char sep[4] = { 0, 0, 0, 0 };
    for (size_t i = 0; i <= n; i++) {
        int h = i < n ? hexval(s[i]) : -1;
        if (h >= 0) {
            if (++nd > 4) return false;
            part[np] = part[np] * 16 + (unsigned)h;
            continue;
        }
        if (nd == 0) return false;
        sep[np] = i < n ? s[i] : '\0';
        np++;
        nd = 0;
        if (i == n || (s[i] != ':' && s[i] != '.') || np == 4) break;
    }
    unsigned dom = 0, bus, dev, fn = 0;
    if (np == 4 && sep[0] == ':' && sep[1] == ':' && sep[2] == '.') dom = part[0], bus = part[1], dev = part[2], fn = part[3];
    else if (np == 3 && sep[0] == ':' && sep[1] == ':') dom = part[0], bus = part[1], dev = part[2];
    else if (np == 3 && sep[0] == ':' && sep[1] == '.') bus = part[0], dev = part[1], fn = part[2];
    else return false;
    if (bus > 0xff || dev > 0x1f || fn > 7) return false;
    snprintf(out, 16, "%04x:%02x:%02x.%x", dom & 0xffff, bus, dev, fn);
    return true;
}

/* The PCI address starting at p (until ')', ':' followed by space, ' ' or end). */
static bool pci_at(const char *p, char out[16])
{
    size_t n = 0;
    if (strncasecmp(p, "PCI:", 4) == 0) n = 4;
    while (p[n] && (isxdigit((unsigned char)p[n]) || p[n] == ':' || p[n] == '.')) n++;
    while (n && (p[n - 1] == ':' || p[n - 1] == '.')) n--;
    return vg_pci_normalize(p, n, out);
}

/* "GPU<n>" anywhere in s (as in "from GPU4 GSP"); -1 when absent. */
static int gpu_index(const char *s)
{
    for (const char *p = strstr(s, "GPU"); p; p = strstr(p + 3, "GPU")) {
        if (isdigit((unsigned char)p[3]) && (p == s || !isalnum((unsigned char)p[-1]))) {
            int v = 0, i = 3;
            while (isdigit((unsigned char)p[i]) && v < 10000) v = v * 10 + (p[i++] - '0');
            if (!isalnum((unsigned char)p[i])) return v;
        }
    }
    return -1;
}

static void map_gpu(struct vg_kmsg *k, struct vg_event *e)
{
    if (!e->pci[0]) return;
    for (int i = 0; i < k->ngpumap && i < VG_KMSG_GPUMAP; i++)
        if (strcmp(k->gpumap[i].pci, e->pci) == 0) {
            if (e->gpu >= 0) k->gpumap[i].gpu = e->gpu;
            else e->gpu = k->gpumap[i].gpu;
            return;
        }
    if (e->gpu < 0) return;
    int slot = k->ngpumap++ % VG_KMSG_GPUMAP;
    vg_strlcpy(k->gpumap[slot].pci, e->pci, sizeof k->gpumap[slot].pci);
    k->gpumap[slot].gpu = e->gpu;
}

static void flush(struct vg_kmsg *k)
{
    if (!k->have_pend) return;
    k->have_pend = false;
    map_gpu(k, &k->pend);
    k->events++;
    if (k->emit) k->emit(&k->pend, k->arg);
}

/* Was the last event `kind` on pci within the last few lines? */
static bool recent(const struct vg_kmsg *k, const char *kind, int code, const char *pci)
{
    return k->last_line && k->lines - k->last_line <= 8 && strcmp(k->last.kind, kind) == 0 &&
           (code < 0 || k->last.code == code) && (!pci[0] || !k->last.pci[0] || strcmp(k->last.pci, pci) == 0);
}

static void start_event(struct vg_kmsg *k, const char *line, const struct frame *f, const char *kind,
                        int code, const char *pci, int gpu)
{
    flush(k);
    struct vg_event *e = &k->pend;
    vg_event_init(e);
    if (k->o.node) vg_strlcpy(e->node, k->o.node, sizeof e->node);
    vg_strlcpy(e->source, "kmsg", sizeof e->source);
    vg_strlcpy(e->kind, kind, sizeof e->kind);
    e->code = code;
    vg_strlcpy(e->pci, pci, sizeof e->pci);
    e->gpu = gpu;
    if (f->abs_ms > 0) e->time_ms = f->abs_ms;
    else if (f->rel_us >= 0 && k->o.boot_ms > 0) e->time_ms = k->o.boot_ms + f->rel_us / 1000;
    e->seen_ms = vg_now_ms();
    vg_strlcpy(e->raw, line, sizeof e->raw);
    k->have_pend = true;
    k->last = *e;
    k->last_line = k->lines;
}

/* After "Xid"/"SXid": " (PCI:…): CODE" — the PCI id into pci ("" when the
 * parentheses hold none), the code into *code.  Returns where the text after
 * the code starts, or NULL when malformed (or when required parentheses are
 * missing). */
static const char *pci_and_code(const char *p, bool paren_required, char pci[16], int *code)
{
    while (*p == ' ') p++;
    pci[0] = '\0';
    if (*p == '(') {
        const char *close = strchr(p, ')');
        if (!close) return NULL;
        if (!pci_at(p + 1, pci)) pci[0] = '\0';
        p = close + 1;
    } else if (paren_required) {
        return NULL;
    }
    while (*p == ' ' || *p == ':') p++;
    if (!isdigit((unsigned char)*p)) return NULL;
    *code = 0;
    while (isdigit((unsigned char)*p)) {
        *code = *code * 10 + (*p++ - '0');
        if (*code > 1000000) return NULL;
    }
    return p;
}

/* "NVRM: Xid (PCI:0000:3b:00): 79, …"; returns -1 when malformed. */
static int parse_xid(struct vg_kmsg *k, const char *line, const struct frame *f, const char *x)
{
    char pci[16];
    int code;
    const char *p = pci_and_code(x + 3, false, pci, &code);
    if (!p || (*p != ',' && *p != '\0' && *p != ' ')) return -1;
    start_event(k, line, f, "xid", code, pci, gpu_index(p));
    return 0;
}

/* "nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, Fatal, …" */
static int parse_sxid(struct vg_kmsg *k, const char *line, const struct frame *f, const char *x)
{
    char pci[16];
    int code;
    const char *p = pci_and_code(x + 4, true, pci, &code);
    if (!p) return -1;
    while (*p == ',' || *p == ' ') p++;
    /* The driver prints a record's details as further lines with the same SXid. */
    if (vg_startswith(p, "Severity") || vg_startswith(p, "Data") || vg_startswith(p, "Fatal error data")) return 0;
    start_event(k, line, f, "sxid", code, pci, -1);
    return 0;
}

/* "pcieport 0000:00:03.1: AER: Uncorrected (Fatal) error received: 0000:3b:00.0",
 * "nvidia 0000:3b:00.0: AER: PCIe Bus Error: severity=Uncorrected (Fatal), …" */
static void parse_aer(struct vg_kmsg *k, const char *line, const struct frame *f, const char *msg)
{
    const char *rec = strstr(msg, "error received: ");
    const char *recm = rec ? NULL : strstr(msg, "error message received from ");
    const char *sev = strstr(msg, "severity=");
    if (!rec && !recm && !sev) return;
    const char *cls = rec ? msg : recm ? msg : sev;
    const char *kind;
    if (strstr(cls, "Non-Fatal") || strstr(cls, "NonFatal") || strstr(cls, "Nonfatal")) kind = "aer-nonfatal";
    else if (strstr(cls, "Fatal")) kind = "aer-fatal";
    else if (strstr(cls, "Correct")) kind = "aer-corrected";
    else return;
    char pci[16] = "";
    if (rec) pci_at(rec + 16, pci);
    else if (recm) pci_at(recm + 28, pci);
    else {
        /* the device the line is about: "<driver> <bdf>: …" at the message start */
        const char *sp = strchr(msg, ' ');
        if (sp && sp - msg < 40) pci_at(sp + 1, pci);
        if (recent(k, kind, -1, pci)) return; /* the detail line of the record just seen */
    }
    start_event(k, line, f, kind, -1, pci, -1);
}

static int parse_nvrm(struct vg_kmsg *k, const char *line, const struct frame *f, const char *nv)
{
    const char *x = strstr(nv, "Xid");
    if (x && (x[3] == ' ' || x[3] == '(')) return parse_xid(k, line, f, x);
    char pci[16] = "";
    const char *g = strstr(nv, "GPU ");
    if (g) pci_at(g + 4, pci);
    if (!pci[0] && (g = strstr(nv, "GPU at PCI:"))) pci_at(g + 7, pci);
    if (strstr(nv, "fallen off the bus")) {
        if (!pci[0] && k->probe_line && k->lines - k->probe_line <= 4) vg_strlcpy(pci, k->probe_pci, sizeof pci);
        k->probe_line = 0;
        if (recent(k, "xid", 79, pci) || recent(k, "fallen-off-bus", -1, pci)) return 0; /* same record */
        start_event(k, line, f, "fallen-off-bus", -1, pci, gpu_index(nv));
        return 0;
    }
    if (vg_startswith(nv, "NVRM: The NVIDIA GPU ") && pci[0]) {
        vg_strlcpy(k->probe_pci, pci, sizeof k->probe_pci);
        k->probe_line = k->lines;
        return 0;
    }
    if (strstr(nv, "RmInitAdapter failed")) {
        if (!pci[0] && k->probe_line && k->lines - k->probe_line <= 4) vg_strlcpy(pci, k->probe_pci, sizeof pci);
        start_event(k, line, f, "rminit-failed", -1, pci, gpu_index(nv));
        return 0;
    }
    if (strstr(nv, "GSP") && (strstr(nv, "Timeout") || strstr(nv, "timeout")) && !strstr(nv, "_kgspLogXid119")) {
        int gpu = gpu_index(nv);
        if (k->last_line && k->lines - k->last_line <= 8 && strcmp(k->last.kind, "xid") == 0 &&
            k->last.code == 119 && (gpu < 0 || k->last.gpu < 0 || k->last.gpu == gpu))
            return 0; /* the banner/detail of an Xid 119 */
        start_event(k, line, f, "gsp-timeout", -1, pci, gpu);
        return 0;
    }
    /* "NVRM: GPU at PCI:0000:01:00: GPU-uuid": remembered for a following multi-line record */
    if (pci[0]) {
        vg_strlcpy(k->probe_pci, pci, sizeof k->probe_pci);
        k->probe_line = k->lines;
    }
    return 0;
}

/* A full look at one line (counted by the caller). */
static void parse_line(struct vg_kmsg *k, const char *s, size_t n, bool overlong)
{
    if (n && s[n - 1] == '\r') n--;
    /* /dev/kmsg continuation: " SUBSYSTEM=pci", " DEVICE=+pci:0000:3b:00.0" */
    if (k->need_next && n && s[0] == ' ') {
        if (k->have_pend && !k->pend.pci[0] && n > 13 && memcmp(s, " DEVICE=+pci:", 13) == 0)
            vg_pci_normalize(s + 13, n - 13, k->pend.pci);
        return;
    }
    k->need_next = false;
    flush(k);
    if (overlong || memchr(s, '\0', n)) {
        k->malformed++;
        return;
    }
    char line[VG_KMSG_LINE_MAX + 1];
    memcpy(line, s, n);
    line[n] = '\0';
    struct frame f;
    if (parse_frame(k, line, &f)) {
        k->malformed++;
        return;
    }
    k->need_next = f.kmsg;
    const char *msg = f.msg;
    /* printk stamps inside syslog lines: "kernel: [ 1234.5] NVRM: …" */
    if (*msg == '[') {
        int64_t us;
        int m = parse_rel_bracket(msg, &us);
        if (m) {
            if (f.rel_us < 0) f.rel_us = us;
            msg += m;
            while (*msg == ' ') msg++;
        }
    }
    const char *a;
    int rc = 0;
    if ((a = strstr(msg, "NVRM:"))) rc = parse_nvrm(k, line, &f, a);
    else if ((a = strstr(msg, "SXid"))) rc = parse_sxid(k, line, &f, a);
    else if (strstr(msg, "AER") || strstr(msg, "PCIe Bus Error")) parse_aer(k, line, &f, msg);
    if (rc) k->malformed++;
}

void vg_kmsg_line(struct vg_kmsg *k, const char *line, size_t n)
{
    k->lines++;
    parse_line(k, line, n > VG_KMSG_LINE_MAX ? VG_KMSG_LINE_MAX : n, n > VG_KMSG_LINE_MAX);
}

/* Is there an anchor whose two-byte signature is at q?  (NVRM, SXid, AER, PCIe Bus Error) */
static bool anchor_at(const char *base, const char *q, const char *end)
{
    switch (q[0]) {
    case 'V': return q > base && end - q >= 3 && memcmp(q - 1, "NVRM", 4) == 0;
    case 'X': return q > base && end - q >= 3 && memcmp(q - 1, "SXid", 4) == 0;
    case 'A': return end - q >= 3 && memcmp(q, "AER", 3) == 0;
    case 'B': return end - q >= 9 && memcmp(q, "Bus Error", 9) == 0;
    default: return false;
    }
}

typedef unsigned char vg_v16 __attribute__((vector_size(16)));

/* The first anchor in [p, end) (or end), and the newlines before it: one pass,
 * sixteen bytes at a time, looking for the byte pairs VR, Xi, AE and Bu (GCC
 * vector extensions: SSE2 on x86-64, NEON on aarch64). */
static const char *scan_anchor(const char *base, const char *p, const char *end, uint64_t *nls)
{
    uint64_t n = 0;
    while (end - p >= 17) {
        vg_v16 a, b;
        memcpy(&a, p, 16);
        memcpy(&b, p + 1, 16);
        vg_v16 m = (vg_v16)(((a == 'V') & (b == 'R')) | ((a == 'X') & (b == 'i')) | ((a == 'A') & (b == 'E')) |
                            ((a == 'B') & (b == 'u')));
        vg_v16 l = (vg_v16)(a == '\n');
        uint64_t m2[2], l2[2];
        memcpy(m2, &m, 16);
        memcpy(l2, &l, 16);
        if (m2[0] | m2[1]) {
            for (int i = 0; i < 16; i++) {
                if (((const unsigned char *)&m)[i] && anchor_at(base, p + i, end)) {
                    for (int j = 0; j < i; j++) n += p[j] == '\n';
                    *nls = n;
                    return p + i;
                }
            }
        }
        n += (uint64_t)(__builtin_popcountll(l2[0]) + __builtin_popcountll(l2[1])) / 8;
        p += 16;
    }
    for (; p < end; p++) {
        if (anchor_at(base, p, end)) break;
        n += *p == '\n';
    }
    *nls = n;
    return p;
}

void vg_kmsg_feed(struct vg_kmsg *k, const char *buf, size_t n)
{
    const char *p = buf, *end = buf + n;
    /* finish a partial line kept from the last feed */
    if (k->carry_len || k->carry_over) {
        const char *nl = memchr(p, '\n', n);
        const char *stop = nl ? nl : end;
        size_t add = (size_t)(stop - p);
        if (!k->carry_over && k->carry_len + add <= VG_KMSG_LINE_MAX) {
            memcpy(k->carry + k->carry_len, p, add);
            k->carry_len += add;
        } else {
            k->carry_over = true;
        }
        if (!nl) return;
        k->lines++;
        parse_line(k, k->carry, k->carry_len, k->carry_over);
        k->carry_len = 0;
        k->carry_over = false;
        p = nl + 1;
    }
    while (p < end) {
        if (!k->need_next) {
            /* jump to the line of the nearest anchor, counting the lines skipped */
            uint64_t skipped;
            const char *a = scan_anchor(buf, p, end, &skipped);
            if (skipped) {
                const char *ls = memrchr(p, '\n', (size_t)(a - p));
                flush(k);
                k->lines += skipped;
                p = ls + 1;
            }
            if (a == end) break; /* p is now the start of the (partial) last line */
        }
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) break;
        k->lines++;
        size_t len = (size_t)(nl - p);
        parse_line(k, p, len > VG_KMSG_LINE_MAX ? VG_KMSG_LINE_MAX : len, len > VG_KMSG_LINE_MAX);
        p = nl + 1;
    }
    if (p < end) {
        size_t rest = (size_t)(end - p);
        if (rest <= VG_KMSG_LINE_MAX) {
            memcpy(k->carry, p, rest);
            k->carry_len = rest;
        } else {
            k->carry_len = 0;
            k->carry_over = true;
        }
    }
}

void vg_kmsg_finish(struct vg_kmsg *k)
{
    if (k->carry_len || k->carry_over) {
        k->lines++;
        parse_line(k, k->carry, k->carry_len, k->carry_over);
        k->carry_len = 0;
        k->carry_over = false;
    }
    k->need_next = false;
    flush(k);
}

/* Boot time from /proc/stat's btime (under root), in ms; 0 when unknown. */
int64_t vg_kmsg_boot_ms(const char *root)
{
    char *text = NULL;
    size_t len = 0;
    int64_t ms = 0;
    if (vg_read_file(root, "/proc/stat", 1 << 20, &text, &len) == 0) {
        const char *p = strstr(text, "\nbtime ");
        if (p) ms = strtoll(p + 7, NULL, 10) * 1000;
    }
    free(text);
    return ms;
}

