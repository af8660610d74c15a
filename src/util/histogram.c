/* histogram.c — Prometheus histograms of seconds; see histogram.h. */
#include "util/histogram.h"
#include <string.h>

/* From a tenth of a second to an hour: detection and isolation are sub-second,
 * a requeue a few seconds, a repair minutes. */
static const double bounds[VG_HIST_BUCKETS] = { 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 3600 };

void vg_histogram_init(struct vg_histogram *h)
{
    memset(h, 0, sizeof *h);
    pthread_mutex_init(&h->lock, NULL);
}

void vg_histogram_observe(struct vg_histogram *h, double s)
{
    if (s < 0) s = 0;
    size_t b = 0;
    while (b < VG_HIST_BUCKETS && s > bounds[b]) b++;
    pthread_mutex_lock(&h->lock);
    h->counts[b]++;
    h->sum += s;
    h->n++;
    pthread_mutex_unlock(&h->lock);
}

void vg_histogram_print(struct vg_histogram *h, const char *name, const char *help, struct sbuf *out)
{
    pthread_mutex_lock(&h->lock);
    sbuf_printf(out, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    uint64_t cum = 0;
    for (size_t b = 0; b < VG_HIST_BUCKETS; b++) {
        cum += h->counts[b];
        sbuf_printf(out, "%s_bucket{le=\"%g\"} %llu\n", name, bounds[b], (unsigned long long)cum);
    }
    sbuf_printf(out, "%s_bucket{le=\"+Inf\"} %llu\n%s_sum %.6f\n%s_count %llu\n", name, (unsigned long long)h->n, name,
                h->sum, name, (unsigned long long)h->n);
    pthread_mutex_unlock(&h->lock);
}
