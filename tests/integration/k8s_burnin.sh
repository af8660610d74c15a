#!/bin/sh
# k8s_burnin.sh — `vigil burnin --schedule --orchestrator k8s` on the
# Kubernetes API test double, whose kubelet runs containers as local
# processes (--exec) and whose scheduler preempts by pod priority: the
# PriorityClass vigil-burnin (created when missing, proven with kubectl),
# one pod per idle node (pinned by node affinity, all its GPUs, the class,
# activeDeadlineSeconds = the budget left), none on a node whose GPUs a
# production pod holds or on a hot spare, the passes' results read back from
# the pods' logs, a failed pass reported to `vigil serve`, the budget
# respected, and a production pod (higher priority, needing the GPUs,
# created with kubectl) preempting a running pass: the pass recorded
# `preempted`, charged for what it ran, nothing left running.  An AMD node
# (amd.com/gpu; its own environment through the kubelet's node-env: the fake
# AMD SMI, no NVML): its pod asks for its AMD GPUs, its pass runs AMD's suite
# and fails with XGMI at half its bandwidth.  Bad input:
# no kubeconfig, a PriorityClass vigil-burnin that would preempt (exit 2).
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/vigil-k8sburnin.XXXXXX")
SERVE_PID=
. "$ROOT/tests/k8s/harness.sh"
trap '[ -n "$SERVE_PID" ] && kill $SERVE_PID; stop_kapi; [ -n "$KEEP" ] || rm -rf "$W"' EXIT
command -v kubectl >/dev/null || { skip "kubectl is not installed"; exit 0; }

# the kubelet finds vigil and the stand-in tools on its PATH, as the image would have them;
# the pods' vigil reaches the API with the same kubeconfig
KAPI_EXEC=$W/containers
make_ca; TOKEN="burnin-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"   # vigil speaks HTTPS only: the passes' vigil reads the same kubeconfig
export PATH="$(dirname "$VIGIL"):$ROOT/tests/standins:$PATH" VIGIL_K8S_IMAGE=vigil:test KUBECONFIG="$W/kc"
export VIGIL_NVML_LIB="$ROOT/build/tests/libnvidia-ml.so.1" VIGIL_BURNIN_STATE="$W/burnin-state"
: >"$W/burnin-state"
start_kapi --token "$TOKEN"
kubeconfig "$W/kc" "$TOKEN"
wait_for 5 running 4
kubectl delete jobs train other >/dev/null 2>&1
wait_for 5 running 0
ST=$W/state.json
sched() { "$VIGIL" burnin --schedule --orchestrator k8s --kubeconfig "$W/kc" --state "$ST" "$@"; }
has() { printf '%s\n' "$1" | grep -q -- "$2"; }
field() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

# ---- bad input ----------------------------------------------------------------
exits_with "no kubeconfig: exit 2" 2 env -u KUBECONFIG HOME="$W/nohome" KUBERNETES_SERVICE_HOST= \
    "$VIGIL" burnin --schedule --orchestrator k8s --kubeconfig "$W/missing.kc" --state "$W/x.json"
# a class of that name that would preempt production: refused, nothing created
printf '{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"vigil-burnin"},"value":1000}' >"$W/pc.json"
kubectl create --raw /apis/scheduling.k8s.io/v1/priorityclasses -f "$W/pc.json" >/dev/null
err=$(sched 2>&1 >/dev/null)
is "a PriorityClass vigil-burnin of value 1000: exit 2" "$?" 2
check "… the message names the class and what is wrong" has "$err" 'burnin-partition: PriorityClass vigil-burnin exists with value 1000, preemptionPolicy PreemptLowerPriority'
check "… and what fits" has "$err" 'must be below 0 (production pods.* default), preemptionPolicy Never'
check "… kubectl get priorityclass shows the class it found" sh -c "kubectl get priorityclass -o name | grep -q priorityclass.scheduling.k8s.io/vigil-burnin"
is "… no pod created" "$(kubectl get pods -l vigil.dev/burnin -o name | wc -l)" 0
kubectl delete priorityclass vigil-burnin >/dev/null
is "kubectl delete priorityclass" "$(kubectl get priorityclass -o name | wc -l)" 0

