/* rma.h — the hand-off when the repair ladder is exhausted: a ticket (JSON)
 * with the evidence a vendor asks for, written where the policy says
 * (rma_dir), and the policy's rma_command run on it. */
#ifndef VG_RMA_H
#define VG_RMA_H
#include "controller/ladder.h"
#include "controller/store.h"
#include <jansson.h>

/* The most of one attachment's stdout (and of its stderr) kept in the ticket. */
#define VG_RMA_ATTACH_MAX (1u << 20)

/* Writes DIR/vigil-rma-INCIDENT.json (atomically, synced): the node, the
 * cause, the incident as stored (the event with its kernel-log line, every
 * step with its time), `attempts` (borrowed: what each rung did) and
 * `attachments` (each rma_attach command's output, exit status and result,
 * a failed one included; the ladder's timeout each).  Then
 * runs rma_command with {ticket} and {node}.  path gets the file ("" when no
 * rma_dir).  Returns 0, or -1 with err. */
int vg_rma_handoff(struct vg_store *st, const struct vg_ladder *l, int64_t incident, const char *node,
                   const char *cause, json_t *attempts, char *path, size_t pathlen, char *err, size_t errlen);

#endif
