/* test_orch_contract.c — one contract (orch.h), the same expectations for
 * every backend: the in-memory fakes, the Slurm lab and the Kubernetes API
 * double alike.  Every check runs where the backend says it has what the
 * check needs (the required operations everywhere; a capability's where it
 * says so), and where it says it has not, the operation answers -1 with "the
 * NAME orchestrator cannot …" (never a NULL to call).
 *
 * The backend comes from the environment (tests/integration/orch_contract.sh
 * runs it four ways; tests/run runs it once against the fake):
 *   VIGIL_ORCH         fake (default), fake-slurm, slurm, k8s
 *   VIGIL_ORCH_CONFIG  slurm.conf or kubeconfig
 *   VIGIL_ORCH_ADMIN   a node an administrator took out (a reason not vigil's)
 *   VIGIL_ORCH_ALIVE   a node whose daemon answers
 *   VIGIL_ORCH_JOBS_FROM  where the node daemon keeps a node's jobs (local_jobs; %n = the node)
 * The fakes' world is made here: nodes n1..n4, n4 the spare pool, n3 drained
 * by an administrator, jobs run where there is room. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "helpers/fake_orch.h"
#include "core/event.h"
#include "orch/orch.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include "util/timeutil.h"

#define POOL "vigil_spares"
#define NO_NODE "vigil-no-such-node"
#define WAIT_MS 30000

static struct {
    const char *name;             /* VIGIL_ORCH */
    struct vg_orch *o;
    const char *admin, *alive, *jobs_from;
    char dir[64];                 /* jobs' scripts and output */
    char pool_node[64];           /* a node the pool test moves in and out */
    char submitted[8][128];       /* the jobs the checks submitted: cancelled at the end, whatever failed */
    size_t nsubmitted;
} W;

/* ---- helpers -------------------------------------------------------------- */

static struct vg_orch_node node(const char *name)
{
    struct vg_orch_node n;
    if (vg_orch_node(W.o, name, &n)) fail_msg("node %s: %s", name, W.o->err);
    return n;
}

static bool in(char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i], s)) return true;
    return false;
}

static bool can(unsigned cap) { return vg_orch_can(W.o->ops, cap); }

/* A node neither the administrator's, nor the pool's, nor in skip (NULL-terminated); "" none. */
static void pick(char *buf, size_t n, const char *const *skip)
{
    struct vg_orch_node *ns;
    size_t k;
    buf[0] = 0;
    assert_int_equal(W.o->ops->nodes(W.o, NULL, 0, &ns, &k), 0);
    for (size_t i = 0; i < k && !buf[0]; i++) {
        bool no = !strcmp(ns[i].name, W.admin) || !strcmp(ns[i].name, W.pool_node) || ns[i].drain || ns[i].down;
        for (size_t j = 0; skip && skip[j] && !no; j++) no = !strcmp(ns[i].name, skip[j]);
        if (!no) vg_strlcpy(buf, ns[i].name, n);
    }
    free(ns);
    if (!buf[0]) fail_msg("no node free for the check");
}

/* Waits until the job is in phase (or, want_gone, no longer known); 0 or -1. */
static int wait_job(const char *id, enum vg_job_phase phase, struct vg_orch_job *j)
{
    for (int64_t end = vg_mono_ms() + WAIT_MS; vg_mono_ms() < end; vg_sleep_ms(100))
        if (W.o->ops->job_get(W.o, id, j) == 0 && j->phase == phase) return 0;
    return -1;
}

static void submit(const char *const *argv, const char *out, char *id, size_t n)
{
    struct vg_orch_jobspec s = { .name = "vigil-contract", .nodes = 1, .argv = argv, .output = out,
                                 .workdir = W.dir, .requeue = true };
    if (W.o->ops->job_submit(W.o, &s, id, n)) fail_msg("submit: %s", W.o->err);
    if (W.nsubmitted < 8) vg_strlcpy(W.submitted[W.nsubmitted++], id, sizeof W.submitted[0]);
}

/* ---- the checks ----------------------------------------------------------- */

/* Every entry of the table and both fakes keep the contract; an entry that
 * says a capability without its operation, or lacks a required one, is
 * refused at open, naming the operation. */
