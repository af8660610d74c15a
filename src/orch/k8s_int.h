/* k8s_int.h — what the Kubernetes ops share between k8s.c (nodes,
 * isolation, the workloads on a node, the spare pool) and k8s_jobs.c (the
 * drill's workloads: an Indexed Job or a JobSet, and one-shot pods on a
 * node).  Private to src/orch/k8s*.c. */
#ifndef VG_K8S_INT_H
#define VG_K8S_INT_H
#include "orch/k8s.h"
#include "util/sbuf.h"

struct k8s {
    struct vg_k8s_http h;        /* read-only once open: the workers share it */
    pthread_mutex_t lock;        /* cache, recent, event_warned, attempts */
    int refs;                    /* the handle and each running node write (atomics) */
    json_t *cache;               /* node name → the Node as last read or written, trimmed (vg_k8s_node_trim) */
    char ns[64];                 /* namespace of drill workloads */
    /* The pods jobs_on read on a node, reused by the DOWN that follows it
     * within a few seconds: a pod bound after that read is evicted by the
     * NoExecute taint anyway. */
    struct { char node[64]; int64_t at; struct vg_k8s_pod *pods; size_t n; } recent;
    bool event_warned;           /* an Event failed and that was logged */
    json_t *attempts;            /* "NS/JobSet/NAME" → the restart attempt jobs_on saw on the node (requeue
                                  * restarts that one gang, not one its failure policy made since) */
    struct vg_k8s_workers workers;
};

static inline struct k8s *vg_k8s_of(struct vg_orch *o) { return o->priv; }

/* A request whose success is any 2xx (the answer in *out when out is
 * given); else -1 with o->err, except a 409 when status is given (the
 * caller re-reads and tries again). */
int vg_k8s_call(struct vg_orch *o, const char *method, const char *path, const char *ctype, const char *body,
                json_t **out, long *status);
/* Percent-encodes a query value onto b. */
void vg_k8s_qenc(struct sbuf *b, const char *s);
/* Pods matching a selector (kind "fieldSelector" or "labelSelector"), in ns or all; *out malloc'd. */
int vg_k8s_pods(struct vg_orch *o, const char *ns, const char *kind, const char *sel, struct vg_k8s_pod **out,
                size_t *n);
/* The label every pod of a workload (kind "Job" or "JobSet") carries. */
void vg_k8s_gang_selector(const char *kind, const char *name, char *sel, size_t n);

/* k8s_jobs.c: the ops on the drill's workloads and commands on a node. */
int vg_k8s_job_submit(struct vg_orch *o, const struct vg_orch_jobspec *j, char *id, size_t idlen);
int vg_k8s_job_get(struct vg_orch *o, const char *id, struct vg_orch_job *out);
int vg_k8s_job_cancel(struct vg_orch *o, const char *id);
int vg_k8s_job_output(struct vg_orch *o, const char *id, char **text);
int vg_k8s_exec_on(struct vg_orch *o, const char *node, const char *const *cmd, const char *const *host_paths,
                   int timeout_ms, struct vg_spawn_result *r);

/* k8s_node.c: the node-local operations. */
bool vg_k8s_local_node(char *buf, size_t n);
bool vg_k8s_task_rank(struct vg_orch_task *t);

#endif
