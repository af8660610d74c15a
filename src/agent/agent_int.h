/* agent_int.h — the agent's state, shared by its parts: loop.c (the poll
 * loop and the event path), kfollow.c (the kernel log), gpuwatch.c (the GPU
 * vendors' event children), periodic.c (checks under the watchdog), sender.c
 * (spool and delivery), controllers.c (which controller of the list it sends
 * to), msgsplit.c (messages cut to the wire's caps) and standalone.c (acting
 * on the node through the orchestrator when there is no controller). */
#ifndef VG_AGENT_INT_H
#define VG_AGENT_INT_H
#include "agent/agent.h"
#include "agent/spool.h"
#include "catalog/catalog.h"
#include "wire/auth.h"
#include "signal/checkconf.h"
#include "signal/gpu.h"
#include "catalog/dedup.h"
#include "catalog/repeat.h"
#include "orch/orch.h"
#include "signal/kmsg.h"
#include "signal/probe.h"
#include "signal/nicrate.h"
#include <jansson.h>
#include <stdint.h>
#include <sys/types.h>

struct kfollow {
    char *path;
    char base[256];         /* the file's name in its directory */
    bool stream;            /* /dev/kmsg or a FIFO: poll the fd itself */
    int fd;                 /* the log (-1 while a followed file is missing) */
    int ino;                /* inotify fd (files) */
    off_t off;
    dev_t dev;
    ino_t inode;
    /* what the file held when last read: its first bytes and the bytes just
     * before off, to tell a file truncated and refilled past off */
    char head[64], tail[64];
    size_t head_len, tail_len;
    char *buf;
    struct vg_kmsg k;
};

/* One of the periodic probes in flight. */
struct per_slot {
    struct vg_probe p;
    bool running;
    int64_t deadline;       /* vg_mono_ms() */
    int grace;              /* times the deadline was extended for a probe starved of CPU */
};

struct periodic {
    int tfd;                /* timerfd of the GPU probe or check config run */
    int nic_tfd;            /* timerfd of the NIC probe, -1 none */
    struct per_slot chk;    /* the GPU probe, or the check config run */
    bool gpu_only;          /* chk is the GPU probe, not a check config */
    struct per_slot nic;    /* the NIC probe: port counters, the RDMA stack */
    struct vg_nic_rates *rates;   /* the ports' counters as last read */
    struct vg_checkconf conf;
    bool have_conf;
    /* each GPU's uncorrectable count at the last read: a count is a fault when it rises */
    struct { char pci[16]; long long ue; } ue[64];
    int nue;
};

/* One GPU vendor's event child. */
struct gpuwatch {
    const struct vg_gpu_vendor *v;
    pid_t pid;
    int fd;                 /* its pipe, -1 while it is not running */
    int64_t restart;        /* vg_mono_ms() after which a dead child is restarted */
    bool said_absent;       /* "no such GPU here" was logged */
};

struct agent {
    const struct vg_agent_opts *o;
    char node[64];
    const struct vg_orch_ops *sched; /* this node's scheduler (opts.orchestrator) */
    char jobs_from[512];    /* where its node daemon keeps this node's jobs (opts.jobs_from), "" = none */
    struct vg_catalog *cat;
    struct vg_dedup *dd;
    struct vg_repeat *rep;  /* the catalog's repeat rules */
    struct kfollow kf;
    /* the GPU vendors' event children */
    struct gpuwatch gw[VG_GPU_VENDORS_MAX];
    int ngw;
    struct periodic per;
    /* delivery */
    struct vg_spool *spool;
    struct vg_auth auth;
    bool auth_ok;
    char ctl[VG_AGENT_CONTROLLERS_MAX][512];   /* the controllers' URLs, without a path (controllers.c) */
    int nctl, cur;          /* how many; the one sent to now */
    uint64_t failovers;     /* times the next controller became current */
    int64_t retry_at;       /* vg_mono_ms(); 0 = now */
    int backoff_ms;
    json_t *batch;          /* events of the message being assembled */
    /* standalone */
    struct vg_orch *orch;   /* opened when it drains with no controller */
    bool sticky;            /* a signal at or above drain_at was seen: stay drained */
    bool maybe_ours;        /* the node may carry vigil's drain */
    char drained_reason[256];
    /* counters */
    uint64_t incidents, sent, dropped, failed_posts;
    uint64_t spool_dropped;  /* record-only events the spool's cap dropped */
    uint64_t untold;         /* … not yet told to the controller (the next message carries them) */
    bool cap_warned;         /* "over its cap with faults only" said */
    char rewind_id[33];      /* the spool life a detected rewind started ("" none) */
    bool unhealthy;
    bool stop;
    /* heartbeat */
    int64_t next_beat;      /* vg_mono_ms() */
    uint64_t beats;
    bool beat_failing;
    int64_t next_audit;     /* vg_mono_ms() */
    char fabric_domain[64]; /* the NVLink domain this node's GPUs registered in, "" unknown (sent with beats) */
};

