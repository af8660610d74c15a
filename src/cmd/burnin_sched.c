/* burnin_sched.c — `vigil burnin --schedule`: one pass of the burn-in
 * scheduler (src/burnin/schedule.c), or one every --every seconds, for a
 * systemd timer or cron.  Builds the command each node's job runs (`vigil
 * burnin --node NODE --suite S --drain --json`, or on a lab `vigil burnin
 * --lab --dir DIR --nodes NODE …`), holds the state file's lock, and prints
 * what was submitted, skipped and what ended.  See docs/burnin.md. */
#include "cmd/cmd.h"
#include "cmd/burnin_opts.h"
#include "burnin/schedule.h"
#include "lab/lab.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include "util/hostlist.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_STATE "/var/lib/vigil/burnin-state.json"
#define WINDOW_MS (60 * 60000)
#define KEEP_MS (24 * 60 * 60000)   /* ended passes stay in the state file a day */
#define SPARE_POOL "vigil_spares"   /* vigil serve's spare pool (the policy's spare_pool default) */

/* mkdir -p */
static int make_dirs(const char *path)
{
    char *d = vg_xstrdup(path);
    int rc = 0;
    for (char *p = d + 1;; p++)
        if (*p == '/' || !*p) {
            char c = *p;
            *p = 0;
            if (mkdir(d, 0755) && errno != EEXIST) rc = -1;
            if (!(*p = c)) break;
        }
    free(d);
    return rc;
}

static void print_human(const json_t *r)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(r, "ended"), i, e)
        printf("%s: job %s ended %s after %.0f s%s%s\n", vg_json_str(e, "node", "?"), vg_json_str(e, "job", "?"),
               vg_json_str(e, "result", "?"), json_number_value(json_object_get(e, "ran_s")),
               json_is_string(json_object_get(e, "detail")) ? ": " : "", vg_json_str(e, "detail", ""));
    json_array_foreach(json_object_get(r, "nodes"), i, e) {
        double used = json_number_value(json_object_get(e, "budget_used_s"));
        if (!strcmp(vg_json_str(e, "action", ""), "submitted"))
            printf("%s: submitted job %s (%s, limit %lld min; budget used %.0f s)\n", vg_json_str(e, "node", "?"),
                   vg_json_str(e, "job", "?"), vg_json_str(r, "suite", "?"), vg_json_int(e, "time_limit_s", 0) / 60,
                   used);
        else
            printf("%s: skipped: %s\n", vg_json_str(e, "node", "?"), vg_json_str(e, "why", "?"));
    }
}

/* One round: lock, load, schedule, prune, save, print.  The exit code. */
static int round_once(const struct vg_burnin_opts *o, struct vg_orch *s, const struct vg_bi_sched_opts *so,
                      const char *state)
{
    char err[600];
    int lock = vg_bi_state_lock(state, err, sizeof err);
    if (lock < 0) return vg_err("burnin: --schedule: %s", err), VG_EXIT_FINDINGS;
    struct vg_bi_state st;
    if (vg_bi_state_load(state, &st, err, sizeof err)) {
        close(lock);
        return vg_input_error("burnin: --state: %s", err);
    }
    json_t *report;
    int rc = vg_bi_schedule(s, so, &st, &report, err, sizeof err);
    if (rc == 2) {
        vg_bi_state_free(&st);
        close(lock);
        return vg_input_error("burnin: %s", err);
    }
    if (rc) vg_err("burnin: --schedule: %s", err);
    vg_bi_state_prune(&st, vg_now_ms() - KEEP_MS);
    char serr[600];
    if (vg_bi_state_save(state, &st, serr, sizeof serr)) {
        vg_err("burnin: --state: %s", serr);
        rc = VG_EXIT_FINDINGS;
    }
    vg_bi_state_free(&st);
    close(lock);
    if (report) {
        json_object_set_new(report, "state", json_string(state));
        if (o->json) vg_json_print(stdout, report, o->every_s > 0);
        else {
            print_human(report);
            json_decref(report);
        }
        fflush(stdout);
    }
    return rc ? VG_EXIT_FINDINGS : VG_EXIT_OK;
}