# ---- a production pod holds n1's GPUs; n5 is a hot spare ------------------------
printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"prod1"},"spec":{"restartPolicy":"Never","nodeSelector":{"kubernetes.io/hostname":"n1"},"containers":[{"name":"t","image":"x","command":["sleep","600"],"resources":{"limits":{"nvidia.com/gpu":"8"}}}]}}' >"$W/prod1.json"
kubectl create --raw /api/v1/namespaces/default/pods -f "$W/prod1.json" >/dev/null
check "the production pod runs on n1" wait_for 5 sh -c "kubectl get pod prod1 -o json | jq -e '.status.phase == \"Running\" and .spec.nodeName == \"n1\"'"
acurl -o /dev/null -X PATCH -H 'Content-Type: application/merge-patch+json' --data-binary \
    '{"metadata":{"labels":{"vigil.dev/spare":"true"}},"spec":{"taints":[{"key":"vigil.dev/spare","effect":"NoSchedule"}]}}' "$API/api/v1/nodes/n5"
json=$(sched --test gemm-small --json)
is "schedule: exit 0" "$?" 0
is "schedule: a pass on each idle node; none on the busy n1 or the spare n5" \
    "$(echo "$json" | field '" ".join(n["node"] + "=" + n["action"] for n in d["nodes"])')" \
    "n1=skipped n2=submitted n3=submitted n4=submitted n5=skipped"
is "… the busy node's reason names the pod" "$(echo "$json" | field '[n["why"] for n in d["nodes"] if n["node"] == "n1"][0]')" \
    "not idle (Ready,GPUs held by prod1)"
is "… the spare's" "$(echo "$json" | field '[n["why"] for n in d["nodes"] if n["node"] == "n5"][0]')" "a hot spare (pool vigil_spares)"
kubectl get priorityclass vigil-burnin -o json >"$W/pc.json"
is "kubectl get priorityclass: vigil-burnin created, -100, Never, not default, described" \
    "$(jq -r '[.value, .preemptionPolicy, .globalDefault, (.description | test("burn-in"))] | join(" ")' "$W/pc.json")" "-100 Never false true"
check "kubectl get priorityclass (table)" sh -c "kubectl get priorityclass | grep -q vigil-burnin"
kubectl get pods -l vigil.dev/burnin=n2 -o json >"$W/pod.json"
is "the pod: its class and priority (admission), pinned by affinity to n2, all 8 GPUs, budget as deadline, Never" \
    "$(jq -r '.items[0].spec | [.priorityClassName, .priority, .preemptionPolicy, .affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key, .affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values[0], .containers[0].resources.requests["nvidia.com/gpu"], .activeDeadlineSeconds, .restartPolicy] | join(" ")' "$W/pod.json")" \
    "vigil-burnin -100 Never kubernetes.io/hostname n2 8 1200 Never"
is "… it runs vigil burnin on its node (the cluster's own credentials: no kubeconfig passed)" \
    "$(jq -r '.items[0].spec.containers[0].command[1:] | join(" ")' "$W/pod.json")" \
    "burnin --drain --orchestrator k8s --suite quick --json --test gemm-small --node n2"
check "the passes end" wait_for 20 sh -c "[ \$(kubectl get pods -l vigil.dev/burnin -o json | jq '[.items[] | select(.status.phase == \"Succeeded\")] | length') -eq 3 ]"
json=$(sched --test gemm-small --nodes n1 --json)
is "the next round reads each result from the pod's log" "$? $(echo "$json" | field '" ".join(e["node"] + "=" + e["result"] for e in d["ended"])')" "0 n2=pass n3=pass n4=pass"
check "… through pods/NAME/log" grep -q 'GET /api/v1/namespaces/default/pods/vigil-burnin-n2-.*/log 200' "$W/api.log"
is "… and deletes the ended pods" "$(kubectl get pods -l vigil.dev/burnin -o name | wc -l)" 0

# ---- a failed pass: reported to vigil serve, its node drained by the pass itself ---------
umask 077; node_tokens "$W" 'n[1-5]' >/dev/null
echo "read-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')" >"$W/read.token"; umask 022
"$VIGIL" serve --orchestrator k8s --kubeconfig "$W/kc" --listen 127.0.0.1:0 --port-file "$W/port" --db "$W/inc.db" \
    --auth token --secret-file "$W/secret" --read-token-file "$W/read.token" 2>>"$W/serve.log" &
SERVE_PID=$!
wait_for 5 test -s "$W/port"
URL="http://127.0.0.1:$(cat "$W/port")"
echo "sdc=1" >"$W/burnin-state"
json=$(sched --test gemm-small --nodes n3 --controller "$URL" --auth token --token-file "$W/%n.token" --budget 30 --json)
check "n3's failing pass ends" wait_for 20 sh -c "kubectl get pods -l vigil.dev/burnin=n3 -o json | jq -e '.items[0].status.phase | . == \"Succeeded\" or . == \"Failed\"'"
json=$(sched --test gemm-small --nodes n3 --json)
is "the failed pass: exit 1, recorded fail" "$? $(echo "$json" | field '" ".join(e["node"] + "=" + e["result"] for e in d["ended"])')" "1 n3=fail"
is "… vigil serve recorded it (GET /v1/burnin)" \
    "$(curl -s -H "Authorization: Bearer $(cat "$W/read.token")" "$URL/v1/burnin" | jq -r '.nodes[] | select(.node == "n3") | .last_result + " " + .tests[0].name')" \
    "fail gemm-small"
