/* sec_slurm.c — Slurm security and recovery-speed checks: PrivateData, the
 * permissions of slurm.conf, slurmdbd.conf, the munge key and the JWT key,
 * health check, requeue and return-to-service settings, prolog/epilog, cgroup
 * confinement of devices, and the settings that decide how many seconds a
 * requeued job waits (cred_expire, sched_interval/bf_interval, SlurmdTimeout/
 * MessageTimeout), with the figures measured on a real Slurm 22.05 lab. */
#include "security/security.h"
#include "util/sbuf.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *get(struct vg_sec_ctx *c, const char *key)
{
    const char *v = vg_slurm_kv_get(c->slurm, c->nslurm, key);
    return v && *v ? v : NULL;
}

/* Emits "unknown" and returns false when no Slurm configuration is readable. */
static bool need_conf(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    if (vg_sec_slurm_conf(c)) return true;
    vg_sec_emit(c, k, VG_SEC_UNKNOWN, c->slurm_err, "could not check: no Slurm configuration readable");
    return false;
}

/* Leading integer of "10 sec", "300"; def when absent or not a number. */
static long num(const char *v, long def)
{
    if (!v) return def;
    char *end;
    long n = strtol(v, &end, 10);
    return end == v ? def : n;
}

static bool has_word(const char *list, const char *word)
{
    char buf[8];
    return vg_slurm_param(list, word, buf, sizeof buf);
}

static void ev(char *buf, size_t n, struct vg_sec_ctx *c, const char *key)
{
    const char *v = get(c, key);
    snprintf(buf, n, "%s: %s=%s", c->slurm_source, key, v ? v : "(unset)");
}

static void private_data(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    if (!need_conf(c, k)) return;
    const char *pd = get(c, "PrivateData");
    char e[700], missing[128] = "";
    ev(e, sizeof e, c, "PrivateData");
    static const char *const need[] = { "jobs", "usage", "users" };
    for (size_t i = 0; i < 3; i++)
        if (!pd || !has_word(pd, need[i]))
            snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%s", *missing ? "," : "", need[i]);
    if (*missing)
        vg_sec_emit(c, k, VG_SEC_FAIL, e, "PrivateData lacks %s: a tenant can list other tenants' %s", missing,
                    pd ? "jobs/usage/users not hidden" : "jobs, usage and users");
    else
        vg_sec_emit(c, k, VG_SEC_PASS, e, "other tenants' jobs, usage and users are hidden%s",
                    has_word(pd, "nodes") ? "" : " (node details stay visible)");
}

/* A configuration file that holds no secret: not writable by group/other,
 * owned by root or SlurmUser. */
static void conf_perms(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    vg_sec_slurm_conf(c);
    const char *path = c->slurm_conf_path;
    struct stat st;
    char e[800], mode[16], user[64], group[64];
    if (vg_sec_stat(c, path, &st)) {
        snprintf(e, sizeof e, "%s: %s", path, strerror(errno));
        vg_sec_emit(c, k, VG_SEC_UNKNOWN, e, "could not check: %s", strerror(errno));
        return;
    }
    vg_sec_mode_str(&st, mode, sizeof mode);
    vg_sec_user_name(c, st.st_uid, user, sizeof user);
    vg_sec_group_name(c, st.st_gid, group, sizeof group);
    snprintf(e, sizeof e, "%s: %s %s:%s", path, mode, user, group);
    const char *su = get(c, "SlurmUser") ? get(c, "SlurmUser") : "slurm";
    if (st.st_mode & 022) vg_sec_emit(c, k, VG_SEC_FAIL, e, "slurm.conf is writable by %s", st.st_mode & 2 ? "everyone" : "its group");
    else if (strcmp(user, "root") && strcmp(user, su)) vg_sec_emit(c, k, VG_SEC_FAIL, e, "slurm.conf is owned by %s, not root or %s", user, su);
    else vg_sec_emit(c, k, VG_SEC_PASS, e, "slurm.conf is %s, owned by %s", mode, user);
}

