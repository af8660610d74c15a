/* test_slurm_live.c — the Slurm orchestrator backend (orch.h ops) against a
 * real lab brought up through lab/lab.h: one batched drain for two nodes, states and reasons read back,
 * a running job found and requeued, only vigil's own drains resumed, a DOWN
 * that requeues a job itself (the requeue after it takes that job as done and
 * fails only for a --no-requeue job); then `down` leaves no tagged process
 * and no directory.  Also the lab's directory made canonical.  Skipped
 * (TAP "ok # skip") only without root or slurmctld. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lab/lab.h"
#include "orch/orch.h"
#include "util/spawn.h"
#include "util/timeutil.h"

static bool runnable(void)
{
    return geteuid() == 0 && access("/usr/sbin/slurmctld", X_OK) == 0;
}

static struct vg_orch_node *find(struct vg_orch_node *n, size_t k, const char *name)
{
    for (size_t i = 0; i < k; i++)
        if (!strcmp(n[i].name, name)) return &n[i];
    fail_msg("node %s missing", name);
    return NULL;
}

/* Runs a Slurm client command directly (what an admin, not vigil, does). */
static char *client(const char *conf, const char *const argv[])
{
    char env[700];
    snprintf(env, sizeof env, "SLURM_CONF=%s", conf);
    const char *e[] = { env, NULL };
    struct vg_spawn_result r;
    assert_int_equal(vg_spawn(argv, e, NULL, 10000, &r), 0);
    if (r.status) fail_msg("%s: %s", argv[0], r.err);
    free(r.err);
    return r.out;
}

static void wait_state(struct vg_orch *s, const char *id, const char *want, struct vg_orch_job *j)
{
    for (int64_t end = vg_mono_ms() + 10000; vg_mono_ms() < end; vg_sleep_ms(50))
        if (s->ops->job_get(s, id, j) == 0 && !strcmp(j->state, want)) return;
    fail_msg("job %s not %s (last %s)", id, want, j->state);
}