check "… the pass drained n3 (cordon, vigil's taint)" node_has n3 '.spec.unschedulable == true and ([.spec.taints[].key] | index("vigil.dev/fault"))'
: >"$W/burnin-state"

# ---- the budget: n2 ran 20 minutes of burn-in in the last hour ---------------------
python3 - "$W/spent.json" <<'PY'
import json, sys, datetime
now = datetime.datetime.now(datetime.timezone.utc)
t = lambda m: (now - datetime.timedelta(minutes=m)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
json.dump({"version": 1, "passes": [{"node": "n2", "job": "pod/default/old", "suite": "quick", "result": "pass",
           "submitted": t(30), "start": t(30), "end": t(10)}]}, open(sys.argv[1], "w"))
PY
json=$("$VIGIL" burnin --schedule --orchestrator k8s --kubeconfig "$W/kc" --state "$W/spent.json" --nodes n2 --test gemm-small --json)
is "budget spent: no pass on n2" "$(echo "$json" | field 'd["nodes"][0]["action"], d["nodes"][0]["why"]')" \
    "skipped budget spent: 1200 s of 1200 s used in the last 60 min"

# ---- never in the way: a production pod needing n4's GPUs preempts its pass ----------
printf '#!/bin/sh\nexec sleep 300.17\n' >"$W/slow-gpu"; chmod +x "$W/slow-gpu"
json=$(sched --tool "vigil-gpu=$W/slow-gpu" --nodes n4 --json)
check "n4's slow pass runs" wait_for 10 sh -c "kubectl get pods -l vigil.dev/burnin=n4 -o json | jq -e '.items[0].status.phase == \"Running\"'"
check "… its process too" wait_for 5 pgrep -f "^sleep 300.17$"
sleep 1
printf '{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"production"},"value":1000,"description":"training jobs"}' >"$W/hi.json"
kubectl create --raw /apis/scheduling.k8s.io/v1/priorityclasses -f "$W/hi.json" >/dev/null
printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"prod4"},"spec":{"priorityClassName":"production","restartPolicy":"Never","nodeSelector":{"kubernetes.io/hostname":"n4"},"containers":[{"name":"t","image":"x","command":["sleep","600"],"resources":{"limits":{"nvidia.com/gpu":"8"}}}]}}' >"$W/prod4.json"
kubectl create --raw /api/v1/namespaces/default/pods -f "$W/prod4.json" >/dev/null
check "the production pod (kubectl) runs on n4" wait_for 5 sh -c "kubectl get pod prod4 -o json | jq -e '.status.phase == \"Running\" and .spec.nodeName == \"n4\" and .spec.priority == 1000'"
is "… the burn-in pod is gone" "$(kubectl get pods -l vigil.dev/burnin=n4 -o name | wc -l)" 0
check "… a Preempted event on it (kubectl get events)" sh -c "kubectl get events -o json | jq -e '.items[] | select(.reason == \"Preempted\" and (.involvedObject.name | startswith(\"vigil-burnin-n4\")) and (.message | test(\"^Preempted by pod .* on node n4$\")))'"
check "… nothing of the pass is left running" wait_for 5 sh -c '! pgrep -f "^sleep 300.17$"'
json=$(sched --nodes n4 --json)
is "the next round records the pass preempted" "$? $(echo "$json" | field '" ".join(e["node"] + "=" + e["result"] for e in d["ended"])')" "0 n4=preempted"
check "… charged for what it ran (1 s to 10 s)" sh -c "echo '$json' | python3 -c 'import json,sys; d=json.load(sys.stdin); e=d[\"ended\"][0]; sys.exit(not (1 <= e[\"ran_s\"] <= 10))'"
is "… no new pass while production holds n4" "$(echo "$json" | field 'd["nodes"][0]["why"]')" "not idle (Ready,GPUs held by prod4)"
# a preemptionPolicy Never pod never preempts, and a lower one never preempts a higher one
printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"meek"},"spec":{"priorityClassName":"vigil-burnin","restartPolicy":"Never","nodeSelector":{"kubernetes.io/hostname":"n4"},"containers":[{"name":"t","image":"x","command":["sleep","600"],"resources":{"limits":{"nvidia.com/gpu":"8"}}}]}}' >"$W/meek.json"
kubectl create --raw /api/v1/namespaces/default/pods -f "$W/meek.json" >/dev/null
sleep 0.5
is "a pod of the burn-in class preempts nothing: it waits" "$(kubectl get pod meek -o jsonpath='{.status.phase}') $(kubectl get pod prod4 -o jsonpath='{.status.phase}')" "Pending Running"
err=$(printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"priorityClassName":"nosuch","containers":[{"name":"t","image":"x"}]}}' | kubectl create --raw /api/v1/namespaces/default/pods -f - 2>&1)
check "an unknown priorityClassName is refused at admission" sh -c "echo '$err' | grep -q 'no PriorityClass with name nosuch was found'"
# ---- an AMD node: its pass asks for amd.com/gpu and runs AMD's suite -----------------
# n6 has 8 amd.com/gpu; its machine (the kubelet's node-env) has the fake AMD SMI and no NVML
printf '{"apiVersion":"v1","kind":"Node","metadata":{"name":"n6","labels":{"kubernetes.io/hostname":"n6"}},"status":{"allocatable":{"cpu":"64","pods":"110","amd.com/gpu":"8"},"conditions":[{"type":"Ready","status":"True"}]}}' >"$W/n6.json"
kubectl create --raw /api/v1/nodes -f "$W/n6.json" >/dev/null
mkdir -p "$KAPI_EXEC/node-env"; : >"$W/amdsmi-state"; echo vendor=amd >"$W/amd-burnin-state"
printf 'VIGIL_NVML_LIB\nVIGIL_AMDSMI_LIB=%s\nFAKE_AMDSMI_STATE=%s\nVIGIL_BURNIN_STATE=%s\n' \
    "$FAKE_AMDSMI" "$W/amdsmi-state" "$W/amd-burnin-state" >"$KAPI_EXEC/node-env/n6"
