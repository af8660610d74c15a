/* nicrate.h — InfiniBand and RoCE port counters judged over time: the agent
 * reads every port's counters each period (sysfs.h, in the NIC probe) and
 * hands the readings here, which keeps the last one per port and turns what
 * changed into events:
 *   - link-flap: the port's link went down and came back (link_downed on an
 *     InfiniBand port, carrier_changes of a RoCE port's interface: two per
 *     flap), its count the flaps seen; the catalog's repeat rule
 *     (link-flapping, 3 in 3 h) decides when they drain the node;
 *   - ib-errors: an error counter rose faster than its threshold over the
 *     period (the table in nicrate.c, each threshold with its source).
 * Each event names the port, the HCA's PCI address and the GPU nearest it
 * on the PCIe tree (gpu, and in the text).  A counter that went backwards
 * (a driver reload resets them), disappeared, or holds no number is not
 * judged: the reading becomes the new baseline and a note says what
 * happened, so neither a crash nor a false fault comes of it. */
#ifndef VG_NICRATE_H
#define VG_NICRATE_H
#include "core/event.h"
#include "signal/sysfs.h"
#include "util/sbuf.h"
#include <stdint.h>

#define VG_NIC_PORTS_MAX 64   /* ports remembered; more are judged from their next reading on */

struct vg_nic_rates;

struct vg_nic_rates *vg_nic_rates_new(void);
void vg_nic_rates_free(struct vg_nic_rates *r);
/* One reading of every port, taken at at_ms (a monotonic clock): appends the
 * events it implies to ev[*nev] (room for max) and one line per counter or
 * port it could not judge to notes. */
void vg_nic_rates_judge(struct vg_nic_rates *r, const struct vg_ib_port *ports, size_t n, int64_t at_ms,
                        const char *node, struct vg_event *ev, int *nev, int max, struct sbuf *notes);

#endif
