/* budget.h — request body bytes buffered at once, and by whom: a total for
 * the server and a share per client (the node a request is authenticated
 * as; its address when it names none), so one client — a node, or an
 * address — never holds the whole.  Only authenticated requests take from
 * it (the credential is checked before a body byte is read).  Thread-safe. */
#ifndef VG_BUDGET_H
#define VG_BUDGET_H
#include <stddef.h>

struct vg_budget;

struct vg_budget *vg_budget_new(size_t total, size_t per_client);
void vg_budget_free(struct vg_budget *b);
/* Takes n bytes for key: 0 taken; 1 the total is spent; 2 key's share is. */
int vg_budget_take(struct vg_budget *b, const char *key, size_t n);
/* Gives back n bytes key took. */
void vg_budget_give(struct vg_budget *b, const char *key, size_t n);
size_t vg_budget_inflight(struct vg_budget *b);
size_t vg_budget_total(const struct vg_budget *b);
size_t vg_budget_share(const struct vg_budget *b);

#endif