/* loop.c: the event path — classify, dedup, queue (or act). */
void agent_signal(struct agent *a, struct vg_event *e);
/* The jobs on this node ("12,345"; "" none or unknown) by the scheduler's local_jobs. */
void agent_jobs(const struct agent *a, char *out, size_t n);
/* kfollow.c */
int kf_open(struct agent *a, char *err, size_t errlen);
int kf_fd(const struct agent *a);
void kf_ready(struct agent *a);           /* its fd is readable */
void kf_drain(struct agent *a);           /* reads whatever is new */
void kf_close(struct agent *a);
/* gpuwatch.c */
void gw_init(struct agent *a);            /* one watcher slot per vendor with events, none started */
void gw_start_due(struct agent *a);       /* starts those not running whose restart time has come */
int64_t gw_restart_at(const struct agent *a);   /* the earliest such time, -1 when all run */
void gw_ready(struct agent *a, int i);    /* watcher i's fd is readable */
void gw_stop(struct agent *a);
/* periodic.c */
int per_init(struct agent *a, char *err, size_t errlen);
void per_tick(struct agent *a, int tfd);  /* a timer fired: its probe starts */
void per_ready(struct agent *a, struct per_slot *s);   /* a probe's fd is readable */
void per_deadline(struct agent *a);       /* called each loop turn */
int64_t per_next_deadline(const struct agent *a);      /* the earliest deadline of a probe running, -1 none */
void per_close(struct agent *a);
/* sender.c */
int snd_init(struct agent *a, char *err, size_t errlen);
void snd_queue(struct agent *a, const struct vg_event *e);
void snd_flush(struct agent *a);          /* the batch → one spooled message */
void snd_deliver(struct agent *a, bool once);
int snd_wait_ms(const struct agent *a);   /* until the next attempt; -1 none */
void snd_close(struct agent *a);
/* With --json, one status line {"status": {event, node, spool ("file" or
 * "memory-only"), spool_memory_only, spool_error, pending, counters}}. */
void snd_status(struct agent *a, const char *event);
/* The spool file failed: said loudly, delivery goes on from memory. */
void snd_spool_lost(struct agent *a);
/* controllers.c: the list of --controller (each URL checked; err names the
 * bad one), the first current.  0 or -1. */
int ctl_init(struct agent *a, const char *list, char *err, size_t errlen);
/* The current controller's URL for path ("/v1/heartbeat"). */
void ctl_url(const struct agent *a, const char *path, char *buf, size_t n);
/* What ctl_post got: the URL of its last try and that try's answer (status,
 * resp: malloc'd or NULL) or why none came (err); the POSTs made and how many
 * of them got no answer (such a message may have arrived all the same). */
struct ctl_result {
    char url[600];
    long status;
    char *resp;
    char err[256];
    int tries, unanswered;
};
/* POSTs body to path on the current controller; no answer or a 5xx makes
 * the next one current (logged) and it is tried at once, until one answers
 * below 500 or each was tried once.  0 when the last try got an answer, -1
 * when it got none. */
int ctl_post(struct agent *a, const char *path, const char *body, int timeout_ms, struct ctl_result *r);
/* spoolcap.c: keeps the spool under --spool-max before a message of
 * `incoming` bytes is added (the oldest record-only events go first; never a
 * fault); what it drops is counted in spool_dropped and untold. */
void cap_make_room(struct agent *a, size_t incoming);
/* msgsplit.c: cuts events into runs of at most max_events events and
 * max_bytes bytes of compact JSON (the array's); *ends (malloc'd) gets each
 * run's end index; returns the number of runs.  An event above max_bytes by
 * itself is a run of its own: none is ever left out. */
size_t msg_split(const json_t *events, size_t max_events, size_t max_bytes, size_t **ends);
/* beat.c: the heartbeat to the controller */
int beat_wait_ms(const struct agent *a);  /* until the next beat; -1 none */
void beat_due(struct agent *a);           /* beats when it is time */
/* report.c: this node's audit report to the controller */
int report_wait_ms(const struct agent *a);
void report_due(struct agent *a);
/* standalone.c */
int sa_init(struct agent *a, char *err, size_t errlen);  /* opens the orchestrator when it acts alone */
void sa_event(struct agent *a, const struct vg_event *e);
void sa_checks(struct agent *a, bool healthy, const char *reason);

#endif
