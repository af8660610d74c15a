/* policy.h — the controller's cluster-wide policy: what to do about a node
 * that has a verdict.  Pure decisions (no scheduler calls here: the executor
 * applies them through the orchestrator), so every rule is unit-testable:
 *   - action per verdict: DRAIN (jobs finish) below `down_at`, DOWN and
 *     requeue the node's jobs now at or above it; `ignore` is only recorded;
 *   - ownership: a node unavailable for a reason vigil did not write is left
 *     alone; vigil never touches it;
 *   - hot spares: each production node isolated promotes one spare from the
 *     pool so the requeued job finds room;
 *   - rack / NVLink domain (`domain` lines, else the orchestrator's domain of
 *     the node, e.g. a Kubernetes node label, else the domain the node's
 *     agent reports from its GPUs' fabric, domains.h): when more than
 *     `domain_max_unavailable` nodes of a domain are unavailable, the whole
 *     domain is isolated as a unit;
 *   - blast-radius breaker: if isolating would bring the nodes vigil isolated
 *     within `breaker_window_ms` (and that are still out) above
 *     `breaker_percent` of the cluster, it holds (records, alerts) instead of
 *     acting. */
#ifndef VG_POLICY_H
#define VG_POLICY_H
#include "controller/domains.h"
#include "controller/ladder.h"
#include "core/event.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vg_policy {
    enum vg_action down_at;       /* default reset-gpu */
    enum vg_action drain_at;      /* default restart-app */
    int domain_max_unavailable;   /* default 2 */
    int breaker_percent;          /* default 10 */
    int64_t breaker_window_ms;    /* default 10 min */
    char **spares;                /* hot-spare pool, in order of preference */
    size_t nspares;
    char **domain_nodes, **domain_names; /* parallel: node i belongs to domain_names[i] */
    size_t ndomain;
    struct vg_domains *learned;   /* the domains nodes report (not owned); NULL: none */
    struct vg_ladder ladder;      /* the repair steps (ladder.h) */
    char **healthcheck;           /* argv template ({node}, {gpu}), NULL = none */
    char spare_pool[64];          /* the orchestrator's name for the pool, default "vigil_spares" */
    int64_t view_max_age_ms;      /* default 0: every batch of incidents reads the cluster afresh; > 0:
                                   * the executor keeps its view (read every half of it) and decides on
                                   * one up to this old -- fewer scheduler requests per incident, but a
                                   * node drained by someone else within it is not yet seen as theirs */
};

/* The controller's view of one node (from one orchestrator call for all). */
struct vg_node_view {
    const char *name;
    bool unavailable;  /* DRAIN, DOWN, FAIL… */
    bool ours;         /* its reason starts with "vigil:" */
    bool spare;        /* in the spare pool (not in production) */
    const char *domain; /* the orchestrator's domain for it (a node label); NULL or "": none */
};

/* Isolations vigil made recently (for the breaker); at: on a clock that
 * never steps (the executor's: the machine's boot-time clock). */
struct vg_isolation {
    int64_t at;
    char node[64];
};
struct vg_isolation_log {
    struct vg_isolation *e;
    size_t n, cap;
};

enum vg_verdict_op {
    VG_OP_RECORD,      /* ignore-class: record only */
    VG_OP_DRAIN,
    VG_OP_DOWN,        /* DOWN + requeue the node's jobs now */
};

struct vg_decision {
    enum vg_verdict_op op;
    char **isolate;        /* nodes to isolate (the node, plus its domain when the rule fires) */
    size_t nisolate;
    char **promote;        /* spares to move into production */
    size_t npromote;
    bool held;             /* the breaker or ownership stopped it: nothing to do */
    char reason[256];      /* the reason the node carries, starts with "vigil:" */
    char note[256];        /* why (held, domain rule, no spare left…) */
};

void vg_policy_defaults(struct vg_policy *p);
void vg_policy_free(struct vg_policy *p);
/* Loads a policy file ("key = value" lines, '#' comments):
 *   down_at = reset-gpu | drain_at = restart-app | spares = n[9-10]
 *   domain rack1 = n[1-4] | domain_max_unavailable = 2
 *   breaker = 10% / 600s | spare_pool = vigil_spares (spare_reservation: the same)
 *   view_max_age = 30s (default 0: the cluster read for every batch of incidents)
 *   remediate = nvidia-smi -r -i {gpu} | healthcheck = vigil check --node {node}
 *   the repair ladder: repair NAME = CMD | ladder [CAUSE] = NAME… | repair_timeout,
 *   repeat_window, rma_dir, rma_command (ladder.h)
 * Returns 0, or -1 with "FILE:LINE: what" in err. */
int vg_policy_load(struct vg_policy *p, const char *path, char *err, size_t errlen);
int vg_policy_parse(struct vg_policy *p, const char *text, const char *name, char *err, size_t errlen);
const char *vg_policy_domain(const struct vg_policy *p, const char *node);
/* A node's domain without the orchestrator's view: its `domain` line, else
 * the domain its agent reported; NULL when neither. */
const char *vg_policy_node_domain(const struct vg_policy *p, const char *node);
/* Whether a verdict leads to an action at all (below drain_at it is only
 * recorded, and needs no look at the cluster). */
bool vg_policy_acts(const struct vg_policy *p, enum vg_action action);

/* Decides what to do about `node` given a verdict `action` (what: a short
 * description for the reason, e.g. "xid 79 gpu 2").  cluster: all nodes.
 * now: the log's clock.  Records the isolations it decides in log.  Fill d;
 * free with vg_decision_free. */
void vg_policy_decide(const struct vg_policy *p, const struct vg_node_view *cluster, size_t n, const char *node,
                      enum vg_action action, const char *what, int64_t now, struct vg_isolation_log *log,
                      struct vg_decision *d);
void vg_decision_free(struct vg_decision *d);
void vg_isolation_log_free(struct vg_isolation_log *log);
/* Takes back the isolations decision d recorded (its action failed: the
 * nodes did not go out, so the breaker must not count them): the latest
 * entry of each of its nodes. */
void vg_isolation_log_undo(struct vg_isolation_log *log, const struct vg_decision *d);
/* One isolation at `at` (the breaker's window read back from the store). */
void vg_isolation_log_add(struct vg_isolation_log *log, int64_t at, const char *node);

#endif
