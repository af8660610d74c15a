/* test_bmc.c — the BMC client: the Redfish objects read from the DMTF
 * mockups and the iDRAC error sample (tests/fixtures/redfish/), the ResetType
 * choice, ipmitool's real output lines (tests/fixtures/ipmitool/), the
 * credentials file's mode, and the Redfish client against the service double
 * (build/tests/redfish over HTTPS with a fresh certificate): a cycle through
 * a 202 task monitor, PowerState confirmed, power off, a ResetType the BMC
 * does not allow, 400 and 409 with the BMC's message, 401, a task that ends
 * in Exception, a BMC that never answers, a certificate not trusted. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bmc/bmc.h"
#include "bmc/redfish_parse.h"
#include "util/spawn.h"
#include "util/strutil.h"
#include "util/timeutil.h"

#define FIX "tests/fixtures/redfish/"
#define IPMI "tests/fixtures/ipmitool/"

static json_t *fixture(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, FIX "%s", name);
    json_t *j = json_load_file(path, 0, NULL);
    if (!j) fail_msg("%s: cannot read", path);
    return j;
}

static char *text(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, IPMI "%s", name);
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("%s: cannot read", path);
    static char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return vg_xstrdup(buf);
}

static void test_parse_mockups(void **state)
{
    (void)state;
    json_t *coll = fixture("redfish-mockup-systems-collection.json"), *sys = fixture("redfish-mockup-computersystem-437XR1138R2.json");
    assert_string_equal(vg_redfish_first_member(coll), "/redfish/v1/Systems/437XR1138R2");
    const json_t *allowed;
    assert_string_equal(vg_redfish_reset_target(sys, &allowed), "/redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset");
    assert_int_equal(json_array_size(allowed), 8);
    char rt[32], why[400];
    /* the mockup has no PowerCycle: a cycle is a ForceRestart there */
    assert_int_equal(vg_redfish_pick_reset(VG_BMC_CYCLE, allowed, NULL, rt, sizeof rt, why, sizeof why), 0);
    assert_string_equal(rt, "ForceRestart");
    assert_int_equal(vg_redfish_pick_reset(VG_BMC_ON, allowed, NULL, rt, sizeof rt, why, sizeof why), 0);
    assert_string_equal(rt, "On");
    assert_int_equal(vg_redfish_pick_reset(VG_BMC_OFF, allowed, NULL, rt, sizeof rt, why, sizeof why), 0);
    assert_string_equal(rt, "ForceOff");
    assert_int_equal(vg_redfish_pick_reset(VG_BMC_CYCLE, allowed, "PowerCycle", rt, sizeof rt, why, sizeof why), -1);
    assert_non_null(strstr(why, "does not allow ResetType PowerCycle (it allows: On, ForceOff,"));
    assert_int_equal(vg_redfish_pick_reset(VG_BMC_CYCLE, allowed, "GracefulRestart", rt, sizeof rt, why, sizeof why), 0);
    assert_string_equal(rt, "GracefulRestart");
    /* without a list (it is optional) the first choice is taken */
    assert_int_equal(vg_redfish_pick_reset(VG_BMC_CYCLE, NULL, NULL, rt, sizeof rt, why, sizeof why), 0);
    assert_string_equal(rt, "PowerCycle");
    /* a list without any value for the operation */
    json_t *only = json_pack("[s]", "Nmi");
    assert_int_equal(vg_redfish_pick_reset(VG_BMC_CYCLE, only, NULL, rt, sizeof rt, why, sizeof why), -1);
    assert_non_null(strstr(why, "no ResetType for power-cycle (PowerCycle or ForceRestart; it allows: Nmi)"));
    json_decref(only);
    json_decref(coll);
    json_decref(sys);
}

