/* agent.h — `vigil agent`, the per-node daemon: one poll() loop over the
 * kernel log, the GPU vendors' event children, a timer for periodic checks (run in a
 * watchdog probe) and the spool's retry deadline.  Signals become events,
 * events get the catalog's verdict, the dedup folds repeats, and each new
 * incident is spooled and POSTed to the controller — or, with no controller,
 * acted on locally like `vigil check --drain`.  See docs/agent.md. */
#ifndef VG_AGENT_H
#define VG_AGENT_H
#include "core/event.h"
#include <stdbool.h>
#include <stddef.h>

#define VG_AGENT_CONTROLLERS_MAX 8   /* URLs in --controller */

struct vg_agent_opts {
    const char *node;            /* this node's name */
    const char *controller;      /* base URL (http://host:port), or several comma-separated (controllers
                                  * sharing one store: one is sent to, the next on failure), NULL = standalone */
    int post_timeout_ms;         /* a message's POST timeout; 0: 3 s */
    const char *auth_mode;       /* munge | token | none */
    const char *token_file, *munge_socket;
    const char *ca_file;         /* verify an https:// controller against this CA (PEM); NULL: the system's */
    const char *kmsg;            /* /dev/kmsg, a file to follow, or a FIFO */
    bool kmsg_from_start;        /* read what the log holds already */
    const char *spool;           /* the spool file */
    size_t spool_max;            /* its cap in bytes (record-only events dropped first); 0: none */
    const char *config;          /* a `vigil check` config for the periodic checks, or NULL */
    const char *root;            /* files the periodic checks and the NIC probe read are under it; NULL: / */
    bool nic;                    /* run the NIC probe (port counters, the RDMA stack) */
    int nic_interval_ms;         /* its period; 0: interval_ms */
    const char *policy;          /* a site policy file for the catalog, or NULL */
    const char *catalog;         /* NULL = the bundled one */
    int interval_ms;             /* periodic checks; 0 = none */
    int window_ms;               /* dedup window */
    int retry_max_ms;            /* the longest wait between delivery attempts */
    int heartbeat_ms;            /* beat to the controller this often; 0 = none */
    int audit_every_ms;          /* send this node's audit report this often; 0 = none */
    enum vg_action drain_at;     /* standalone: drain at or above this */
    bool drain;                  /* standalone: drain this node through the orchestrator */
    const char *orchestrator;    /* the scheduler of this node (NULL = slurm): its node name and jobs here, and
                                  * standalone, the drain through it */
    const char *orch_config;     /* standalone: its configuration file, or NULL */
    bool insecure_http;          /* standalone: an http:// Kubernetes API server accepted */
    const char *jobs_from;       /* where the orchestrator's node daemon keeps this node's jobs (its local_jobs;
                                  * Slurm: slurmd's spool directory; %n = node), "" or NULL = none */
    bool gpu_events;             /* watch the GPU vendors' event sources */
    bool once;                   /* one pass, then exit */
    bool json;                   /* JSON lines on stdout */
};

/* Runs until SIGTERM/SIGINT (or one pass with once).  Returns 0, 1 (once: a
 * verdict at or above drain_at was seen), or -1 when it could not start (err
 * says why, naming the file or option). */
int vg_agent_run(const struct vg_agent_opts *o, char *err, size_t errlen);

#endif
