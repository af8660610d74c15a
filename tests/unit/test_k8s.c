/* test_k8s.c — the Kubernetes backend's pure parts: Node and Pod objects
 * (shapes as the API documents them, and as tests/k8s/kapi serves them),
 * ownership (vigil's annotation vs an administrator's cordon), workload ids,
 * taint values, and the kubeconfig reader (YAML and JSON, token, inline
 * certificates, relative paths, what it refuses). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "orch/k8s.h"

static json_t *J(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    if (!v) fail_msg("bad test JSON: %s", e.text);
    return v;
}

static void parse_node(const char *text, struct vg_k8s_node *n)
{
    json_t *v = J(text);
    assert_int_equal(vg_k8s_node_parse(v, n), 0);
    json_decref(v);
}

#define READY "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}"

static void test_node_healthy(void **state)
{
    (void)state;
    struct vg_k8s_node n;
    parse_node("{\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"42\",\"labels\":{\"nvidia.com/gpu.clique\":\"r1\"}},"
               "\"spec\":{}," READY "}", &n);
    assert_string_equal(n.n.name, "n1");
    assert_string_equal(n.rv, "42");
    assert_string_equal(n.n.state, "Ready");
    assert_string_equal(n.n.reason, "");
    assert_string_equal(n.n.features, "clique=r1");
    assert_string_equal(n.n.domain, "r1");   /* the rack / NVLink domain from nvidia.com/gpu.clique */
    assert_true(n.n.responding);
    assert_false(n.n.drain || n.n.down || n.ours || n.cordoned);
    /* an AMD node: its XGMI hive is its domain */
    parse_node("{\"metadata\":{\"name\":\"m1\",\"labels\":{\"vigil.dev/xgmi-hive\":\"0x5e1f000000000001\"}},"
               "\"spec\":{}," READY "}", &n);
    assert_string_equal(n.n.domain, "0x5e1f000000000001");
}

/* Where the heartbeat monitor probes the kubelet: status.addresses (InternalIP
 * before ExternalIP; a Hostname is not an address) and the port from
 * status.daemonEndpoints, as the Node object documents them. */
static void test_node_kubelet_address(void **state)
{
    (void)state;
    struct vg_k8s_node n;
    parse_node("{\"metadata\":{\"name\":\"n1\"},\"status\":{\"addresses\":[{\"type\":\"Hostname\",\"address\":\"n1\"},"
               "{\"type\":\"ExternalIP\",\"address\":\"203.0.113.7\"},{\"type\":\"InternalIP\",\"address\":\"10.0.0.1\"}],"
               "\"daemonEndpoints\":{\"kubeletEndpoint\":{\"Port\":10251}},"
               "\"conditions\":[{\"type\":\"Ready\",\"status\":\"Unknown\"}]}}", &n);
    assert_string_equal(n.addr, "10.0.0.1");
    assert_int_equal(n.kubelet_port, 10251);
    assert_string_equal(n.ready, "Unknown");
    parse_node("{\"metadata\":{\"name\":\"n2\"},\"status\":{\"addresses\":[{\"type\":\"ExternalIP\",\"address\":\"203.0.113.8\"}]}}", &n);
    assert_string_equal(n.addr, "203.0.113.8");
    assert_int_equal(n.kubelet_port, 10250);   /* the kubelet's default */
    assert_string_equal(n.ready, "Unknown");    /* no Ready condition */
    parse_node("{\"metadata\":{\"name\":\"n3\"},\"status\":{\"addresses\":[{\"type\":\"Hostname\",\"address\":\"n3\"}],"
               "\"daemonEndpoints\":{\"kubeletEndpoint\":{\"Port\":70000}}}}", &n);
    assert_string_equal(n.addr, "");
    assert_int_equal(n.kubelet_port, 10250);   /* out of range: the default */
}

