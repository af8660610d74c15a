/* event.h — the event: the one record every stage passes on (kernel-log
 * parser, NVML and sysfs readers, probes, checks, the agent, the controller's
 * store and the drill).  Its JSON form is the wire and file format. */
#ifndef VG_EVENT_H
#define VG_EVENT_H
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* Ordered: a larger value is a more severe action. */
enum vg_action {
    VG_ACT_IGNORE = 0,
    VG_ACT_RESTART_APP,
    VG_ACT_RESET_GPU,
    VG_ACT_REBOOT,
    VG_ACT_DRAIN_RMA,
    VG_ACT_COUNT
};

const char *vg_action_name(enum vg_action a);          /* "reset-gpu" … */
bool vg_action_parse(const char *s, enum vg_action *a);

#define VG_EVENT_JOBS 64   /* room for an event's (and a heartbeat's) job list */

struct vg_event {
    char node[64];
    int64_t time_ms;      /* when the signal happened (0 = unknown) */
    int64_t seen_ms;      /* when vigil read it */
    char source[8];       /* kmsg nvml sysfs probe check */
    char kind[24];        /* xid sxid fallen-off-bus ecc-dbe row-remap-failure … */
    int code;             /* XID/SXID number; -1 when none */
    char pci[16];         /* 0000:bb:dd.f, or "" */
    int gpu;              /* GPU index; -1 when unknown */
    enum vg_action action;
    int count;            /* identical events folded into this one (>= 1) */
    int64_t first_ms, last_ms;
    char cause[64];       /* "kind:code@pci" of the event this follows from, or "" */
    char raw[512];        /* the source text (truncated) */
    char jobs[VG_EVENT_JOBS]; /* the Slurm jobs its node's agent saw there ("12,345"; from
                               * slurmd's spool), "" when unknown: named in the incident's record,
                               * used only to find a job to tell, never requeued from */
};

void vg_event_init(struct vg_event *e);
json_t *vg_event_to_json(const struct vg_event *e);
/* Fills e from JSON; on a bad or missing field returns -1 and names it in err. */
int vg_event_from_json(const json_t *j, struct vg_event *e, char *err, size_t errlen);
/* Appends a fresh event (time and seen = now) to ev[*n] when *n < max and
 * returns it, NULL when the array is full.  Used by the signal readers that
 * fill an array of events (NVML states, sysfs). */
struct vg_event *vg_event_append(struct vg_event *ev, int *n, int max, const char *node, const char *source,
                                 const char *kind, const char *pci);
/* Whether s is a job list as the event's jobs field holds it: "" or
 * positive integers separated by commas. */
bool vg_event_jobs_ok(const char *s);
/* Whether id is one of the ids in such a list. */
bool vg_event_jobs_has(const char *jobs, long id);
/* "kind:code@pci" (or gpu index when no pci): the identity used for dedup and causes. */
void vg_event_key(const struct vg_event *e, char *buf, size_t n);

#endif
