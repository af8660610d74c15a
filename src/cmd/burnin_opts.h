/* burnin_opts.h — the options of `vigil burnin` (parsed in burnin.c) and
 * the entry point of its scheduler mode, `vigil burnin --schedule`
 * (burnin_sched.c). */
#ifndef VG_BURNIN_OPTS_H
#define VG_BURNIN_OPTS_H
#include "burnin/burnin.h"
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define VG_BURNIN_MAX_TOOLS 16

struct vg_burnin_opts {
    enum vg_bi_suite suite;
    const char *node, *nodes, *root, *thresholds, *only, *dir, *orchestrator, *orch_config;
    const char *vendors;         /* --vendor: these vendors' suites, not those of the GPUs found */
    bool insecure_http;          /* an http:// Kubernetes API server accepted (--insecure-http) */
    struct vg_bi_tool tools[VG_BURNIN_MAX_TOOLS];
    size_t ntools;
    bool lab, json, drain, no_drain;
    const char *controller, *auth, *token_file, *munge_socket;   /* --controller: results sent there */
    const char *ca_file;   /* --ca: the CA an https:// controller is verified against */
    /* --schedule */
    bool schedule;
    const char *partition, *state, *jobs_dir;
    long budget_min, every_s;
};

/* Appends to argv from a the options a pass run elsewhere keeps (--suite,
 * --json, --thresholds, --test, --vendor, --tool; toolargs holds the --tool values),
 * and, for the second, --controller and its credentials.  Return the count. */
int vg_burnin_forward(const struct vg_burnin_opts *o, const char **argv, int a, char toolargs[][1200]);
int vg_burnin_forward_controller(const struct vg_burnin_opts *o, const char **argv, int a);
/* POSTs a `vigil burnin --json` document to the controller's /v1/burnin;
 * 0, or -1 after saying why on stderr. */
int vg_burnin_post(const struct vg_burnin_opts *o, const json_t *doc);

/* `vigil burnin --schedule`: the exit code. */
int vg_burnin_schedule(const struct vg_burnin_opts *o);

#endif