amd_round() { # → the pod's spec in $W/pod6.json, its log in $W/pod6.log, the next round's document
    sched --nodes n6 --json >/dev/null
    kubectl get pods -l vigil.dev/burnin=n6 -o json >"$W/pod6.json"
    wait_for 20 sh -c "kubectl get pods -l vigil.dev/burnin=n6 -o json | jq -e '.items[0].status.phase | . == \"Succeeded\" or . == \"Failed\"'" ||
        echo "# n6's pass did not end"
    acurl "$API/api/v1/namespaces/default/pods/$(jq -r '.items[0].metadata.name' "$W/pod6.json")/log" >"$W/pod6.log"
    sched --nodes n6 --json
}
json=$(amd_round)
is "AMD node n6: its pod asks for all its amd.com/gpu (none of NVIDIA's), in the burn-in class" \
    "$(jq -r '.items[0].spec | [.priorityClassName, .containers[0].resources.requests["amd.com/gpu"], .containers[0].resources.requests["nvidia.com/gpu"] // "-"] | join(" ")' "$W/pod6.json")" \
    "vigil-burnin 8 -"
is "… its pass ran AMD's quick suite on the MI300X: RVS and TransferBench passed (no InfiniBand port here: unknown)" \
    "$(sed -n '/^{/,$p' "$W/pod6.log" | jq -r '.nodes[0] | [.model, (.vendors | join(",")), (.tests | map(.name + "=" + .result) | join(","))] | join(" ")')" \
    "AMD Instinct MI300X amd nvml=pass,ib-port=unknown,rvs-peqt=pass,transferbench-a2a=pass"
is "… read back from the pod's log" "$(echo "$json" | field '" ".join(e["node"] + "=" + e["result"] for e in d["ended"])')" "n6=unknown"
echo "xgmi-bw-low=0.5" >>"$W/amd-burnin-state"
json=$(amd_round)
is "XGMI at half its bandwidth: the next pass fails transferbench-a2a" \
    "$(echo "$json" | field '" ".join(e["node"] + "=" + e["result"] for e in d["ended"])') $(sed -n '/^{/,$p' "$W/pod6.log" | jq -r '.nodes[0].reason' | cut -c1-67)" \
    "n6=fail vigil: burnin transferbench-a2a: avg GPU-GPU 23.28 GB/s < 32.9 GB/s"
check "… the pass drained n6 (cordon, vigil's taint)" node_has n6 '.spec.unschedulable == true and ([.spec.taints[].key] | index("vigil.dev/fault"))'

stop_kapi
kill "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null; SERVE_PID=
check "no sanitizer report" sh -c "! grep -q 'ERROR: AddressSanitizer\|runtime error' '$W/serve.log' '$W'/containers/*.log 2>/dev/null"
done_testing
