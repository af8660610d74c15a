/* histogram.h — a Prometheus histogram of seconds with fixed buckets:
 * observe from any thread, print in the text exposition format
 * (NAME_bucket{le="…"}, NAME_sum, NAME_count). */
#ifndef VG_HISTOGRAM_H
#define VG_HISTOGRAM_H
#include "util/sbuf.h"
#include <pthread.h>
#include <stdint.h>

#define VG_HIST_BUCKETS 14

struct vg_histogram {
    pthread_mutex_t lock;
    uint64_t counts[VG_HIST_BUCKETS + 1];   /* the last: above every bound (+Inf only) */
    double sum;
    uint64_t n;
};

void vg_histogram_init(struct vg_histogram *h);
void vg_histogram_observe(struct vg_histogram *h, double seconds);
/* HELP, TYPE and the series for NAME. */
void vg_histogram_print(struct vg_histogram *h, const char *name, const char *help, struct sbuf *out);

#endif
