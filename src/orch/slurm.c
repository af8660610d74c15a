/* slurm.c — the Slurm adapter (see slurm.h): scontrol and sbatch spawned with
 * argv under a timeout, batched, counted; and the parsers of their one-line
 * (`-o`) key=value output, whose values (Reason, OS, Command) may hold spaces. */
#include "orch/slurm.h"
#include "core/event.h"
#include "util/sbuf.h"
#include "util/hostlist.h"
#include "util/timeutil.h"
#include "util/spawn.h"
#include "util/strutil.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- key=value lines ---------------------------------------------------- */

struct kv {
    const char *key, *val;
    size_t klen, vlen;
};

/* A key starts a new field: " Key=" with an upper-case first letter, the way
 * scontrol prints every field name (free text in Reason, OS or Command would
 * need an upper-case word glued to '=' to be mistaken for one). */
static size_t key_len_at(const char *p, const char *end)
{
    if (p >= end || !isupper((unsigned char)*p)) return 0;
    const char *q = p;
    while (q < end && (isalnum((unsigned char)*q) || *q == '_' || *q == ':')) q++;
    return q < end && *q == '=' ? (size_t)(q - p) : 0;
}

/* In Reason=text [user@time], where the "[user@time]" stamp ends; NULL when the
 * value has none before the next line end. */
static const char *stamp_end(const char *v, const char *end)
{
    for (const char *b = v; b < end; b++) {
        if (*b != '[' || (b > v && b[-1] != ' ')) continue;
        const char *at = NULL, *q = b + 1;
        for (; q < end && *q != ']' && *q != '[' && *q != ' '; q++)
            if (*q == '@') at = q;
        if (q < end && *q == ']' && at && (q + 1 == end || q[1] == ' ')) return q + 1;
    }
    return NULL;
}

/* Splits one line into fields; returns the count (at most max). */
static int kv_split(const char *p, const char *end, struct kv *kv, int max)
{
    int n = 0;
    while (p < end && n < max) {
        while (p < end && *p == ' ') p++;
        size_t kl = key_len_at(p, end);
        if (!kl) {                       /* not a field: skip the word */
            while (p < end && *p != ' ') p++;
            continue;
        }
        const char *v = p + kl + 1, *ve = NULL;
        if (kl == 6 && !memcmp(p, "Reason", 6)) ve = stamp_end(v, end);
        if (!ve)
            for (ve = v; ve < end; ve++)
                if (*ve == ' ' && key_len_at(ve + 1, end)) break;
        const char *vt = ve;
        while (vt > v && vt[-1] == ' ') vt--;
        kv[n++] = (struct kv){ p, v, kl, (size_t)(vt - v) };
        p = ve;
    }
    return n;
}

static const struct kv *kv_find(const struct kv *kv, int n, const char *key)
{
    size_t kl = strlen(key);
    for (int i = 0; i < n; i++)
        if (kv[i].klen == kl && !memcmp(kv[i].key, key, kl)) return &kv[i];
    return NULL;
}

/* Copies the value of key into buf; "(null)" and absent give "". */
static void kv_copy(const struct kv *kv, int n, const char *key, char *buf, size_t size)
{
    const struct kv *f = kv_find(kv, n, key);
    buf[0] = 0;
    if (!f || (f->vlen == 6 && !memcmp(f->val, "(null)", 6))) return;
    size_t l = f->vlen < size - 1 ? f->vlen : size - 1;
    memcpy(buf, f->val, l);
    buf[l] = 0;
}

/* Drops the " [user@time]" stamp scontrol appends to a reason. */
static void strip_stamp(char *r)
{
    char *b = strrchr(r, '[');
    if (b && strchr(b, '@') && vg_endswith(b, "]")) {
        while (b > r && b[-1] == ' ') b--;
        *b = 0;
    }
}

#define KV_MAX 96

