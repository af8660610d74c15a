/* schedule.c — one pass of the burn-in scheduler (schedule.h): brings the
 * passes in flight up to date from the orchestrator (a job that ended:
 * its start and end as the scheduler saw them, `preempted` when a
 * production job preempted it, else the result its output document gives),
 * then submits one job per idle node of the burn-in partition whose budget
 * in the rolling window is not spent: on exactly that node, alone on it,
 * its time limit the budget left.  Hot spares (the pool vigil serve keeps)
 * are left out. */
#include "burnin/schedule.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/rootfs.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t vg_bi_suite_min_ms(enum vg_bi_suite s)
{
    return (s == VG_BI_LONG ? 30 : s == VG_BI_STANDARD ? 5 : 1) * 60000;
}

/* The node's entry of the `vigil burnin --json` document in the job's
 * output (stderr lines may come before it): its result and when the pass
 * ended.  false when the text holds no such document. */
static bool text_result(const char *text, const char *node, char *result, size_t n, int64_t *end_ms)
{
    size_t len = strlen(text);
    bool found = false;
    for (const char *p = text; p && !found; p = strstr(p, "\n{")) {
        if (*p == '\n') p++;
        if (*p != '{') continue;
        json_error_t je;
        json_t *doc = json_loadb(p, len - (size_t)(p - text), JSON_DISABLE_EOF_CHECK, &je);
        size_t i;
        json_t *nd;
        json_array_foreach(json_object_get(doc, "nodes"), i, nd) {
            const char *r = vg_json_str(nd, "result", "");
            if (strcmp(vg_json_str(nd, "node", ""), node) || !*r) continue;
            vg_strlcpy(result, r, n);
            int64_t t = vg_json_get_time(doc, "time");
            *end_ms = t ? t + vg_json_int(doc, "elapsed_ms", 0) : 0;
            found = true;
        }
        json_decref(doc);
    }
    return found;
}

/* The job's standard error beside its output: NODE-TIME.err for NODE-TIME.out. */
static void error_path(const char *out, char *buf, size_t n)
{
    size_t l = strlen(out);
    if (l > 4 && !strcmp(out + l - 4, ".out")) l -= 4;
    snprintf(buf, n, "%.*s.err", (int)l, out);
}

/* The last line the job wrote to its standard error ("" none), for the
 * detail of a pass whose output holds no result. */
static void last_error_line(const struct vg_bi_pass *p, char *buf, size_t n)
{
    char path[600], *text = NULL;
    size_t len;
    buf[0] = 0;
    if (!*p->output) return;
    error_path(p->output, path, sizeof path);
    if (vg_read_file(NULL, path, 1u << 20, &text, &len)) return;
    char *end = text + len;
    while (end > text && (end[-1] == '\n' || end[-1] == ' ')) end--;
    *end = 0;
    char *line = strrchr(text, '\n');
    vg_strlcpy(buf, line ? line + 1 : text, n);
    free(text);
}

/* The same from the job's output: the file it wrote, or what the scheduler
 * keeps of it (job_output: a pod's log). */
static bool output_result(struct vg_orch *o, const struct vg_bi_pass *p, char *result, size_t n, int64_t *end_ms)
{
    char *text = NULL;
    size_t len;
    if (vg_orch_can(o->ops, VG_CAP_JOB_OUTPUT)) {
        if (o->ops->job_output(o, p->job, &text)) text = NULL;
    } else if (!*p->output || vg_read_file(NULL, p->output, 8u << 20, &text, &len))
        text = NULL;
    bool found = text && text_result(text, p->node, result, n, end_ms);
    free(text);
    return found;
}

/* Brings one pass in flight up to date.  job_get failing while the
 * scheduler answers means the job left its records (Slurm keeps an ended
 * job MinJobAge seconds). */
