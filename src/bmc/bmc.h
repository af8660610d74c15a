/* bmc.h — a node's baseboard management controller: power cycle, on, off
 * and status, through Redfish (DMTF DSP0266, over libcurl: redfish.c) or
 * IPMI (`ipmitool -I lanplus`, spawned with argv: ipmi.c).  What `vigil bmc`
 * and a repair ladder's power-cycle rung run. */
#ifndef VG_BMC_H
#define VG_BMC_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum vg_bmc_op { VG_BMC_CYCLE, VG_BMC_ON, VG_BMC_OFF, VG_BMC_STATUS };

/* What a call returns: done, the BMC refused or did not answer in time, or
 * the input (URL, credentials file, a reset type) was bad. */
enum { VG_BMC_DONE = 0, VG_BMC_REFUSED = 1, VG_BMC_BAD_INPUT = 2 };

struct vg_bmc_conf {
    char url[512];             /* Redfish: https://BMC (no trailing slash needed) */
    char host[256];            /* IPMI: the BMC's address */
    char user[128], password[256];
    char cacert[512];          /* a CA bundle for the BMC's certificate */
    bool insecure;             /* no certificate check (explicit) */
    char reset_type[32];       /* Redfish: this ResetType instead of the chosen one */
    int64_t timeout_ms;        /* the whole operation, task and power state included */
    int64_t poll_ms;           /* task monitor and power state polls (default 1 s) */
};

struct vg_bmc_result {
    char power[32];            /* the power state at the end ("On", "Off"; "" unknown) */
    char reset_type[32];       /* Redfish: the ResetType POSTed; IPMI: the control name */
    char task[32];             /* Redfish: the task's last TaskState ("" none) */
    char message[512];         /* one line: what the BMC said, or what failed */
};

const char *vg_bmc_op_name(enum vg_bmc_op op);   /* "power-cycle", … */
int vg_bmc_op_parse(const char *s, enum vg_bmc_op *op);

/* Reads `user:password` from the first line of path, which must be a regular
 * file that only its owner may read (mode 0600 or 0400).  0, or -1 with err. */
int vg_bmc_read_user_file(const char *path, struct vg_bmc_conf *c, char *err, size_t errlen);

/* The operation through Redfish / ipmitool; returns VG_BMC_*, r says what happened. */
int vg_bmc_redfish(const struct vg_bmc_conf *c, enum vg_bmc_op op, struct vg_bmc_result *r);
int vg_bmc_ipmi(const struct vg_bmc_conf *c, enum vg_bmc_op op, struct vg_bmc_result *r);
/* ipmitool's output (stdout, stderr, exit status) read as the result of op. */
int vg_bmc_ipmi_parse(enum vg_bmc_op op, const char *out, const char *err, int status, struct vg_bmc_result *r);

#endif
