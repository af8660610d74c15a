/* test_orch_local.c — the orchestrators' node-local operations (orch.h
 * local_jobs, local_node, task_rank), through the table as the agent and the
 * trainer call them.  Slurm's jobs of a node read from slurmd's spool
 * directory (orch/slurm_node.c): the step sockets' names as slurmd 22.05
 * writes them (NODE_JOBID.STEPID; the batch step 4294967291 and step 0 of job
 * 3 were listed on the lab), other nodes' and other files ignored, %n
 * expanded, whole ids only when the room runs out; Kubernetes lists none
 * (-2, not an error).  A task's rank from Slurm's and from an Indexed Job's
 * variables, Slurm's first, and rank 0 of 1 outside any.  And the event's
 * jobs field, which carries the list, refusing anything but ids separated by
 * commas. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "orch/orch.h"
#include "util/strutil.h"
#include "core/event.h"

static char dir[64];

static void touch(const char *name)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    int fd = open(p, O_CREAT | O_WRONLY, 0600);
    assert_true(fd >= 0);
    close(fd);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/vigil-slurmd-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    const char *names[] = { "n2_3.0", "n2_3.4294967291", "n2_12.0", "n20_5.0", "n2_x.0", "n2_7.", "n2_.0",
                            "cred_state", "cred_state.old", "job00003", "n2_9.4294967292", NULL };
    for (int i = 0; names[i]; i++) {
        char p[256];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
    return 0;
}

static void test_steps_of_this_node(void **state)
{
    (void)state;
    char out[64];
    assert_int_equal(vg_orch_local_jobs(vg_orch_find("slurm"), dir, "n2", out, sizeof out), 0);
    assert_string_equal(out, "");   /* no step: known, none */
    const char *names[] = { "n2_3.0", "n2_3.4294967291", "n2_12.0", "n20_5.0", "n2_x.0", "n2_7.", "n2_.0",
                            "cred_state", "cred_state.old", "job00003", "n2_9.4294967292", NULL };
    for (int i = 0; names[i]; i++) touch(names[i]);
    assert_int_equal(vg_orch_local_jobs(vg_orch_find("slurm"), dir, "n2", out, sizeof out), 0);
    assert_string_equal(out, "3,9,12");   /* each job once, ascending; n20's and malformed names not */
    assert_int_equal(vg_orch_local_jobs(vg_orch_find("slurm"), dir, "n20", out, sizeof out), 0);
    assert_string_equal(out, "5");
    assert_true(vg_event_jobs_ok("3,9,12"));
}

static void test_room_and_missing_dir(void **state)
{
    (void)state;
    touch("n2_3.0");
    touch("n2_9.4294967292");
    touch("n2_12.0");
    char out[5];
    assert_int_equal(vg_orch_local_jobs(vg_orch_find("slurm"), dir, "n2", out, sizeof out), 0);
    assert_string_equal(out, "3,9");   /* "3,9,12" does not fit: whole ids only */
    char big[64] = "x";
    assert_int_equal(vg_orch_local_jobs(vg_orch_find("slurm"), "/nonexistent/vigil-spool", "n2", big, sizeof big), -1);
    assert_string_equal(big, "");
}

static void test_k8s_lists_none(void **state)
{
    (void)state;
    char out[16] = "x";
    assert_false(vg_orch_can(vg_orch_find("k8s"), VG_CAP_LOCAL_JOBS));
    assert_int_equal(vg_orch_local_jobs(vg_orch_find("k8s"), dir, "n2", out, sizeof out), -2);
    assert_string_equal(out, "");
}

static void clear_env(void)
{
    const char *vars[] = { "SLURM_PROCID", "SLURM_NTASKS", "SLURM_RESTART_COUNT", "JOB_COMPLETION_INDEX",
                           "VIGIL_NTASKS", "SLURMD_NODENAME", "NODE_NAME", "VIGIL_NODE", NULL };
    for (int i = 0; vars[i]; i++) unsetenv(vars[i]);
}

