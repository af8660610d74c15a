/* k8s_node.c — Kubernetes' node-local operations (orch.h local_node,
 * task_rank), read from the environment a pod is given, without a request
 * to the API server.  The jobs on a node (local_jobs) are not one of them:
 * the API server lists a node's pods for the controller before it isolates
 * the node (jobs_on), so an agent's own list adds nothing there, and an
 * agent asking the API (or the kubelet's authenticated pod list) at every
 * heartbeat would load the server with a request per node per second. */
#include "orch/k8s_int.h"
#include "util/strutil.h"
#include <stdlib.h>

/* $NODE_NAME: the DaemonSet sets it from spec.nodeName. */
bool vg_k8s_local_node(char *buf, size_t n)
{
    return vg_env_copy("NODE_NAME", buf, n);
}

/* A pod of an Indexed Job (a JobSet's too): JOB_COMPLETION_INDEX of
 * VIGIL_NTASKS (the pod count vigil's workload sets, k8s_jobs.c).  A pod
 * carries no restart count every task shares (a replacement pod starts on
 * its own), so there is none to key a collective on. */
bool vg_k8s_task_rank(struct vg_orch_task *t)
{
    if (!getenv("JOB_COMPLETION_INDEX")) return false;
    t->rank = vg_env_long("JOB_COMPLETION_INDEX", 0);
    t->ntasks = vg_env_long("VIGIL_NTASKS", 1);
    t->restarts = 0;
    t->restarts_known = false;
    return true;
}