static void test_adapter_on_lab(void **state)
{
    (void)state;
    if (!runnable()) skip();
    char dir[] = "/tmp/vigil-live-XXXXXX";
    assert_non_null(mkdtemp(dir));
    /* plain Slurm: the adapter is what is tested here (no vigil daemons) */
    struct vg_lab_opts o = { .dir = dir, .nodes = 4, .spares = 1, .no_vigil = true };
    struct vg_lab_info info;
    char err[2048];
    if (vg_lab_up(&o, &info, err, sizeof err)) fail_msg("lab up: %s", err);
    struct vg_orch_conf oc = { .config = info.conf };
    struct vg_orch *s = vg_orch_open("slurm", &oc, err, sizeof err);
    assert_non_null(s);

    /* a job pinned to n2 */
    const char *sb[] = { "sbatch", "--parsable", "--requeue", "-N1", "-w", "n2", "-o", "/dev/null",
                         "--wrap", "sleep 311", NULL };
    char *out = client(info.conf, sb);
    char id[32];
    snprintf(id, sizeof id, "%ld", atol(out));
    free(out);
    assert_true(atol(id) > 0);
    struct vg_orch_job j;
    wait_state(s, id, "RUNNING", &j);
    assert_int_equal(j.phase, VG_JOB_RUNNING);
    assert_string_equal(j.leader, "n2");
    assert_string_equal(j.nodes, "n2");

    /* one call drains two nodes */
    const char *two[] = { "n1", "n2" };
    unsigned before = s->calls;
    assert_int_equal(s->ops->isolate(s, two, 2, VG_ISOLATE_DRAIN, "vigil: xid 79 on gpu 0 (test)"), 0);
    assert_int_equal(s->calls - before, 1);
    struct vg_orch_node *n;
    size_t k;
    assert_int_equal(s->ops->nodes(s, NULL, 0, &n, &k), 0);
    assert_int_equal(k, 4);
    assert_true(find(n, k, "n1")->drain);
    assert_true(find(n, k, "n2")->drain);
    assert_false(find(n, k, "n3")->drain);
    assert_string_equal(find(n, k, "n2")->reason, "vigil: xid 79 on gpu 0 (test)");
    assert_string_equal(find(n, k, "n4")->features, "rack1,spare");
    free(n);

    /* the job on the drained nodes, found and requeued (one call each) */
    char **jobs, **moved;
    size_t nj, nmoved;
    before = s->calls;
    assert_int_equal(s->ops->jobs_on(s, two, 2, "", 0, &jobs, &nj, &moved, &nmoved), 0);
    vg_strv_free(moved, nmoved);
    assert_int_equal(nj, 1);
    assert_string_equal(jobs[0], id);
    assert_int_equal(s->ops->requeue(s, (const char *const *)jobs, nj), 0);
    assert_int_equal(s->calls - before, 2);
    vg_strv_free(jobs, nj);
    wait_state(s, id, "PENDING", &j);
    assert_int_equal(j.phase, VG_JOB_PENDING);
    assert_int_equal(j.restarts, 1);

    /* an admin's drain on n3 is not vigil's to undo */
    const char *adm[] = { "scontrol", "update", "NodeName=n3", "State=DRAIN", "Reason=admin: maintenance", NULL };
    free(client(info.conf, adm));
    const char *three[] = { "n1", "n2", "n3" };
    assert_int_equal(vg_orch_resume_ours(s, three, 3), 2);
    assert_int_equal(s->ops->nodes(s, three, 3, &n, &k), 0);
    assert_int_equal(k, 3);
    assert_false(find(n, k, "n1")->drain);
    assert_false(find(n, k, "n2")->drain);
    assert_true(find(n, k, "n3")->drain);
    assert_string_equal(find(n, k, "n3")->reason, "admin: maintenance");
    free(n);

    /* DOWN requeues what may be requeued in the same request, so the jobs
     * read after it are only the one it could not requeue (ended NODE_FAIL);
     * a requeue takes "pending execution" (requeued already) as done and
     * fails only on a real refusal (the --no-requeue job) */
    const char *sa[] = { "sbatch", "--parsable", "--requeue", "-N1", "-w", "n1", "-o", "/dev/null",
                         "--wrap", "sleep 312", NULL };
    const char *sn[] = { "sbatch", "--parsable", "--no-requeue", "-N1", "-w", "n4", "-o", "/dev/null",
                         "--wrap", "sleep 313", NULL };
    char ida[32], idn[32];
    out = client(info.conf, sa);
    snprintf(ida, sizeof ida, "%ld", atol(out));
    free(out);
    out = client(info.conf, sn);
    snprintf(idn, sizeof idn, "%ld", atol(out));
    free(out);
    wait_state(s, ida, "RUNNING", &j);
    wait_state(s, idn, "RUNNING", &j);
    const char *fourth[] = { "n1", "n4" };
    before = s->calls;
    assert_int_equal(s->ops->isolate(s, fourth, 2, VG_ISOLATE_DOWN, "vigil: xid 79 on gpu 0 (test)"), 0);
    char known[80];
    snprintf(known, sizeof known, "%s,%s", ida, idn);   /* as n1's and n4's agents list them */
    assert_int_equal(s->ops->jobs_on(s, fourth, 2, known, 0, &jobs, &nj, &moved, &nmoved), 0);
    assert_int_equal(s->calls - before, 2);
    assert_int_equal(nj, 1);
    assert_string_equal(jobs[0], idn);
    assert_int_equal(nmoved, 1);                    /* the one the DOWN requeued, named from the same read */
    assert_string_equal(moved[0], ida);
    vg_strv_free(moved, nmoved);
    wait_state(s, ida, "PENDING", &j);
    before = s->calls;
    assert_int_equal(j.restarts, 1);               /* requeued by the DOWN, not listed after it */
    assert_int_equal(s->ops->requeue(s, (const char *const *)jobs, nj), -1);
    assert_non_null(strstr(s->err, "disabled"));   /* "Requested operation is presently disabled for job N" */
    assert_non_null(strstr(s->err, idn));
    assert_null(strstr(s->err, "pending"));
    const char *just_a[] = { ida };
    assert_int_equal(s->ops->requeue(s, just_a, 1), 0);   /* requeued already: done */
    assert_int_equal(s->calls - before, 2);
    vg_strv_free(jobs, nj);
    assert_int_equal(s->ops->job_get(s, ida, &j), 0);
    assert_int_equal(j.restarts, 1);               /* not requeued twice */

    /* errors come back as one line, not a crash */
    assert_int_equal(s->ops->job_get(s, "999999", &j), -1);
    assert_non_null(strstr(s->err, "999999"));
    vg_orch_close(s);

    /* down: nothing of the lab is left */
    pid_t *pids;
    size_t np;
    assert_int_equal(vg_lab_tagged(dir, &pids, &np), 0);
    assert_true(np >= 6);   /* munged, slurmctld, 4 slurmd (+ the job's slurmstepd) */
    free(pids);
    if (vg_lab_down(dir, err, sizeof err)) fail_msg("lab down: %s", err);
    assert_int_equal(access(dir, F_OK), -1);
    assert_int_equal(vg_lab_tagged(dir, &pids, &np), 0);
    assert_int_equal(np, 0);
    free(pids);
}