int vg_burnin_schedule(const struct vg_burnin_opts *o)
{
    char err[600], state[600], jobs[700], self[600], dirarg[600], toolargs[VG_BURNIN_MAX_TOOLS][1200];
    struct vg_orch_conf oc = { .config = o->orch_config, .timeout_ms = 10000, .insecure_http = o->insecure_http };
    struct vg_lab_info info;
    const char *argv[64];
    int a = 0;
    ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
    self[l > 0 ? l : 0] = 0;
    argv[a++] = self, argv[a++] = "burnin";
    if (o->lab) {
        char dirbuf[PATH_MAX];
        const char *dir = vg_lab_resolve_dir(o->dir, dirbuf, sizeof dirbuf);
        if (!vg_lab_is_lab(dir) || vg_lab_info(dir, &info))
            return vg_input_error("burnin: --dir: %s is not a vigil lab", dir);
        oc.config = info.conf;
        snprintf(dirarg, sizeof dirarg, "%s", info.dir);
        argv[a++] = "--lab", argv[a++] = "--dir", argv[a++] = dirarg;
        if (o->no_drain) argv[a++] = "--no-drain";
        snprintf(state, sizeof state, "%s/burnin-state.json", info.dir);
    } else {
        if (!o->no_drain) argv[a++] = "--drain";
        if (o->orchestrator) argv[a++] = "--orchestrator", argv[a++] = o->orchestrator;
        /* a pass that runs in a container (Kubernetes) does not see this file: it uses the cluster's own
         * credentials */
        if (o->orch_config && vg_orch_can(vg_orch_find(o->orchestrator), VG_CAP_HOST_FILES))
            argv[a++] = "--orch-config", argv[a++] = o->orch_config;
        vg_strlcpy(state, DEFAULT_STATE, sizeof state);
    }
    if (o->state) vg_strlcpy(state, o->state, sizeof state);
    a = vg_burnin_forward_controller(o, argv, vg_burnin_forward(o, argv, a, toolargs));
    argv[a] = NULL;
    /* the jobs' scripts and output: beside the state file unless told */
    if (o->jobs_dir) vg_strlcpy(jobs, o->jobs_dir, sizeof jobs);
    else {
        const char *slash = strrchr(state, '/');
        snprintf(jobs, sizeof jobs, "%.*s/burnin-jobs", slash ? (int)(slash - state) : 1, slash ? state : ".");
    }
    if (make_dirs(jobs)) return vg_input_error("burnin: --jobs-dir: %s: %s", jobs, strerror(errno));
    char *sdir = vg_xstrdup(state), *slash = strrchr(sdir, '/');
    if (slash && slash != sdir) *slash = 0;
    int bad = slash && slash != sdir && make_dirs(sdir);
    free(sdir);
    if (bad) return vg_input_error("burnin: --state: %s: %s", state, strerror(errno));
    char **only = NULL;
    int nonly = 0;
    if (o->nodes && (nonly = vg_hostlist_expand(o->nodes, &only, 100000)) <= 0)
        return vg_input_error("burnin: --nodes: '%s' is not a host list", o->nodes);
    struct vg_bi_sched_opts so = { .partition = o->partition, .suite = o->suite, .budget_ms = o->budget_min * 60000,
                                   .window_ms = WINDOW_MS, .jobs_dir = jobs, .argv = argv,
                                   .node_flag = o->lab ? "--nodes" : "--node", .spare_pool = SPARE_POOL, .only = only,
                                   .nonly = (size_t)(nonly > 0 ? nonly : 0) };
    struct vg_orch *s = vg_orch_open(o->orchestrator, &oc, err, sizeof err);
    int rc;
    if (!s) rc = vg_input_error("burnin: %s", err);
    else
        for (;;) {
            rc = round_once(o, s, &so, state);
            if (rc == VG_EXIT_INPUT || o->every_s <= 0) break;
            vg_sleep_ms(o->every_s * 1000);
        }
    vg_orch_close(s);
    for (int i = 0; i < nonly; i++) free(only[i]);
    free(only);
    return rc;
}
