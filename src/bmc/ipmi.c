/* ipmi.c — a power operation through `ipmitool -I lanplus -H HOST -U USER
 * -f PASSFILE chassis power cycle|on|off|status`, spawned with argv (never a
 * shell), the password in a temporary file only its owner can read, removed
 * after the run.  The output lines read are the ones ipmitool's
 * lib/ipmi_chassis.c prints: "Chassis Power Control: Cycle" (stdout) for a
 * control that was accepted, "Chassis Power is on|off" for the status, "Set
 * Chassis Power Control to Cycle failed: Command not supported in present
 * state" (stderr) for one the BMC refused, and lanplus's "Error: Unable to
 * establish IPMI v2 / RMCP+ session" when it cannot log in. */
#include "bmc/bmc.h"
#include "util/spawn.h"
#include "util/strutil.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The line of text that starts with prefix (copied into out), or NULL. */
static const char *line_with(const char *text, const char *prefix, char *out, size_t n)
{
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (!vg_startswith(p, prefix)) continue;
        size_t len = strcspn(p, "\r\n");
        snprintf(out, n, "%.*s", (int)len, p);
        return out;
    }
    return NULL;
}

/* The last non-empty line of text. */
static void last_line(const char *text, char *out, size_t n)
{
    char *copy = vg_xstrdup(text ? text : ""), *save = NULL, *last = "";
    for (char *t = strtok_r(copy, "\r\n", &save); t; t = strtok_r(NULL, "\r\n", &save))
        if (*vg_trim(t)) last = vg_trim(t);
    vg_strlcpy(out, last, n);
    free(copy);
}

int vg_bmc_ipmi_parse(enum vg_bmc_op op, const char *out, const char *err, int status, struct vg_bmc_result *r)
{
    char line[400];
    if (line_with(err, "Set Chassis Power Control to ", line, sizeof line) ||
        line_with(err, "Error: Unable to establish", line, sizeof line) ||
        line_with(out, "Set Chassis Power Control to ", line, sizeof line)) {
        snprintf(r->message, sizeof r->message, "%s", line);
        return VG_BMC_REFUSED;
    }
    if (op == VG_BMC_STATUS && line_with(out, "Chassis Power is ", line, sizeof line)) {
        const char *s = line + strlen("Chassis Power is ");
        vg_strlcpy(r->power, !strcmp(s, "on") ? "On" : !strcmp(s, "off") ? "Off" : s, sizeof r->power);
        snprintf(r->message, sizeof r->message, "%s", line);
        return status ? VG_BMC_REFUSED : VG_BMC_DONE;
    }
    if (op != VG_BMC_STATUS && line_with(out, "Chassis Power Control: ", line, sizeof line)) {
        vg_strlcpy(r->reset_type, line + strlen("Chassis Power Control: "), sizeof r->reset_type);
        snprintf(r->message, sizeof r->message, "%s", line);
        return status ? VG_BMC_REFUSED : VG_BMC_DONE;
    }
    last_line(err && err[strspn(err, " \t\r\n")] ? err : out, line, sizeof line);
    snprintf(r->message, sizeof r->message, "ipmitool: %s%s", status ? "failed" : "no result line",
             *line ? ": " : "");
    size_t len = strlen(r->message);
    vg_strlcpy(r->message + len, line, sizeof r->message - len);
    return VG_BMC_REFUSED;
}

int vg_bmc_ipmi(const struct vg_bmc_conf *c, enum vg_bmc_op op, struct vg_bmc_result *r)
{
    memset(r, 0, sizeof *r);
    if (!c->host[0] || c->host[0] == '-') {
        snprintf(r->message, sizeof r->message, "--ipmi: '%s' is not a host", c->host);
        return VG_BMC_BAD_INPUT;
    }
    const char *tmpdir = getenv("TMPDIR");
    char pass[600];
    snprintf(pass, sizeof pass, "%s/vigil-ipmi-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    int fd = mkstemp(pass);   /* mode 0600 */
    if (fd < 0) {
        snprintf(r->message, sizeof r->message, "%.300s: %s", pass, strerror(errno));
        return VG_BMC_REFUSED;
    }
    size_t len = strlen(c->password);
    bool written = write(fd, c->password, len) == (ssize_t)len && write(fd, "\n", 1) == 1;
    close(fd);
    if (!written) {
        unlink(pass);
        snprintf(r->message, sizeof r->message, "%.300s: cannot write the password file", pass);
        return VG_BMC_REFUSED;
    }
    static const char *const verbs[] = { [VG_BMC_CYCLE] = "cycle", [VG_BMC_ON] = "on", [VG_BMC_OFF] = "off",
                                          [VG_BMC_STATUS] = "status" };
    const char *argv[] = { "ipmitool", "-I", "lanplus", "-H", c->host, "-U", c->user, "-f", pass,
                           "chassis", "power", verbs[op], NULL };
    struct vg_spawn_result sr;
    int64_t timeout = c->timeout_ms > 0 ? c->timeout_ms : 300000;
    vg_spawn(argv, NULL, NULL, (int)timeout, &sr);
    unlink(pass);
    int rc;
    if (sr.timed_out) {
        snprintf(r->message, sizeof r->message, "ipmitool did not finish within %lld s (the BMC does not answer)",
                 (long long)(timeout / 1000));
        rc = VG_BMC_REFUSED;
    } else if (sr.status == -1) {
        snprintf(r->message, sizeof r->message, "ipmitool: cannot run: %.300s", vg_trim(sr.err));
        rc = VG_BMC_REFUSED;
    } else
        rc = vg_bmc_ipmi_parse(op, sr.out, sr.err, sr.status, r);
    vg_spawn_result_free(&sr);
    return rc;
}
