/* redfish_parse.c — the Redfish objects a reset reads; see redfish_parse.h. */
#include "bmc/redfish_parse.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include <stdio.h>
#include <string.h>

const char *vg_redfish_first_member(const json_t *coll)
{
    return json_string_value(json_object_get(json_array_get(json_object_get(coll, "Members"), 0), "@odata.id"));
}

const char *vg_redfish_reset_target(const json_t *sys, const json_t **allowed)
{
    const json_t *act = json_object_get(json_object_get(sys, "Actions"), "#ComputerSystem.Reset");
    const json_t *list = json_object_get(act, "ResetType@Redfish.AllowableValues");
    *allowed = json_is_array(list) ? list : NULL;
    return json_string_value(json_object_get(act, "target"));
}

static bool allows(const json_t *allowed, const char *v)
{
    size_t i;
    const json_t *t;
    if (!allowed) return true;
    json_array_foreach(allowed, i, t)
        if (json_is_string(t) && !strcmp(json_string_value(t), v)) return true;
    return false;
}

int vg_redfish_pick_reset(enum vg_bmc_op op, const json_t *allowed, const char *want, char *out, size_t n,
                          char *why, size_t whylen)
{
    static const char *const choices[][2] = {
        [VG_BMC_CYCLE] = { "PowerCycle", "ForceRestart" },
        [VG_BMC_ON] = { "On", "ForceOn" },
        [VG_BMC_OFF] = { "ForceOff", NULL },
        [VG_BMC_STATUS] = { NULL, NULL },
    };
    const char *pick = NULL;
    if (want && *want) pick = allows(allowed, want) ? want : NULL;
    else
        for (size_t i = 0; i < 2 && !pick && choices[op][i]; i++)
            if (allows(allowed, choices[op][i])) pick = choices[op][i];
    if (pick) {
        vg_strlcpy(out, pick, n);
        return 0;
    }
    struct sbuf b = SBUF_INIT;
    size_t i;
    const json_t *t;
    json_array_foreach(allowed, i, t) sbuf_printf(&b, "%s%s", i ? ", " : "", json_is_string(t) ? json_string_value(t) : "?");
    if (want && *want) snprintf(why, whylen, "the BMC does not allow ResetType %s (it allows: %s)", want, b.s ? b.s : "");
    else snprintf(why, whylen, "the BMC allows no ResetType for %s (%s%s%s; it allows: %s)", vg_bmc_op_name(op),
                  choices[op][0] ? choices[op][0] : "-", choices[op][1] ? " or " : "", choices[op][1] ? choices[op][1] : "",
                  b.s ? b.s : "");
    sbuf_free(&b);
    return -1;
}

/* The Message of each object of a list, joined with "; ". */
static void join_messages(const json_t *list, char *out, size_t n)
{
    struct sbuf b = SBUF_INIT;
    size_t i;
    const json_t *t;
    json_array_foreach(list, i, t) {
        const char *m = json_string_value(json_object_get(t, "Message"));
        if (m && *m) sbuf_printf(&b, "%s%s", b.len ? "; " : "", m);
    }
    vg_strlcpy(out, b.s ? b.s : "", n);
    sbuf_free(&b);
    for (char *p = out; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
}

void vg_redfish_error_message(const json_t *body, char *out, size_t n)
{
    const json_t *err = json_object_get(body, "error");
    join_messages(json_object_get(err, "@Message.ExtendedInfo"), out, n);
    if (*out) return;
    const char *m = json_string_value(json_object_get(err, "message"));
    if (!m || !*m) m = json_string_value(json_object_get(err, "code"));
    vg_strlcpy(out, m ? m : "", n);
    for (char *p = out; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
}

const char *vg_redfish_task_state(const json_t *task, char *msg, size_t n)
{
    join_messages(json_object_get(task, "Messages"), msg, n);
    const char *s = json_string_value(json_object_get(task, "TaskState"));
    return s ? s : "";
}

bool vg_redfish_task_done(const char *state, bool *ok)
{
    *ok = !strcmp(state, "Completed");
    return *ok || !strcmp(state, "Exception") || !strcmp(state, "Killed") || !strcmp(state, "Cancelled");
}
