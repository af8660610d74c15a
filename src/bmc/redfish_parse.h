/* redfish_parse.h — reading the Redfish objects a reset needs, without I/O
 * (redfish.c does the requests; the fuzz target feeds these any JSON): the
 * systems collection's member, the ComputerSystem's Reset action and its
 * allowed ResetType values, the ResetType for an operation, a Task's state
 * and messages, and the one-line message of an error response. */
#ifndef VG_REDFISH_PARSE_H
#define VG_REDFISH_PARSE_H
#include "bmc/bmc.h"
#include <jansson.h>

/* The first member's @odata.id of a collection; NULL when there is none. */
const char *vg_redfish_first_member(const json_t *coll);
/* The ComputerSystem's `Actions."#ComputerSystem.Reset".target`; NULL when
 * absent.  *allowed gets its `ResetType@Redfish.AllowableValues` (borrowed;
 * NULL when the BMC lists none). */
const char *vg_redfish_reset_target(const json_t *sys, const json_t **allowed);
/* The ResetType for op: want when given (it must be allowed), else for a
 * cycle PowerCycle, else ForceRestart; on: On, else ForceOn; off: ForceOff.
 * Without a list of allowed values the first choice is taken.  0 with out
 * set, or -1 with why naming the value and what the BMC allows. */
int vg_redfish_pick_reset(enum vg_bmc_op op, const json_t *allowed, const char *want, char *out, size_t n,
                          char *why, size_t whylen);
/* An error response's message: every `error.@Message.ExtendedInfo[].Message`
 * joined with "; ", else `error.message`, else `error.code`; "" when the body
 * is not an error. */
void vg_redfish_error_message(const json_t *body, char *out, size_t n);
/* A Task's TaskState ("" when the body is not a Task) and its Messages[].Message joined. */
const char *vg_redfish_task_state(const json_t *task, char *msg, size_t n);
/* Whether a TaskState is final, and whether it is a success. */
bool vg_redfish_task_done(const char *state, bool *ok);

#endif
