/* newnode.c — the new-node gate (policy: new_node_suite, new_node_every):
 * a node the controller has not seen in service before — added to the
 * cluster, or out of service when the controller first looked — runs the
 * burn-in suite once before it takes work.  It is drained with "vigil: new
 * node: burn-in SUITE before service", the gate command runs on a thread of
 * its own (a long suite takes up to 30 min and must not hold the repair
 * ladder), and the node is resumed when it passes; when it does not, it stays
 * drained (ALERT).  The first look records the nodes in service as known
 * (they are not gated).  What was seen is kept in the store (nodes_seen), so
 * a restart neither gates a known node again nor forgets one being gated. */
#include "controller/executor_int.h"
#include "controller/clock.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vg_gate {
    struct vg_executor *x;
    char node[64];
    pthread_t th;
    bool done;                 /* atomic: the thread has finished */
};

static void seen(struct vg_executor *x, const char *node, const char *state, const char *detail)
{
    if (vg_store_set_seen(x->store, node, state, vg_clock_ms(), detail))
        vg_warn("new-node gate: %s: %s not kept: %s", node, state, vg_store_error(x->store));
}

static void *gate_main(void *arg)
{
    struct vg_gate *g = arg;
    struct vg_executor *x = g->x;
    const char *suite = x->policy->ladder.new_node_suite, *node = g->node;
    char out[300], err[256] = "";
    if (vg_remedy_gate(x, node, suite, "new-node", out, sizeof out)) {
        __atomic_add_fetch(&x->new_failed, 1, __ATOMIC_SEQ_CST);
        seen(x, node, "failed", out);
        vg_err("ALERT new node %s failed burn-in %s, it stays drained: %s", node, suite, out);
    } else {
        pthread_mutex_lock(&x->orch_lock);
        int rc = vg_orch_resume_ours(x->orch, &node, 1);
        if (rc < 0) vg_strlcpy(err, x->orch->err, sizeof err);
        pthread_mutex_unlock(&x->orch_lock);
        if (rc < 0) {   /* still ours and drained: the next look runs the gate again */
            char why[600];
            snprintf(why, sizeof why, "burn-in %s passed; resume failed: %s", suite, err);
            seen(x, node, "gating", why);
            vg_warn("new-node gate: %s: %s", node, why);
        } else {
            __atomic_add_fetch(&x->new_passed, 1, __ATOMIC_SEQ_CST);
            seen(x, node, "passed", out);
            vg_info("new node %s passed burn-in %s: in service", node, suite);
        }
    }
    __atomic_store_n(&g->done, true, __ATOMIC_SEQ_CST);
    return NULL;
}

/* Joins the gates that have finished; whether node's is still running. */
static bool reap(struct vg_executor *x, const char *node)
{
    bool running = false;
    size_t keep = 0;
    for (size_t i = 0; i < x->ngates; i++) {
        struct vg_gate *g = x->gates[i];
        if (__atomic_load_n(&g->done, __ATOMIC_SEQ_CST)) {
            pthread_join(g->th, NULL);
            free(g);
            continue;
        }
        running |= node && !strcmp(g->node, node);
        x->gates[keep++] = g;
    }
    x->ngates = keep;
    return running;
}

static void start_gate(struct vg_executor *x, const char *node)
{
    struct vg_gate *g = vg_xcalloc(1, sizeof *g);
    g->x = x;
    vg_strlcpy(g->node, node, sizeof g->node);
    if (pthread_create(&g->th, NULL, gate_main, g)) {
        vg_warn("new-node gate: %s: no thread for its burn-in (next look tries again)", node);
        free(g);
        return;
    }
    x->gates[x->ngates++] = g;
}

/* A node new to the controller: drained as vigil's, then its gate. */
static void admit(struct vg_executor *x, const char *node)
{
    char reason[128], err[256] = "";
    snprintf(reason, sizeof reason, "vigil: new node: burn-in %s before service", x->policy->ladder.new_node_suite);
    pthread_mutex_lock(&x->orch_lock);
    int rc = x->orch->ops->isolate(x->orch, &node, 1, VG_ISOLATE_DRAIN, reason);
    if (rc < 0) vg_strlcpy(err, x->orch->err, sizeof err);
    pthread_mutex_unlock(&x->orch_lock);
    if (rc < 0) {
        vg_warn("new-node gate: draining %s: %s (next look tries again)", node, err);
        return;
    }
    seen(x, node, "gating", reason);
    vg_info("new node %s: drained for burn-in %s", node, x->policy->ladder.new_node_suite);
    start_gate(x, node);
}

void vg_newnode_look(struct vg_executor *x)
{
    if (!x->policy->ladder.new_node_suite[0] || !x->act) return;
    struct vg_orch_node *ns = NULL;
    size_t nn = 0;
    pthread_mutex_lock(&x->orch_lock);
    int rc = x->orch->ops->nodes(x->orch, NULL, 0, &ns, &nn);
    pthread_mutex_unlock(&x->orch_lock);
    if (rc) {
        vg_warn("new-node gate: cannot list nodes: %s", x->orch->err);
        return;
    }
    reap(x, NULL);
    json_t *known = vg_store_seen(x->store);
    bool first = json_object_size(known) == 0;
    size_t baseline = 0;
    for (size_t i = 0; i < nn; i++) {
        const char *node = ns[i].name;
        bool in_service = !ns[i].drain && !ns[i].down && ns[i].responding;
        const char *st = vg_json_str(json_object_get(known, node), "state", NULL);
        if (first) {
            if (in_service) seen(x, node, "known", "in service when the controller first looked"), baseline++;
        } else if (st && !strcmp(st, "gating")) {   /* a gate the controller stopped in: again */
            if (!reap(x, node) && x->ngates < VG_GATES_MAX) start_gate(x, node);
        } else if (!st && in_service && x->ngates < VG_GATES_MAX)
            admit(x, node);
    }
    if (first && baseline) vg_info("new-node gate: %zu nodes in service taken as known; a node new after this runs "
                                   "burn-in %s once before service", baseline, x->policy->ladder.new_node_suite);
    json_decref(known);
    free(ns);
}

bool vg_newnode_stop(struct vg_executor *x, int64_t deadline_mono)
{
    while (x->ngates) {
        reap(x, NULL);
        if (!x->ngates) break;
        if (vg_mono_ms() >= deadline_mono) return false;
        vg_sleep_ms(50);
    }
    return true;
}