static void test_parse_task_and_error(void **state)
{
    (void)state;
    json_t *task = fixture("redfish-mockup-task-545.json"), *err = fixture("redfish-error-response-idrac-documented-sample.json");
    char msg[400];
    bool ok;
    assert_string_equal(vg_redfish_task_state(task, msg, sizeof msg), "Completed");
    assert_string_equal(msg, "The property SKU is a read only property and cannot be assigned a value");
    assert_true(vg_redfish_task_done("Completed", &ok) && ok);
    assert_true(vg_redfish_task_done("Exception", &ok) && !ok);
    assert_false(vg_redfish_task_done("Running", &ok));
    vg_redfish_error_message(err, msg, sizeof msg);
    assert_string_equal(msg, "Unable to process the request because an error occurred.");
    json_object_del(json_object_get(err, "error"), "@Message.ExtendedInfo");   /* error.message then */
    vg_redfish_error_message(err, msg, sizeof msg);
    assert_string_equal(msg, "A general error has occurred. See ExtendedInfo for more information.");
    vg_redfish_error_message(task, msg, sizeof msg);
    assert_string_equal(msg, "");
    assert_string_equal(vg_redfish_task_state(err, msg, sizeof msg), "");
    json_decref(task);
    json_decref(err);
}

static void ipmi(enum vg_bmc_op op, const char *out, const char *err, int status, int want_rc, const char *want_msg,
                 const char *want_power)
{
    struct vg_bmc_result r;
    memset(&r, 0, sizeof r);
    char *o = out ? text(out) : vg_xstrdup(""), *e = err ? text(err) : vg_xstrdup("");
    assert_int_equal(vg_bmc_ipmi_parse(op, o, e, status, &r), want_rc);
    assert_string_equal(r.message, want_msg);
    assert_string_equal(r.power, want_power);
    free(o);
    free(e);
}

static void test_ipmitool_outputs(void **state)
{
    (void)state;
    ipmi(VG_BMC_STATUS, "ipmitool-chassis-power-status-on.txt", NULL, 0, VG_BMC_DONE, "Chassis Power is on", "On");
    ipmi(VG_BMC_STATUS, "ipmitool-chassis-power-status-off.txt", NULL, 0, VG_BMC_DONE, "Chassis Power is off", "Off");
    ipmi(VG_BMC_CYCLE, "ipmitool-chassis-power-cycle-ok-moonshot.txt", NULL, 0, VG_BMC_DONE, "Chassis Power Control: Cycle", "");
    ipmi(VG_BMC_ON, "ipmitool-chassis-power-on-ok.txt", NULL, 0, VG_BMC_DONE, "Chassis Power Control: Up/On", "");
    ipmi(VG_BMC_CYCLE, NULL, "ipmitool-chassis-power-cycle-fail-not-supported-in-present-state.txt", 1, VG_BMC_REFUSED,
         "Set Chassis Power Control to Cycle failed: Command not supported in present state", "");
    ipmi(VG_BMC_OFF, NULL, "ipmitool-chassis-power-off-fail-not-supported-in-present-state.txt", 1, VG_BMC_REFUSED,
         "Set Chassis Power Control to Down/Off failed: Command not supported in present state", "");
    ipmi(VG_BMC_ON, NULL, "ipmitool-chassis-power-on-fail-invalid-command-openbmc.txt", 1, VG_BMC_REFUSED,
         "Set Chassis Power Control to Up/On failed: Invalid command", "");
    /* the Moonshot prints its discovery lines on stdout before the failure */
    ipmi(VG_BMC_CYCLE, NULL, "ipmitool-chassis-power-reset-fail-moonshot.txt", 1, VG_BMC_REFUSED,
         "Set Chassis Power Control to Reset failed: Unknown (0x80)", "");
    ipmi(VG_BMC_CYCLE, NULL, "ipmitool-lanplus-session-error.txt", 1, VG_BMC_REFUSED,
         "Error: Unable to establish IPMI v2 / RMCP+ session", "");
    /* a status asked, a control line answered: not a status */
    ipmi(VG_BMC_STATUS, "ipmitool-chassis-power-on-ok.txt", NULL, 0, VG_BMC_REFUSED, "ipmitool: no result line: Chassis Power Control: Up/On", "");
}

