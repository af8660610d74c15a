/* parse_transferbench.c — AMD's TransferBench output, its two presets AMD's
 * acceptance criteria name: `TransferBench a2a` (the "Summary:" SRC\DST
 * matrix of GPU-to-GPU bandwidths and "Average   bandwidth (GPU Timed): N
 * GB/s") and `TransferBench p2p` (the "Averages (During UniDir):" and
 * "Averages (During  BiDir):" lines under their CPU->CPU CPU->GPU GPU->CPU
 * GPU->GPU header, "N/A" where a pair was not run); the "[ERROR] …" lines it
 * prints, among them "[ERROR] Unexpected mismatch at index …" when a
 * transfer's data came out different.  Format facts: ROCm/TransferBench
 * src/TransferBench.cpp (see tests/fixtures/burnin/README.md). */
#include "burnin/lines.h"
#include "burnin/parsers.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const pair_names[VG_TB_PAIRS] = { "CPU->CPU", "CPU->GPU", "GPU->CPU", "GPU->GPU" };

const char *vg_tb_pair_name(int i) { return i >= 0 && i < VG_TB_PAIRS ? pair_names[i] : "?"; }

/* "CPU->CPU  CPU->GPU  GPU->CPU  GPU->GPU": which pair each column is (the
 * order TransferBench prints; a header in another order is followed). */
static bool pair_header(const char *s, int order[VG_TB_PAIRS])
{
    char buf[256], *save = NULL;
    snprintf(buf, sizeof buf, "%s", s);
    int n = 0;
    for (char *t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        int k = -1;
        for (int i = 0; i < VG_TB_PAIRS; i++)
            if (!strcmp(t, pair_names[i])) k = i;
        if (k < 0 || n == VG_TB_PAIRS) return false;
        order[n++] = k;
    }
    return n == VG_TB_PAIRS;
}

/* "Averages (During UniDir):    37.94  33.67  55.25  48.65" → avg[] by pair. */
static bool averages(const char *s, const int order[VG_TB_PAIRS], double avg[VG_TB_PAIRS])
{
    const char *p = strchr(s, ':');
    if (!p) return false;
    p++;
    for (int i = 0; i < VG_TB_PAIRS; i++) {
        while (*p == ' ' || *p == '\t' || *p == ',') p++;
        char *end;
        double v = strtod(p, &end);
        if (end == p) {
            if (strncmp(p, "N/A", 3)) return false;
            v = -1;   /* that pair was not measured */
            end = (char *)p + 3;
        }
        avg[order[i]] = v;
        p = end;
    }
    return true;
}

/* A row of the a2a summary matrix, "GPU 00      N/A     47.056 …  326.317  316.469":
 * the GPU-to-GPU cells (the last two numbers are the row's STotal and Actual). */
static void a2a_row(struct vg_tb_result *r, const char *s, int ngpus)
{
    int src = atoi(s + 4);
    const char *p = s + 6;
    for (int dst = 0; dst < ngpus; dst++) {
        while (*p == ' ' || *p == '\t' || *p == ',') p++;
        char *end;
        double v = strtod(p, &end);
        if (end == p) {
            if (strncmp(p, "N/A", 3)) return;
            p += 3;
            continue;
        }
        p = end;
        if (r->a2a_min < 0 || v < r->a2a_min) {
            r->a2a_min = v;
            r->a2a_min_src = src;
            r->a2a_min_dst = dst;
        }
    }
}

int vg_parse_transferbench(const char *text, size_t len, struct vg_tb_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->a2a_avg = r->a2a_min = -1;
    for (int i = 0; i < VG_TB_PAIRS; i++) r->uni[i] = r->bi[i] = -1;
    struct vg_lines it = { text, text + len };
    char buf[1024];
    int order[VG_TB_PAIRS] = { 0, 1, 2, 3 }, ngpus = -1;
    bool seen = false;
    while (vg_lines_next(&it, buf, sizeof buf)) {
        char *s = vg_lines_unprefix(buf);
        const char *v;
        if ((v = strstr(s, "TransferBench v")) && !r->version[0]) {
            v += strlen("TransferBench v");
            size_t l = strspn(v, "0123456789.");
            snprintf(r->version, sizeof r->version, "%.*s", (int)(l < sizeof r->version ? l : sizeof r->version - 1), v);
            seen = true;
        } else if (!strncmp(s, "[ERROR]", 7)) {
            r->errors++;
            if (strstr(s, "mismatch")) r->mismatches++;
            if (!r->error[0]) snprintf(r->error, sizeof r->error, "%s", s);
            seen = true;
        } else if (pair_header(s, order)) {
            seen = true;
        } else if (!strncmp(s, "Averages (During", 16)) {
            bool bidir = strstr(s, "BiDir") != NULL;
            if (averages(s, order, bidir ? r->bi : r->uni)) *(bidir ? &r->has_bi : &r->has_uni) = true;
            seen = true;
        } else if (!strncmp(s, "SRC\\DST ", 8) && !strstr(s, "CPU")) {   /* the a2a summary's header */
            ngpus = 0;
            for (const char *p = s; (p = strstr(p, "GPU ")); p += 4) ngpus++;
            seen = true;
        } else if (ngpus > 0 && !strncmp(s, "GPU ", 4) && isdigit((unsigned char)s[4])) {
            a2a_row(r, s, ngpus);
        } else if (!strncmp(s, "Average   bandwidth (GPU Timed):", 32) ||
                   !strncmp(s, "Average bandwidth (GPU Timed):", 30)) {
            char *end;
            const char *num = strchr(s, ':') + 1;
            double a = strtod(num, &end);
            if (end != num) {
                r->a2a_avg = a;
                r->has_a2a = true;
            }
            ngpus = -1;
            seen = true;
        }
    }
    if (!seen) {
        snprintf(err, errlen, "not TransferBench output (no version banner, a2a summary, p2p averages or [ERROR] line)");
        return -1;
    }
    return 0;
}