int vg_slurm_parse_nodes(const char *text, struct vg_node_state **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    size_t cap = 0;
    struct kv kv[KV_MAX];
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        if (!e) e = p + strlen(p);
        int k = kv_split(p, e, kv, KV_MAX);
        const struct kv *name = kv_find(kv, k, "NodeName");
        p = *e ? e + 1 : e;
        if (!name || !name->vlen) continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            *out = vg_xrealloc(*out, cap * sizeof **out);
        }
        struct vg_node_state *s = &(*out)[(*n)++];
        memset(s, 0, sizeof *s);
        kv_copy(kv, k, "NodeName", s->name, sizeof s->name);
        kv_copy(kv, k, "State", s->state, sizeof s->state);
        kv_copy(kv, k, "Reason", s->reason, sizeof s->reason);
        strip_stamp(s->reason);
        kv_copy(kv, k, "Partitions", s->partitions, sizeof s->partitions);
        kv_copy(kv, k, "AvailableFeatures", s->features, sizeof s->features);
        kv_copy(kv, k, "NodeAddr", s->addr, sizeof s->addr);
        char port[16];
        long pv = 0;
        kv_copy(kv, k, "Port", port, sizeof port);
        s->port = vg_parse_long(port, &pv) && pv > 0 && pv < 65536 ? (int)pv : 0;
        s->drain = strstr(s->state, "DRAIN") != NULL;
        s->down = vg_startswith(s->state, "DOWN");
        s->responding = strstr(s->state, "NOT_RESPONDING") == NULL;
    }
    return 0;
}

/* "2026-12-02T05:30:41" in the local time zone (how slurmctld prints
 * times) to ms since the epoch; 0 for "Unknown", "None" or anything else. */
static int64_t local_time_ms(const char *s)
{
    struct tm tm = { 0 };
    const char *end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!end || *end) return 0;
    tm.tm_isdst = -1;
    time_t t = mktime(&tm);
    return t > 0 ? (int64_t)t * 1000 : 0;
}

int vg_slurm_parse_job(const char *text, struct vg_job_state *out)
{
    memset(out, 0, sizeof *out);
    struct kv kv[KV_MAX];
    const char *e = strchr(text, '\n');
    if (!e) e = text + strlen(text);
    int k = kv_split(text, e, kv, KV_MAX);
    char buf[32];
    kv_copy(kv, k, "JobId", buf, sizeof buf);
    if (!vg_parse_long(buf, &out->id) || out->id <= 0) return -1;
    kv_copy(kv, k, "JobName", out->name, sizeof out->name);
    kv_copy(kv, k, "JobState", out->state, sizeof out->state);
    kv_copy(kv, k, "Reason", out->reason, sizeof out->reason);
    kv_copy(kv, k, "NodeList", out->nodelist, sizeof out->nodelist);
    kv_copy(kv, k, "BatchHost", out->batch_host, sizeof out->batch_host);
    kv_copy(kv, k, "Comment", out->comment, sizeof out->comment);
    kv_copy(kv, k, "Restarts", buf, sizeof buf);
    long r = 0;
    out->restarts = vg_parse_long(buf, &r) && r >= 0 && r < 1000000 ? (int)r : 0;
    kv_copy(kv, k, "StartTime", buf, sizeof buf);
    out->start_ms = local_time_ms(buf);
    kv_copy(kv, k, "EndTime", buf, sizeof buf);
    out->end_ms = local_time_ms(buf);
    return 0;
}

/* Whether a job's node list (a host list expression) names any of nodes. */
static bool on_any(const struct kv *list, const char *const *nodes, size_t n)
{
    if (!list || !list->vlen || (list->vlen == 6 && !memcmp(list->val, "(null)", 6))) return false;
    char *expr = vg_xstrndup(list->val, list->vlen), **names;
    int k = vg_hostlist_expand(expr, &names, 1000000);
    free(expr);
    bool hit = false;
    for (int i = 0; i < k; i++) {
        for (size_t j = 0; j < n && !hit; j++) hit = !strcmp(names[i], nodes[j]);
        free(names[i]);
    }
    if (k > 0) free(names);
    return hit;
}

/* Whether a job line counts as on its nodes now.  Read after the DOWN, which
 * requeued the running jobs that may be requeued (they show PENDING, their
 * nodes gone): running or completing (kept by --no-kill), ended NODE_FAIL
 * (the DOWN ended it: one that may not be requeued, its requeue refused and
 * reported), or ended FAILED and requeueable (the fault killed its batch
 * script a moment before the DOWN), each within VG_SLURM_RECENT_END_MS before
 * out_ms, when the node went out. */
