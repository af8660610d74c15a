/* test_controller_obj.c — the controller as one object, in this process: a
 * real SQLite store in a temporary directory, the real HTTP server on
 * 127.0.0.1 (auth none) asked by the real libcurl client, the real intake,
 * group commit and executor (dry run), on the unit tests' in-memory
 * orchestrator (fake_orch.h).  An agent's message posted over HTTP and the
 * controller's own event (vg_intake_event) both become incidents the
 * executor takes up; the stop is clean (ASan: nothing leaks); a second
 * controller on the same store file is refused. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "controller/controller.h"
#include "core/event.h"
#include "helpers/fake_orch.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include "wire/auth.h"
#include "wire/client.h"

static char dir[64], db[128];
static struct vg_auth none;

static int setup(void **state)
{
    (void)state;
    char err[256];
    strcpy(dir, "/tmp/vigil-ctlobj-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(db, sizeof db, "%s/state/incidents.db", dir);   /* its directory made by the controller */
    fake_reset();
    fake_add_node("n1", NULL);
    fake_add_node("n2", NULL);
    return vg_auth_init(&none, &(struct vg_auth_conf){ .mode = "none" }, err, sizeof err);
}

static int teardown(void **state)
{
    (void)state;
    vg_auth_free(&none);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static struct vg_controller_opts opts(void)
{
    return (struct vg_controller_opts){ .listen = "127.0.0.1:0", .db = db, .auth = &none, .orch_ops = &fake_orch_ops,
                                        .window_s = 60, .act = false };
}

/* GET path on c: the status, the body parsed (NULL when it is not JSON). */
static json_t *get(struct vg_controller *c, const char *path, long *status)
{
    char url[256], err[256];
    char *body = NULL;
    snprintf(url, sizeof url, "%s%s", vg_controller_url(c), path);
    if (vg_client_get(url, NULL, 5000, status, &body, err, sizeof err)) fail_msg("GET %s: %s", url, err);
    json_t *j = json_loads(body, 0, NULL);
    free(body);
    return j;
}

/* Waits (10 s at most) until node has an incident of kind in state; its id. */
static long long wait_incident(struct vg_controller *c, const char *node, const char *kind, const char *state)
{
    char path[128], seen[512] = "none";
    snprintf(path, sizeof path, "/v1/incidents?node=%s", node);
    for (int64_t end = vg_mono_ms() + 10000; vg_mono_ms() < end;) {
        long status = 0;
        json_t *page = get(c, path, &status), *inc;
        assert_int_equal(status, 200);
        size_t i;
        json_array_foreach(page, i, inc) {
            const char *k = json_string_value(json_object_get(inc, "kind"));
            const char *s = json_string_value(json_object_get(inc, "state"));
            snprintf(seen, sizeof seen, "%s %s", k ? k : "?", s ? s : "?");
            if (k && s && !strcmp(k, kind) && !strcmp(s, state)) {
                long long id = json_integer_value(json_object_get(inc, "id"));
                json_decref(page);
                return id;
            }
        }
        json_decref(page);
        struct timespec ts = { 0, 20000000 };
        nanosleep(&ts, NULL);
    }
    fail_msg("no %s incident in state %s on %s (last seen: %s)", kind, state, node, seen);
    return 0;
}

static void test_events_become_incidents(void **state)
{
    (void)state;
    char err[512];
    struct vg_controller_opts o = opts();
    struct vg_controller *c = vg_controller_start(&o, err, sizeof err);
    if (!c) fail_msg("start: %s", err);
    assert_true(vg_controller_port(c) > 0);
    char want[64];
    snprintf(want, sizeof want, "http://127.0.0.1:%u", vg_controller_port(c));
    assert_string_equal(vg_controller_url(c), want);
    assert_int_equal(access(db, F_OK), 0);

    /* an agent's message over HTTP: committed before its 202 */
    char url[256];
    snprintf(url, sizeof url, "%s/v1/events", vg_controller_url(c));
    const char *msg = "{\"node\":\"n1\",\"spool\":\"0123456789abcdef0123456789abcdef\",\"seq\":1,\"events\":["
                      "{\"kind\":\"xid\",\"code\":79,\"pci\":\"0000:18:00.0\",\"gpu\":1,\"source\":\"kmsg\"}]}";
    long status = 0;
    char *resp = NULL;
    if (vg_client_post(url, &none, msg, 5000, &status, &resp, err, sizeof err)) fail_msg("POST: %s", err);
    assert_int_equal(status, 202);
    json_t *ack = json_loads(resp, 0, NULL);
    free(resp);
    long long posted = json_integer_value(json_array_get(json_object_get(ack, "new"), 0));
    json_decref(ack);
    assert_true(posted > 0);
    /* the executor took it up (dry run: what it would have done) */
    assert_int_equal(wait_incident(c, "n1", "xid", "dry-run"), posted);

    /* the controller's own event: the same pipeline, no message text */
    struct vg_event e;
    vg_event_init(&e);
    vg_strlcpy(e.node, "n2", sizeof e.node);
    vg_strlcpy(e.source, "probe", sizeof e.source);
    vg_strlcpy(e.kind, "node-silent", sizeof e.kind);
    vg_strlcpy(e.jobs, "12,345", sizeof e.jobs);
    e.time_ms = e.seen_ms = e.first_ms = e.last_ms = vg_now_ms();
    vg_strlcpy(e.raw, "silent for 2 beats; slurmd does not answer", sizeof e.raw);
    assert_int_equal(vg_intake_event(vg_controller_intake(c), &e, err, sizeof err), 0);
    long long own = wait_incident(c, "n2", "node-silent", "dry-run");
    assert_true(own > posted);
    char path[64];
    snprintf(path, sizeof path, "/v1/incidents/%lld", own);
    json_t *inc = get(c, path, &status);
    assert_int_equal(status, 200);
    json_t *ev = json_object_get(inc, "event");
    assert_string_equal(json_string_value(json_object_get(ev, "source")), "probe");
    assert_string_equal(json_string_value(json_object_get(ev, "jobs")), "12,345");
    assert_string_equal(json_string_value(json_object_get(ev, "raw")), "silent for 2 beats; slurmd does not answer");
    json_decref(inc);

    /* an event the intake would refuse from an agent is refused here too, naming the field */
    vg_strlcpy(e.kind, "no-such-kind", sizeof e.kind);
    assert_int_equal(vg_intake_event(vg_controller_intake(c), &e, err, sizeof err), -1);
    assert_non_null(strstr(err, "field 'kind'"));
    vg_strlcpy(e.kind, "node-silent", sizeof e.kind);
    vg_strlcpy(e.node, "-n2", sizeof e.node);
    assert_int_equal(vg_intake_event(vg_controller_intake(c), &e, err, sizeof err), -1);
    assert_non_null(strstr(err, "field 'node'"));

    /* the metrics the controller adds to the HTTP server's */
    snprintf(url, sizeof url, "%s/metrics", vg_controller_url(c));
    char *text = NULL;
    assert_int_equal(vg_client_get(url, NULL, 5000, &status, &text, err, sizeof err), 0);
    assert_int_equal(status, 200);
    assert_non_null(strstr(text, "vigil_store_messages_total 2\n"));
    assert_non_null(strstr(text, "vigil_open_incidents{state=\"dry-run\"} 2\n"));
    free(text);
    assert_false(vg_controller_stop(c));
}

/* One controller per SQLite store: the second is refused (the lock), and
 * starts once the first has stopped. */
static void test_second_refused(void **state)
{
    (void)state;
    char err[512];
    struct vg_controller_opts o = opts();
    struct vg_controller *a = vg_controller_start(&o, err, sizeof err);
    if (!a) fail_msg("start: %s", err);
    assert_null(vg_controller_start(&o, err, sizeof err));
    assert_non_null(strstr(err, "serve: "));
    assert_non_null(strstr(err, "pid"));
    assert_false(vg_controller_stop(a));
    struct vg_controller *b = vg_controller_start(&o, err, sizeof err);
    if (!b) fail_msg("start after the first stopped: %s", err);
    assert_false(vg_controller_stop(b));
}

/* A start that fails half-way leaves nothing behind (ASan: no leak) and
 * says why. */
static void test_start_fails_cleanly(void **state)
{
    (void)state;
    char err[512];
    struct vg_controller_opts o = opts();
    o.listen = "127.0.0.1:notaport";
    assert_null(vg_controller_start(&o, err, sizeof err));
    assert_non_null(strstr(err, "listen: '127.0.0.1:notaport' is not ADDR:PORT"));
    o = opts();
    char file[160];
    snprintf(file, sizeof file, "%s/plain", dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(db, sizeof db, "%s/plain/incidents.db", dir);
    assert_null(vg_controller_start(&o, err, sizeof err));
    assert_non_null(strstr(err, "is not a directory"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_events_become_incidents, setup, teardown),
        cmocka_unit_test_setup_teardown(test_second_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_start_fails_cleanly, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