static void test_user_file(void **state)
{
    (void)state;
    char path[] = "/tmp/vigil-bmc-user-XXXXXX", err[600];
    int fd = mkstemp(path);
    assert_true(write(fd, "root:calvin\nignored\n", 20) == 20);
    close(fd);
    struct vg_bmc_conf c;
    memset(&c, 0, sizeof c);
    assert_int_equal(vg_bmc_read_user_file(path, &c, err, sizeof err), 0);   /* mkstemp: 0600 */
    assert_string_equal(c.user, "root");
    assert_string_equal(c.password, "calvin");
    chmod(path, 0640);
    assert_int_equal(vg_bmc_read_user_file(path, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "mode 0640: a credentials file must be readable by its owner only"));
    chmod(path, 0600);
    FILE *f = fopen(path, "w");
    fputs("no-colon\n", f);
    fclose(f);
    assert_int_equal(vg_bmc_read_user_file(path, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "line 1: not 'user:password'"));
    unlink(path);
    assert_int_equal(vg_bmc_read_user_file(path, &c, err, sizeof err), -1);
}

/* ---- the client against the double ------------------------------------------ */

struct dbl {
    char dir[64], port[32];
    pid_t pid;
};
static struct dbl D;

static int run_quiet(const char *const argv[])
{
    struct vg_spawn_result r;
    vg_spawn(argv, NULL, NULL, 60000, &r);
    int st = r.status;
    vg_spawn_result_free(&r);
    return st;
}