static void test_node_vigil_isolated(void **state)
{
    (void)state;
    struct vg_k8s_node n;
    parse_node("{\"metadata\":{\"name\":\"n2\",\"annotations\":{\"vigil.dev/isolated\":"
               "\"{\\\"how\\\":\\\"down\\\",\\\"reason\\\":\\\"vigil: xid 79\\\",\\\"cordoned\\\":false}\"}},"
               "\"spec\":{\"unschedulable\":true,\"taints\":[{\"key\":\"vigil.dev/fault\",\"value\":\"xid-79\","
               "\"effect\":\"NoExecute\"}]}," READY "}", &n);
    assert_true(n.ours);
    assert_true(vg_orch_ours(&n.n));
    assert_string_equal(n.n.reason, "vigil: xid 79");
    assert_string_equal(n.fault_effect, "NoExecute");
    assert_true(n.n.drain && n.n.down);
    assert_false(n.cordoned_before);
    assert_string_equal(n.n.state, "Ready,SchedulingDisabled,VigilFault");
}

static void test_node_admin_cordoned(void **state)
{
    (void)state;
    struct vg_k8s_node n;
    parse_node("{\"metadata\":{\"name\":\"n3\"},\"spec\":{\"unschedulable\":true}," READY "}", &n);
    assert_true(n.n.drain);
    assert_false(n.ours);
    assert_false(vg_orch_ours(&n.n));
    assert_string_equal(n.n.reason, "cordoned (not by vigil)");
    /* a taint of someone else's, and an annotation that is not vigil's */
    parse_node("{\"metadata\":{\"name\":\"n3\",\"annotations\":{\"vigil.dev/isolated\":\"{\\\"reason\\\":\\\"me\\\"}\"}},"
               "\"spec\":{\"taints\":[{\"key\":\"maint\",\"value\":\"x\",\"effect\":\"NoSchedule\"}]}," READY "}", &n);
    assert_true(n.n.drain);
    assert_false(vg_orch_ours(&n.n));
    assert_string_equal(n.n.reason, "taint maint=x:NoSchedule");
    /* garbage in the annotation is not vigil's either */
    parse_node("{\"metadata\":{\"name\":\"n3\",\"annotations\":{\"vigil.dev/isolated\":\"{nope\"}},"
               "\"spec\":{\"unschedulable\":true}}", &n);
    assert_false(n.ours);
}

static void test_node_spare_and_notready(void **state)
{
    (void)state;
    struct vg_k8s_node n;
    parse_node("{\"metadata\":{\"name\":\"n5\",\"labels\":{\"vigil.dev/spare\":\"true\"}},"
               "\"spec\":{\"taints\":[{\"key\":\"vigil.dev/spare\",\"effect\":\"NoSchedule\"}]}," READY "}", &n);
    assert_true(n.spare_label && n.spare_taint);
    assert_false(n.n.drain);   /* reserved, not drained: the spare pool's */
    assert_string_equal(n.n.features, "spare");
    parse_node("{\"metadata\":{\"name\":\"n6\"},\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\","
               "\"message\":\"kubelet stopped posting\"}]}}", &n);
    assert_false(n.n.responding);
    assert_true(n.n.down);
    assert_string_equal(n.n.reason, "Ready False: kubelet stopped posting");
    assert_string_equal(n.n.state, "NotReady");
    json_t *v = J("{\"metadata\":{}}");
    assert_int_equal(vg_k8s_node_parse(v, &n), -1);
    json_decref(v);
}

