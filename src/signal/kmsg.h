/* kmsg.h — the kernel-log parser: a streaming line parser that recognises the
 * framing (/dev/kmsg records, dmesg raw / -T / --ctime / -H / --reltime /
 * --show-delta / --time-format iso, syslog and journal lines with or without
 * a hostname, RFC 5424, localized month names) and hands each line that holds
 * a recognizer's marker to that recognizer (one file per source: NVIDIA's
 * Xid, SXid, fallen off the bus, RmInitAdapter and GSP messages; PCIe AER;
 * see kmsg_int.h), which extracts the fault events.  Memory is flat: one
 * fixed line buffer, no allocation per line.  Malformed lines are skipped
 * and counted. */
#ifndef VG_KMSG_H
#define VG_KMSG_H
#include "core/event.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VG_KMSG_LINE_MAX 4096   /* longer lines are counted as malformed */
#define VG_KMSG_GPUMAP 32
#define VG_KMSG_REC_MAX 8       /* recognizers */
#define VG_KMSG_STATE_MAX 64    /* bytes of state each recognizer may keep */
#define VG_KMSG_PAIRS 16        /* distinct two-byte marker starts the fast path scans for (a multiple of 8) */
#define VG_KMSG_MARKERS 32

typedef void (*vg_kmsg_emit_fn)(const struct vg_event *e, void *arg);

struct vg_kmsg_opts {
    int64_t boot_ms;   /* boot time, to turn boot-relative stamps into UTC; 0 = unknown (time null) */
    int year;          /* year for syslog stamps without one; 0 = the current year */
    const char *node;  /* copied into each event's node, or NULL */
};

struct vg_kmsg {
    struct vg_kmsg_opts o;
    vg_kmsg_emit_fn emit;
    void *arg;
    uint64_t lines, events, malformed;
    /* internal state */
    char carry[VG_KMSG_LINE_MAX];   /* a partial line between two feeds */
    size_t carry_len;
    bool carry_over;                /* the partial line overflowed: skip to its end */
    bool need_next;                 /* a kmsg record may continue on the next line */
    bool have_pend;                 /* pend waits for continuation lines */
    struct vg_event pend;
    int pend_owner;                 /* the recognizer that started pend */
    int rec_cur;                    /* the recognizer being called */
    struct vg_event last;           /* the last event seen, to join multi-line records */
    uint64_t last_line;             /* k->lines when `last` was seen (0: none) */
    int64_t reltime_us;             /* dmesg -H: the time its stamps are relative to, in µs (0: unknown) */
    struct { char pci[16]; int gpu; } gpumap[VG_KMSG_GPUMAP];
    int ngpumap;
    /* the recognizers' own state */
    uint64_t rstate[VG_KMSG_REC_MAX][VG_KMSG_STATE_MAX / 8];
    /* the fast path: the markers' first two bytes, and the markers */
    unsigned char pair0[VG_KMSG_PAIRS], pair1[VG_KMSG_PAIRS];
    int npairs;
    /* the same pairs as nibble tables (kmsg.c: scan_nibbles): [g*4 + t], t = the
     * first byte's low, high nibble, the second byte's low, high nibble; pair i
     * is bit i % 8 of group g = i / 8 */
    unsigned char nib[VG_KMSG_PAIRS / 2][16];
    bool nibbles;                   /* the CPU runs scan_nibbles (x86 with SSSE3) */
    struct { const char *s; size_t len; } marker[VG_KMSG_MARKERS];
    int nmarkers;
};

void vg_kmsg_init(struct vg_kmsg *k, const struct vg_kmsg_opts *o, vg_kmsg_emit_fn emit, void *arg);
/* Feeds a buffer of any size; complete lines are parsed, a partial last line is kept. */
void vg_kmsg_feed(struct vg_kmsg *k, const char *buf, size_t n);
/* Parses one line (without its newline). */
void vg_kmsg_line(struct vg_kmsg *k, const char *line, size_t n);
/* Parses a kept partial line and emits any event still waiting. */
void vg_kmsg_finish(struct vg_kmsg *k);

/* Normalises a PCI address ("PCI:0000:3b:00", "3b:00.0", "0018:01:00") to
 * "0000:3b:00.0" form; returns false when it is not one. */
bool vg_pci_normalize(const char *s, size_t n, char out[16]);

/* The boot time from /proc/stat's btime (under root; NULL = live), in ms since
 * the epoch, 0 when unknown: what /dev/kmsg's boot-relative stamps add to. */
int64_t vg_kmsg_boot_ms(const char *root);

#endif
