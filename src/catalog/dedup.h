/* dedup.h — folds repeated identical events (same node, GPU or PCI address,
 * kind and code) within a window into one incident with a count and first/last
 * times; links an event to the earlier one it is a documented consequence of
 * (the catalog's caused_by column) by setting its `cause`; and guards against
 * storms (more than N events per second on one GPU are counted, not emitted).
 * Memory is flat: a fixed table of open incidents and of recent events. */
#ifndef VG_DEDUP_H
#define VG_DEDUP_H
#include "catalog/catalog.h"
#include "core/event.h"
#include <stddef.h>
#include <stdint.h>

#define VG_DEDUP_OPEN 256     /* open incidents; the oldest closes when full */
#define VG_DEDUP_RECENT 256   /* recent events remembered as possible causes */
#define VG_DEDUP_GPUS 64      /* GPUs tracked by the storm guard */

struct vg_dedup_opts {
    int64_t window_ms;        /* fold identical events this close (default 60000) */
    int64_t cause_window_ms;  /* link to a cause this recent (default: window_ms) */
    int storm_per_sec;        /* per GPU; more are counted, not emitted (default 100; <0 off) */
};

struct vg_dedup_stats {
    uint64_t in;              /* events added */
    uint64_t emitted;         /* incidents emitted */
    uint64_t folded;          /* events folded into an earlier identical one */
    uint64_t linked;          /* incidents linked to a cause */
    uint64_t storm_dropped;   /* events dropped by the storm guard */
};

typedef void (*vg_dedup_emit_fn)(const struct vg_event *e, void *arg);
struct vg_dedup;

/* cat may be NULL (no causal links).  Events must be classified already. */
struct vg_dedup *vg_dedup_new(const struct vg_dedup_opts *o, const struct vg_catalog *cat,
                              vg_dedup_emit_fn emit, void *arg);
void vg_dedup_add(struct vg_dedup *d, const struct vg_event *e);
/* Emits the incidents whose window has passed at now_ms (for streams). */
void vg_dedup_tick(struct vg_dedup *d, int64_t now_ms);
/* Emits every open incident, oldest first. */
void vg_dedup_finish(struct vg_dedup *d);
/* Emits the open incidents that began before t, oldest first (the node was
 * returned to service at t: an identical event after it is a new fault, not
 * a repeat of the old one); returns how many. */
size_t vg_dedup_close_before(struct vg_dedup *d, int64_t t);
/* The incidents open (folding repeats) now. */
size_t vg_dedup_open_count(const struct vg_dedup *d);
const struct vg_dedup_stats *vg_dedup_stats(const struct vg_dedup *d);
void vg_dedup_free(struct vg_dedup *d);

#endif