static void test_pods(void **state)
{
    (void)state;
    struct vg_k8s_pod p;
    json_t *v = J("{\"metadata\":{\"name\":\"train-1\",\"namespace\":\"ml\",\"ownerReferences\":[{\"kind\":\"Job\","
                  "\"name\":\"train\",\"controller\":true}]},\"spec\":{\"nodeName\":\"n2\"},\"status\":{\"phase\":\"Running\"}}");
    assert_int_equal(vg_k8s_pod_parse(v, &p), 0);
    assert_string_equal(p.workload, "ml/Job/train");
    assert_string_equal(p.node, "n2");
    assert_false(p.daemon || p.gone);
    json_decref(v);
    v = J("{\"metadata\":{\"name\":\"w-0\",\"labels\":{\"jobset.sigs.k8s.io/jobset-name\":\"big\","
          "\"batch.kubernetes.io/job-name\":\"big-workers-0\"},\"ownerReferences\":[{\"kind\":\"Job\",\"name\":\"big-workers-0\","
          "\"controller\":true}]},\"status\":{\"phase\":\"Pending\"}}");
    assert_int_equal(vg_k8s_pod_parse(v, &p), 0);
    assert_string_equal(p.workload, "default/JobSet/big");   /* the whole JobSet is the gang */
    json_decref(v);
    v = J("{\"metadata\":{\"name\":\"agent\",\"ownerReferences\":[{\"kind\":\"DaemonSet\",\"name\":\"a\",\"controller\":true}],"
          "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"}}");
    assert_int_equal(vg_k8s_pod_parse(v, &p), 0);
    assert_true(p.daemon && p.gone);
    assert_string_equal(p.workload, "");
    json_decref(v);
    v = J("{\"metadata\":{\"name\":\"done\",\"labels\":{\"job-name\":\"old\"}},\"status\":{\"phase\":\"Succeeded\"}}");
    assert_int_equal(vg_k8s_pod_parse(v, &p), 0);
    assert_string_equal(p.workload, "default/Job/old");
    assert_true(p.gone);
    json_decref(v);
}


/* When vigil took the node out, from the API's own stamps (metav1.Time, to
 * the second): the VigilHealthy=False condition's lastTransitionTime, else
 * its taint's timeAdded; nothing for a node vigil did not isolate. */
static void test_node_isolated_time(void **state)
{
    (void)state;
    struct vg_k8s_node n;
#define OURS "\"annotations\":{\"vigil.dev/isolated\":\"{\\\"how\\\":\\\"down\\\",\\\"reason\\\":\\\"vigil: xid 79\\\"}\"}"
    parse_node("{\"metadata\":{\"name\":\"n2\"," OURS "},\"spec\":{\"unschedulable\":true,\"taints\":[{\"key\":"
               "\"vigil.dev/fault\",\"value\":\"xid-79\",\"effect\":\"NoExecute\",\"timeAdded\":\"2026-12-01T10:00:03Z\"}]},"
               "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"},{\"type\":\"VigilHealthy\",\"status\":"
               "\"False\",\"reason\":\"VigilDown\",\"lastHeartbeatTime\":\"2026-12-01T10:00:04Z\","
               "\"lastTransitionTime\":\"2026-12-01T10:00:02Z\"}]}}", &n);
    assert_int_equal(n.n.isolated_ms, 1796119202000LL);   /* the condition's transition, not its heartbeat */
    parse_node("{\"metadata\":{\"name\":\"n2\"," OURS "},\"spec\":{\"taints\":[{\"key\":\"vigil.dev/fault\","
               "\"effect\":\"NoSchedule\",\"timeAdded\":\"2026-12-01T10:00:03Z\"}]}," READY "}", &n);
    assert_int_equal(n.n.isolated_ms, 1796119203000LL);   /* no condition yet: the taint's timeAdded */
    parse_node("{\"metadata\":{\"name\":\"n2\"," OURS "},\"spec\":{\"taints\":[{\"key\":\"vigil.dev/fault\","
               "\"effect\":\"NoSchedule\",\"timeAdded\":\"not a time\"}]},\"status\":{\"conditions\":[{\"type\":"
               "\"VigilHealthy\",\"status\":\"True\",\"lastTransitionTime\":\"2026-12-01T10:00:02Z\"}]}}", &n);
    assert_int_equal(n.n.isolated_ms, 0);   /* malformed stamp, and a healthy condition is no isolation */
    parse_node("{\"metadata\":{\"name\":\"n3\"},\"spec\":{\"taints\":[{\"key\":\"vigil.dev/fault\",\"effect\":"
               "\"NoSchedule\",\"timeAdded\":\"2026-12-01T10:00:03Z\"}]}," READY "}", &n);
    assert_int_equal(n.n.isolated_ms, 0);   /* without vigil's annotation the node is not vigil's */
#undef OURS
}

