/* test_intake.c — what the controller decides at its intake rather than
 * believing the sender: each event's action from its own catalog and site
 * policy (a real SQLite store, the bundled catalog), and a read bounded by
 * its own limits, not by the deadline a request has to arrive (a real
 * libmicrohttpd server, a real libcurl client). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "catalog/catalog.h"
#include "controller/httpapi.h"
#include "controller/ingest.h"
#include "controller/store.h"
#include "util/timeutil.h"
#include "wire/auth.h"
#include "wire/client.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/vigil-intake-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static struct vg_store *open_store(const char *name)
{
    char path[128], err[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct vg_store *st;
    assert_int_equal(vg_store_open(path, &st, err, sizeof err), 0);
    return st;
}

/* The XID 79 of a node that says "ignore" (a compromised or an old agent),
 * one that says nothing, and one that says "drain-rma" for an XID 13. */
static const char *msg =
    "{\"node\":\"n2\",\"seq\":7,\"events\":["
    "{\"kind\":\"xid\",\"code\":79,\"pci\":\"0000:18:00.0\",\"gpu\":1,\"action\":\"ignore\",\"source\":\"kmsg\"},"
    "{\"kind\":\"xid\",\"code\":79,\"pci\":\"0000:3b:00.0\",\"gpu\":2,\"source\":\"kmsg\"},"
    "{\"kind\":\"xid\",\"code\":13,\"pci\":\"0000:5e:00.0\",\"gpu\":3,\"action\":\"drain-rma\",\"source\":\"kmsg\"}]}";

static char *actions(struct vg_store *st)
{
    json_t *incs = vg_store_incidents(st, "n2", false, 0), *i;
    size_t k;
    static char out[128];
    out[0] = 0;
    /* oldest first */
    for (k = json_array_size(incs); k-- > 0;) {
        i = json_array_get(incs, k);
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", out[0] ? " " : "",
                 json_string_value(json_object_get(i, "action")));
    }
    json_decref(incs);
    return out;
}

static void test_controller_decides(void **state)
{
    (void)state;
    char err[256], path[128];
    struct vg_catalog *cat = vg_catalog_open(NULL, NULL, NULL, err, sizeof err);
    assert_non_null(cat);
    struct vg_store *st = open_store("a.db");
    struct vg_ingest in = { .store = st, .window_ms = 60000, .cat = cat };
    json_t *resp;
    assert_int_equal(vg_ingest_message(&in, msg, vg_now_ms(), &resp), 202);
    json_decref(resp);
    /* the catalog's: XID 79 reboot (twice), XID 13 restart-app */
    assert_string_equal(actions(st), "reboot reboot restart-app");
    vg_store_close(st);
    vg_catalog_free(cat);
    /* the site policy the agents apply applies here too */
    snprintf(path, sizeof path, "%s/policy.tsv", dir);
    FILE *f = fopen(path, "w");
    fputs("xid 79 action=drain-rma\nxid 13 action=ignore\n", f);
    fclose(f);
    cat = vg_catalog_open(NULL, NULL, path, err, sizeof err);
    assert_non_null(cat);
    st = open_store("b.db");
    in = (struct vg_ingest){ .store = st, .window_ms = 60000, .cat = cat };
    assert_int_equal(vg_ingest_message(&in, msg, vg_now_ms(), &resp), 202);
    json_decref(resp);
    assert_string_equal(actions(st), "drain-rma drain-rma ignore");
    vg_store_close(st);
    vg_catalog_free(cat);
}

/* A fleet merge that takes longer than a request may take to arrive (the
 * deadline: 300 ms here) is still answered. */
static int64_t merge_started;
static json_t *slow_merge(void *ctx, struct vg_store *reader)
{
    (void)ctx, (void)reader;
    merge_started = vg_mono_ms();
    struct timespec ts = { 0, 20000000 };
    while (vg_mono_ms() - merge_started < 900) nanosleep(&ts, NULL);   /* past the deadline and the reaper's round */
    return json_pack("{s:s}", "merged", "late");
}

static void test_slow_read_not_cut(void **state)
{
    (void)state;
    char err[256], url[128];
    struct vg_auth none;
    assert_int_equal(vg_auth_init(&none, &(struct vg_auth_conf){ .mode = "none" }, err, sizeof err), 0);
    struct vg_store *st = open_store("c.db");
    struct vg_ingest in = { .store = st, .window_ms = 60000 };
    struct vg_http_opts ho = { .listen = "127.0.0.1:0", .deadline_ms = 300, .fleet = slow_merge };
    struct vg_http *h = vg_http_start(&ho, &none, &in, err, sizeof err);
    assert_non_null(h);
    snprintf(url, sizeof url, "http://127.0.0.1:%u/v1/audit", vg_http_port(h));
    long status = 0;
    char *resp = NULL;
    int rc = vg_client_get(url, NULL, 5000, &status, &resp, err, sizeof err);
    if (rc) fail_msg("the read was cut: %s", err);
    assert_int_equal(status, 200);
    assert_string_equal(resp, "{\"merged\":\"late\"}");
    free(resp);
    vg_http_stop(h);
    vg_store_close(st);
    vg_auth_free(&none);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_controller_decides, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slow_read_not_cut, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
