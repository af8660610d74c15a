/* kapi.h — the Kubernetes API test double (tests/k8s/): what its files
 * share.  kapi.c serves HTTP (discovery, nodes, pods, eviction, jobs, events,
 * the test controls), kapi_tls.c reads client certificates, kapi_patch.c
 * applies the three PATCH content types and
 * matches label and field selectors, kapi_sim.c is the harness's minimal
 * scheduler, kubelet, taint manager and Job controller. */
#ifndef KAPI_H
#define KAPI_H
#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* The cluster, under one lock.  Objects keyed by name (nodes) or
 * "namespace/name" (pods, jobs, daemonsets). */
struct kapi {
    pthread_mutex_t lock;
    json_t *stores;        /* "GROUP/resource" → its objects; the names below are some of them */
    json_t *nodes, *pods, *jobs, *daemonsets, *priorityclasses, *events, *jobsets;
    unsigned long rv;      /* the last resourceVersion handed out */
    unsigned long seq;     /* names of generated pods */
};
extern struct kapi K;

/* The objects of a resource ("" for the core group), made on first use. */
json_t *kapi_store(const char *group, const char *resource);
/* The OpenAPI v2 document (kapi_openapi.c): loaded from the JSON (gzip) at
 * start, served as protobuf; false when none was loaded. */
int kapi_openapi_load(const char *path);
bool kapi_openapi(const unsigned char **body, size_t *len);

/* Next resourceVersion, written into obj's metadata. */
void kapi_bump(json_t *obj);
/* RFC 3339 time now, seconds precision (static buffer). */
const char *kapi_now(void);

/* PATCH: applies patch (text) of content type ctype to a copy of obj;
 * returns the new object, or NULL with *code and msg set. */
json_t *kapi_patch(const json_t *obj, const char *ctype, const char *patch, int *code, char *msg, size_t n);
/* Selectors; return -1 with msg on a selector that cannot be parsed. */
int kapi_labels_match(const char *sel, const json_t *obj, bool *match, char *msg, size_t n);
int kapi_fields_match(const char *sel, const json_t *obj, bool *match, char *msg, size_t n);
/* Whether pod tolerates every NoSchedule/NoExecute (effect) taint of node. */
bool kapi_tolerates(const json_t *pod, const json_t *node, const char *effect);

/* One step of the simulated controllers (scheduler, kubelet, taint
 * manager, Job controller); the caller holds K.lock. */
void kapi_sim_step(void);
/* One step of the JobSet controller (kapi_jobset.c); the caller holds K.lock. */
void kapi_jobsets(void);
/* A pod leaves before it ended (deleted, evicted, its node gone): its Job
 * counts it failed, as the Job controller does.  Caller holds K.lock. */
void kapi_pod_lost(const json_t *pod);

/* A client certificate (kapi_tls.c): the subject's CN into user when it
 * verifies against the --client-ca bundle. */
struct MHD_Connection;
enum kapi_cert { KAPI_CERT_NONE, KAPI_CERT_BAD, KAPI_CERT_OK };
enum kapi_cert kapi_tls_user(struct MHD_Connection *c, char *user, size_t n);
/* Pod priority (kapi_prio.c).  A PriorityClass before it is stored: -1 with msg when invalid. */
int kapi_pc_validate(json_t *pc, char *msg, size_t n);
/* Priority admission of a new pod (spec.priority, preemptionPolicy): -1 with msg (403) for an unknown class. */
int kapi_admit_pod(json_t *pod, char *msg, size_t n);
/* A core/v1 Event about a pod, from component ("default-scheduler", "kubelet"). */
void kapi_event(const json_t *pod, const char *reason, const char *action, const char *message, const char *component);
/* Whether the pod's required node affinity admits the node. */
bool kapi_affinity_ok(const json_t *pod, const json_t *node);

/* The API misbehaving (kapi_faults.c): held requests, a node left out of
 * lists, nodes with long image lists. */
void kapi_faults_init(void);
/* Holds the request while a hang rule matches it (not under K.lock); true when it was held. */
bool kapi_hang_wait(const char *method, const char *path);
void kapi_hang_add(const json_t *rule);
void kapi_hang_release(void);
int kapi_hang_held(void);
/* Under K.lock: node lists leave node out count times; whether this list leaves it out. */
void kapi_omit_add(const char *node, long count);
bool kapi_omit_take(const char *node);
/* Under K.lock: count nodes PREFIX-NNNN of about bytes each. */
void kapi_fatten(const char *prefix, long count, long bytes);

/* The kubelet running containers as local processes (kapi_exec.c, --exec DIR). */
void kapi_exec_init(const char *dir);
bool kapi_exec_on(void);
/* Starts a bound pending pod's container and sets its status (Running, or Failed). */
void kapi_exec_run(json_t *pod, const char *key);
/* Pods whose process exited end (Succeeded / Failed); gone pods' processes are killed. */
void kapi_exec_reap(void);
/* The file holding a pod's log. */
void kapi_exec_log(const json_t *pod, char *path, size_t n);
void kapi_exec_stop(void);

#endif
