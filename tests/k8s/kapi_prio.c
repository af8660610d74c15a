/* kapi_prio.c — pod priority in the Kubernetes API double, as the
 * scheduling.k8s.io/v1 contract and the Priority admission plugin document
 * it: PriorityClass objects (value required, preemptionPolicy defaulting to
 * PreemptLowerPriority, at most one globalDefault), a new pod's
 * spec.priority and spec.preemptionPolicy set from its priorityClassName
 * (an unknown class: 403 "no PriorityClass with name … was found"; none: the
 * global default's value, else 0), core/v1 Events (the scheduler's
 * Scheduled and Preempted, the kubelet's Started), and required node
 * affinity (nodeSelectorTerms, matchExpressions In / NotIn / Exists /
 * DoesNotExist on the node's labels). */
#include "kapi.h"
#include <stdio.h>
#include <string.h>

static const char *str(const json_t *o, const char *k) { return json_string_value(json_object_get(o, k)) ?: ""; }

int kapi_pc_validate(json_t *pc, char *msg, size_t n)
{
    const char *name = str(json_object_get(pc, "metadata"), "name");
    if (!json_is_integer(json_object_get(pc, "value")))
        return snprintf(msg, n, "PriorityClass.scheduling.k8s.io \"%s\" is invalid: value: Required value", name), -1;
    json_t *pol = json_object_get(pc, "preemptionPolicy");
    if (!pol) json_object_set_new(pc, "preemptionPolicy", json_string("PreemptLowerPriority"));
    else if (strcmp(str(pc, "preemptionPolicy"), "Never") && strcmp(str(pc, "preemptionPolicy"), "PreemptLowerPriority"))
        return snprintf(msg, n, "PriorityClass.scheduling.k8s.io \"%s\" is invalid: preemptionPolicy: Unsupported value: "
                        "\"%s\": supported values: \"Never\", \"PreemptLowerPriority\"", name, str(pc, "preemptionPolicy")), -1;
    if (json_is_true(json_object_get(pc, "globalDefault"))) {
        const char *k;
        json_t *o;
        json_object_foreach(K.priorityclasses, k, o)
            if (json_is_true(json_object_get(o, "globalDefault")))
                return snprintf(msg, n, "PriorityClass.scheduling.k8s.io \"%s\" is invalid: globalDefault: Invalid value: "
                                "true: globalDefault %s already exists", name, k), -1;
    }
    return 0;
}

int kapi_admit_pod(json_t *pod, char *msg, size_t n)
{
    json_t *spec = json_object_get(pod, "spec");
    if (!json_is_object(spec)) return 0;
    const char *cls = str(spec, "priorityClassName");
    json_t *pc = NULL;
    if (*cls && !(pc = json_object_get(K.priorityclasses, cls)))
        return snprintf(msg, n, "pods \"%s\" is forbidden: no PriorityClass with name %s was found",
                        str(json_object_get(pod, "metadata"), "name"), cls), -1;
    if (!pc) {
        const char *k;
        json_t *o;
        json_object_foreach(K.priorityclasses, k, o) if (json_is_true(json_object_get(o, "globalDefault"))) pc = o;
        if (pc) json_object_set_new(spec, "priorityClassName", json_string(str(json_object_get(pc, "metadata"), "name")));
    }
    json_object_set_new(spec, "priority", json_integer(pc ? json_integer_value(json_object_get(pc, "value")) : 0));
    json_object_set_new(spec, "preemptionPolicy", json_string(pc ? str(pc, "preemptionPolicy") : "PreemptLowerPriority"));
    return 0;
}

void kapi_event(const json_t *pod, const char *reason, const char *action, const char *message, const char *component)
{
    const json_t *md = json_object_get(pod, "metadata");
    char name[400], key[500];
    snprintf(name, sizeof name, "%s.%lx", str(md, "name"), ++K.seq);
    snprintf(key, sizeof key, "%s/%s", str(md, "namespace"), name);
    bool sched = !strcmp(component, "default-scheduler");   /* events.k8s.io recorder: eventTime, no timestamps */
    char micro[40];
    snprintf(micro, sizeof micro, "%.19s.000000Z", kapi_now());
    json_t *ev = json_pack("{s:s,s:s,s:{s:s,s:s,s:s},s:{s:s,s:s,s:s,s:s,s:s},s:s,s:s,s:{s:s},s:s,s:i,s:s,s:s}",
                           "apiVersion", "v1", "kind", "Event", "metadata", "name", name, "namespace",
                           str(md, "namespace"), "creationTimestamp", kapi_now(), "involvedObject", "kind", "Pod",
                           "apiVersion", "v1", "namespace", str(md, "namespace"), "name", str(md, "name"), "uid",
                           str(md, "uid"), "reason", reason, "message", message, "source", "component", component,
                           "type", "Normal", "count", 1, "reportingComponent", component, "action", action);
    if (sched) json_object_set_new(ev, "eventTime", json_string(micro));
    else {
        json_object_set_new(ev, "firstTimestamp", json_string(kapi_now()));
        json_object_set_new(ev, "lastTimestamp", json_string(kapi_now()));
    }
    kapi_bump(ev);
    json_object_set_new(K.events, key, ev);
}

static bool expr_ok(const json_t *e, const json_t *labels)
{
    const char *op = str(e, "operator");
    json_t *v = json_object_get(labels, str(e, "key"));
    bool in = false;
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(e, "values"), i, w) if (json_equal(v, w)) in = true;
    if (!strcmp(op, "In")) return in;
    if (!strcmp(op, "NotIn")) return !in;
    if (!strcmp(op, "Exists")) return v != NULL;
    if (!strcmp(op, "DoesNotExist")) return v == NULL;
    return false;   /* Gt / Lt: not modelled here */
}

bool kapi_affinity_ok(const json_t *pod, const json_t *node)
{
    json_t *req = json_object_get(json_object_get(json_object_get(json_object_get(pod, "spec"), "affinity"),
                                                  "nodeAffinity"), "requiredDuringSchedulingIgnoredDuringExecution");
    json_t *terms = json_object_get(req, "nodeSelectorTerms");
    if (!json_array_size(terms)) return true;
    json_t *labels = json_object_get(json_object_get(node, "metadata"), "labels");
    size_t i, j;
    json_t *t, *e;
    json_array_foreach(terms, i, t) {   /* terms are ORed, expressions ANDed */
        bool all = json_array_size(json_object_get(t, "matchExpressions")) > 0;
        json_array_foreach(json_object_get(t, "matchExpressions"), j, e) if (!expr_ok(e, labels)) all = false;
        if (all) return true;
    }
    return false;
}
