/* k8s_event.c — a core/v1 Event on a Node when vigil isolates it or returns
 * it, so `kubectl describe node` and `kubectl get events` show what vigil did
 * next to the kubelet's own events.  core/v1 rather than events.k8s.io/v1:
 * kubectl describe reads core/v1 Events (fieldSelector involvedObject.*),
 * and both are one store in the API server.  The Event is written the way
 * client-go's recorder writes a new one: name NODE.<nanoseconds in hex>, in
 * the namespace "default" (the API server's rule for an object without one,
 * legacyValidateEvent), involvedObject kind Node with the node's uid,
 * source.component and reportingComponent "vigil", firstTimestamp =
 * lastTimestamp, count 1.  An Event is a courtesy: it is tried once (no
 * retries), and a failure never fails the isolation; it is logged once, then
 * not again until an Event is written. */
#include "orch/k8s.h"
#include "util/log.h"
#include "util/strutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void vg_k8s_node_event(struct vg_orch *o, struct vg_k8s_http *h, const json_t *node, bool warning, const char *reason,
                       const char *message, bool *warned)
{
    const json_t *md = json_object_get(node, "metadata");
    const char *name = json_string_value(json_object_get(md, "name"));
    if (!name) return;
    const char *uid = json_string_value(json_object_get(md, "uid"));
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char now[32], ename[128];
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(ename, sizeof ename, "%.60s.%llx", name, (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
    json_t *ev = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:s,s:s,s:s},s:s,s:s,s:s,s:{s:s},s:s,s:s,s:i,s:s}",
                           "apiVersion", "v1", "kind", "Event", "metadata", "name", ename, "namespace", "default",
                           "involvedObject", "apiVersion", "v1", "kind", "Node", "name", name, "uid", uid ? uid : name,
                           "reason", reason, "message", message, "type", warning ? "Warning" : "Normal", "source",
                           "component", "vigil", "firstTimestamp", now, "lastTimestamp", now, "count", 1,
                           "reportingComponent", "vigil");
    char *body = json_dumps(ev, JSON_COMPACT);
    json_decref(ev);
    char saved[sizeof o->err];
    vg_strlcpy(saved, o->err, sizeof saved);
    struct vg_k8s_http once = *h;   /* h is shared with the other nodes' writes */
    once.retries = 0;
    json_t *ans;
    const char *path = "/api/v1/namespaces/default/events";
    long st = vg_k8s_request(o, &once, "POST", path, NULL, body, &ans);
    free(body);
    if (st >= 200 && st < 300) *warned = false;
    else {
        vg_k8s_fail(o, st, ans, "POST", path);
        if (!*warned) vg_warn("k8s: the %s Event on node %s was not written (isolation goes on; said once): %s", reason,
                              name, o->err);
        *warned = true;
        vg_strlcpy(o->err, saved, sizeof o->err);
    }
    json_decref(ans);
}
