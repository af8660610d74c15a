/* parse_nccl.c — nccl-tests' output (all_reduce_perf and the other
 * collectives): the size rows (…  time algbw busbw #wrong  time algbw busbw
 * #wrong, out-of-place then in-place; legacy builds print "N/A" for #wrong
 * and no redop/root columns), the "# Out of bounds values" and "# Avg bus
 * bandwidth" footer, and the "Test … failure" lines; each row's size and
 * busbw are kept, for the floors defined at one message size.  Format facts:
 * NVIDIA/nccl-tests src/util.cu (see tests/fixtures/burnin/README.md). */
#include "burnin/lines.h"
#include "burnin/parsers.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_uint(const char *s)
{
    if (!*s) return false;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s)) return false;
    return true;
}

static bool num(const char *s, double *v)
{
    char *end;
    *v = strtod(s, &end);
    return end != s && !*end;
}

/* A size row: two integers, then a type name, then numbers; the last eight
 * cells are time algbw busbw #wrong twice. */
static bool size_row(char *line, struct vg_nccl_result *r, double *sum)
{
    char *tok[20];
    int n = 0;
    for (char *save = NULL, *t = strtok_r(line, " \t", &save); t && n < 20; t = strtok_r(NULL, " \t", &save))
        tok[n++] = t;
    if (n < 11 || n > 14 || !is_uint(tok[0]) || !is_uint(tok[1]) || !isalpha((unsigned char)tok[2][0])) return false;
    double oop, ip, w;
    if (!num(tok[n - 6], &oop) || !num(tok[n - 2], &ip)) return false;
    for (int k = n - 5; k <= n - 1; k += 4)
        if (num(tok[k], &w) && w > 0) r->wrong += (long)w;
    if (oop > r->max_busbw) r->max_busbw = oop;
    if (ip > r->max_busbw) r->max_busbw = ip;
    *sum += (oop + ip) / 2;
    r->rows++;
    if (r->nrow == VG_NCCL_ROWS) {   /* keep the largest sizes: drop the first (smallest) row */
        memmove(r->row, r->row + 1, (VG_NCCL_ROWS - 1) * sizeof r->row[0]);
        r->nrow--;
    }
    r->row[r->nrow].bytes = strtoll(tok[0], NULL, 10);
    r->row[r->nrow].oop = oop;
    r->row[r->nrow++].ip = ip;
    return true;
}

int vg_nccl_row_at(const struct vg_nccl_result *r, long long bytes)
{
    int best = -1;
    for (int i = 0; i < r->nrow; i++) {
        if (r->row[i].bytes == bytes) return i;
        if (r->row[i].bytes < bytes && (best < 0 || r->row[i].bytes > r->row[best].bytes)) best = i;
    }
    return best;
}

int vg_parse_nccl(const char *text, size_t len, struct vg_nccl_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->oob = -1;
    struct vg_lines it = { text, text + len };
    char buf[1024];
    double sum = 0;
    bool header = false;
    while (vg_lines_next(&it, buf, sizeof buf)) {
        char *s = vg_lines_unprefix(buf);
        if (*s == '#') {
            char *c = strchr(s, ':');
            if (strstr(s, "nThread") && strstr(s, "nGpus")) header = true;
            else if (c && strstr(s, "Out of bounds values")) r->oob = strtol(c + 1, NULL, 10);
            else if (c && strstr(s, "Avg bus bandwidth")) {
                r->avg_busbw = strtod(c + 1, NULL);
                r->has_avg = true;
            }
            continue;
        }
        if (!r->error[0] && (strstr(s, "Test NCCL failure") || strstr(s, "Test CUDA failure") ||
                             strstr(s, "Test failure"))) {
            snprintf(r->error, sizeof r->error, "%s", s);
            continue;
        }
        size_row(s, r, &sum);
    }
    if (!header && !r->rows && !r->has_avg && !r->error[0]) {
        snprintf(err, errlen, "not nccl-tests output (no '# nThread' header, size rows or footer)");
        return -1;
    }
    if (!r->has_avg && r->rows) r->avg_busbw = sum / r->rows;
    return 0;
}