static bool current(const struct kv *kv, int k, const char *st, int64_t out_ms)
{
    char buf[32];
    if (!strcmp(st, "RUNNING") || !strcmp(st, "COMPLETING")) return true;
    if (strcmp(st, "FAILED") && strcmp(st, "NODE_FAIL")) return false;
    kv_copy(kv, k, "Requeue", buf, sizeof buf);
    if (strcmp(st, "NODE_FAIL") && strcmp(buf, "1")) return false;
    kv_copy(kv, k, "EndTime", buf, sizeof buf);
    int64_t end = local_time_ms(buf);
    return end > 0 && end <= out_ms + 1000 && out_ms - end <= VG_SLURM_RECENT_END_MS;
}

/* Whether the job's EndTime is a moment that has passed by when the nodes went
 * out (out_ms; 0: unknown), to the second: not the expected end of a next run. */
static bool ended_by(const struct kv *kv, int k, int64_t out_ms)
{
    char buf[32];
    kv_copy(kv, k, "EndTime", buf, sizeof buf);
    int64_t end = local_time_ms(buf);
    return out_ms > 0 && end > 0 && end <= out_ms + 1000;
}

/* A --no-kill job that lost a node when the nodes went out: the DOWN takes
 * the node out of the job's NodeList and stamps ResizeTime (to the second)
 * in the same request, so nothing else in the record names the node.  A
 * shrink during that request (which ended at out_ms) or after it (a read
 * retried later) is the scheduler's word that the allocation held a node that
 * went out; an agent's list alone is not (any node could name any job). */
static bool shrunk_since(const struct kv *kv, int k, int64_t out_ms)
{
    char buf[32];
    kv_copy(kv, k, "ResizeTime", buf, sizeof buf);
    int64_t at = local_time_ms(buf);
    /* out_ms is taken when the DOWN's request returned: the shrink came during
     * that request, which may take up to the command's 10 s timeout */
    return at > 0 && at >= out_ms - 10000;
}

int vg_slurm_parse_jobs_on(const char *text, const char *const *nodes, size_t n, const char *known, int64_t out_ms,
                           struct vg_job_brief **jobs, size_t *njobs)
{
    *jobs = NULL;
    *njobs = 0;
    struct kv kv[KV_MAX];
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        if (!e) e = p + strlen(p);
        const char *line = p;
        p = *e ? e + 1 : e;
        if (strncmp(line, "JobId=", 6)) continue;   /* "No jobs in the system", a blank line */
        int k = kv_split(line, e, kv, KV_MAX);
        char buf[32];
        long id;
        kv_copy(kv, k, "JobId", buf, sizeof buf);
        if (!vg_parse_long(buf, &id) || id <= 0) {
            free(*jobs);
            *jobs = NULL;
            *njobs = 0;
            return -1;
        }
        struct vg_job_brief b = { .id = id };
        char st[32];
        kv_copy(kv, k, "JobState", st, sizeof st);
        kv_copy(kv, k, "Comment", b.comment, sizeof b.comment);
        kv_copy(kv, k, "BatchHost", b.batch_host, sizeof b.batch_host);
        /* a --no-kill job no longer shows the node the DOWN took from it: the batch host
         * still does, and the node's agent named the others (told only, below, and only
         * when the scheduler's record shows it lost a node then).  A completing job that
         * the DOWN requeued keeps the lost node as its BatchHost until it is pending again
         * (its EndTime is then its next run's, ahead): it is on the node only by its
         * NodeList.  One that ended there (its batch script failed as the fault hit; its
         * EndTime is past, by the DOWN at the latest) is on its batch host, to requeue. */
        bool on = on_any(kv_find(kv, k, "NodeList"), nodes, n) ||
                  ((strcmp(st, "COMPLETING") || ended_by(kv, k, out_ms)) && on_any(kv_find(kv, k, "BatchHost"), nodes, n));
        bool kept = !strcmp(st, "RUNNING") && vg_startswith(b.comment, VG_INALLOC_COMMENT) &&
                    vg_event_jobs_has(known, id) && (on || shrunk_since(kv, k, out_ms));
        long restarts = 0;
        kv_copy(kv, k, "Restarts", buf, sizeof buf);
        /* requeued: pending again, or still completing on the nodes it kept (a job of
         * several nodes, the moment after the DOWN), its restart counted */
        b.requeued = (!strcmp(st, "PENDING") || (!strcmp(st, "COMPLETING") && !on)) &&
                     vg_parse_long(buf, &restarts) && restarts > 0 && vg_event_jobs_has(known, id);
        if (!(current(kv, k, st, out_ms) && on) && !kept && !b.requeued) continue;
        size_t i = 0;
        while (i < *njobs && (*jobs)[i].id != id) i++;
        if (i < *njobs) continue;
        *jobs = vg_xrealloc(*jobs, (*njobs + 1) * sizeof **jobs);
        (*jobs)[(*njobs)++] = b;
    }
    return 0;
}