/* A pod's Ready time and its container's end, in the v1 Pod status shape
 * (conditions with lastTransitionTime; containerStatuses[].state.running or
 * .terminated with exitCode and reason), as the API reference documents it. */
static void test_pod_times(void **state)
{
    (void)state;
    struct vg_k8s_pod p;
    json_t *v = J("{\"metadata\":{\"name\":\"t-1\"},\"spec\":{\"nodeName\":\"n5\"},\"status\":{\"phase\":\"Running\","
                  "\"conditions\":[{\"type\":\"Initialized\",\"status\":\"True\",\"lastTransitionTime\":\"2026-12-01T10:00:01Z\"},"
                  "{\"type\":\"Ready\",\"status\":\"True\",\"lastProbeTime\":null,\"lastTransitionTime\":\"2026-12-01T10:00:05Z\"},"
                  "{\"type\":\"PodScheduled\",\"status\":\"True\",\"lastTransitionTime\":\"2026-12-01T10:00:01Z\"}],"
                  "\"containerStatuses\":[{\"name\":\"task\",\"ready\":true,\"restartCount\":0,"
                  "\"state\":{\"running\":{\"startedAt\":\"2026-12-01T10:00:04Z\"}}}]}}");
    assert_int_equal(vg_k8s_pod_parse(v, &p), 0);
    assert_string_equal(p.phase, "Running");
    assert_true(p.ready);
    assert_int_equal(p.ready_ms, 1796119205000LL);
    assert_int_equal(p.exit_code, -1);
    json_decref(v);
    v = J("{\"metadata\":{\"name\":\"inject\",\"labels\":{\"vigil.dev/exec\":\"n2\"}},\"status\":{\"phase\":\"Failed\","
          "\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\",\"reason\":\"PodFailed\","
          "\"lastTransitionTime\":\"2026-12-01T10:00:09Z\"}],\"containerStatuses\":[{\"name\":\"vigil\",\"ready\":false,"
          "\"state\":{\"terminated\":{\"exitCode\":2,\"reason\":\"Error\",\"startedAt\":\"2026-12-01T10:00:08Z\","
          "\"finishedAt\":\"2026-12-01T10:00:09Z\"}}}]}}");
    assert_int_equal(vg_k8s_pod_parse(v, &p), 0);
    assert_false(p.ready);
    assert_int_equal(p.ready_ms, 0);   /* not Ready: no Ready time */
    assert_int_equal(p.exit_code, 2);
    assert_string_equal(p.exit_reason, "Error");
    assert_true(p.gone);
    assert_true(p.daemon);   /* vigil's own one-shot pod: never evicted */
    json_decref(v);
    v = J("{\"metadata\":{\"name\":\"odd\"},\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\","
          "\"lastTransitionTime\":7}],\"containerStatuses\":[{\"state\":{\"terminated\":{\"exitCode\":\"0\"}}}]}}");
    assert_int_equal(vg_k8s_pod_parse(v, &p), 0);
    assert_true(p.ready);
    assert_int_equal(p.ready_ms, 0);      /* a stamp that is not a string */
    assert_int_equal(p.exit_code, -1);    /* an exit code that is not a number */
    json_decref(v);
}