/* A secret: no access for group/other, owned by owner. */
static void secret_file(struct vg_sec_ctx *c, const struct vg_sec_check *k, const char *path, const char *owner,
                        const char *what)
{
    struct stat st;
    char e[800], mode[16], user[64], group[64];
    if (vg_sec_stat(c, path, &st)) {
        int err = errno;
        snprintf(e, sizeof e, "%s: %s", path, strerror(err));
        vg_sec_emit(c, k, VG_SEC_UNKNOWN, e, "could not check %s: %s", what,
                    err == ENOENT ? "not on this node" : strerror(err));
        return;
    }
    vg_sec_mode_str(&st, mode, sizeof mode);
    vg_sec_user_name(c, st.st_uid, user, sizeof user);
    vg_sec_group_name(c, st.st_gid, group, sizeof group);
    snprintf(e, sizeof e, "%s: %s %s:%s", path, mode, user, group);
    if (st.st_mode & 077)
        vg_sec_emit(c, k, VG_SEC_FAIL, e, "%s is readable by %s (mode %s)", what, st.st_mode & 07 ? "everyone" : "its group", mode);
    else if (strcmp(user, owner))
        vg_sec_emit(c, k, VG_SEC_FAIL, e, "%s is owned by %s, not %s", what, user, owner);
    else vg_sec_emit(c, k, VG_SEC_PASS, e, "%s is %s, owned by %s", what, mode, owner);
}

static char *sibling(const char *conf_path, const char *name)
{
    const char *slash = strrchr(conf_path, '/');
    size_t dl = slash ? (size_t)(slash - conf_path) : 0;
    char *p = vg_xmalloc(dl + strlen(name) + 2);
    sprintf(p, "%.*s/%s", (int)dl, conf_path, name);
    return p;
}

static void dbd_perms(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    vg_sec_slurm_conf(c);
    char *p = sibling(c->slurm_conf_path, "slurmdbd.conf");
    secret_file(c, k, p, get(c, "SlurmUser") ? get(c, "SlurmUser") : "slurm", "slurmdbd.conf");
    free(p);
}

static void munge_key(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    secret_file(c, k, "/etc/munge/munge.key", "munge", "the munge key");
}

static void jwt_key(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    if (!need_conf(c, k)) return;
    const char *alt = get(c, "AuthAltTypes");
    char e[700], path[512];
    ev(e, sizeof e, c, "AuthAltTypes");
    if (!alt || !strstr(alt, "auth/jwt")) {
        vg_sec_emit(c, k, VG_SEC_PASS, e, "no JWT authentication configured");
        return;
    }
    if (!vg_slurm_param(get(c, "AuthAltParameters"), "jwt_key", path, sizeof path) || !*path) {
        ev(e, sizeof e, c, "AuthAltParameters");
        vg_sec_emit(c, k, VG_SEC_UNKNOWN, e, "could not check: auth/jwt without jwt_key= in AuthAltParameters");
        return;
    }
    secret_file(c, k, path, get(c, "SlurmUser") ? get(c, "SlurmUser") : "slurm", "the JWT key");
}

static void health_check(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    if (!need_conf(c, k)) return;
    const char *prog = get(c, "HealthCheckProgram");
    long iv = num(get(c, "HealthCheckInterval"), 0);
    char e[800];
    snprintf(e, sizeof e, "%s: HealthCheckProgram=%s HealthCheckInterval=%ld", c->slurm_source, prog ? prog : "(unset)", iv);
    if (!prog || iv <= 0)
        vg_sec_emit(c, k, VG_SEC_FAIL, e, "%s: a failed GPU is never checked between jobs",
                    !prog ? "no HealthCheckProgram" : "HealthCheckInterval is 0");
    else if (iv > 300)
        vg_sec_emit(c, k, VG_SEC_WARN, e, "health check every %ld s: a fault can wait that long to be seen (providers use <= 300 s)", iv);
    else vg_sec_emit(c, k, VG_SEC_PASS, e, "health check every %ld s", iv);
}

static void job_requeue(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    if (!need_conf(c, k)) return;
    char e[700];
    ev(e, sizeof e, c, "JobRequeue");
    if (num(get(c, "JobRequeue"), 1) == 0)
        vg_sec_emit(c, k, VG_SEC_FAIL, e, "JobRequeue=0: batch jobs on a failed node end NODE_FAIL instead of running again");
    else vg_sec_emit(c, k, VG_SEC_PASS, e, "batch jobs on a failed node are requeued");
}

