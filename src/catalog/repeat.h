/* repeat.h — the repeat stage: the catalog's repeat rules at work.  A fault
 * an operator only records once but acts on when it keeps coming back (a
 * link that went down, a transmit queue that timed out) has a row with a
 * mild action, and a second row, a repeat rule ("nic-link-flapping: 3 of
 * nic-link-down within 3h → drain"), whose kind is made here: every event is
 * counted against the rules whose caused_by names its kind, per node and
 * device (PCI address, else GPU index), and the event that completes a count
 * within the window brings a new event of the rule's kind — a new incident
 * the controller acts on, never a repeat folded into the recorded one.  The
 * count then starts again.  Memory is flat: a fixed table of counts, the
 * least recently touched one reused when it is full. */
#ifndef VG_REPEAT_H
#define VG_REPEAT_H
#include "catalog/catalog.h"
#include "core/event.h"

#define VG_REPEAT_SLOTS 256   /* (node, device, rule) counts kept at once */

struct vg_repeat;

struct vg_repeat *vg_repeat_new(const struct vg_catalog *cat);
/* Counts e (classified; its count, at least 1, is how many it stands for)
 * against every repeat rule that names its kind; appends to out (room for
 * max) an event for each rule it completes, unclassified: kind the rule's,
 * code, device, node and time e's, cause e's key, raw naming the count, the
 * window and e's own text.  Returns how many it appended. */
int vg_repeat_add(struct vg_repeat *r, const struct vg_event *e, struct vg_event *out, int max);
void vg_repeat_free(struct vg_repeat *r);

#endif