static void test_workload_and_taint(void **state)
{
    (void)state;
    char ns[64], kind[16], name[64], v[64];
    assert_true(vg_k8s_workload_split("ml/Job/train", ns, sizeof ns, kind, sizeof kind, name, sizeof name));
    assert_string_equal(ns, "ml");
    assert_string_equal(kind, "Job");
    assert_string_equal(name, "train");
    assert_true(vg_k8s_workload_split("a/JobSet/b", ns, sizeof ns, kind, sizeof kind, name, sizeof name));
    assert_false(vg_k8s_workload_split("1234", ns, sizeof ns, kind, sizeof kind, name, sizeof name));
    assert_false(vg_k8s_workload_split("a/Deployment/b", ns, sizeof ns, kind, sizeof kind, name, sizeof name));
    assert_false(vg_k8s_workload_split("/Job/b", ns, sizeof ns, kind, sizeof kind, name, sizeof name));
    assert_false(vg_k8s_workload_split("a/Job/b/c", ns, sizeof ns, kind, sizeof kind, name, sizeof name));
    vg_k8s_taint_value("vigil: xid 79 gpu 0 0000:18:00.0", v, sizeof v);
    assert_string_equal(v, "xid-79-gpu-0-0000-18-00.0");
    vg_k8s_taint_value("vigil: ", v, sizeof v);
    assert_string_equal(v, "fault");
    vg_k8s_taint_value("vigil: domain rackA: 3 of 4 nodes unavailable (xid 79 on n2) and a very long tail of words", v, sizeof v);
    assert_true(strlen(v) <= 63);
    assert_true(v[strlen(v) - 1] != '-');
}

static const char KC[] =
    "apiVersion: v1\n"
    "kind: Config\n"
    "clusters:\n"
    "- name: other\n"
    "  cluster:\n"
    "    server: https://wrong:6443\n"
    "- name: prod\n"
    "  cluster:\n"
    "    server: https://api.example:6443/\n"
    "    certificate-authority: pki/ca.crt\n"
    "contexts:\n"
    "- name: ctx\n"
    "  context:\n"
    "    cluster: prod\n"
    "    user: vigil\n"
    "current-context: ctx\n"
    "users:\n"
    "- name: vigil\n"
    "  user:\n"
    "    token: \"abc.def\"\n";

static void test_kubeconfig(void **state)
{
    (void)state;
    struct vg_k8s_conf c = { 0 };
    char err[256];
    assert_int_equal(vg_k8s_conf_parse(KC, strlen(KC), "/etc/vigil", &c, err, sizeof err), 0);
    assert_string_equal(c.server, "https://api.example:6443");
    assert_string_equal(c.ca_file, "/etc/vigil/pki/ca.crt");
    assert_string_equal(c.token, "abc.def");
    assert_false(c.insecure);
    vg_k8s_conf_free(&c);
    /* JSON is YAML too */
    const char *js = "{\"current-context\":\"c\",\"contexts\":[{\"name\":\"c\",\"context\":{\"cluster\":\"k\",\"user\":\"u\"}}],"
                     "\"clusters\":[{\"name\":\"k\",\"cluster\":{\"server\":\"http://127.0.0.1:1\",\"insecure-skip-tls-verify\":true}}],"
                     "\"users\":[{\"name\":\"u\",\"user\":{}}]}";
    memset(&c, 0, sizeof c);
    assert_int_equal(vg_k8s_conf_parse(js, strlen(js), NULL, &c, err, sizeof err), 0);
    assert_string_equal(c.server, "http://127.0.0.1:1");
    assert_true(c.insecure);
    assert_string_equal(c.token, "");
    vg_k8s_conf_free(&c);
}

static void refuses(const char *text, const char *why)
{
    struct vg_k8s_conf c = { 0 };
    char err[256] = "";
    assert_int_equal(vg_k8s_conf_parse(text, strlen(text), NULL, &c, err, sizeof err), -1);
    if (!strstr(err, why)) fail_msg("error '%s' lacks '%s'", err, why);
    vg_k8s_conf_free(&c);
}