static void test_down_refuses_non_lab(void **state)
{
    (void)state;
    char dir[] = "/tmp/vigil-notlab-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char err[512];
    assert_int_equal(vg_lab_down(dir, err, sizeof err), -2);
    assert_non_null(strstr(err, "not a vigil lab"));
    assert_int_equal(access(dir, F_OK), 0);
    rmdir(dir);
    /* absent: not a lab either, and said so */
    assert_int_equal(vg_lab_down(dir, err, sizeof err), -2);
    assert_non_null(strstr(err, "not a vigil lab (No such file or directory)"));
}

/* --dir made canonical: what every daemon is tagged with and `down` matches,
 * however the directory was typed (trailing slashes, a symbolic link, ".."),
 * also before it exists. */
static void test_canon_dir(void **state)
{
    (void)state;
    char dir[] = "/tmp/vigil-canon-XXXXXX", real[4096], want[4200], in[4200], out[4200];
    assert_non_null(mkdtemp(dir));
    assert_non_null(realpath(dir, real));
    snprintf(in, sizeof in, "%s//", dir);
    assert_int_equal(vg_lab_canon_dir(in, out, sizeof out), 0);
    assert_string_equal(out, real);
    snprintf(in, sizeof in, "%s/link", real);
    assert_int_equal(symlink(real, in), 0);
    snprintf(in, sizeof in, "%s/link/", real);
    assert_int_equal(vg_lab_canon_dir(in, out, sizeof out), 0);
    assert_string_equal(out, real);
    /* not there yet: its parent resolved, its own name kept, no trailing slash */
    snprintf(in, sizeof in, "%s/link/../%s/lab/", real, strrchr(real, '/') + 1);
    snprintf(want, sizeof want, "%s/lab", real);
    assert_int_equal(vg_lab_canon_dir(in, out, sizeof out), 0);
    assert_string_equal(out, want);
    /* nor its parent: no canonical form */
    snprintf(in, sizeof in, "%s/no/lab", real);
    assert_int_equal(vg_lab_canon_dir(in, out, sizeof out), -1);
    /* resolve_dir: as given, less its trailing slashes, when nothing resolves */
    snprintf(want, sizeof want, "%s/no/lab", real);
    snprintf(in, sizeof in, "%s/no/lab///", real);
    assert_string_equal(vg_lab_resolve_dir(in, out, sizeof out), want);
    assert_string_equal(vg_lab_canon_dir("/", out, sizeof out) == 0 ? out : "", "/");
    snprintf(in, sizeof in, "%s/link", real);
    unlink(in);
    rmdir(real);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_adapter_on_lab),
        cmocka_unit_test(test_down_refuses_non_lab),
        cmocka_unit_test(test_canon_dir),
    };
    return cmocka_run_group_tests_name("slurm_live", tests, NULL, NULL);
}