/* ---- running the commands ---------------------------------------------- */

static int fail(struct vg_slurm *s, const char *fmt, const char *a, const char *b)
{
    snprintf(s->err, sizeof s->err, fmt, a, b);
    char *nl = strchr(s->err, '\n');
    if (nl) *nl = 0;
    return -1;
}

/* Runs one Slurm command, whatever its outcome, into *r. */
static void spawn(struct vg_slurm *s, const char *const argv[], struct vg_spawn_result *r)
{
    char confenv[4096];
    const char *env[2] = { NULL, NULL };
    if (s->conf && *s->conf) {
        snprintf(confenv, sizeof confenv, "SLURM_CONF=%s", s->conf);
        env[0] = confenv;
    }
    s->calls++;
    s->err[0] = 0;
    vg_spawn(argv, env, NULL, s->timeout_ms > 0 ? s->timeout_ms : 10000, r);
}

/* Runs one Slurm command; on success *r holds its output (free it). */
static int run(struct vg_slurm *s, const char *const argv[], struct vg_spawn_result *r)
{
    spawn(s, argv, r);
    if (r->status == 0 && !r->timed_out) return 0;
    char *cmd = vg_argv_str(argv);
    if (r->timed_out) fail(s, "%s: timed out%s", cmd, "");
    else fail(s, "%s: %s", cmd, *vg_trim(r->err) ? vg_trim(r->err) : *vg_trim(r->out) ? vg_trim(r->out) : "failed");
    free(cmd);
    vg_spawn_result_free(r);
    return -1;
}

/* A command whose output is not needed: run, then let its output go. */
static int run_only(struct vg_slurm *s, const char *const argv[])
{
    struct vg_spawn_result r;
    int rc = run(s, argv, &r);
    if (!rc) vg_spawn_result_free(&r);
    return rc;
}

/* Node names are passed inside one argv word; refuse anything that could be
 * read as another field or list ("a State=idle", spaces, quotes) or as an
 * option ("--help": every operand also follows a "--"). */
static bool valid_chars(const char *n)
{
    for (const char *p = n; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("-_.[],", *p)) return false;
    return *n != 0 && *n != '-';
}

static bool valid_name(const char *n) { return strlen(n) < 64 && valid_chars(n); }

/* 0 when every name is one Slurm takes, else -1 naming the first that is not. */
static int check_nodes(struct vg_slurm *s, const char *const *nodes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!nodes[i] || !valid_name(nodes[i]))
            return fail(s, "invalid node name '%s'%s", nodes[i] ? nodes[i] : "(null)", "");
    return 0;
}

/* "prefix" followed by the names joined with commas; NULL (err set) when a name is bad. */
static char *join_nodes(struct vg_slurm *s, const char *prefix, const char *const *nodes, size_t n)
{
    if (check_nodes(s, nodes, n)) return NULL;
    struct sbuf b = SBUF_INIT;
    sbuf_puts(&b, prefix);
    for (size_t i = 0; i < n; i++) sbuf_printf(&b, "%s%s", i ? "," : "", nodes[i]);
    return sbuf_take(&b);
}

int vg_slurm_nodes(struct vg_slurm *s, const char *nodelist, struct vg_node_state **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (nodelist && !valid_chars(nodelist)) return fail(s, "invalid node list '%.64s'%s", nodelist, "");
    const char *argv[] = { "scontrol", "show", "node", "-o", nodelist ? "--" : NULL, nodelist, NULL };
    struct vg_spawn_result r;
    if (run(s, argv, &r)) return -1;
    vg_slurm_parse_nodes(r.out, out, n);
    vg_spawn_result_free(&r);
    return 0;
}

