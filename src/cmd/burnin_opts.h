/* burnin_opts.h — the options of `vigil burnin` (parsed in burnin.c) and
 * the entry point of its scheduler mode, `vigil burnin --schedule`
 * (burnin_sched.c). */
#ifndef VG_BURNIN_OPTS_H
#define VG_BURNIN_OPTS_H
#include "burnin/burnin.h"
#include <stdbool.h>
#include <stddef.h>

#define VG_BURNIN_MAX_TOOLS 16

struct vg_burnin_opts {
    enum vg_bi_suite suite;
    const char *node, *nodes, *root, *thresholds, *only, *dir, *orchestrator, *orch_config;
    struct vg_bi_tool tools[VG_BURNIN_MAX_TOOLS];
    size_t ntools;
    bool lab, json, drain, no_drain;
    /* --schedule */
    bool schedule;
    const char *partition, *state, *jobs_dir;
    long budget_min, every_s;
};

/* `vigil burnin --schedule`: the exit code. */
int vg_burnin_schedule(const struct vg_burnin_opts *o);

#endif
