/* k8s.h — the Kubernetes orchestrator's parts (src/orch/k8s*.c): where the
 * API server is and how to authenticate (k8s_config.c: kubeconfig or the
 * in-cluster service account), HTTP with retries, a cap on answers and lists
 * read in pages (k8s_http.c), the pure readers of Node and Pod objects
 * (k8s_parse.c), Events on nodes (k8s_event.c), node writes on a worker per
 * node (k8s_worker.c), and the ops (k8s.c).
 * Nothing outside src/orch/ knows the Kubernetes API. */
#ifndef VG_K8S_H
#define VG_K8S_H
#include "orch/orch.h"
#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VG_K8S_FAULT_TAINT "vigil.dev/fault"
#define VG_K8S_SPARE_TAINT "vigil.dev/spare"
#define VG_K8S_SPARE_LABEL "vigil.dev/spare"
#define VG_K8S_ANNOTATION "vigil.dev/isolated"
#define VG_K8S_CONDITION "VigilHealthy"
#define VG_K8S_DRILL_LABEL "vigil.dev/drill"   /* a drill's Job and its pods */
#define VG_K8S_EXEC_LABEL "vigil.dev/exec"     /* a one-shot pod running a command on a node (its name) */
#define VG_K8S_BURNIN_LABEL "vigil.dev/burnin" /* a burn-in pass's pod (its node's name); its PriorityClass */
#define VG_K8S_GPU "nvidia.com/gpu"
#define VG_K8S_JOBSET_LABEL "jobset.sigs.k8s.io/jobset-name"        /* every pod of a JobSet */
#define VG_K8S_JOBSET_ATTEMPT "jobset.sigs.k8s.io/restart-attempt"  /* … and the restart it belongs to */
#define VG_K8S_AMD_GPU "amd.com/gpu"           /* AMD's device plugin's resource */
/* The node label that names its rack / NVLink domain (NVIDIA's GPU feature
 * discovery sets it on GB200/GB300); $VIGIL_K8S_DOMAIN_LABEL overrides.
 * Without it, an AMD node's XGMI hive (the id vigil status shows), where a
 * site labels nodes whose GPUs share one: a reset is not contained to one
 * GPU of a hive, so a hive is one domain. */
#define VG_K8S_DOMAIN_LABEL "nvidia.com/gpu.clique"
#define VG_K8S_HIVE_LABEL "vigil.dev/xgmi-hive"
#define VG_K8S_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/* Where the API server is and who vigil is to it.  PEM blobs are malloc'd. */
struct vg_k8s_conf {
    char server[512];        /* https://host:port, no trailing slash */
    char token[4096];        /* bearer token; "" when a client certificate is used */
    char ca_file[1024];      /* CA bundle file, or */
    char *ca_pem;            /* CA bundle inline (certificate-authority-data, decoded) */
    char cert_file[1024], key_file[1024];
    char *cert_pem, *key_pem;
    bool insecure;           /* insecure-skip-tls-verify */
    char source[1100];       /* the file or "in-cluster", for messages */
};

/* Whether a server URL is plain HTTP. */
bool vg_k8s_plain_http(const char *server);

/* Reads a kubeconfig (YAML, or JSON) held in text: its current context's
 * cluster and user.  dir resolves relative file names.  -1 with err naming
 * the field at fault. */
int vg_k8s_conf_parse(const char *text, size_t len, const char *dir, struct vg_k8s_conf *c, char *err, size_t n);
/* The configuration vigil uses: file (--orch-config), else $KUBECONFIG, else
 * in-cluster (KUBERNETES_SERVICE_HOST/PORT and the service-account token and
 * CA under VG_K8S_SA_DIR), else ~/.kube/config. */
int vg_k8s_conf_load(const char *file, struct vg_k8s_conf *c, char *err, size_t n);
void vg_k8s_conf_free(struct vg_k8s_conf *c);

/* ---- HTTP ----------------------------------------------------------------- */

/* The most of one answer vigil reads (a larger one fails the request, saying
 * so): lists come in pages of VG_K8S_PAGE items, so a page of nodes whose
 * status lists 50 images each is a few MB. */
#define VG_K8S_MAX_ANSWER (32L << 20)
#define VG_K8S_PAGE 100

struct vg_k8s_http {
    struct vg_k8s_conf conf;
    int timeout_ms;
    int retries;             /* tries after the first on 429 / 5xx / no answer */
    int backoff_ms;          /* first wait; doubles */
};

/* One API request (retried with backoff on 429, 5xx and on no answer).
 * Returns the HTTP status (0: no answer; err says why) and the answer's JSON
 * in *out (may be NULL).  ctype: the body's Content-Type (NULL: JSON). */