static void test_kubeconfig_refused(void **state)
{
    (void)state;
    refuses("clusters: []\n", "current-context is not set");
    refuses("current-context: x\n", "context 'x' is not in contexts");
    refuses("current-context: x\ncontexts:\n- name: x\n  context: {cluster: k}\n", "cluster 'k' is not in clusters");
    refuses("current-context: x\ncontexts:\n- name: x\n  context: {cluster: k}\nclusters:\n- name: k\n  cluster: {}\n",
            "server is not set");
    refuses("current-context: x\ncontexts:\n- name: x\n  context: {cluster: k, user: u}\nclusters:\n- name: k\n"
            "  cluster: {server: https://a}\nusers:\n- name: u\n  user:\n    exec: {command: aws}\n",
            "plugin");
    refuses("current-context: x\ncontexts:\n- name: x\n  context: {cluster: k, user: u}\nclusters:\n- name: k\n"
            "  cluster: {server: https://a, certificate-authority-data: \"!!!\"}\nusers:\n- name: u\n  user: {}\n",
            "not base64");
    refuses("current-context: x\ncontexts:\n- name: x\n  context: {cluster: k, user: u}\nclusters:\n- name: k\n"
            "  cluster: {server: https://a}\nusers:\n- name: u\n  user: {client-certificate-data: aGVsbG8=}\n",
            "user 'u': client-certificate is set without client-key");
    refuses("current-context: x\ncontexts:\n- name: x\n  context: {cluster: k, user: u}\nclusters:\n- name: k\n"
            "  cluster: {server: https://a}\nusers:\n- name: u\n  user: {client-certificate-data: aGVsbG8=, "
            "client-key: /nonexistent/k.pem}\n",
            "client-key: /nonexistent/k.pem: No such file");
    refuses("current-context: x\ncontexts:\n- name: x\n  context: {cluster: k, user: u}\nclusters:\n- name: k\n"
            "  cluster: {server: https://a}\nusers:\n- name: u\n  user: {client-certificate-data: aGVsbG8=, "
            "client-key-data: aGVsbG8=}\n",
            "client-key-data does not go with client-certificate-data");
    refuses("a: [unclosed\n", "YAML");
    refuses("a: &x 1\nb: *x\n", "aliases");
    refuses("- just\n- a list\n", "not a kubeconfig");
}

/* Where the configuration comes from: --orch-config, $KUBECONFIG, in-cluster. */
/* The node cache keeps a Node trimmed to what vigil reads and writes back:
 * it reads the same, and its image list, managed fields and others'
 * annotations are gone. */