int vg_slurm_set_state(struct vg_slurm *s, const char *const *nodes, size_t n, const char *state,
                       const char *reason)
{
    if (!n) return 0;
    if (!state || !*state || strchr(state, ' ') || strchr(state, '='))
        return fail(s, "invalid node state '%s'%s", state ? state : "(null)", "");
    bool needs_reason = !strcasecmp(state, "drain") || !strcasecmp(state, "down") ||
                        !strcasecmp(state, "fail");
    if (needs_reason && (!reason || !vg_startswith(reason, VG_REASON_PREFIX)))
        return fail(s, "state %s needs a reason starting with '%s'", state, VG_REASON_PREFIX);
    if (reason && strchr(reason, '\n')) return fail(s, "reason holds a newline%s%s", "", "");
    char *names = join_nodes(s, "NodeName=", nodes, n);
    if (!names) return -1;
    char st[64], *rs = NULL;
    snprintf(st, sizeof st, "State=%s", state);
    if (reason) {
        rs = vg_xmalloc(strlen(reason) + 8);
        sprintf(rs, "Reason=%s", reason);
    }
    const char *argv[] = { "scontrol", "update", "--", names, st, rs, NULL };
    int rc = run_only(s, argv);
    free(names);
    free(rs);
    return rc;
}

int vg_slurm_jobs_on(struct vg_slurm *s, const char *const *nodes, size_t n, const char *known, int64_t out_ms,
                     struct vg_job_brief **jobs, size_t *njobs)
{
    *jobs = NULL;
    *njobs = 0;
    if (!n) return 0;
    if (check_nodes(s, nodes, n)) return -1;   /* the names checked, as for every command */
    /* every job, filtered here: one RPC (REQUEST_JOB_INFO), where `squeue -w`
     * costs three (it reads the nodes and partitions too) and filters the
     * same full job list on its own side */
    const char *argv[] = { "scontrol", "show", "job", "-o", NULL };
    struct vg_spawn_result r;
    if (run(s, argv, &r)) return -1;
    int rc = vg_slurm_parse_jobs_on(r.out, nodes, n, known, out_ms ? out_ms : vg_now_ms(), jobs, njobs);
    if (rc) fail(s, "scontrol show job: unexpected output '%.80s'%s", r.out, "");
    vg_spawn_result_free(&r);
    return rc;
}

bool vg_slurm_requeue_refused(const char *err, char *out, size_t n)
{
    struct sbuf b = SBUF_INIT;
    for (const char *p = err; *p;) {
        const char *e = strchr(p, '\n');
        if (!e) e = p + strlen(p);
        size_t len = (size_t)(e - p);
        static const char pending[] = "Job is pending execution for job ";
        bool benign = len > sizeof pending - 1 && !strncmp(p, pending, sizeof pending - 1);
        if (len && !benign) sbuf_printf(&b, "%s%.*s", b.len ? "; " : "", (int)len, p);
        p = *e ? e + 1 : e;
    }
    bool refused = b.len > 0;
    snprintf(out, n, "%s", refused ? b.s : "");
    sbuf_free(&b);
    return refused;
}

int vg_slurm_requeue(struct vg_slurm *s, const long *jobs, size_t n)
{
    if (!n) return 0;
    struct sbuf b = SBUF_INIT;
    for (size_t i = 0; i < n; i++) sbuf_printf(&b, "%s%ld", i ? "," : "", jobs[i]);
    const char *argv[] = { "scontrol", "requeue", "--", b.s, NULL };
    struct vg_spawn_result r;
    spawn(s, argv, &r);
    char why[sizeof s->err - 64];
    int rc = 0;
    if (r.timed_out) rc = fail(s, "scontrol requeue %s: timed out%s", b.s, "");
    else if (r.status && (vg_slurm_requeue_refused(r.err ? r.err : "", why, sizeof why) || !r.err || !*vg_trim(r.err)))
        rc = fail(s, "scontrol requeue: %s%s", why[0] ? why : "failed", "");
    vg_spawn_result_free(&r);
    sbuf_free(&b);
    return rc;
}