static void c_table(void)
{
    char err[256];
    for (size_t i = 0; vg_orch_at(i); i++)
        if (vg_orch_ops_check(vg_orch_at(i), err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(vg_orch_ops_check(&fake_orch_ops, err, sizeof err), 0);
    assert_int_equal(vg_orch_ops_check(&fake_slurm_orch_ops, err, sizeof err), 0);
    struct vg_orch_ops bad = fake_orch_ops;
    bad.caps |= VG_CAP_TELL;
    assert_null(vg_orch_open_ops(&bad, NULL, err, sizeof err));
    assert_string_equal(err, "the fake orchestrator lacks tell but says its capability");
    bad = fake_orch_ops;
    bad.caps &= ~(unsigned)VG_CAP_EPOCH;
    assert_int_equal(vg_orch_ops_check(&bad, err, sizeof err), -1);
    assert_string_equal(err, "the fake orchestrator has epoch but does not say its capability");
    bad = fake_orch_ops;
    bad.pool_set = NULL;
    assert_int_equal(vg_orch_ops_check(&bad, err, sizeof err), -1);
    assert_string_equal(err, "the fake orchestrator lacks pool_set, which every backend has");
}

/* All nodes, the named ones, one unknown: -1 naming it; each request counted. */
static void c_nodes(void)
{
    struct vg_orch_node *ns, *two;
    size_t n, k;
    unsigned calls = W.o->calls;
    assert_int_equal(W.o->ops->nodes(W.o, NULL, 0, &ns, &n), 0);
    assert_true(W.o->calls > calls);
    assert_true(n >= 3);
    for (size_t i = 0; i < n; i++) {
        assert_true(ns[i].name[0] != 0);
        for (size_t j = 0; j < i; j++) assert_string_not_equal(ns[i].name, ns[j].name);
    }
    const char *names[] = { ns[0].name, ns[n - 1].name };
    assert_int_equal(W.o->ops->nodes(W.o, names, 2, &two, &k), 0);
    assert_int_equal(k, 2);
    assert_true(!strcmp(two[0].name, names[0]) || !strcmp(two[1].name, names[0]));
    assert_true(!strcmp(two[0].name, names[1]) || !strcmp(two[1].name, names[1]));
    free(two);
    free(ns);
    struct vg_orch_node x;
    assert_int_equal(vg_orch_node(W.o, NO_NODE, &x), -1);
    assert_non_null(strstr(W.o->err, NO_NODE));
}

/* DRAIN with vigil's reason; only vigil's own undone (the administrator's
 * stays); an unknown node refused. */
static void c_drain_resume(void)
{
    char y[64];
    pick(y, sizeof y, (const char *const[]){ W.alive, NULL });
    const char *reason = VG_REASON_PREFIX " contract drain";
    int64_t t0 = vg_now_ms();
    assert_int_equal(W.o->ops->isolate(W.o, (const char *const[]){ y }, 1, VG_ISOLATE_DRAIN, reason), 0);
    int64_t t1 = vg_now_ms();
    struct vg_orch_node st = node(y);
    assert_true(st.drain);
    assert_false(st.down);
    assert_string_equal(st.reason, reason);
    assert_true(vg_orch_ours(&st));
    if (can(VG_CAP_STAMPED_TIMES))   /* the scheduler's own stamp, to the second */
        assert_true(st.isolated_ms >= t0 - 1000 && st.isolated_ms <= t1 + 1000);
    struct vg_orch_node adm = node(W.admin);
    assert_true(adm.drain || adm.down);
    assert_false(vg_orch_ours(&adm));
    assert_int_equal(vg_orch_resume_ours(W.o, (const char *const[]){ y, W.admin }, 2), 1);
    st = node(y);
    assert_false(st.drain || st.down);
    assert_string_equal(st.reason, "");
    adm = node(W.admin);
    assert_true(adm.drain || adm.down);   /* not vigil's: left alone */
    assert_int_equal(W.o->ops->isolate(W.o, (const char *const[]){ NO_NODE }, 1, VG_ISOLATE_DRAIN, reason), -1);
    assert_true(W.o->err[0] != 0);
}

/* The pool holds exactly what it is set to; emptied it holds none; put back. */
static void c_pool(void)
{
    char **was, **now;
    size_t nwas, nnow;
    int rc = W.o->ops->pool_get(W.o, POOL, &was, &nwas);
    assert_true(rc == 0 || rc == 1);
    const char *s = W.pool_node;
    assert_int_equal(W.o->ops->pool_set(W.o, POOL, &s, 1, rc == 0), 0);
    assert_int_equal(W.o->ops->pool_get(W.o, POOL, &now, &nnow), 0);
    assert_int_equal(nnow, 1);
    assert_string_equal(now[0], s);
    vg_strv_free(now, nnow);
    assert_int_equal(W.o->ops->pool_set(W.o, POOL, NULL, 0, true), 0);
    int empty = W.o->ops->pool_get(W.o, POOL, &now, &nnow);
    assert_true(empty == 1 || (empty == 0 && nnow == 0));   /* gone, or there and empty */
    vg_strv_free(now, nnow);
    assert_int_equal(W.o->ops->pool_set(W.o, POOL, (const char *const *)was, nwas, empty == 0), 0);
    assert_int_equal(W.o->ops->pool_get(W.o, POOL, &now, &nnow), rc);
    assert_int_equal(nnow, nwas);
    for (size_t i = 0; i < nwas; i++) assert_true(in(now, nnow, was[i]));
    vg_strv_free(now, nnow);
    vg_strv_free(was, nwas);
}

/* A job runs on a node, is found there (before the DOWN, or after it where
 * the DOWN requeues it: then named as moved), its node goes DOWN with
 * vigil's reason, it is requeued and runs again or waits; then cancelled. */
static void c_down_requeue(void)
{
    const char *argv[] = { "sleep", "300", NULL };
    char id[128], out[128], where[600], listed[256];
    snprintf(out, sizeof out, "%s/down.out", W.dir);
    submit(argv, out, id, sizeof id);
    struct vg_orch_job j;
    if (wait_job(id, VG_JOB_RUNNING, &j)) fail_msg("job %s not running within %d s: %s", id, WAIT_MS / 1000, j.state);
    assert_string_equal(j.id, id);
    char x[64];
    vg_strlcpy(x, j.nodes, sizeof x);
    assert_null(strchr(x, ','));
    assert_string_equal(j.leader, x);
    if (can(VG_CAP_STAMPED_TIMES)) assert_true(j.started_ms > 0);
    if (can(VG_CAP_TELL)) assert_int_equal(W.o->ops->tell(W.o, id, (const char *const[]){ x }, 1), 0);   /* no spares */
    if (can(VG_CAP_LOCAL_JOBS)) {   /* the node's own record lists it */
        vg_expand_node(W.jobs_from, x, where, sizeof where);
        long num = atol(id);
        for (int64_t end = vg_mono_ms() + WAIT_MS; vg_mono_ms() < end; vg_sleep_ms(50))
            if (vg_orch_local_jobs(W.o->ops, where, x, listed, sizeof listed) == 0 && vg_event_jobs_has(listed, num)) break;
        if (!vg_event_jobs_has(listed, num)) fail_msg("local_jobs at %s: '%s', not job %s", where, listed, id);
    }
    const char *down = VG_REASON_PREFIX " contract down", *xs[] = { x };
    char **jobs, **moved;
    size_t nj, nm;
    if (can(VG_CAP_DOWN_REQUEUES)) {   /* the DOWN requeues it; listed after it as moved */
        assert_int_equal(W.o->ops->isolate(W.o, xs, 1, VG_ISOLATE_DOWN, down), 0);
        assert_int_equal(W.o->ops->jobs_on(W.o, xs, 1, id, vg_now_ms(), &jobs, &nj, &moved, &nm), 0);   /* known: the agent's list */
        assert_true(in(moved, nm, id));
        assert_false(in(jobs, nj, id));
        assert_int_equal(W.o->ops->requeue(W.o, (const char *const *)moved, nm), 0);   /* done already: fine */
    } else {   /* listed before the DOWN, which may end its run there */
        assert_int_equal(W.o->ops->jobs_on(W.o, xs, 1, "", 0, &jobs, &nj, &moved, &nm), 0);
        assert_true(in(jobs, nj, id));
        assert_int_equal(nm, 0);
        assert_int_equal(W.o->ops->isolate(W.o, xs, 1, VG_ISOLATE_DOWN, down), 0);
        assert_int_equal(W.o->ops->requeue(W.o, (const char *const *)jobs, nj), 0);
    }
    vg_strv_free(jobs, nj);
    vg_strv_free(moved, nm);
    struct vg_orch_node st = node(x);
    assert_true(st.down);
    assert_string_equal(st.reason, down);
    assert_true(vg_orch_ours(&st));
    bool again = false;
    for (int64_t end = vg_mono_ms() + WAIT_MS; vg_mono_ms() < end && !again; vg_sleep_ms(100))
        again = W.o->ops->job_get(W.o, id, &j) == 0 && (j.restarts >= 1 || j.phase == VG_JOB_PENDING);
    if (!again) fail_msg("job %s not requeued: %s, %d restarts", id, j.state, j.restarts);
    assert_int_equal(W.o->ops->requeue(W.o, (const char *const[]){ "not-a-job" }, 1), -1);
    assert_true(W.o->err[0] != 0);
    assert_int_equal(vg_orch_resume_ours(W.o, xs, 1), 1);
    st = node(x);
    assert_false(st.down || st.drain);
    assert_int_equal(W.o->ops->job_cancel(W.o, id), 0);
    bool over = false;
    for (int64_t end = vg_mono_ms() + WAIT_MS; vg_mono_ms() < end && !over; vg_sleep_ms(100))
        over = W.o->ops->job_get(W.o, id, &j) != 0 || j.phase == VG_JOB_ENDED;
    assert_true(over);
    assert_int_equal(W.o->ops->job_get(W.o, "vigil-no-such-job", &j), -1);
}

/* What a job printed can be read: its output file (tasks on the hosts' own
 * files) or the scheduler's record of it. */
static void c_job_output(void)
{
    const char *argv[] = { "/bin/echo", "vigil-contract-output", NULL };
    char id[128], out[128], *text = NULL;
    size_t len;
    snprintf(out, sizeof out, "%s/echo.out", W.dir);
    submit(argv, out, id, sizeof id);
    struct vg_orch_job j;
    if (wait_job(id, VG_JOB_ENDED, &j)) fail_msg("job %s not ended within %d s: %s", id, WAIT_MS / 1000, j.state);
    if (can(VG_CAP_HOST_FILES)) {
        assert_true(vg_read_file(NULL, out, 1 << 20, &text, &len) >= 0);
        assert_non_null(strstr(text, "vigil-contract-output"));
        free(text);
    }
    if (can(VG_CAP_JOB_OUTPUT)) {
        assert_int_equal(W.o->ops->job_output(W.o, id, &text), 0);
        assert_non_null(strstr(text, "vigil-contract-output"));
        free(text);
        assert_int_equal(W.o->ops->job_cancel(W.o, id), 0);   /* its record held the output */
    }
}

/* A workload kind and a volume claim: taken where said, refused elsewhere. */
static void c_workloads(void)
{
    const char *argv[] = { "sleep", "300", NULL };
    char id[128];
    struct vg_orch_jobspec s = { .name = "vigil-contract-set", .nodes = 1, .argv = argv, .workdir = W.dir,
                                 .workload = "jobset" };
    if (!can(VG_CAP_WORKLOADS)) {
        assert_int_equal(W.o->ops->job_submit(W.o, &s, id, sizeof id), -1);
        s.workload = NULL, s.claim = "checkpoints";
        assert_int_equal(W.o->ops->job_submit(W.o, &s, id, sizeof id), -1);
        return;
    }
    assert_int_equal(W.o->ops->job_submit(W.o, &s, id, sizeof id), 0);
    if (W.nsubmitted < 8) vg_strlcpy(W.submitted[W.nsubmitted++], id, sizeof W.submitted[0]);
    struct vg_orch_job j;
    assert_int_equal(W.o->ops->job_get(W.o, id, &j), 0);
    assert_int_equal(W.o->ops->job_cancel(W.o, id), 0);
}

static void c_exec(void)
{
    struct vg_spawn_result r;
    const char *cmd[] = { "/bin/echo", "vigil-contract-exec", NULL };
    int rc = W.o->ops->exec_on(W.o, W.alive, cmd, NULL, WAIT_MS, &r);
    if (rc) fail_msg("exec_on %s: %s", W.alive, W.o->err);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "vigil-contract-exec"));
    vg_spawn_result_free(&r);
}

