/* parse_rvs.c — the ROCm Validation Suite's output (`rvs -m MODULE` or `rvs
 * -c CONF`), every module the burn-in runs: log lines "[RESULT] [ts]
 * [action] …" (the level and time prefix may be absent in a log file), the
 * per-GPU verdicts AMD's acceptance criteria name — gst "… met: TRUE|FALSE",
 * iet "pass: TRUE|FALSE", peqt "peqt true|false", gm "<metric> violations N",
 * pbqt "peers:true|false" and its "p2p-bandwidth … N GBps", pebb
 * "pcie-bandwidth … N GBps", mem "Test N : PASS" and "Number of errors :N" —,
 * the "ROCm Validation Suite (RVS) Summary" table newer releases end with
 * ("| action | MODULE | PASS |", its result cell coloured with ANSI codes on
 * a terminal), and the errors RVS writes ("RVS-ERROR [module] [action] …",
 * "[ERROR ] …").  Format facts: ROCm/ROCmValidationSuite src/rvsliblogger.cpp,
 * rvs/src/rvsexec_do_yaml.cpp and each module's worker (see
 * tests/fixtures/burnin/README.md).  RVS exits 0 whatever its actions
 * found, so only these lines say what happened. */
#include "burnin/lines.h"
#include "burnin/parsers.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Removes ANSI escape sequences (ESC '[' … final letter) in place. */
static void strip_ansi(char *s)
{
    char *w = s;
    for (char *r = s; *r;) {
        if (r[0] == 0x1b && r[1] == '[') {
            r += 2;
            while (*r && !isalpha((unsigned char)*r)) r++;
            if (*r) r++;
            continue;
        }
        *w++ = *r++;
    }
    *w = 0;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\r') s++;   /* -q rewrites its progress line with a CR */
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = 0;
    return s;
}

/* "[RESULT] [ 54433.732433] msg" / "[INFO  ] [ts] msg" → "msg"; other lines as they are. */
static char *unlevel(char *s)
{
    static const char *const levels[] = { "[RESULT]", "[INFO  ]", "[DEBUG ]", "[TRACE ]", "[NONE  ]" };
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
        size_t l = strlen(levels[i]);
        if (strncmp(s, levels[i], l)) continue;
        s += l;
        while (*s == ' ') s++;
        if (*s == '[') {   /* the time stamp */
            char *e = strchr(s, ']');
            if (e) s = e + 1;
        }
        while (*s == ' ') s++;
        return s;
    }
    return s;
}

static void verdict(struct vg_rvs_result *r, bool ok, const char *line)
{
    r->verdicts++;
    if (ok) return;
    if (!r->failed++) snprintf(r->first_fail, sizeof r->first_fail, "%s", line);
}

/* The word after key in s, compared without case: 1 for TRUE/PASS, 0 for
 * FALSE/FAIL, -1 when s has no key or another word follows it. */
static int flag_after(const char *s, const char *key)
{
    const char *p = strstr(s, key);
    if (!p) return -1;
    p += strlen(key);
    while (*p == ' ') p++;
    if (!strncasecmp(p, "true", 4) || !strncasecmp(p, "pass", 4)) return 1;
    if (!strncasecmp(p, "false", 5) || !strncasecmp(p, "fail", 4)) return 0;
    return -1;
}

/* The number before " GBps" (pebb, pbqt) or after "bandwidth = " (mem Test
 * 11, "2003.017090GB/s"); false when the line has none. */
static bool bandwidth(const char *s, double *v)
{
    const char *g = strstr(s, " GBps");
    if (g) {
        const char *b = g;
        while (b > s && (isdigit((unsigned char)b[-1]) || b[-1] == '.')) b--;
        if (b == g) return false;
        *v = strtod(b, NULL);
        return true;
    }
    const char *m = strstr(s, "bandwidth = ");
    if (!m) return false;
    char *end;
    *v = strtod(m + 12, &end);
    return end != m + 12;
}

