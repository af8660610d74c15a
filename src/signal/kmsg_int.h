/* kmsg_int.h — inside the kernel-log parser: the framing of one line
 * (kmsg_frame.c: prefixes and timestamps of every format), the interface of a
 * recognizer (one file per source: kmsg_nvidia.c, kmsg_aer.c, … listed in
 * kmsg_recognizers.c) and what kmsg.c offers them.  Only the parser's files
 * include it. */
#ifndef VG_KMSG_INT_H
#define VG_KMSG_INT_H
#include "signal/kmsg.h"

/* One framed line. */
struct vg_kmsg_msg {
    const char *line;       /* the whole line (an event's raw) */
    const char *msg;        /* the kernel message, after every prefix and stamp */
    int64_t abs_ms;         /* an absolute time, 0 = none */
    int64_t rel_us;         /* time since boot, -1 = none */
    bool kmsg;              /* a /dev/kmsg record (continuation lines may follow) */
};

/* Frames line: 0, or -1 for a malformed line.  Keeps what a stream of
 * relative stamps (dmesg -H) needs in k. */
int vg_kmsg_frame(struct vg_kmsg *k, const char *line, struct vg_kmsg_msg *m);

/* A recognizer: the lines of one source (a driver, a kernel subsystem) and
 * the events they mean. */
struct vg_kmsg_recognizer {
    const char *name;
    /* A line is offered to it when it holds one of these (NULL-terminated).
     * The fast path scans for each marker's first two bytes: make them a rare
     * pair ("NVRM", "SXid", "AER"). */
    const char *const *markers;
    /* The event kinds it emits (NULL-terminated): each has a row in the fault
     * catalog (data/fault-catalog.tsv), checked by its test. */
    const char *const *kinds;
    size_t state_size;      /* its own state, at most VG_KMSG_STATE_MAX bytes, zeroed at init */
    /* A line holding one of its markers: 1 when it was its line (an event
     * started, its state updated, a detail line passed over), 0 when not (the
     * next recognizer gets it), -1 when it was its line but malformed. */
    int (*line)(struct vg_kmsg *k, const struct vg_kmsg_msg *m, void *state);
    /* Optional: whether a line holding one of its markers is part of the
     * event it started and the parser still holds (pend, not yet emitted);
     * it may complete that event (its device, …).  True: the line is taken. */
    bool (*continues)(struct vg_kmsg *k, const struct vg_kmsg_msg *m, struct vg_event *pend, void *state);
};

/* The table of recognizers (kmsg_recognizers.c), NULL-terminated, in the order lines are offered. */
extern const struct vg_kmsg_recognizer *const vg_kmsg_recognizers[];
extern const struct vg_kmsg_recognizer vg_kmsg_nvidia, vg_kmsg_aer, vg_kmsg_amdgpu, vg_kmsg_nic;

/* For recognizers: emits any event held, then starts one from line m (owned
 * by the calling recognizer); returns it (held until the next line that does
 * not continue it). */
struct vg_event *vg_kmsg_start(struct vg_kmsg *k, const struct vg_kmsg_msg *m, const char *kind, int code,
                               const char *pci, int gpu);
/* Was the last event `kind` (code: any when < 0) on pci within the last few lines? */
bool vg_kmsg_recent(const struct vg_kmsg *k, const char *kind, int code, const char *pci);
/* The PCI address starting at p ("PCI:0000:3b:00", "0000:3b:00.0: …") into out. */
bool vg_kmsg_pci_at(const char *p, char out[16]);
/* Whether a message is a network or RDMA driver's, by its prefix ("mlx5_core
 * 0000:3b:00.0: …"; kmsg_nic.c keeps the list). */
bool vg_kmsg_nic_driver(const char *msg);
/* "GPU<n>" anywhere in s (as in "from GPU4 GSP"); -1 when absent. */
int vg_kmsg_gpu_index(const char *s);

#endif