static void update_pass(struct vg_orch *o, struct vg_bi_pass *p, int64_t now, json_t *ended)
{
    struct vg_orch_job j;
    char res[16] = "";
    int64_t doc_end = 0;
    if (o->ops->job_get(o, p->job, &j)) {
        bool doc = output_result(o, p, res, sizeof res, &doc_end);
        snprintf(p->detail, sizeof p->detail, "the job left the scheduler's records before it was seen ending%s",
                 doc ? "" : ", and its output holds no result");
        vg_strlcpy(p->result, doc ? res : "unknown", sizeof p->result);
        p->end_ms = doc && doc_end > p->start_ms ? doc_end : now;
    } else if (j.phase == VG_JOB_PENDING) {
        return;
    } else if (j.phase == VG_JOB_RUNNING) {
        vg_strlcpy(p->result, "running", sizeof p->result);
        if (j.started_ms) p->start_ms = j.started_ms;
        else if (!p->start_ms) p->start_ms = now;
        return;
    } else {
        if (j.started_ms) p->start_ms = j.started_ms;
        p->end_ms = j.ended_ms ? j.ended_ms : now;
        if (!strncmp(j.state, "PREEMPTED", 9)) {
            vg_strlcpy(p->result, "preempted", sizeof p->result);
            snprintf(p->detail, sizeof p->detail, "%s",
                     vg_orch_can(o->ops, VG_CAP_PRIORITY) && j.reason[0] ? j.reason : "a job of a higher priority tier preempted it");
        } else if (output_result(o, p, res, sizeof res, &doc_end)) {
            vg_strlcpy(p->result, res, sizeof p->result);
            p->detail[0] = 0;
        } else {
            char last[160];
            last_error_line(p, last, sizeof last);
            vg_strlcpy(p->result, "unknown", sizeof p->result);
            snprintf(p->detail, sizeof p->detail, "the job ended %s and its output holds no result%s%s%s", j.state,
                     last[0] ? " (its stderr ends: " : "", last, last[0] ? ")" : "");
        }
    }
    if (p->start_ms > p->end_ms) p->start_ms = p->end_ms;   /* ended before it ever ran */
    if (vg_orch_can(o->ops, VG_CAP_JOB_OUTPUT) && o->ops->job_cancel(o, p->job)) /* read: the ended job goes */
        vg_warn("burnin: removing ended job %s: %s", p->job, o->err);
    json_t *e = json_pack("{s:s, s:s, s:s, s:o, s:o, s:f}", "node", p->node, "job", p->job, "result", p->result,
                          "start", vg_json_time(p->start_ms), "end", vg_json_time(p->end_ms), "ran_s",
                          p->start_ms ? (double)(p->end_ms - p->start_ms) / 1000.0 : 0.0);
    vg_json_set_str(e, "detail", p->detail);
    json_array_append_new(ended, e);
}

static bool in_list(const char *list, const char *name)
{
    size_t l = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += l)
        if ((p == list || p[-1] == ',') && (p[l] == ',' || !p[l])) return true;
    return false;
}

static bool wanted(const struct vg_bi_sched_opts *so, const char *node)
{
    if (!so->only) return true;
    for (size_t i = 0; i < so->nonly; i++)
        if (!strcmp(so->only[i], node)) return true;
    return false;
}

static const struct vg_bi_pass *inflight_on(const struct vg_bi_state *st, const char *node)
{
    for (size_t i = 0; i < st->n; i++)
        if (!strcmp(st->p[i].node, node) && vg_bi_pass_inflight(&st->p[i])) return &st->p[i];
    return NULL;
}

/* Submits node's pass; 0 with the pass recorded, -1 (o->err). */
static int submit(struct vg_orch *o, const struct vg_bi_sched_opts *so, struct vg_bi_state *st, const char *node,
                  int limit_s, int64_t now, char *job, size_t joblen)
{
    size_t n = 0;
    while (so->argv[n]) n++;
    const char **argv = vg_xcalloc(n + 3, sizeof *argv);
    memcpy(argv, so->argv, n * sizeof *argv);
    argv[n] = so->node_flag, argv[n + 1] = node;
    char name[96], out[512], errf[512];
    snprintf(name, sizeof name, "vigil-burnin-%s", node);
    snprintf(out, sizeof out, "%s/%s-%lld.out", so->jobs_dir, node, (long long)now);
    error_path(out, errf, sizeof errf);
    /* the document alone in its file: srun writes its own lines ("srun: error: n3:
     * task 0: Exited with exit code 1") to stderr at the moment the task ends,
     * which in a shared file can land inside the document */
    struct vg_orch_jobspec spec = { .name = name, .nodes = 1, .tasks_per_node = 1, .partition = so->partition,
                                    .argv = argv, .output = out, .error = errf, .workdir = so->jobs_dir, .nodelist = node,
                                    .exclusive = true, .time_limit_s = limit_s };
    int rc = o->ops->job_submit(o, &spec, job, joblen);
    free(argv);
    if (rc) return -1;
    struct vg_bi_pass *p = vg_bi_state_add(st);
    vg_strlcpy(p->node, node, sizeof p->node);
    vg_strlcpy(p->job, job, sizeof p->job);
    vg_strlcpy(p->suite, vg_bi_suite_name(so->suite), sizeof p->suite);
    vg_strlcpy(p->result, "pending", sizeof p->result);
    vg_strlcpy(p->output, out, sizeof p->output);
    p->submitted_ms = now;
    return 0;
}