static void test_task_rank(void **state)
{
    (void)state;
    struct vg_orch_task t;
    clear_env();
    vg_orch_task_rank(&t);   /* run by hand */
    assert_int_equal(t.rank, 0);
    assert_int_equal(t.ntasks, 1);
    assert_int_equal(t.restarts, 0);
    setenv("JOB_COMPLETION_INDEX", "3", 1);   /* a pod of an Indexed Job */
    setenv("VIGIL_NTASKS", "4", 1);
    vg_orch_task_rank(&t);
    assert_int_equal(t.rank, 3);
    assert_int_equal(t.ntasks, 4);
    assert_false(t.restarts_known);   /* no restart count every pod shares */
    setenv("SLURM_PROCID", "1", 1);   /* srun's variables come first */
    setenv("SLURM_NTASKS", "2", 1);
    setenv("SLURM_RESTART_COUNT", "5", 1);
    vg_orch_task_rank(&t);
    assert_int_equal(t.rank, 1);
    assert_int_equal(t.ntasks, 2);
    assert_int_equal(t.restarts, 5);
    assert_true(t.restarts_known);
    setenv("SLURM_NTASKS", "two", 1);   /* not a number: the default */
    vg_orch_task_rank(&t);
    assert_int_equal(t.ntasks, 1);
    clear_env();
}

static void test_local_node(void **state)
{
    (void)state;
    char buf[64];
    clear_env();
    setenv("SLURMD_NODENAME", "gpu-017", 1);
    vg_orch_local_node(vg_orch_find("slurm"), buf, sizeof buf);
    assert_string_equal(buf, "gpu-017");
    setenv("NODE_NAME", "ip-10-0-0-7.ec2.internal", 1);   /* the DaemonSet's spec.nodeName, without its domain */
    vg_orch_local_node(vg_orch_find("k8s"), buf, sizeof buf);
    assert_string_equal(buf, "ip-10-0-0-7");
    setenv("VIGIL_NODE", "n3", 1);   /* vigil's own variable first */
    vg_orch_local_node(vg_orch_find("k8s"), buf, sizeof buf);
    assert_string_equal(buf, "n3");
    clear_env();
}

static void test_spool_path(void **state)
{
    (void)state;
    char p[64];
    vg_expand_node("/var/spool/slurmd/%n", "gpu-017", p, sizeof p);
    assert_string_equal(p, "/var/spool/slurmd/gpu-017");
    vg_expand_node("/var/spool/slurmd", "gpu-017", p, sizeof p);
    assert_string_equal(p, "/var/spool/slurmd");
    char small[12];
    vg_expand_node("/spool/%n/x", "a-very-long-node", small, sizeof small);
    assert_int_equal(strlen(small), sizeof small - 1);
}

static void test_event_jobs_field(void **state)
{
    (void)state;
    const char *good[] = { "", "1", "1,22,333", NULL };
    const char *bad[] = { ",", "1,", ",1", "1,,2", "a", "1 2", "-1", NULL };
    for (int i = 0; good[i]; i++) assert_true(vg_event_jobs_ok(good[i]));
    for (int i = 0; bad[i]; i++) assert_false(vg_event_jobs_ok(bad[i]));
    assert_true(vg_event_jobs_has("1,22,333", 22));
    assert_true(vg_event_jobs_has("1,22,333", 333));
    assert_false(vg_event_jobs_has("1,22,333", 2));   /* a prefix of 22 is not 2 */
    assert_false(vg_event_jobs_has("", 1));
    struct vg_event e;
    char err[128];
    json_t *j = json_pack("{s:s, s:s, s:s}", "node", "n2", "kind", "xid", "jobs", "3,12");
    assert_int_equal(vg_event_from_json(j, &e, err, sizeof err), 0);
    assert_string_equal(e.jobs, "3,12");
    json_t *back = vg_event_to_json(&e);
    assert_string_equal(json_string_value(json_object_get(back, "jobs")), "3,12");
    json_decref(back);
    json_object_set_new(j, "jobs", json_string("3;rm"));
    assert_int_equal(vg_event_from_json(j, &e, err, sizeof err), -1);
    assert_string_equal(err, "field 'jobs': not job ids separated by commas");
    json_object_set_new(j, "jobs", json_integer(3));
    assert_int_equal(vg_event_from_json(j, &e, err, sizeof err), -1);
    assert_string_equal(err, "field 'jobs': not a string");
    json_decref(j);
    vg_event_init(&e);   /* no jobs known: the field is left out */
    back = vg_event_to_json(&e);
    assert_null(json_object_get(back, "jobs"));
    json_decref(back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_steps_of_this_node, setup, teardown),
        cmocka_unit_test_setup_teardown(test_room_and_missing_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_k8s_lists_none, setup, teardown),
        cmocka_unit_test(test_task_rank),
        cmocka_unit_test(test_local_node),
        cmocka_unit_test(test_spool_path),
        cmocka_unit_test(test_event_jobs_field),
    };
    return cmocka_run_group_tests_name("orch_local", tests, NULL, NULL);
}
