/* executor_view.c — what the dashboard and /metrics read from the executor
 * while it runs: the spare pool, the incidents queued for or in repair, the
 * breaker's recent isolations, and the repair ladder's counters. */
#include "controller/executor_int.h"
#include "controller/clock.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdlib.h>
#include <string.h>

void vg_exec_repairing(struct vg_executor *x, int64_t id, bool on)
{
    pthread_mutex_lock(&x->pool_lock);
    size_t i = 0;
    while (i < x->nrepairing && x->repairing[i] != id) i++;
    if (on && i == x->nrepairing) {
        x->repairing = vg_xrealloc(x->repairing, (x->nrepairing + 1) * sizeof *x->repairing);
        x->repairing[x->nrepairing++] = id;
    } else if (!on && i < x->nrepairing) {
        x->repairing[i] = x->repairing[--x->nrepairing];
    }
    pthread_mutex_unlock(&x->pool_lock);
}

void vg_exec_observe_mttr(struct vg_executor *x, const json_t *inc, int64_t returned_ms)
{
    int64_t detected = vg_json_get_time(json_object_get(json_object_get(inc, "steps"), "detected"), "at");
    if (detected > 0 && returned_ms >= detected)
        vg_histogram_observe(&x->mttr, (double)(returned_ms - detected) / 1000.0);
}

json_t *vg_executor_view(struct vg_executor *x)
{
    const struct vg_policy *p = x->policy;
    json_t *pool = json_array(), *rep = json_array();
    int64_t now = vg_clock_boot_ms();   /* the breaker's clock */
    size_t recent = 0;
    pthread_mutex_lock(&x->pool_lock);
    for (size_t i = 0; i < x->npool; i++) json_array_append_new(pool, json_string(x->pool[i]));
    for (size_t i = 0; i < x->nrepairing; i++) json_array_append_new(rep, json_integer(x->repairing[i]));
    for (size_t i = 0; i < x->log.n; i++) recent += now - x->log.e[i].at <= p->breaker_window_ms;
    pthread_mutex_unlock(&x->pool_lock);
    return json_pack("{s:b, s:s, s:o, s:o, s:{s:i, s:I, s:I, s:I}}", "acting", x->act, "spare_pool", p->spare_pool,
                     "pool", pool, "repairing", rep, "breaker", "percent", p->breaker_percent, "window_s",
                     (json_int_t)(p->breaker_window_ms / 1000), "isolations_in_window", (json_int_t)recent,
                     "holds_total", (json_int_t)__atomic_load_n(&x->holds, __ATOMIC_SEQ_CST));
}

void vg_executor_ladder_metrics(struct vg_executor *x, struct sbuf *out)
{
    const struct vg_ladder *l = &x->policy->ladder;
    sbuf_puts(out, "# HELP vigil_repair_steps_total Repair ladder steps run, by rung and by the command's result.\n"
                   "# TYPE vigil_repair_steps_total counter\n");
    for (size_t i = 0; i < l->nrung; i++)
        sbuf_printf(out, "vigil_repair_steps_total{step=\"%s\",result=\"ok\"} %lu\n"
                         "vigil_repair_steps_total{step=\"%s\",result=\"failed\"} %lu\n",
                    l->rung[i].name, __atomic_load_n(&x->rung_ok[i], __ATOMIC_SEQ_CST), l->rung[i].name,
                    __atomic_load_n(&x->rung_failed[i], __ATOMIC_SEQ_CST));
    sbuf_printf(out,
                "# HELP vigil_health_checks_total Health checks run after an isolation or a repair step, by result.\n"
                "# TYPE vigil_health_checks_total counter\n"
                "vigil_health_checks_total{result=\"passed\"} %lu\nvigil_health_checks_total{result=\"failed\"} %lu\n"
                "# HELP vigil_burnin_gates_total Burn-in gates run before a repaired node returns, by result.\n"
                "# TYPE vigil_burnin_gates_total counter\n"
                "vigil_burnin_gates_total{result=\"passed\"} %lu\nvigil_burnin_gates_total{result=\"failed\"} %lu\n"
                "# HELP vigil_new_nodes_total New nodes through their burn-in before service, by result.\n"
                "# TYPE vigil_new_nodes_total counter\n"
                "vigil_new_nodes_total{result=\"passed\"} %lu\nvigil_new_nodes_total{result=\"failed\"} %lu\n"
                "# HELP vigil_rma_handoffs_total Nodes handed off for RMA once every repair step failed.\n"
                "# TYPE vigil_rma_handoffs_total counter\nvigil_rma_handoffs_total %lu\n"
                "# HELP vigil_rma_handoff_failures_total RMA hand-offs that failed (no ticket written, or its command failed).\n"
                "# TYPE vigil_rma_handoff_failures_total counter\nvigil_rma_handoff_failures_total %lu\n",
                __atomic_load_n(&x->checks_passed, __ATOMIC_SEQ_CST), __atomic_load_n(&x->checks_failed, __ATOMIC_SEQ_CST),
                __atomic_load_n(&x->gates_passed, __ATOMIC_SEQ_CST), __atomic_load_n(&x->gates_failed, __ATOMIC_SEQ_CST),
                __atomic_load_n(&x->new_passed, __ATOMIC_SEQ_CST), __atomic_load_n(&x->new_failed, __ATOMIC_SEQ_CST),
                __atomic_load_n(&x->rma_handoffs, __ATOMIC_SEQ_CST), __atomic_load_n(&x->rma_failed, __ATOMIC_SEQ_CST));
}