static void return_to_service(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    if (!need_conf(c, k)) return;
    char e[700];
    ev(e, sizeof e, c, "ReturnToService");
    long r = num(get(c, "ReturnToService"), 0);
    if (r == 1) vg_sec_emit(c, k, VG_SEC_PASS, e, "a node DOWN for not responding returns by itself; an admin/health-check DOWN stays");
    else if (r == 2)
        vg_sec_emit(c, k, VG_SEC_WARN, e, "ReturnToService=2: a node set DOWN returns as soon as its slurmd registers (lab: 15 ms), undoing a health check's verdict");
    else vg_sec_emit(c, k, VG_SEC_WARN, e, "ReturnToService=0: every node that stops responding stays DOWN until an admin resumes it");
}

static void prolog_epilog(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    if (!need_conf(c, k)) return;
    const char *p = get(c, "Prolog"), *ep = get(c, "Epilog");
    char e[900];
    snprintf(e, sizeof e, "%s: Prolog=%s Epilog=%s", c->slurm_source, p ? p : "(unset)", ep ? ep : "(unset)");
    if (p && ep) vg_sec_emit(c, k, VG_SEC_PASS, e, "prolog and epilog configured");
    else vg_sec_emit(c, k, VG_SEC_WARN, e, "no %s: nodes are not checked/cleaned %s jobs", p ? "Epilog" : ep ? "Prolog" : "Prolog or Epilog",
                     p ? "after" : ep ? "before" : "around");
}

static void task_cgroup(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    if (!need_conf(c, k)) return;
    char e[700];
    ev(e, sizeof e, c, "TaskPlugin");
    const char *tp = get(c, "TaskPlugin");
    if (tp && strstr(tp, "task/cgroup")) vg_sec_emit(c, k, VG_SEC_PASS, e, "jobs are confined by task/cgroup");
    else vg_sec_emit(c, k, VG_SEC_FAIL, e, "TaskPlugin has no task/cgroup: a job can use every GPU and CPU of its node");
}

static void constrain_devices(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    if (!need_conf(c, k)) return;
    char e[800];
    const char *v = get(c, "ConstrainDevices");   /* show config prints cgroup.conf too */
    char *text = NULL;
    struct vg_slurm_kv *kv = NULL;
    size_t n = 0;
    if (v) snprintf(e, sizeof e, "%s: ConstrainDevices=%s", c->slurm_source, v);
    else {
        char *p = sibling(c->slurm_conf_path, "cgroup.conf");
        if (vg_read_file(c->root, p, 1u << 20, &text, NULL)) {
            int err = errno;
            snprintf(e, sizeof e, "%s: %s", p, strerror(err));
            free(p);
            if (err != ENOENT) {
                vg_sec_emit(c, k, VG_SEC_UNKNOWN, e, "could not check cgroup.conf: %s", strerror(err));
                return;
            }
        } else {
            vg_slurm_parse_conf_file(text, &kv, &n);
            v = vg_slurm_kv_get(kv, n, "ConstrainDevices");
            snprintf(e, sizeof e, "%s: ConstrainDevices=%s", p, v ? v : "(unset)");
            free(p);
        }
    }
    const char *tp = get(c, "TaskPlugin");
    bool cg = tp && strstr(tp, "task/cgroup");
    if (v && !strcasecmp(v, "yes") && cg) vg_sec_emit(c, k, VG_SEC_PASS, e, "jobs see only the GPUs they were allocated");
    else if (v && !strcasecmp(v, "yes"))
        vg_sec_emit(c, k, VG_SEC_FAIL, e, "ConstrainDevices=yes has no effect without task/cgroup: jobs can open every GPU");
    else vg_sec_emit(c, k, VG_SEC_FAIL, e, "devices are not constrained: a job can open other jobs' GPUs");
    vg_slurm_kv_free(kv, n);
    free(text);
}

/* cred_expire below 5 is rejected by Slurm, which then uses 120. */
static long cred_expire(struct vg_sec_ctx *c)
{
    char buf[32];
    long ce = 120;
    if (vg_slurm_param(get(c, "AuthInfo"), "cred_expire", buf, sizeof buf) && vg_parse_long(buf, &ce) && ce < 5) ce = 120;
    return ce;
}

