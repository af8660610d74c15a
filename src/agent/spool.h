/* spool.h — the agent's outbox: every message to the controller is appended
 * to a file (and fsync'd) before it is sent, and removed once the controller
 * acknowledged it, so a message survives a crash, a reboot or a controller
 * outage and is delivered in order, exactly once (the controller dedups on
 * (node, spool, seq, index)).  The file also carries the next message number.
 *
 * The spool's identity is one life of it: 32 hex characters drawn at random
 * each time the spool is opened (an agent start), carried by every message
 * spooled in that life.  A message read back from the file keeps the id it
 * was spooled under (a redelivery is a duplicate), while what a new life
 * spools is new data whatever its seq: a spool file restored from a snapshot
 * (its old id, its seqs) or deleted never makes a new fault look like a
 * message the controller already has.
 *
 * Format, one record per line:
 *   vigil-spool 2 id=HEX next=SEQ   the header (first line, written at compaction)
 *   M SEQ LEN JSON                  a message: LEN bytes of JSON (no newline in it)
 *   A SEQ                           SEQ was acknowledged (or dropped)
 * A record that does not end in a newline, or whose length does not match
 * (a write cut short by a crash) ends the replay; everything before it holds.
 * The version-1 header ("vigil-spool 1 next=SEQ", no id) is still read.
 *
 * Any size is read, in parts: the file is indexed (each message's offset and
 * length), a message is read from it when it is sent, so memory holds the
 * index, not the messages.  The caller bounds the file (vg_spool_bytes,
 * vg_spool_at, vg_spool_edit: agent/spoolcap.c drops what may be dropped).
 *
 * When the file cannot be read, created or written (a read-only filesystem,
 * an unwritable directory, a full disk) the spool goes on in memory only: it
 * takes a fresh id and keeps queueing; vg_spool_memory_only() says so and
 * vg_spool_error() says why. */
#ifndef VG_SPOOL_H
#define VG_SPOOL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VG_SPOOL_ID_LEN 32    /* lowercase hex characters */
#define VG_SPOOL_RECORD_MAX (64u << 20)   /* a message longer than this ends the replay */

struct vg_spool_msg {
    int64_t seq;
    char *json;
    bool fresh;           /* spooled in this life (not read back from the file) */
    unsigned attempts;    /* times it was sent in this life (vg_spool_head_tried) */
};

/* What a spool file holds: the messages still to deliver, in order. */
struct vg_spool_data {
    struct vg_spool_msg *msgs;
    size_t n;
    int64_t next_seq;     /* 1 for a new spool */
    char id[VG_SPOOL_ID_LEN + 1];   /* "" when the file has none (new, or version 1) */
    size_t records;       /* records read (header included) */
    size_t bad;           /* 1 when a torn or malformed record ended the replay */
};

/* Parses a spool file's text (tests and the fuzz target use it too). */
void vg_spool_parse(const char *text, size_t len, struct vg_spool_data *d);
void vg_spool_data_free(struct vg_spool_data *d);

struct vg_spool;

/* Opens (creating) the spool file, reads its index and starts a new life.
 * A torn tail is cut off.  Never fails: when the file cannot be read or
 * written the spool is memory-only and err holds "FILE: why" (otherwise err
 * is ""). */
struct vg_spool *vg_spool_open(const char *path, char *err, size_t errlen);
void vg_spool_close(struct vg_spool *s);
/* This life's identity (VG_SPOOL_ID_LEN lowercase hex characters). */
const char *vg_spool_id(const struct vg_spool *s);
/* A new life now (the controller showed this one's seqs were used before: a
 * process restored with its memory).  0. */
int vg_spool_new_life(struct vg_spool *s);
bool vg_spool_memory_only(const struct vg_spool *s);
/* Takes the next message number (persisted with the message that uses it). */
int64_t vg_spool_next_seq(struct vg_spool *s);
/* Appends message seq (json: one line, carrying the spool's current id) and
 * fsyncs; memory-only, it only queues.  When the write fails nothing is
 * queued, the spool turns memory-only under a new id and -1 is returned: the
 * caller builds the message again with the new id and a new seq and appends
 * it once more, which then succeeds. */
int vg_spool_append(struct vg_spool *s, int64_t seq, const char *json);
/* Replaces the oldest pending message with n messages (seqs[i], jsons[i];
 * seqs taken with vg_spool_next_seq), in its place at the head of the queue,
 * and persists that with a compaction.  A failed write behaves as in
 * vg_spool_append: nothing changes, the spool turns memory-only, -1. */
int vg_spool_replace_head(struct vg_spool *s, const int64_t *seqs, char *const *jsons, size_t n);
/* Replaces pending messages idx[k] (ascending; 0 is the head) by jsons[k]
 * under seqs[k] (in place), or removes them (jsons[k] NULL), in one
 * compaction.  A failed write: nothing changes, memory-only, -1. */
int vg_spool_edit(struct vg_spool *s, const size_t *idx, const int64_t *seqs, char *const *jsons, size_t n);
/* The oldest message not yet acknowledged, or NULL. */
const struct vg_spool_msg *vg_spool_head(struct vg_spool *s);
/* The head is being sent (its attempts count up). */
void vg_spool_head_tried(struct vg_spool *s);
/* Pending message i (0: the head), read from the file when it is not in
 * memory; valid until the next call on s.  NULL past the end, or when it
 * cannot be read (vg_spool_error says why). */
const struct vg_spool_msg *vg_spool_at(struct vg_spool *s, size_t i);
size_t vg_spool_pending(const struct vg_spool *s);
/* Bytes the pending messages take in the file (their records). */
size_t vg_spool_bytes(const struct vg_spool *s);
/* Removes the oldest message (acknowledged, or dropped as undeliverable).
 * When none is left the file is compacted to its header; otherwise an ack
 * record is appended and the file compacted once acks pile up.  0 or -1. */
int vg_spool_ack_head(struct vg_spool *s);
/* Rewrites the file with only the pending messages (temp file, fsync, rename),
 * copying them from the old file a part at a time.  Memory-only: 0. */
int vg_spool_compact(struct vg_spool *s);
const char *vg_spool_error(const struct vg_spool *s);

#endif
