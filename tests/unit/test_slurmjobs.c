/* test_slurmjobs.c — the jobs of a node read from slurmd's spool directory
 * (agent/slurmjobs.c): the step sockets' names as slurmd 22.05 writes them
 * (NODE_JOBID.STEPID; the batch step 4294967291 and step 0 of job 3 were
 * listed on the lab), other nodes' and other files ignored, %n expanded,
 * whole ids only when the room runs out; and the event's jobs field, which
 * carries the list, refusing anything but ids separated by commas. */
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
#include "agent/slurmjobs.h"
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
    assert_int_equal(vg_slurmd_jobs(dir, "n2", out, sizeof out), 0);
    assert_string_equal(out, "");   /* no step: known, none */
    const char *names[] = { "n2_3.0", "n2_3.4294967291", "n2_12.0", "n20_5.0", "n2_x.0", "n2_7.", "n2_.0",
                            "cred_state", "cred_state.old", "job00003", "n2_9.4294967292", NULL };
    for (int i = 0; names[i]; i++) touch(names[i]);
    assert_int_equal(vg_slurmd_jobs(dir, "n2", out, sizeof out), 0);
    assert_string_equal(out, "3,9,12");   /* each job once, ascending; n20's and malformed names not */
    assert_int_equal(vg_slurmd_jobs(dir, "n20", out, sizeof out), 0);
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
    assert_int_equal(vg_slurmd_jobs(dir, "n2", out, sizeof out), 0);
    assert_string_equal(out, "3,9");   /* "3,9,12" does not fit: whole ids only */
    char big[64] = "x";
    assert_int_equal(vg_slurmd_jobs("/nonexistent/vigil-spool", "n2", big, sizeof big), -1);
    assert_string_equal(big, "");
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
        cmocka_unit_test(test_spool_path),
        cmocka_unit_test(test_event_jobs_field),
    };
    return cmocka_run_group_tests_name("slurmjobs", tests, NULL, NULL);
}