static void cred_expire_check(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    if (!need_conf(c, k)) return;
    char e[700];
    ev(e, sizeof e, c, "AuthInfo");
    long hold = cred_expire(c) + 1;
    if (hold <= 31) vg_sec_emit(c, k, VG_SEC_PASS, e, "a requeued job is held %ld s (cred_expire+1) before it may run again", hold);
    else vg_sec_emit(c, k, VG_SEC_WARN, e, "a requeued job is held %ld s (cred_expire+1) before it may run again (lab: 147 s stock vs 6 s at cred_expire=5)", hold);
}

static void sched_interval(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    if (!need_conf(c, k)) return;
    const char *sp = get(c, "SchedulerParameters");
    char buf[32], e[800];
    long si = 60, bf = 30;
    if (vg_slurm_param(sp, "sched_interval", buf, sizeof buf)) si = num(buf, 60);
    if (vg_slurm_param(sp, "bf_interval", buf, sizeof buf)) bf = num(buf, 30);
    const char *st = get(c, "SchedulerType");
    bool backfill = !st || strstr(st, "backfill");
    long wait = backfill && bf < si ? bf : si;
    long total = cred_expire(c) + 1 + wait;
    snprintf(e, sizeof e, "%s: SchedulerParameters=%s (sched_interval=%ld, bf_interval=%ld)", c->slurm_source,
             sp ? sp : "(unset)", si, bf);
    if (wait <= 5)
        vg_sec_emit(c, k, VG_SEC_PASS, e, "a job whose hold ended starts within %ld s; requeue to RUNNING about %ld s", wait, total);
    else
        vg_sec_emit(c, k, VG_SEC_WARN, e, "nothing wakes the scheduler when a hold ends: up to %ld s more; requeue to RUNNING up to %ld s (lab: 147 s stock, 6 s tuned)", wait, total);
}

static void node_timeouts(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    if (!need_conf(c, k)) return;
    long sd = num(get(c, "SlurmdTimeout"), 300), mt = num(get(c, "MessageTimeout"), 10);
    char e[700];
    snprintf(e, sizeof e, "%s: SlurmdTimeout=%ld MessageTimeout=%ld", c->slurm_source, sd, mt);
    if (sd + mt <= 120)
        vg_sec_emit(c, k, VG_SEC_PASS, e, "a crashed node is marked DOWN after about %ld s or more (lab: 18 s at 10/5, 11 s at 5/2)", sd + mt);
    else vg_sec_emit(c, k, VG_SEC_WARN, e, "a crashed or hung node is marked DOWN only after about %ld s: over the 120 s detection bar", sd + mt);
}

#define RPC_LOOP_PER_MIN 200   /* one user's RPCs a minute that look like a loop, not a person */

/* Loop submission: many single sbatch/squeue calls from one user (an agent
 * polling in a loop) until the head node runs out of memory.  sdiag's
 * per-user counts since its statistics were reset, as a rate. */
static void rpc_loops(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    if (!c->live_slurm) {
        vg_sec_emit(c, k, VG_SEC_UNKNOWN, "--root: no live slurmctld to ask", "could not check: needs sdiag on a live cluster");
        return;
    }
    struct vg_slurm s = { .conf = c->slurm_conf_path[0] ? c->slurm_conf_path : NULL, .timeout_ms = 5000 };
    struct vg_sdiag d;
    if (vg_slurm_sdiag(&s, &d)) {
        vg_sec_emit(c, k, VG_SEC_UNKNOWN, s.err, "could not check: sdiag did not answer");
        return;
    }
    vg_sec_rpc_loops(c, k, &d, get(c, "SlurmUser"));
}

void vg_sec_rpc_loops(struct vg_sec_ctx *c, const struct vg_sec_check *k, const struct vg_sdiag *d, const char *slurm_user)
{
    double minutes = (double)(d->at - d->since) / 60.0;
    if (minutes < 1) minutes = 1;   /* statistics just reset: a minute's worth at least */
    struct sbuf e = SBUF_INIT;
    sbuf_printf(&e, "sdiag over %.0f min:", minutes);
    size_t flagged = 0;
    char who[200] = "";
    for (size_t i = 0; i < d->nusers; i++) {
        const struct vg_sdiag_row *u = &d->users[i];
        if (e.len < 600) sbuf_printf(&e, " %s=%ld", u->name, u->count);
        if (u->id == 0 || (slurm_user && !strcmp(u->name, slurm_user))) continue;   /* the daemons' own */
        double rate = (double)u->count / minutes;
        if (rate > RPC_LOOP_PER_MIN && strlen(who) + strlen(u->name) + 24 < sizeof who) {
            snprintf(who + strlen(who), sizeof who - strlen(who), "%s%s (%.0f/min)", flagged ? ", " : "", u->name, rate);
            flagged++;
        }
    }
    if (flagged)
        vg_sec_emit(c, k, VG_SEC_WARN, e.s, "%zu user(s) call slurmctld in a loop: %s — a head node can run out of memory "
                    "this way; use job arrays (sbatch --array), --dependency and one squeue per minute", flagged, who);
    else vg_sec_emit(c, k, VG_SEC_PASS, e.s, "no user calls slurmctld more than %d times a minute", RPC_LOOP_PER_MIN);
    sbuf_free(&e);
}