static int start_double(void **state)
{
    (void)state;
    snprintf(D.dir, sizeof D.dir, "/tmp/vigil-redfish-XXXXXX");
    if (!mkdtemp(D.dir)) return -1;
    char key[128], cert[128], pf[128];
    snprintf(key, sizeof key, "%s/ca.key", D.dir);
    snprintf(cert, sizeof cert, "%s/ca.pem", D.dir);
    snprintf(pf, sizeof pf, "%s/port", D.dir);
    const char *ossl[] = { "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                           "-days", "2", "-subj", "/CN=bmc", "-addext", "subjectAltName=IP:127.0.0.1", NULL };
    if (run_quiet(ossl)) return -1;
    D.pid = fork();
    if (D.pid == 0) {
        execl("build/tests/redfish", "redfish", "--port-file", pf, "--tls-cert", cert, "--tls-key", key, "--mockups",
              "tests/fixtures/redfish", "--user", "admin", "--password", "s3cret", "--task-ms", "300", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 200 && access(pf, R_OK); i++) vg_sleep_ms(25);
    FILE *f = fopen(pf, "r");
    if (!f) return -1;
    int port = 0;
    if (fscanf(f, "%d", &port) != 1) port = 0;
    fclose(f);
    snprintf(D.port, sizeof D.port, "%d", port);
    return port ? 0 : -1;
}

static int stop_double(void **state)
{
    (void)state;
    if (D.pid > 0) {
        kill(D.pid, SIGTERM);
        waitpid(D.pid, NULL, 0);
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "%s/ca.key", D.dir), unlink(cmd);
    snprintf(cmd, sizeof cmd, "%s/ca.pem", D.dir), unlink(cmd);
    snprintf(cmd, sizeof cmd, "%s/port", D.dir), unlink(cmd);
    rmdir(D.dir);
    return 0;
}

static void set_mode(const char *mode)
{
    char url[128], cert[128];
    snprintf(url, sizeof url, "https://127.0.0.1:%s/_test/mode", D.port);
    snprintf(cert, sizeof cert, "%s/ca.pem", D.dir);
    const char *argv[] = { "curl", "-sf", "--cacert", cert, "--data-binary", mode, url, NULL };
    assert_int_equal(run_quiet(argv), 0);
}

static struct vg_bmc_conf conf(void)
{
    struct vg_bmc_conf c = { .timeout_ms = 5000, .poll_ms = 50 };
    snprintf(c.url, sizeof c.url, "https://127.0.0.1:%s", D.port);
    snprintf(c.cacert, sizeof c.cacert, "%s/ca.pem", D.dir);
    vg_strlcpy(c.user, "admin", sizeof c.user);
    vg_strlcpy(c.password, "s3cret", sizeof c.password);
    return c;
}

static void test_redfish_cycle(void **state)
{
    (void)state;
    set_mode("normal");
    struct vg_bmc_conf c = conf();
    struct vg_bmc_result r;
    assert_int_equal(vg_bmc_redfish(&c, VG_BMC_CYCLE, &r), VG_BMC_DONE);
    assert_string_equal(r.reset_type, "ForceRestart");
    assert_string_equal(r.task, "Completed");
    assert_string_equal(r.power, "On");
    assert_string_equal(r.message, "/redfish/v1/Systems/437XR1138R2: ResetType ForceRestart, task Completed, PowerState On");
    assert_int_equal(vg_bmc_redfish(&c, VG_BMC_OFF, &r), VG_BMC_DONE);
    assert_string_equal(r.power, "Off");
    assert_int_equal(vg_bmc_redfish(&c, VG_BMC_STATUS, &r), VG_BMC_DONE);
    assert_string_equal(r.power, "Off");
    assert_int_equal(vg_bmc_redfish(&c, VG_BMC_ON, &r), VG_BMC_DONE);
    assert_string_equal(r.power, "On");
    /* a value the BMC does not allow is refused before anything is POSTed */
    vg_strlcpy(c.reset_type, "PowerCycle", sizeof c.reset_type);
    assert_int_equal(vg_bmc_redfish(&c, VG_BMC_CYCLE, &r), VG_BMC_REFUSED);
    assert_non_null(strstr(r.message, "the BMC does not allow ResetType PowerCycle"));
    /* not https: bad input */
    c = conf();
    snprintf(c.url, sizeof c.url, "http://127.0.0.1:%s", D.port);
    assert_int_equal(vg_bmc_redfish(&c, VG_BMC_CYCLE, &r), VG_BMC_BAD_INPUT);
}

static void test_redfish_faults(void **state)
{
    (void)state;
    struct vg_bmc_conf c = conf();
    struct vg_bmc_result r;
    set_mode("refuse");
    assert_int_equal(vg_bmc_redfish(&c, VG_BMC_CYCLE, &r), VG_BMC_REFUSED);
    assert_string_equal(r.message, "POST /redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset: HTTP 400: "
                                   "Unable to process the request because an error occurred.");
    set_mode("conflict");
    assert_int_equal(vg_bmc_redfish(&c, VG_BMC_CYCLE, &r), VG_BMC_REFUSED);
    assert_non_null(strstr(r.message, "HTTP 409: Unable to process the request"));
    set_mode("unauthorized");
    assert_int_equal(vg_bmc_redfish(&c, VG_BMC_CYCLE, &r), VG_BMC_REFUSED);
    assert_string_equal(r.message, "GET /redfish/v1/Systems: HTTP 401 Unauthorized (the BMC does not accept the credentials)");
    set_mode("normal");
    vg_strlcpy(c.password, "wrong", sizeof c.password);
    assert_int_equal(vg_bmc_redfish(&c, VG_BMC_STATUS, &r), VG_BMC_REFUSED);
    assert_non_null(strstr(r.message, "HTTP 401"));
    c = conf();
    set_mode("exception");
    assert_int_equal(vg_bmc_redfish(&c, VG_BMC_CYCLE, &r), VG_BMC_REFUSED);
    assert_string_equal(r.message, "the task ended in Exception: The property SKU is a read only property and cannot "
                                   "be assigned a value");
    /* the certificate is checked: without its CA the system's do not trust it */
    set_mode("normal");
    c.cacert[0] = 0;
    assert_int_equal(vg_bmc_redfish(&c, VG_BMC_STATUS, &r), VG_BMC_REFUSED);
    assert_non_null(strstr(r.message, "certificate"));
    c.insecure = true;   /* explicit */
    assert_int_equal(vg_bmc_redfish(&c, VG_BMC_STATUS, &r), VG_BMC_DONE);
    /* a BMC that never answers: the deadline */
    c = conf();
    c.timeout_ms = 800;
    set_mode("hang");
    int64_t t0 = vg_mono_ms();
    assert_int_equal(vg_bmc_redfish(&c, VG_BMC_CYCLE, &r), VG_BMC_REFUSED);
    assert_string_equal(r.message, "GET /redfish/v1/Systems: the BMC did not answer in time");
    assert_true(vg_mono_ms() - t0 < 5000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_mockups),
        cmocka_unit_test(test_parse_task_and_error),
        cmocka_unit_test(test_ipmitool_outputs),
        cmocka_unit_test(test_user_file),
        cmocka_unit_test(test_redfish_cycle),
        cmocka_unit_test(test_redfish_faults),
    };
    return cmocka_run_group_tests(tests, start_double, stop_double);
}