int vg_bi_schedule(struct vg_orch *o, const struct vg_bi_sched_opts *so, struct vg_bi_state *st, json_t **report,
                   char *err, size_t errlen)
{
    int64_t now = so->now_ms ? so->now_ms : vg_now_ms();
    *report = NULL;
    if (!vg_orch_can(o->ops, VG_CAP_JOBS))
        return snprintf(err, errlen, "--orchestrator: the %s orchestrator cannot submit jobs", o->ops->name), 2;
    struct vg_orch_node *nodes;
    size_t nn;
    if (o->ops->nodes(o, NULL, 0, &nodes, &nn)) return snprintf(err, errlen, "%s", o->err), 1;
    bool prio = vg_orch_can(o->ops, VG_CAP_PRIORITY);   /* preemption by priority, not partition */
    if (prio) {
        int pr = o->ops->burnin_prepare(o, so->partition, nodes, nn);
        if (pr) {
            free(nodes);
            return snprintf(err, errlen, "%s%s", pr > 0 ? "--burnin-partition: " : "", o->err), pr > 0 ? 2 : 1;
        }
    }
    size_t in_part = 0, any_part = 0;
    for (size_t i = 0; i < nn && !prio; i++) {
        in_part += in_list(nodes[i].partitions, so->partition);
        any_part += nodes[i].partitions[0] != 0;
    }
    if (!in_part && !prio) {
        free(nodes);
        if (nn && !any_part)
            return snprintf(err, errlen,
                            "--orchestrator: the %s orchestrator has no partitions: scheduling burn-in on it is "
                            "not supported (it needs a preemptible low-priority partition)", o->ops->name), 2;
        return snprintf(err, errlen,
                        "--burnin-partition: no node is in partition '%s' (the %s orchestrator knows %zu nodes)",
                        so->partition, o->ops->name, nn), 2;
    }
    char **pool = NULL;
    size_t npool = 0;
    if (so->spare_pool && o->ops->pool_get(o, so->spare_pool, &pool, &npool) < 0) {
        free(nodes);
        return snprintf(err, errlen, "%s", o->err), 1;
    }
    json_t *ended = json_array(), *out = json_array();
    int rc = 0;
    for (size_t i = 0; i < st->n; i++)
        if (vg_bi_pass_inflight(&st->p[i])) {
            update_pass(o, &st->p[i], now, ended);
            if (!strcmp(st->p[i].result, "fail")) {
                rc = 1;
                snprintf(err, errlen, "node %s failed its burn-in pass (job %s)", st->p[i].node, st->p[i].job);
            }
        }
    for (size_t i = 0; i < nn; i++) {
        const struct vg_orch_node *nd = &nodes[i];
        if (!wanted(so, nd->name) || (!prio && !in_list(nd->partitions, so->partition))) continue;
        int64_t used = vg_bi_budget_used_ms(st, nd->name, now, so->window_ms), left = so->budget_ms - used;
        json_t *e = json_pack("{s:s, s:f, s:f}", "node", nd->name, "budget_used_s", (double)used / 1000.0,
                              "budget_left_s", (double)(left > 0 ? left : 0) / 1000.0);
        const struct vg_bi_pass *fl = inflight_on(st, nd->name);
        char why[256] = "", job[128] = "";
        bool spare = false;
        for (size_t k = 0; k < npool && !spare; k++) spare = !strcmp(pool[k], nd->name);
        if (spare) snprintf(why, sizeof why, "a hot spare (pool %s)", so->spare_pool);
        else if (nd->down || !nd->responding) snprintf(why, sizeof why, "down (%s)", nd->state);
        else if (nd->drain) snprintf(why, sizeof why, "drained (%s)", nd->state);
        else if (fl) snprintf(why, sizeof why, "its pass is %s (job %s)", fl->result, fl->job);
        else if (!nd->idle) snprintf(why, sizeof why, "not idle (%s)", nd->state);
        else if (left < vg_bi_suite_min_ms(so->suite))
            snprintf(why, sizeof why, "budget spent: %lld s of %lld s used in the last %lld min",
                     (long long)used / 1000, (long long)so->budget_ms / 1000, (long long)so->window_ms / 60000);
        else if (submit(o, so, st, nd->name, (int)(left / 60000) * 60, now, job, sizeof job)) {
            snprintf(why, sizeof why, "submitting failed: %.140s", o->err);
            if (!rc) snprintf(err, errlen, "%s: %s", nd->name, o->err);
            rc = 1;
        }
        json_object_set_new(e, "action", json_string(job[0] ? "submitted" : "skipped"));
        if (job[0]) {
            json_object_set_new(e, "job", json_string(job));
            json_object_set_new(e, "time_limit_s", json_integer(left / 60000 * 60));
        }
        vg_json_set_str(e, "why", why);
        json_array_append_new(out, e);
    }
    free(nodes);
    vg_strv_free(pool, npool);
    *report = json_pack("{s:o, s:s, s:s, s:f, s:f, s:o, s:o}", "time", vg_json_time(now), "partition", so->partition,
                        "suite", vg_bi_suite_name(so->suite), "budget_min", (double)so->budget_ms / 60000.0,
                        "window_min", (double)so->window_ms / 60000.0, "ended", ended, "nodes", out);
    return rc;
}