static const struct vg_sec_check checks[] = {
    { "slurm.private-data", "Slurm PrivateData hides other tenants' jobs, usage and users", VG_SEV_HIGH,
      "set PrivateData=jobs,usage,users,accounts in slurm.conf", private_data },
    { "slurm.conf-perms", "slurm.conf is not writable by tenants", VG_SEV_HIGH,
      "chown root:root slurm.conf && chmod 0644 slurm.conf", conf_perms },
    { "slurm.dbd-perms", "slurmdbd.conf (database password) is 0600 and owned by SlurmUser", VG_SEV_HIGH,
      "chown slurm:slurm slurmdbd.conf && chmod 0600 slurmdbd.conf", dbd_perms },
    { "slurm.munge-key", "the munge key is 0400 and owned by munge", VG_SEV_CRITICAL,
      "chown munge:munge /etc/munge/munge.key && chmod 0400 /etc/munge/munge.key", munge_key },
    { "slurm.jwt-key", "the JWT key (AuthAltTypes=auth/jwt) is private to SlurmUser", VG_SEV_CRITICAL,
      "chown slurm:slurm the jwt_key file && chmod 0600 it", jwt_key },
    { "slurm.health-check", "HealthCheckProgram and HealthCheckInterval are set", VG_SEV_MEDIUM,
      "set HealthCheckProgram (e.g. vigil check --slurm) and HealthCheckInterval=300 or less", health_check },
    { "slurm.job-requeue", "JobRequeue lets batch jobs run again after a node failure", VG_SEV_MEDIUM,
      "set JobRequeue=1", job_requeue },
    { "slurm.return-to-service", "ReturnToService keeps a health check's DOWN in place", VG_SEV_LOW,
      "set ReturnToService=1", return_to_service },
    { "slurm.prolog-epilog", "Prolog and Epilog are configured", VG_SEV_LOW,
      "set Prolog= and Epilog= (node checks and cleanup around each job)", prolog_epilog },
    { "slurm.task-cgroup", "TaskPlugin confines jobs (task/cgroup)", VG_SEV_HIGH,
      "set TaskPlugin=task/cgroup,task/affinity", task_cgroup },
    { "slurm.constrain-devices", "cgroup.conf ConstrainDevices=yes confines jobs to their GPUs", VG_SEV_HIGH,
      "set ConstrainDevices=yes in cgroup.conf (with TaskPlugin=task/cgroup)", constrain_devices },
    { "slurm.cred-expire", "AuthInfo cred_expire: how long a requeued job is held", VG_SEV_MEDIUM,
      "set AuthInfo=cred_expire=10 (minimum 5; a requeued job is held cred_expire+1 s)", cred_expire_check },
    { "slurm.sched-interval", "sched_interval/bf_interval: how soon a released job is started", VG_SEV_MEDIUM,
      "set SchedulerParameters=sched_interval=1,bf_interval=1 (or small values)", sched_interval },
    { "slurm.node-timeouts", "SlurmdTimeout/MessageTimeout: how soon a dead node is noticed", VG_SEV_MEDIUM,
      "set SlurmdTimeout=60 (or less) and MessageTimeout=10 (or less)", node_timeouts },
    { "slurm.rpc-loops", "no user calls slurmctld in a loop (sdiag per-user RPC counts)", VG_SEV_MEDIUM,
      "submit many jobs as one job array (sbatch --array) or with --dependency; poll squeue once a minute", rpc_loops },
};

const struct vg_sec_family vg_sec_slurm = { "slurm", checks, sizeof checks / sizeof checks[0] };
