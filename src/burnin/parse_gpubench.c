/* parse_gpubench.c — the output of vigil-gpu, vigil's own CUDA test
 * (src/burnin/cuda/vigil-gpu.cu): one "WORD key=value …" line per
 * measurement — gemm (TFLOP/s and checksum mismatches), copy (host↔device
 * GB/s), error (the CUDA call that failed). */
#include "burnin/lines.h"
#include "burnin/parsers.h"
#include "util/strutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The value of key= in line ("" when absent), copied into buf. */
static const char *field(const char *line, const char *key, char *buf, size_t n)
{
    size_t kl = strlen(key);
    buf[0] = 0;
    for (const char *p = line; (p = strstr(p, key)); p += kl)
        if ((p == line || p[-1] == ' ') && p[kl] == '=') {
            const char *v = p + kl + 1;
            size_t l = *v == '"' ? strcspn(++v, "\"") : strcspn(v, " ");
            snprintf(buf, n, "%.*s", (int)(l < n ? l : n - 1), v);
            break;
        }
    return buf;
}

static bool number(const char *s, double *v)
{
    char *end;
    *v = strtod(s, &end);
    return *s && end != s && !*end;
}

int vg_parse_gpubench(const char *text, size_t len, struct vg_gpubench_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    struct vg_lines it = { text, text + len };
    char line[512], a[64], b[64], c[200];
    bool any = false;
    while (vg_lines_next(&it, line, sizeof line)) {
        double gpu, x, y;
        if (!strncmp(line, "gemm ", 5)) {
            if (!number(field(line, "gpu", a, sizeof a), &gpu) || !number(field(line, "tflops", b, sizeof b), &x) ||
                !number(field(line, "mismatches", c, sizeof c), &y)) {
                snprintf(err, errlen, "vigil-gpu: malformed gemm line '%.80s'", line);
                return -1;
            }
            if (r->ngemm < VG_GPUBENCH_MAX)
                r->gemm[r->ngemm].gpu = (int)gpu, r->gemm[r->ngemm].tflops = x,
                r->gemm[r->ngemm++].mismatches = (long)y;
            any = true;
        } else if (!strncmp(line, "copy ", 5)) {
            if (!number(field(line, "gpu", a, sizeof a), &gpu) || !number(field(line, "gbps", b, sizeof b), &x) ||
                !*field(line, "dir", c, sizeof c)) {
                snprintf(err, errlen, "vigil-gpu: malformed copy line '%.80s'", line);
                return -1;
            }
            if (r->ncopy < VG_GPUBENCH_MAX) {
                r->copy[r->ncopy].gpu = (int)gpu, r->copy[r->ncopy].gbps = x;
                vg_strlcpy(r->copy[r->ncopy++].dir, c, sizeof r->copy[0].dir);
            }
            any = true;
        } else if (!strncmp(line, "error ", 6)) {
            if (!r->error[0]) {
                snprintf(r->error, sizeof r->error, "GPU %s: %s", field(line, "gpu", a, sizeof a),
                         field(line, "msg", c, sizeof c));
                r->error_gpu = number(a, &gpu) ? (int)gpu : -1;
            }
            any = true;
        }
    }
    if (!any) {
        snprintf(err, errlen, "not vigil-gpu output (no gemm, copy or error line)");
        return -1;
    }
    return 0;
}