int vg_slurm_job(struct vg_slurm *s, long id, struct vg_job_state *out)
{
    memset(out, 0, sizeof *out);
    char ids[32];
    snprintf(ids, sizeof ids, "%ld", id);
    const char *argv[] = { "scontrol", "show", "job", "-o", "--", ids, NULL };
    struct vg_spawn_result r;
    if (run(s, argv, &r)) return -1;
    int rc = vg_slurm_parse_job(r.out, out);
    if (rc) fail(s, "scontrol show job %s: unexpected output%s", ids, "");
    vg_spawn_result_free(&r);
    return rc;
}

/* ---- reservations (the hot-spare pool) ---------------------------------- */

int vg_slurm_reservation_nodes(struct vg_slurm *s, const char *name, char ***nodes, size_t *n)
{
    *nodes = NULL;
    *n = 0;
    if (!valid_name(name)) return fail(s, "invalid reservation name '%s'%s", name, "");
    const char *argv[] = { "scontrol", "show", "reservation", "-o", "--", name, NULL };
    struct vg_spawn_result r;
    if (run(s, argv, &r)) return strstr(s->err, "not found") ? (s->err[0] = 0, 1) : -1;
    int rc = 1;
    const char *p = strstr(r.out, " Nodes=");
    if (p) {
        p += 7;
        size_t len = strcspn(p, " \n");
        char *list = vg_xstrndup(p, len);
        int cnt = strcmp(list, "(null)") ? vg_hostlist_expand(list, nodes, 100000) : 0;
        free(list);
        if (cnt < 0) rc = fail(s, "reservation %s: unexpected node list%s", name, "");
        else {
            *n = (size_t)cnt;
            rc = 0;
        }
    }
    vg_spawn_result_free(&r);
    return rc;
}

/* ---- jobs ------------------------------------------------------------------ */

int vg_slurm_submit(struct vg_slurm *s, const char *const *opts, size_t nopts, const char *script, long *jobid)
{
    *jobid = 0;
    if (!script || !*script || nopts > 32) return fail(s, "sbatch: no script or too many options%s%s", "", "");
    const char *argv[37];   /* sbatch --parsable, the options, --, the script, NULL */
    size_t a = 0;
    argv[a++] = "sbatch";
    argv[a++] = "--parsable";
    for (size_t i = 0; i < nopts; i++) argv[a++] = opts[i];
    argv[a++] = "--";
    argv[a++] = script;
    argv[a] = NULL;
    struct vg_spawn_result r;
    if (run(s, argv, &r)) return -1;
    /* "123" or "123;cluster" */
    char *semi = strchr(r.out, ';');
    if (semi) *semi = 0;
    int rc = vg_parse_long(vg_trim(r.out), jobid) && *jobid > 0 ? 0
             : fail(s, "sbatch: unexpected output '%.80s'%s", r.out, "");
    vg_spawn_result_free(&r);
    return rc;
}

int vg_slurm_reservation_set(struct vg_slurm *s, const char *name, const char *const *nodes, size_t n, bool exists)
{
    if (!valid_name(name)) return fail(s, "invalid reservation name '%s'%s", name, "");
    char rn[96];
    snprintf(rn, sizeof rn, "ReservationName=%s", name);
    int rc;
    if (!n) {
        if (!exists) return 0;
        const char *argv[] = { "scontrol", "delete", "--", rn, NULL };
        rc = run_only(s, argv);
    } else {
        char *list = join_nodes(s, "Nodes=", nodes, n);
        if (!list) return -1;
        if (exists) {
            const char *argv[] = { "scontrol", "update", "--", rn, list, NULL };
            rc = run_only(s, argv);
        } else {
            const char *argv[] = { "scontrol", "create", "reservation", "--", rn, list, "Users=root", "StartTime=now",
                                   "Duration=infinite", "Flags=IGNORE_JOBS", NULL };
            rc = run_only(s, argv);
        }
        free(list);
    }
    return rc;
}

