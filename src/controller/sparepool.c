/* sparepool.c — the hot-spare pool: the executor's list of it (x->pool,
 * under pool_lock) and the orchestrator's, kept the same.  Read (or made
 * from the policy's healthy spares) at start; a node leaves it when promoted
 * and comes back to it when returned to service, each change written to the
 * orchestrator at once. */
#include "controller/executor_int.h"
#include "util/log.h"
#include "util/strutil.h"
#include <stdlib.h>
#include <string.h>

/* Makes the orchestrator's pool hold x->pool; the caller holds pool_lock. */
static int pool_sync(struct vg_executor *x)
{
    pthread_mutex_lock(&x->orch_lock);
    int rc = x->orch->ops->pool_set(x->orch, x->policy->spare_pool, (const char *const *)x->pool, x->npool,
                                    x->pool_exists);
    pthread_mutex_unlock(&x->orch_lock);
    if (!rc) x->pool_exists = x->npool > 0;
    return rc;
}

void vg_pool_init(struct vg_executor *x)
{
    if (!x->act || !x->policy->nspares) return;
    char **nodes;
    size_t n;
    int rc = x->orch->ops->pool_get(x->orch, x->policy->spare_pool, &nodes, &n);
    if (rc < 0) {
        vg_err("spare pool: %s", x->orch->err);
        return;
    }
    if (rc == 0) {
        x->pool = nodes;
        x->npool = n;
        x->pool_exists = true;
        return;
    }
    struct vg_orch_node *ns;
    size_t nn;
    if (x->orch->ops->nodes(x->orch, NULL, 0, &ns, &nn)) {
        vg_err("spare pool: %s", x->orch->err);
        return;
    }
    for (size_t i = 0; i < x->policy->nspares; i++)
        for (size_t j = 0; j < nn; j++)
            if (!strcmp(ns[j].name, x->policy->spares[i]) && !ns[j].drain && !ns[j].down && ns[j].responding) {
                x->pool = vg_xrealloc(x->pool, (x->npool + 1) * sizeof *x->pool);
                x->pool[x->npool++] = vg_xstrdup(ns[j].name);
            }
    free(ns);
    pthread_mutex_lock(&x->pool_lock);
    if (pool_sync(x)) vg_err("spare pool: %s", x->orch->err);
    else vg_info("spare pool: %s holds %zu node(s)", x->policy->spare_pool, x->npool);
    pthread_mutex_unlock(&x->pool_lock);
}

int vg_pool_take(struct vg_executor *x, char *const *nodes, size_t n, char *err, size_t errlen)
{
    pthread_mutex_lock(&x->pool_lock);
    size_t keep = 0;
    for (size_t i = 0; i < x->npool; i++) {
        if (vg_in_list(nodes, n, x->pool[i])) free(x->pool[i]);
        else x->pool[keep++] = x->pool[i];
    }
    x->npool = keep;
    int rc = pool_sync(x);
    if (rc) vg_strlcpy(err, x->orch->err, errlen);
    pthread_mutex_unlock(&x->pool_lock);
    return rc;
}

int vg_pool_give(struct vg_executor *x, const char *node, char *err, size_t errlen)
{
    pthread_mutex_lock(&x->pool_lock);
    if (!vg_in_list(x->pool, x->npool, node)) {
        x->pool = vg_xrealloc(x->pool, (x->npool + 1) * sizeof *x->pool);
        x->pool[x->npool++] = vg_xstrdup(node);
    }
    int rc = x->policy->nspares || x->pool_exists ? pool_sync(x) : 0;
    if (rc) vg_strlcpy(err, x->orch->err, errlen);
    pthread_mutex_unlock(&x->pool_lock);
    return rc;
}