static void test_node_trim(void **state)
{
    (void)state;
    json_t *full = J("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\",\"uid\":\"u-1\","
                     "\"resourceVersion\":\"7\",\"labels\":{\"vigil.dev/spare\":\"true\",\"nvidia.com/gpu.clique\":\"r1\"},"
                     "\"annotations\":{\"vigil.dev/isolated\":\"{\\\"how\\\":\\\"drain\\\",\\\"reason\\\":\\\"vigil: xid 79\\\","
                     "\\\"cordoned\\\":false}\",\"other.example/note\":\"x\"},\"managedFields\":[{\"manager\":\"kubelet\"}]},"
                     "\"spec\":{\"unschedulable\":true,\"podCIDR\":\"10.1.0.0/24\",\"taints\":[{\"key\":\"vigil.dev/fault\","
                     "\"value\":\"xid-79\",\"effect\":\"NoSchedule\"}]},\"status\":{\"conditions\":[{\"type\":\"Ready\","
                     "\"status\":\"True\"}],\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"10.0.0.1\"}],"
                     "\"daemonEndpoints\":{\"kubeletEndpoint\":{\"Port\":10250}},\"allocatable\":{\"nvidia.com/gpu\":\"8\"},"
                     "\"images\":[{\"names\":[\"a\"],\"sizeBytes\":1}],\"nodeInfo\":{\"kubeletVersion\":\"v1.32.0\"}}}");
    json_t *t = vg_k8s_node_trim(full);
    assert_non_null(t);
    struct vg_k8s_node a, b;
    assert_int_equal(vg_k8s_node_parse(full, &a), 0);
    assert_int_equal(vg_k8s_node_parse(t, &b), 0);
    assert_memory_equal(&a, &b, sizeof a);
    assert_string_equal(b.n.reason, "vigil: xid 79");
    assert_true(b.ours && b.spare_label && b.cordoned);
    json_t *st = json_object_get(t, "status"), *md = json_object_get(t, "metadata");
    assert_null(json_object_get(st, "images"));
    assert_null(json_object_get(st, "nodeInfo"));
    assert_null(json_object_get(md, "managedFields"));
    assert_null(json_object_get(json_object_get(md, "annotations"), "other.example/note"));
    assert_null(json_object_get(json_object_get(t, "spec"), "podCIDR"));
    assert_string_equal(json_string_value(json_object_get(md, "uid")), "u-1");
    assert_string_equal(json_string_value(json_object_get(json_object_get(st, "allocatable"), "nvidia.com/gpu")), "8");
    json_decref(t);
    json_decref(full);
    json_t *bad = J("{\"metadata\":{}}");
    assert_null(vg_k8s_node_trim(bad));
    json_decref(bad);
    assert_true(vg_k8s_plain_http("http://10.0.0.1:8080"));
    assert_true(vg_k8s_plain_http("HTTP://api"));
    assert_false(vg_k8s_plain_http("https://10.0.0.1:6443"));
}

static void test_conf_sources(void **state)
{
    (void)state;
    struct vg_k8s_conf c;
    char err[600];
    char dir[] = "/tmp/vigil-k8s-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128], tok[128];
    snprintf(path, sizeof path, "%s/kc", dir);
    snprintf(tok, sizeof tok, "%s/tok", dir);
    FILE *f = fopen(path, "w");
    fputs("current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\nclusters:\n- name: k\n"
          "  cluster: {server: 'https://10.0.0.1:6443'}\nusers:\n- name: u\n  user: {tokenFile: tok}\n", f);
    fclose(f);
    f = fopen(tok, "w");
    fputs("from-file-token\n", f);
    fclose(f);
    setenv("KUBECONFIG", path, 1);
    assert_int_equal(vg_k8s_conf_load(NULL, &c, err, sizeof err), 0);
    assert_string_equal(c.token, "from-file-token");   /* tokenFile, relative to the kubeconfig */
    assert_string_equal(c.source, path);
    vg_k8s_conf_free(&c);
    /* in a pod: the service account; here its files do not exist, and the error says where it looked */
    unsetenv("KUBECONFIG");
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    int rc = vg_k8s_conf_load(NULL, &c, err, sizeof err);
    if (rc == 0) {   /* running inside a pod after all */
        assert_string_equal(c.server, "https://[fd00::1]:443");
    } else {
        assert_non_null(strstr(err, VG_K8S_SA_DIR "/token"));
    }
    vg_k8s_conf_free(&c);
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    /* --orch-config wins, and a missing file is named */
    assert_int_equal(vg_k8s_conf_load("/nonexistent/kubeconfig", &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/kubeconfig"));
    vg_k8s_conf_free(&c);
    unlink(tok);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_healthy),        cmocka_unit_test(test_node_vigil_isolated),
        cmocka_unit_test(test_node_kubelet_address),
        cmocka_unit_test(test_node_admin_cordoned), cmocka_unit_test(test_node_spare_and_notready),
        cmocka_unit_test(test_pods),                cmocka_unit_test(test_workload_and_taint),
        cmocka_unit_test(test_node_isolated_time),  cmocka_unit_test(test_pod_times),
        cmocka_unit_test(test_kubeconfig),          cmocka_unit_test(test_kubeconfig_refused),
        cmocka_unit_test(test_conf_sources),         cmocka_unit_test(test_node_trim),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