int vg_slurm_show_config(struct vg_slurm *s, struct vg_slurm_kv **kv, size_t *n)
{
    const char *argv[] = { "scontrol", "show", "config", NULL };
    struct vg_spawn_result r;
    if (run(s, argv, &r)) return -1;
    int rc = vg_slurm_parse_config(r.out, kv, n);
    if (rc) fail(s, "scontrol show config: unexpected output%s%s", "", "");
    vg_spawn_result_free(&r);
    return rc;
}

int vg_slurm_cancel(struct vg_slurm *s, long id)
{
    char ids[32];
    snprintf(ids, sizeof ids, "%ld", id);
    const char *argv[] = { "scancel", "--", ids, NULL };
    int rc = run_only(s, argv);
    return rc;
}

int vg_slurm_signal_batch(struct vg_slurm *s, long id, const char *sig)
{
    char ids[32], sg[48];
    snprintf(ids, sizeof ids, "%ld", id);
    snprintf(sg, sizeof sg, "--signal=%s", sig);
    const char *argv[] = { "scancel", "--batch", sg, "--", ids, NULL };
    int rc = run_only(s, argv);
    return rc;
}

int vg_slurm_set_comment(struct vg_slurm *s, long id, const char *text)
{
    if (strpbrk(text, " \t\n\"'")) return fail(s, "a job comment without blanks or quotes: '%.64s'%s", text, "");
    char ids[48], c[160];
    snprintf(ids, sizeof ids, "JobId=%ld", id);
    snprintf(c, sizeof c, "Comment=%s", text);
    const char *argv[] = { "scontrol", "update", "--", ids, c, NULL };
    int rc = run_only(s, argv);
    return rc;
}

/* ---- sdiag ----------------------------------------------------------------- */

/* "\tNAME  ( ID) count:N ..." → one entry; false for another line. */
static bool sdiag_row(const char *line, char *name, size_t n, long *id, long *count)
{
    while (*line == '\t' || *line == ' ') line++;
    const char *paren = strchr(line, '('), *cnt = strstr(line, "count:");
    if (!paren || !cnt || cnt < paren) return false;
    size_t l = (size_t)(paren - line);
    while (l && line[l - 1] == ' ') l--;
    if (!l || l >= n) return false;
    memcpy(name, line, l);
    name[l] = 0;
    char *end;
    *id = strtol(paren + 1, &end, 10);
    if (end == paren + 1) return false;
    *count = strtol(cnt + 6, &end, 10);
    return end != cnt + 6 && *count >= 0;
}

int vg_slurm_parse_sdiag(const char *text, struct vg_sdiag *d)
{
    memset(d, 0, sizeof *d);
    enum { NONE, USERS, TYPES } sec = NONE;
    bool seen = false;
    char *copy = vg_xstrdup(text), *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        const char *paren = strrchr(line, '(');
        long long v;
        if (vg_startswith(line, "sdiag output at") && paren && sscanf(paren, "(%lld)", &v) == 1) d->at = v, seen = true;
        else if (vg_startswith(line, "Data since") && paren && sscanf(paren, "(%lld)", &v) == 1) d->since = v;
        else if (vg_startswith(line, "Remote Procedure Call statistics by user")) sec = USERS;
        else if (vg_startswith(line, "Remote Procedure Call statistics by message type")) sec = TYPES;
        else if (line[0] != '\t' && line[0] != ' ') sec = NONE;
        else if (sec != NONE) {
            char name[48];
            long id, count;
            if (!sdiag_row(line, name, sizeof name, &id, &count)) continue;
            size_t *nn = sec == USERS ? &d->nusers : &d->ntypes;
            if (*nn >= VG_SDIAG_MAX) continue;
            struct vg_sdiag_row *row = sec == USERS ? &d->users[*nn] : &d->types[*nn];
            vg_strlcpy(row->name, name, sizeof row->name);
            row->id = id;
            row->count = count;
            ++*nn;
        }
    }
    free(copy);
    return seen ? 0 : -1;
}

int vg_slurm_sdiag(struct vg_slurm *s, struct vg_sdiag *d)
{
    const char *argv[] = { "sdiag", NULL };
    struct vg_spawn_result r;
    if (run(s, argv, &r)) return -1;
    int rc = vg_slurm_parse_sdiag(r.out, d);
    if (rc) fail(s, "sdiag: unexpected output%s%s", "", "");
    vg_spawn_result_free(&r);
    return rc;
}
