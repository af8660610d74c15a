/* spool.h — the agent's outbox: every message to the controller is appended
 * to a file (and fsync'd) before it is sent, and removed once the controller
 * acknowledged it, so a message survives a crash, a reboot or a controller
 * outage and is delivered in order, exactly once (the controller dedups on
 * (node, seq, index)).  The file also carries the next message number, so a
 * restarted agent never reuses a seq.
 *
 * Format, one record per line:
 *   vigil-spool 1 next=SEQ          the header (first line, written at compaction)
 *   M SEQ LEN JSON                  a message: LEN bytes of JSON (no newline in it)
 *   A SEQ                           SEQ was acknowledged (or dropped)
 * A record that does not end in a newline, or whose length does not match
 * (a write cut short by a crash) ends the replay; everything before it holds. */
#ifndef VG_SPOOL_H
#define VG_SPOOL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vg_spool_msg {
    int64_t seq;
    char *json;
};

/* What a spool file holds: the messages still to deliver, in order. */
struct vg_spool_data {
    struct vg_spool_msg *msgs;
    size_t n;
    int64_t next_seq;     /* 1 for a new spool */
    size_t records;       /* records read (header included) */
    size_t bad;           /* 1 when a torn or malformed record ended the replay */
};

/* Parses a spool file's text (tests and the fuzz target use it too). */
void vg_spool_parse(const char *text, size_t len, struct vg_spool_data *d);
void vg_spool_data_free(struct vg_spool_data *d);

struct vg_spool;

/* Opens (creating) the spool file and replays it; a torn tail is cut off.
 * Returns NULL with "FILE: why" in err. */
struct vg_spool *vg_spool_open(const char *path, char *err, size_t errlen);
void vg_spool_close(struct vg_spool *s);
/* Takes the next message number (persisted with the message that uses it). */
int64_t vg_spool_next_seq(struct vg_spool *s);
/* Appends message seq (json: one line) and fsyncs.  The message is queued
 * even when the write fails (then -1: it would not survive a crash). */
int vg_spool_append(struct vg_spool *s, int64_t seq, const char *json);
/* The oldest message not yet acknowledged, or NULL. */
const struct vg_spool_msg *vg_spool_head(const struct vg_spool *s);
size_t vg_spool_pending(const struct vg_spool *s);
/* Removes the oldest message (acknowledged, or dropped as undeliverable).
 * When none is left the file is compacted to its header; otherwise an ack
 * record is appended and the file compacted once acks pile up.  0 or -1. */
int vg_spool_ack_head(struct vg_spool *s);
/* Rewrites the file with only the pending messages (temp file, fsync, rename). */
int vg_spool_compact(struct vg_spool *s);
const char *vg_spool_error(const struct vg_spool *s);

#endif