long vg_k8s_request(struct vg_orch *o, struct vg_k8s_http *h, const char *method, const char *path,
                    const char *ctype, const char *body, json_t **out);
/* The same, with the answer as text in *raw (malloc'd, may be NULL): for
 * answers that are not JSON, such as a pod's log. */
long vg_k8s_request_raw(struct vg_orch *o, struct vg_k8s_http *h, const char *method, const char *path,
                        const char *ctype, const char *body, char **raw);
/* A one-line reason for a failed request: the Status message, with what
 * 401/403/404 mean for vigil. */
int vg_k8s_fail(struct vg_orch *o, long status, json_t *answer, const char *method, const char *path);
/* GET of a list (path may carry a query) in pages of VG_K8S_PAGE (limit and
 * continue): each item is handed to each() while its page is held, so no
 * more than one page is ever in memory.  0, or -1 with o->err (each()
 * returning -1 stops it: it set o->err). */
int vg_k8s_list(struct vg_orch *o, struct vg_k8s_http *h, const char *path,
                int (*each)(struct vg_orch *o, const json_t *item, void *ud), void *ud);

/* A core/v1 Event on node (a Node object as read): type Warning or Normal,
 * reason, message; tried once, never fails the caller; a failure is logged
 * when *warned is false (then set; cleared by a success).  k8s_event.c. */
void vg_k8s_node_event(struct vg_orch *o, struct vg_k8s_http *h, const json_t *node, bool warning, const char *reason,
                       const char *message, bool *warned);

/* ---- node writes, a worker per node (k8s_worker.c) ---------------------------- */

/* One write to a node (what k8s.c's job does with it: isolate, resume). */
struct vg_k8s_write {
    char node[64];
    int op, how;
    char reason[256];
};

/* A node's write runs on a thread of its own, with the HTTP timeouts of any
 * request: a write that hangs (a stuck admission webhook) holds only its
 * node; its caller waits at most until a deadline and is told it is still
 * under way.  The job runs with an orchestrator handle of its own (ops and
 * priv of the caller's, its own err and calls). */
struct vg_k8s_task;
struct vg_k8s_workers {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct vg_k8s_task *tasks;   /* one per node at most: the latest write */
    const struct vg_orch_ops *ops;
    void *priv;
    int timeout_ms;
    int (*job)(struct vg_orch *o, const struct vg_k8s_write *w);
    void (*hold)(void *priv), (*release)(void *priv);   /* priv lives while a job runs */
};
void vg_k8s_workers_init(struct vg_k8s_workers *w, const struct vg_orch_ops *ops, void *priv, int timeout_ms,
                         int (*job)(struct vg_orch *o, const struct vg_k8s_write *w), void (*hold)(void *),
                         void (*release)(void *));
/* Starts the write on its node's worker unless the node's last write is
 * this one, running or done and not yet taken.  true: started now (false:
 * it was under way or done already, or another write to the node still runs). */
bool vg_k8s_write_start(struct vg_k8s_workers *w, const struct vg_k8s_write *req);
/* Waits until deadline (vg_mono_ms) for the write: 0 done, -1 failed (err
 * says why), 1 still under way or another write to the node is (err says
 * so).  A result is taken once: the same write asked again runs again.
 * *calls: the API requests the write made (when it ended). */
int vg_k8s_write_wait(struct vg_k8s_workers *w, const struct vg_k8s_write *req, int64_t deadline, unsigned *calls,
                      char *err, size_t n);
/* Frees the done writes; none may run (priv's last release calls it). */
void vg_k8s_workers_fini(struct vg_k8s_workers *w);

/* ---- Node and Pod objects ------------------------------------------------ */

/* What vigil reads from a Node object. */
struct vg_k8s_node {
    struct vg_orch_node n;
    char rv[32];
    bool cordoned;           /* spec.unschedulable */
    bool ours;               /* carries vigil's annotation */
    bool cordoned_before;    /* vigil's annotation says it was cordoned before vigil came */
    bool spare_label, spare_taint;
    char fault_effect[16];   /* vigil's fault taint: "NoSchedule", "NoExecute" or "" */
    char ready[8];           /* the Ready condition's status: "True", "False", "Unknown" */
    char addr[64];           /* where its kubelet listens: InternalIP, else ExternalIP; "" when none */
    int kubelet_port;        /* status.daemonEndpoints.kubeletEndpoint.Port; 10250 when not given */
    /* n.isolated_ms: vigil's VigilHealthy=False condition's lastTransitionTime, else
     * its fault taint's timeAdded; 0 when the node is not vigil's or neither is stamped */
};
/* Reads a Node object; -1 when it is not one (no name). */
int vg_k8s_node_parse(const json_t *node, struct vg_k8s_node *out);
/* A copy of a Node with only what vigil reads and writes back (name, uid,
 * resourceVersion, labels, vigil's annotation, unschedulable, taints,
 * conditions, addresses, the kubelet's port, allocatable): what the node
 * cache holds, a few hundred bytes where the whole object (its image list)
 * may be tens of kB.  NULL when it is not a Node. */
