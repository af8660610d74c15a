/* parse_perftest.c — perftest's bandwidth table (ib_write_bw, ib_read_bw,
 * ib_send_bw; client or server side): the " #bytes #iterations BW peak[UNIT]
 * BW average[UNIT] MsgRate[Mpps]" header, its size rows (other lines such as
 * "Conflicting CPU frequency …" may come between), and the error lines
 * perftest prints when a run breaks off ("Completion with error …", "Failed
 * to complete …", "Couldn't connect …").  With -a the last row is the largest
 * size; that row's BW average is the figure (as Azure's NHC reads it). */
#include "burnin/lines.h"
#include "burnin/parsers.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const errors[] = { "Completion with error", "Failed to complete", "Couldn't connect",
                                      "Unable to", "Couldn't", "Failed status" };

int vg_parse_perftest(const char *text, size_t len, struct vg_perftest_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    struct vg_lines it = { text, text + len };
    char buf[1024];
    bool header = false;
    while (vg_lines_next(&it, buf, sizeof buf)) {
        char *s = vg_lines_unprefix(buf);
        char *avg = strstr(s, "BW average[");
        if (strstr(s, "#bytes") && avg) {
            avg += strlen("BW average[");
            size_t u = strcspn(avg, "]");
            snprintf(r->unit, sizeof r->unit, "%.*s", (int)(u < sizeof r->unit ? u : sizeof r->unit - 1), avg);
            header = true;
            continue;
        }
        if (!r->error[0])
            for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
                if (strstr(s, errors[i])) {
                    snprintf(r->error, sizeof r->error, "%s", s);
                    break;
                }
        if (!header) continue;
        long bytes, iters;
        double peak, av, rate;
        char tail;
        if (sscanf(s, "%ld %ld %lf %lf %lf %c", &bytes, &iters, &peak, &av, &rate, &tail) == 5 && bytes > 0) {
            r->rows++;
            r->bytes = bytes;
            r->bw_peak = peak;
            r->bw_avg = av;
        }
    }
    if (!header && !r->error[0]) {
        snprintf(err, errlen, "not perftest bandwidth output (no '#bytes … BW average[…]' header)");
        return -1;
    }
    if (!strcmp(r->unit, "Gb/sec")) r->avg_gbps = r->bw_avg;
    else if (!strcmp(r->unit, "MB/sec")) r->avg_gbps = r->bw_avg * 8 / 1000;
    else if (!strcmp(r->unit, "MiB/sec")) r->avg_gbps = r->bw_avg * 8 * 1.048576 / 1000;
    else if (header) {
        snprintf(err, errlen, "perftest: unknown unit '%s' in the BW average header", r->unit);
        return -1;
    }
    return 0;
}
