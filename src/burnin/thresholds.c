/* thresholds.c — data/burnin-thresholds.tsv: the figure each test holds a
 * node to, per GPU model, with where it comes from (see burnin.h). */
#include "burnin/burnin.h"
#include "burnin/lines.h"
#include "util/datadir.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const metrics[] = { "nccl-busbw",        "ib-write-bw",           "ib-rate",
                                        "h2d-bw",            "gemm-ratio",            "rvs-pass",
                                        "transferbench-a2a", "transferbench-p2p-uni", "transferbench-p2p-bi" };

/* "16G", "8G in-place", "512M": the message size a figure is defined at. */
static bool parse_at(const char *s, struct vg_bi_threshold *t)
{
    char *end;
    long long n = strtoll(s, &end, 10);
    long long mult = *end == 'K' ? 1LL << 10 : *end == 'M' ? 1LL << 20 : *end == 'G' ? 1LL << 30 : 1;
    if (mult > 1) end++;
    if (end == s || n <= 0 || n > (1LL << 40) / mult) return false;
    if (*end && strcmp(end, " in-place")) return false;
    t->at_bytes = n * mult;
    t->in_place = *end != 0;
    snprintf(t->at, sizeof t->at, "%.*s", (int)(end - s), s);
    return true;
}

int vg_bi_thresholds_parse(const char *text, size_t len, const char *name, struct vg_bi_thresholds *out,
                           char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    struct vg_lines it = { text, text + len };
    char line[1024];
    int lineno = 0;
    bool header = false;
    while (vg_lines_next(&it, line, sizeof line)) {
        lineno++;
        if (!line[0] || line[0] == '#') continue;
        char *f[7];
        int nf = vg_split(line, "\t", f, 7);
        const char *why = NULL;
        if (!header) {
            if (nf != 6 || strcmp(f[0], "model") || strcmp(f[1], "metric") || strcmp(f[2], "min") ||
                strcmp(f[4], "at"))
                why = "expected the header 'model<TAB>metric<TAB>min<TAB>unit<TAB>at<TAB>source'";
            header = true;
        } else if (nf != 6) why = "expected 6 tab-separated columns";
        else {
            bool known = false, sized = !strcmp(f[1], "nccl-busbw");
            for (size_t i = 0; i < sizeof metrics / sizeof metrics[0]; i++) known |= !strcmp(f[1], metrics[i]);
            char *end;
            double min = strtod(f[2], &end);
            struct vg_bi_threshold t = { 0 };
            if (!f[0][0] || strlen(f[0]) >= sizeof t.model) why = "bad model pattern";
            else if (!known) why = "unknown metric";
            else if (end == f[2] || *end || !(min > 0)) why = "min is not a positive number";
            else if (sized && !parse_at(f[4], &t))
                why = "at: a busbw figure names the message size it is defined at (e.g. 16G, 8G in-place)";
            else if (!sized && strcmp(f[4], "-")) why = "at: '-' (only nccl-busbw figures are per message size)";
            else if (!f[5][0]) why = "the source is empty (every figure names where it comes from)";
            else {
                vg_strlcpy(t.model, f[0], sizeof t.model);
                vg_strlcpy(t.metric, f[1], sizeof t.metric);
                t.min = min;
                vg_strlcpy(t.unit, f[3], sizeof t.unit);
                vg_strlcpy(t.source, f[5], sizeof t.source);
                out->t = vg_xrealloc(out->t, (out->n + 1) * sizeof *out->t);
                out->t[out->n++] = t;
            }
        }
        if (why) {
            snprintf(err, errlen, "%s:%d: %s", name, lineno, why);
            vg_bi_thresholds_free(out);
            return -1;
        }
    }
    return 0;
}

int vg_bi_thresholds_load(const char *path, struct vg_bi_thresholds *out, char *err, size_t errlen)
{
    char *p = path ? vg_xstrdup(path) : vg_data_path("burnin-thresholds.tsv");
    char *text;
    size_t len;
    int rc;
    if (vg_read_file(NULL, p, 1 << 20, &text, &len)) {
        memset(out, 0, sizeof *out);
        snprintf(err, errlen, "%s: %s", p, strerror(errno));
        rc = -1;
    } else {
        rc = vg_bi_thresholds_parse(text, len, p, out, err, errlen);
        free(text);
    }
    free(p);
    return rc;
}

const struct vg_bi_threshold *vg_bi_threshold_find(const struct vg_bi_thresholds *th, const char *model,
                                                   const char *metric)
{
    if (!th || !model || !*model) return NULL;
    for (size_t i = 0; i < th->n; i++)
        if (!strcmp(th->t[i].metric, metric) && fnmatch(th->t[i].model, model, 0) == 0) return &th->t[i];
    return NULL;
}

void vg_bi_thresholds_free(struct vg_bi_thresholds *th)
{
    free(th->t);
    th->t = NULL;
    th->n = 0;
}
