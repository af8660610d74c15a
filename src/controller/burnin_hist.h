/* burnin_hist.h — burn-in results as evidence in the controller: passes
 * recorded from `vigil burnin --json` documents (POST /v1/burnin, and the
 * repair path's burn-in gate), and each node's history over a window
 * (GET /v1/burnin, read by `vigil score` for the Reliability criterion).
 *
 * What a node sends is checked before anything is kept: every string
 * printable text within its length (no control, bidi or line-separator
 * character), test names words, at most VG_BURNIN_MAX_TESTS tests per node,
 * the pass's time neither ahead of the controller's clock nor older than
 * VG_BURNIN_MAX_AGE_MS.  Each node keeps its newest VG_BURNIN_KEEP passes. */
#ifndef VG_BURNIN_HIST_H
#define VG_BURNIN_HIST_H
#include "controller/store.h"
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define VG_BURNIN_KEEP 100                          /* passes kept per node */
#define VG_BURNIN_MAX_TESTS 64                      /* tests per node in one pass */
#define VG_BURNIN_MAX_AHEAD_MS (5 * 60 * 1000LL)    /* a pass dated later than now + this is refused */
#define VG_BURNIN_MAX_AGE_MS (30 * 86400 * 1000LL)  /* … and one dated earlier than now - this */
#define VG_BURNIN_PAGE_MAX 1000                     /* nodes per page of the history */

/* Records every node of a `vigil burnin --json` document ({suite, time,
 * nodes: [{node, result, suite, tests: […]}]}); only_node, when set, is the
 * one node the sender may speak for (others are refused).  at_ms: now (the
 * pass's time when the document has none).  Returns the number of nodes
 * recorded, or -1 with err naming the field (nothing recorded), or -2 when
 * the store failed (err says why). */
int vg_burnin_record(struct vg_store *st, const json_t *doc, const char *source, const char *only_node, int64_t at_ms,
                     char *err, size_t errlen);

/* The history since since_ms, of one node or all (node NULL), read one row
 * at a time: {window_s, since, burnin: {nodes_tested, runs, passes,
 * failures, unknown, preempted, runs_per_node_day (completed passes per
 * node per day since the first pass of the window, counting at least a
 * day), suites: {quick, standard, long}, nodes_failing, nodes_never_passed,
 * oldest_pass_age_s, nodes_in_cluster, coverage}, nodes: [{node, runs,
 * passes, failures, last_run, last_result, last_suite, last_pass,
 * last_failure, tests}], next_after}.  The summary covers every node; nodes
 * holds one page: at most limit (1..VG_BURNIN_PAGE_MAX) nodes after `after`
 * (NULL: from the first) by name, and next_after is the cursor to the next
 * page (null on the last).  cluster_nodes is the number of nodes the
 * orchestrator knows (0: unknown, coverage null).  NULL when the store
 * cannot be read. */
json_t *vg_burnin_history(struct vg_store *st, const char *node, int64_t since_ms, int64_t now_ms,
                          size_t cluster_nodes, const char *after, int limit);

#endif