json_t *vg_k8s_node_trim(const json_t *node);

/* What vigil reads from a Pod object. */
struct vg_k8s_pod {
    char ns[64], name[256], node[64];
    char workload[320];      /* "NS/Job/NAME" or "NS/JobSet/NAME"; "" when none */
    int attempt;             /* a JobSet's pod: the restart it belongs to (label jobset.sigs.k8s.io/restart-attempt) */
    bool daemon;             /* owned by a DaemonSet (drain leaves those), a mirror pod, or vigil's own
                              * one-shot pod (label vigil.dev/exec: it may be injecting the very fault) */
    bool gone;               /* terminating, Succeeded or Failed */
    char phase[16];          /* status.phase: "Pending", "Running", "Succeeded", "Failed", "Unknown" */
    bool ready;              /* the Ready condition is True */
    int64_t ready_ms;        /* its lastTransitionTime (to the second); 0 when not Ready or not stamped */
    int exit_code;           /* the first container's terminated.exitCode; -1 while none has ended */
    char exit_reason[64];    /* its terminated.reason ("Completed", "Error", …) */
};
int vg_k8s_pod_parse(const json_t *pod, struct vg_k8s_pod *out);
/* A workload id into its parts; false when it is not one. */
bool vg_k8s_workload_split(const char *id, char *ns, size_t nsn, char *kind, size_t kn, char *name, size_t nn);
/* A taint value from vigil's reason ("vigil: xid 79 gpu 0" → "xid-79-gpu-0"). */
void vg_k8s_taint_value(const char *reason, char *out, size_t n);

/* ---- burn-in on idle nodes (k8s_burnin.c) -------------------------------- */

/* Whether a PriorityClass object fits burn-in (value below 0, preemptionPolicy
 * Never, not the global default): 0, or 1 with why. */
int vg_k8s_pc_check(const json_t *pc, char *why, size_t n);
/* The GPU resource a node offers in its status.allocatable (NVIDIA's, else
 * AMD's) with its count in *count; NULL and 0 when it offers none. */
const char *vg_k8s_gpu_resource(const json_t *allocatable, long *count);
/* GPUs of either vendor a pod asks for (requests, else limits, over its containers). */
long vg_k8s_pod_gpus(const json_t *pod);
/* The PriorityClass vigil creates when `name` is missing. */
json_t *vg_k8s_pc_new(const char *name);
/* Sets idle / busy of the nodes from a NodeList and a PodList (the pods not
 * ended): busy when a pod other than a DaemonSet's holds GPUs there; idle
 * when not busy, it has GPUs, is Ready and schedulable. */
void vg_k8s_burnin_idle(struct vg_orch_node *nodes, size_t n, const json_t *nodelist, const json_t *podlist);
/* A burn-in pod into a job: PREEMPTED (DisruptionTarget, reason
 * PreemptionByScheduler), DEADLINE, SUCCEEDED, FAILED, RUNNING, PENDING. */
void vg_k8s_burnin_pod_job(const json_t *pod, struct vg_orch_job *out);
/* A gone pod's EventList: true when a `Preempted` event says it was
 * preempted (out: ENDED, PREEMPTED, its time; a `Started` event's time). */
bool vg_k8s_burnin_events(const json_t *events, struct vg_orch_job *out);
/* Whether a job id is a burn-in pod's ("pod/NS/NAME"). */
bool vg_k8s_burnin_id(const char *id);
/* The ops' burn-in parts (k8s.c hands its HTTP state in). */
int vg_k8s_burnin_prepare(struct vg_orch *o, struct vg_k8s_http *h, const char *queue, struct vg_orch_node *nodes,
                          size_t n);
/* A pass's pod pinned to j->nodelist at PriorityClass j->partition; takes command. */
int vg_k8s_burnin_submit(struct vg_orch *o, struct vg_k8s_http *h, const char *ns, const char *image,
                         const struct vg_orch_jobspec *j, json_t *command, char *id, size_t idlen);
int vg_k8s_burnin_get(struct vg_orch *o, struct vg_k8s_http *h, const char *id, struct vg_orch_job *out);
int vg_k8s_burnin_cancel(struct vg_orch *o, struct vg_k8s_http *h, const char *id);
int vg_k8s_burnin_output(struct vg_orch *o, struct vg_k8s_http *h, const char *id, char **text);

#endif
