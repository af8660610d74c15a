/* fuzz_k8s.c — libFuzzer target for the Kubernetes backend's readers: the
 * kubeconfig (YAML through libyaml) and Node / Pod objects (JSON), and the
 * node cache's trimmed copy of a Node (read back the same). */
#include "orch/k8s.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vg_k8s_conf c;
    memset(&c, 0, sizeof c);
    char err[256];
    vg_k8s_conf_parse((const char *)data, size, "/d", &c, err, sizeof err);
    vg_k8s_conf_free(&c);
    json_t *v = json_loadb((const char *)data, size, 0, NULL);
    if (v) {
        struct vg_k8s_node n;
        struct vg_k8s_pod p;
        vg_k8s_node_parse(v, &n);
        vg_k8s_pod_parse(v, &p);
        json_t *t = vg_k8s_node_trim(v);
        struct vg_k8s_node tn;
        if (t && (vg_k8s_node_parse(t, &tn) || memcmp(&n, &tn, sizeof n))) __builtin_trap();
        json_decref(t);
        size_t i;
        json_t *item;
        json_array_foreach(json_object_get(v, "items"), i, item) {
            vg_k8s_node_parse(item, &n);
            vg_k8s_pod_parse(item, &p);
        }
        json_decref(v);
    }
    return 0;
}
