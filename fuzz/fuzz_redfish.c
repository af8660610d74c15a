/* fuzz_redfish.c — libFuzzer target for what the BMC client reads from a
 * BMC: Redfish answers (collection, ComputerSystem, Task, error response;
 * bmc/redfish_parse.h) and ipmitool's output lines (vg_bmc_ipmi_parse). */
#include "bmc/bmc.h"
#include "bmc/redfish_parse.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    struct vg_bmc_result r;
    for (int op = VG_BMC_CYCLE; op <= VG_BMC_STATUS; op++) {
        memset(&r, 0, sizeof r);
        vg_bmc_ipmi_parse((enum vg_bmc_op)op, text, "", 0, &r);
        memset(&r, 0, sizeof r);
        vg_bmc_ipmi_parse((enum vg_bmc_op)op, "", text, 1, &r);
    }
    free(text);
    json_t *v = json_loadb((const char *)data, size, 0, NULL);
    if (!v) return 0;
    char out[64], why[400], msg[512];
    const json_t *allowed;
    (void)vg_redfish_first_member(v);
    if (vg_redfish_reset_target(v, &allowed))
        for (int op = VG_BMC_CYCLE; op < VG_BMC_STATUS; op++) {
            vg_redfish_pick_reset((enum vg_bmc_op)op, allowed, NULL, out, sizeof out, why, sizeof why);
            vg_redfish_pick_reset((enum vg_bmc_op)op, allowed, "PowerCycle", out, sizeof out, why, sizeof why);
        }
    vg_redfish_error_message(v, msg, sizeof msg);
    bool ok;
    vg_redfish_task_done(vg_redfish_task_state(v, msg, sizeof msg), &ok);
    json_decref(v);
    return 0;
}