static void note_bw(struct vg_rvs_result *r, double v)
{
    if (r->min_gbps < 0 || v < r->min_gbps) r->min_gbps = v;
}

/* A message of a module: line "[action] gm 28851 temp violations 0", msg
 * what follows the action's name. */
static void message(struct vg_rvs_result *r, const char *line, char *msg)
{
    const char *v;
    double bw;
    int f;
    if (!strncmp(msg, "Action name :", 13)) {
        r->actions++;
        return;
    }
    if (!strncmp(msg, "Module name :", 13)) {
        if (!r->module[0]) snprintf(r->module, sizeof r->module, "%s", trim(msg + 13));
        return;
    }
    if ((f = flag_after(msg, " met:")) >= 0 || (f = flag_after(msg, " pass:")) >= 0 ||
        (f = flag_after(msg, " peqt")) >= 0 || (f = flag_after(msg, "peers:")) >= 0)
        return verdict(r, f == 1, line);
    if ((v = strstr(msg, " violations "))) {
        char *end;
        long n = strtol(v + 12, &end, 10);
        if (end != v + 12) verdict(r, n == 0, line);
        return;
    }
    if ((v = strstr(msg, "Number of errors :"))) {   /* mem, logged when a test found errors */
        long n = strtol(v + 18, NULL, 10);
        if (n > 0) verdict(r, false, line);
        return;
    }
    if (strstr(msg, " mem Test ") && (f = flag_after(msg, " : ")) >= 0) return verdict(r, f == 1, line);
    if ((strstr(msg, "pcie-bandwidth") || strstr(msg, "p2p-bandwidth")) && bandwidth(msg, &bw)) {
        note_bw(r, bw);
        return verdict(r, bw > 0, line);   /* AMD: a non-zero throughput */
    }
    if (strstr(msg, " mem Test 11") && bandwidth(msg, &bw)) note_bw(r, bw);
}

/* A row of the summary table: "| action | GST | PASS |" (a verdict),
 * "| RVS version | 1.6.75 |"; other rows are the system overview. */
static void summary_row(struct vg_rvs_result *r, char *line)
{
    char *cell[4];
    int n = 0;
    for (char *p = line + 1; n < 4;) {
        char *bar = strchr(p, '|');
        if (!bar) break;
        *bar = 0;
        cell[n++] = trim(p);
        p = bar + 1;
    }
    if (n == 3 && (!strcmp(cell[2], "PASS") || !strcmp(cell[2], "FAIL")) && strcmp(cell[0], "Action Name")) {
        r->summary_rows++;
        char what[200];
        snprintf(what, sizeof what, "%.100s (%.20s): %s in the RVS summary", cell[0], cell[1], cell[2]);
        verdict(r, !strcmp(cell[2], "PASS"), what);
    } else if (n == 2 && !strcmp(cell[0], "RVS version"))
        snprintf(r->version, sizeof r->version, "%s", cell[1]);
}

int vg_parse_rvs(const char *text, size_t len, struct vg_rvs_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->min_gbps = -1;
    struct vg_lines it = { text, text + len };
    char buf[1024];
    bool summary = false;
    while (vg_lines_next(&it, buf, sizeof buf)) {
        strip_ansi(buf);
        char *s = trim(buf);
        if (!strncmp(s, "RVS-ERROR", 9) || !strncmp(s, "[ERROR ]", 8)) {
            r->errors++;
            if (!r->error[0]) snprintf(r->error, sizeof r->error, "%s", s);
            continue;
        }
        if (strstr(s, "ROCm Validation Suite (RVS) Summary")) summary = true;
        if (summary && s[0] == '|') {
            summary_row(r, s);
            continue;
        }
        s = unlevel(s);
        char *e = *s == '[' ? strchr(s, ']') : NULL;   /* "[action] …" */
        message(r, s, e ? e + 1 : s);
    }
    if (!r->actions && !r->verdicts && !r->errors && !summary) {
        snprintf(err, errlen, "not RVS output (no 'Action name :' line, verdict, summary or RVS error)");
        return -1;
    }
    return 0;
}