static void c_node_alive(void)
{
    assert_int_equal(W.o->ops->node_alive(W.o, W.alive, 3000), 1);
    assert_int_equal(W.o->ops->node_alive(W.o, NO_NODE, 3000), -1);
    assert_true(W.o->err[0] != 0);
}

static void c_epoch(void)
{
    char a[128], b[128];
    assert_int_equal(W.o->ops->epoch(W.o, a, sizeof a), 0);
    assert_int_equal(W.o->ops->epoch(W.o, b, sizeof b), 0);
    assert_true(a[0] != 0);
    assert_string_equal(a, b);   /* no restart between */
}

static void c_priority(void)
{
    struct vg_orch_node *ns;
    size_t n;
    assert_int_equal(W.o->ops->nodes(W.o, NULL, 0, &ns, &n), 0);
    if (W.o->ops->burnin_prepare(W.o, "vigil-contract-burnin", ns, n)) fail_msg("%s", W.o->err);
    assert_int_equal(W.o->ops->burnin_prepare(W.o, "vigil-contract-burnin", ns, n), 0);   /* there already */
    free(ns);
}

/* Every operation the backend does not say it has answers -1, "cannot". */
static void c_unsupported(void)
{
    struct vg_orch *o = W.o;
    const struct vg_orch_ops *p = o->ops;
    struct vg_orch_job j;
    struct vg_spawn_result r;
    char buf[64], *text = (char *)"x";
    const char *one[] = { "n1" };
    int checked = 0;
#define CANNOT(cap, call)                                                                          \
    if (!can(cap)) {                                                                               \
        o->err[0] = 0;                                                                             \
        assert_int_equal((call), -1);                                                              \
        if (!strstr(o->err, "orchestrator cannot")) fail_msg("%s: '%s'", #call, o->err);          \
        checked++;                                                                                 \
    }
    CANNOT(VG_CAP_JOBS, p->job_get(o, "1", &j));
    CANNOT(VG_CAP_JOBS, p->job_cancel(o, "1"));
    CANNOT(VG_CAP_JOB_OUTPUT, p->job_output(o, "1", &text));
    CANNOT(VG_CAP_TELL, p->tell(o, "1", one, 1));
    CANNOT(VG_CAP_PRIORITY, p->burnin_prepare(o, "q", NULL, 0));
    CANNOT(VG_CAP_EXEC, p->exec_on(o, "n1", one, NULL, 1000, &r));
    CANNOT(VG_CAP_NODE_ALIVE, p->node_alive(o, "n1", 1000));
    CANNOT(VG_CAP_EPOCH, p->epoch(o, buf, sizeof buf));
#undef CANNOT
    if (!can(VG_CAP_JOB_OUTPUT)) assert_null(text);
    if (!can(VG_CAP_LOCAL_JOBS)) {   /* the agent names no jobs, and says so once */
        strcpy(buf, "x");
        assert_int_equal(vg_orch_local_jobs(p, "/nonexistent", "n1", buf, sizeof buf), -2);
        assert_string_equal(buf, "");
        checked++;
    }
    print_message("# %s: %d operations it has not answered 'cannot'\n", W.name, checked);
}

/* ---- the table ---------------------------------------------------------- */

static const struct check {
    const char *name;
    unsigned needs;    /* capabilities it needs all of; 0: required operations only */
    unsigned any;      /* … and one of these; 0: none */
    void (*fn)(void);
} checks[] = {
    { "the table and the fakes keep the contract; a broken entry is refused", 0, 0, c_table },
    { "nodes: all, the named ones, an unknown one", 0, 0, c_nodes },
    { "isolate DRAIN with vigil's reason, resume only vigil's own", 0, 0, c_drain_resume },
    { "the spare pool set, emptied and put back", 0, 0, c_pool },
    { "a job on a node: found, DOWN, requeued, cancelled", VG_CAP_JOBS, 0, c_down_requeue },
    { "a job's output read back", VG_CAP_JOBS, VG_CAP_HOST_FILES | VG_CAP_JOB_OUTPUT, c_job_output },
    { "a workload kind and a claim: taken or refused", VG_CAP_JOBS, 0, c_workloads },
    { "a command run on a node", VG_CAP_EXEC, 0, c_exec },
    { "node_alive: a live node, an unknown one", VG_CAP_NODE_ALIVE, 0, c_node_alive },
    { "the epoch, the same twice", VG_CAP_EPOCH, 0, c_epoch },
    { "burn-in's priority made ready, twice", VG_CAP_PRIORITY, 0, c_priority },
    { "what it has not: 'cannot', cleanly", 0, 0, c_unsupported },
};
#define NCHECKS (sizeof checks / sizeof checks[0])

static void run(void **state)
{
    const struct check *c = *state;
    c->fn();
}

/* The fakes' world: n1..n4, n4 the spare pool, n3 an administrator's drain. */
static const struct vg_orch_ops *fake_world(void)
{
    fake_reset();
    for (int i = 1; i <= 4; i++) {
        char n[8];
        snprintf(n, sizeof n, "n%d", i);
        fake_add_node(n, i == 4 ? "spare" : "");
    }
    fake.pool_exists = true;
    fake.npool = 1;
    vg_strlcpy(fake.pool[0], "n4", sizeof fake.pool[0]);
    struct vg_orch_node *adm = fake_node("n3");
    adm->drain = true, adm->idle = false;
    vg_strlcpy(adm->reason, "admin: maintenance", sizeof adm->reason);
    fake.run_submitted = true;
    W.admin = "n3", W.alive = "n1";
    return strcmp(W.name, "fake-slurm") ? &fake_orch_ops : &fake_slurm_orch_ops;
}

static int setup(void **state)
{
    (void)state;
    snprintf(W.dir, sizeof W.dir, "/tmp/vigil-contract-XXXXXX");
    if (!mkdtemp(W.dir)) return -1;
    char err[512];
    if (!strncmp(W.name, "fake", 4)) W.o = vg_orch_open_ops(fake_world(), NULL, err, sizeof err);
    else {
        W.admin = getenv("VIGIL_ORCH_ADMIN"), W.alive = getenv("VIGIL_ORCH_ALIVE");
        W.jobs_from = getenv("VIGIL_ORCH_JOBS_FROM");
        struct vg_orch_conf c = { .config = getenv("VIGIL_ORCH_CONFIG"), .timeout_ms = 20000 };
        if (!W.admin || !W.alive) {
            fprintf(stderr, "VIGIL_ORCH_ADMIN and VIGIL_ORCH_ALIVE name the world's nodes\n");
            return -1;
        }
        W.o = vg_orch_open(W.name, &c, err, sizeof err);
    }
    if (!W.o) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    if (vg_orch_can(W.o->ops, VG_CAP_LOCAL_JOBS) && !W.jobs_from) W.jobs_from = "/nonexistent";
    /* the pool test's node: the pool's first, else one that is free */
    char **pool;
    size_t np;
    if (W.o->ops->pool_get(W.o, POOL, &pool, &np) == 0 && np) vg_strlcpy(W.pool_node, pool[0], sizeof W.pool_node);
    vg_strv_free(pool, np);
    if (!W.pool_node[0]) pick(W.pool_node, sizeof W.pool_node, (const char *const[]){ W.alive, NULL });
    print_message("# orchestrator %s (capabilities 0x%x)\n", W.o->ops->name, W.o->ops->caps);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (size_t i = 0; i < W.nsubmitted; i++) W.o->ops->job_cancel(W.o, W.submitted[i]);   /* gone already: fine */
    vg_orch_close(W.o);
    char p[128];
    const char *files[] = { "down.out", "echo.out", "vigil-contract.sbatch", NULL };
    for (int i = 0; files[i]; i++) snprintf(p, sizeof p, "%s/%s", W.dir, files[i]), unlink(p);
    rmdir(W.dir);
    return 0;
}

/* The checks for what the backend says it has; the others are not run (the
 * last check asks each missing operation for its "cannot"). */
int main(void)
{
    W.name = getenv("VIGIL_ORCH") && *getenv("VIGIL_ORCH") ? getenv("VIGIL_ORCH") : "fake";
    const struct vg_orch_ops *ops = !strcmp(W.name, "fake")         ? &fake_orch_ops
                                    : !strcmp(W.name, "fake-slurm") ? &fake_slurm_orch_ops
                                                                    : vg_orch_find(W.name);
    if (!ops) return fprintf(stderr, "VIGIL_ORCH=%s: not an orchestrator\n", W.name), 2;
    struct CMUnitTest t[NCHECKS];
    size_t n = 0;
    for (size_t i = 0; i < NCHECKS; i++)
        if (vg_orch_can(ops, checks[i].needs) && (!checks[i].any || (ops->caps & checks[i].any)))
            t[n++] = (struct CMUnitTest){ .name = checks[i].name, .test_func = run, .initial_state = (void *)&checks[i] };
        else
            printf("# %s: not run (%s does not say it can)\n", checks[i].name, ops->name);
    return _cmocka_run_group_tests("orch_contract", t, n, setup, teardown);
}
