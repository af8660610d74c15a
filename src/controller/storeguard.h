/* storeguard.h — the guard of the controller's store file.
 *   - One writer: a lock on DB.lock beside the store, taken before the store
 *     is opened and held for the process's life (flock; the descriptor is
 *     close-on-exec so no repair command inherits it); a second controller on
 *     the same store is refused, told who holds it (pid, host, since when).
 *   - The file watched: its identity (device and inode, and its write-ahead
 *     log's) checked every 500 ms and after every commit; a store deleted or
 *     replaced under the controller, or one SQLite finds corrupt, makes the
 *     store lost: one `ALERT` line, `vigil_store_ok 0`, /healthz answers 503
 *     with the reason, and the controller stops acknowledging (agents keep
 *     their spools and send again to a controller with a sound store).  Lost
 *     stays lost until the controller is restarted.
 *   - At start, a corrupt store is refused (vg_storeguard_verify) unless the
 *     operator asks for a new one: the bad file is moved aside, not deleted.
 * The same thread looks at the wall clock (clock.h) so a step is seen while
 * the controller is idle. */
#ifndef VG_STOREGUARD_H
#define VG_STOREGUARD_H
#include "controller/store.h"
#include "util/sbuf.h"
#include <stdbool.h>

struct vg_storeguard;

/* Takes the lock of the store at db.  NULL with err saying who holds it (or
 * why the lock file cannot be made). */
struct vg_storeguard *vg_storeguard_lock(const char *db, char *err, size_t errlen);
/* Before the store is opened: 0 sound (or new), or -1 with err when it is
 * corrupt and fresh is false (the store is refused); with fresh, a corrupt
 * store and its -wal/-shm are renamed DB.corrupt-STAMP (said in a line) and
 * 0 is returned. */
int vg_storeguard_verify(struct vg_storeguard *g, bool fresh, char *err, size_t errlen);
/* Once the store is open: notes its identity, watches each connection for
 * corruption and starts the watch thread. */
void vg_storeguard_watch(struct vg_storeguard *g, struct vg_store *const *conns, size_t n);
/* Checks the file's identity now; NULL while the store is sound, else why
 * it is lost (also after a corruption). */
const char *vg_storeguard_check(struct vg_storeguard *g);
/* Why the store is lost, NULL while sound (no check: what the last one found). */
const char *vg_storeguard_lost(struct vg_storeguard *g);
/* vigil_store_ok, vigil_clock_steps_total. */
void vg_storeguard_metrics(struct vg_storeguard *g, struct sbuf *out);
/* Stops the watch and releases the lock. */
void vg_storeguard_close(struct vg_storeguard *g);

#endif
