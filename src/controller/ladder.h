/* ladder.h — the repair ladder of the policy file: named repair steps
 * ("rungs", each a command), the order they are tried in — per cause or the
 * default — how long each may take, how a fault that comes back climbs the
 * ladder, and where the RMA ticket goes when every rung has failed.
 *
 *   repair reset = nvidia-smi -r -i {gpu}
 *   repair reboot = scontrol reboot ASAP nextstate=RESUME reason=vigil {node}
 *   repair power-cycle = vigil bmc power-cycle {node} --redfish https://{node}-bmc --user-file /etc/vigil/bmc.user
 *   ladder = reset reboot power-cycle        (default: every rung, in file order)
 *   ladder xid 79 = reboot power-cycle       (a cause of its own: "KIND CODE" or "KIND")
 *   repair_timeout = 1800                    (seconds, each rung and each health check)
 *   repair_timeout reboot = 20m              (one rung's own)
 *   burnin_gate = vigil burnin --node {node} --suite {suite} --json
 *   burnin_suite = standard                  (the suite a repaired node passes before it returns)
 *   new_node_suite = long                    (a node new to the controller passes it once before service)
 *   new_node_every = 10s                     (how often the controller looks for new nodes)
 *   repeat_window = 7d                       (a fault back within it starts one rung higher per return)
 *   rma_dir = /var/lib/vigil/rma             (the ticket when the ladder is exhausted)
 *   rma_command = /usr/local/sbin/open-ticket {ticket} {node}
 *   rma_attach bug-report = srun -w {node} nvidia-bug-report.sh --output-file /dev/stdout
 *                                            (evidence in the ticket; repeatable, one per name)
 *
 * `remediate = CMD` (the original single step) is the rung "remediate". */
#ifndef VG_LADDER_H
#define VG_LADDER_H
#include "core/event.h"
#include "util/timeutil.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VG_RUNGS_MAX 8
#define VG_ATTACH_MAX 8

struct vg_rma_attach {
    char name[32];
    char **argv;                  /* template: {node}; NULL-terminated */
};

struct vg_rung {
    char name[32];
    char **argv;                  /* template: {node}, {gpu}; NULL-terminated */
    int64_t timeout_ms;           /* its own (repair_timeout NAME); 0: the ladder's */
};

struct vg_ladder_rule {
    char cause[64];               /* "" = the default order */
    char names[VG_RUNGS_MAX][32]; /* checked against the rungs once the file is read */
    size_t n;
};

struct vg_ladder {
    struct vg_rung rung[VG_RUNGS_MAX];
    size_t nrung;
    struct vg_ladder_rule *rules;
    size_t nrules;
    int64_t timeout_ms;           /* default 30 min */
    int64_t repeat_window_ms;     /* default 7 days; 0: no climbing */
    char rma_dir[512];            /* "" = no ticket file */
    char **rma_command;           /* template: {ticket}, {node}; NULL = none */
    struct vg_rma_attach attach[VG_ATTACH_MAX];   /* rma_attach NAME = COMMAND: output into the ticket */
    size_t nattach;
    char **gate;                  /* burnin_gate: {node}, {suite}; prints `vigil burnin --json`; NULL = none */
    char gate_suite[16];          /* burnin_suite, default "standard" */
    char new_node_suite[16];      /* "" = new nodes are not gated */
    int64_t new_node_every_ms;    /* default 10 s */
};

void vg_ladder_defaults(struct vg_ladder *l);
/* A command line split at blanks into a malloc'd NULL-terminated argv (no
 * shell: no quoting, no expansion); and its free. */
char **vg_argv_split(const char *s);
void vg_argv_free(char **v);
/* tmpl with each "{key}" of keys[] (NULL-terminated) replaced by the value
 * at the same index of vals; malloc'd, NULL-terminated. */
char **vg_argv_expand(char *const *tmpl, const char *const *keys, const char *const *vals);
void vg_ladder_free(struct vg_ladder *l);
/* One policy line, when its key is the ladder's: 0 taken, -1 bad (why says
 * what), 1 not a ladder key. */
int vg_ladder_parse_line(struct vg_ladder *l, const char *key, const char *val, char *why, size_t n);
/* After the whole file: every name a `ladder` line uses is a rung. */
int vg_ladder_check(const struct vg_ladder *l, char *why, size_t n);
/* The rungs for a cause, in order: its own `ladder CAUSE` line, else
 * `ladder =`, else every rung in file order.  Returns how many. */
size_t vg_ladder_for(const struct vg_ladder *l, const char *cause, const struct vg_rung **out);
/* An event's cause as the policy and the accounting name it: "xid 79",
 * "node-silent". */
void vg_event_cause_name(const struct vg_event *e, char *buf, size_t n);

#endif
