#!/bin/sh
# k8s.sh — Kubernetes.  First the API test double (build/tests/kapi, a
# cluster of 5 GPU nodes: n5 a labelled, tainted spare; a 3-pod Job `train`
# and a 1-pod Job `other`; an agent DaemonSet pod per node) is proven against
# the real client: kubectl get / cordon / uncordon / taint / drain
# --ignore-daemonsets / patch (merge, JSON, strategic, status) / selectors,
# and its 409, 403 and 429.  Then `vigil serve --orchestrator k8s` against it:
# XID 79 on a node of the running gang → cordoned, tainted NoExecute,
# condition VigilHealthy=False (kubectl describe shows it), the gang deleted
# and running again on the promoted spare; an administrator's cordon left
# alone; repair returns the node to the pool; API down, 401, 403, a 409
# storm and a vanished node fail the incident with a clear error, and it is
# retried.  vigil's isolation and return are core/v1 Events on the Node
# (kubectl describe node / get events show them; one that cannot be written
# does not fail the isolation).  Authentication both other ways the adapter
# knows: client certificates (the double verifies them against its client
# CA; kubectl proves it, then vigil with the certificate inline and as files,
# and a key that is not the certificate's is refused), and in-cluster (the
# service-account token and CA bind-mounted at their real path in a private
# mount namespace, KUBERNETES_SERVICE_HOST/PORT at the double).  No real API
# server runs here: this is the double.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/vigil-k8s.XXXXXX")
. "$ROOT/tests/k8s/harness.sh"
trap 'stop_serve; stop_kapi; rm -rf "$W"' EXIT

need_kubectl

# ---- 1. the double, driven by kubectl -------------------------------------------
start_kapi
kubeconfig "$W/kc"
export KUBECONFIG="$W/kc"
check "API double starts" test -n "$KPORT"
wait_for 5 running 4
is "kubectl get nodes lists the 5 nodes" "$(kubectl get nodes --no-headers 2>&1 | awk '{print $1}' | tr '\n' ' ')" "n1 n2 n3 n4 n5 "
kubectl cordon n1 >"$W/out" 2>&1
is "kubectl cordon sets spec.unschedulable" "$(node_json n1 | jq -r .spec.unschedulable)" true
check "kubectl get nodes shows SchedulingDisabled" sh -c "kubectl get nodes n1 --no-headers | grep -q 'Ready,SchedulingDisabled'"
kubectl uncordon n1 >"$W/out" 2>&1
is "kubectl uncordon clears it" "$(node_json n1 | jq -r '.spec.unschedulable // false')" false
grep -q 'PATCH /api/v1/nodes/n1 200 application/strategic-merge-patch+json' "$W/api.log" &&
    ok "cordon is a strategic merge patch" || nok "cordon is a strategic merge patch"
kubectl taint nodes n2 example.com/maint=yes:NoSchedule >"$W/out" 2>&1
is "kubectl taint adds the taint" "$(node_json n2 | jq -r '.spec.taints[0] | "\(.key)=\(.value):\(.effect)"')" "example.com/maint=yes:NoSchedule"
kubectl taint nodes n2 example.com/maint- >"$W/out" 2>&1
is "kubectl taint KEY- removes it" "$(node_json n2 | jq -r '.spec.taints // [] | length')" 0
is "kubectl get pods -l (labelSelector)" "$(kubectl get pods -l app=train -o name | wc -l)" 3
is "kubectl get pods --field-selector spec.nodeName" \
    "$(kubectl get pods -A --field-selector spec.nodeName=n3 -o name | sort | tr '\n' ' ')" "pod/train-00015 pod/vigil-agent-n3 "
kubectl drain n3 --ignore-daemonsets --timeout=20s >"$W/drain" 2>&1
check "kubectl drain --ignore-daemonsets succeeds" grep -q 'node/n3 drained' "$W/drain"
check "drain evicted the Job's pod through policy/v1 Eviction (201)" \
    grep -q 'POST /api/v1/namespaces/default/pods/train-00015/eviction 201' "$W/api.log"
is "the DaemonSet pod stays, nothing else on n3" "$(kubectl get pods -A --field-selector spec.nodeName=n3 -o name)" "pod/vigil-agent-n3"
check "the Job controller recreates the evicted pod" wait_for 5 sh -c "[ \$(kubectl get pods -l app=train -o name | wc -l) -eq 3 ]"
kubectl patch node n4 --type=merge -p '{"metadata":{"labels":{"merge":"yes"}}}' >/dev/null 2>&1
kubectl patch node n4 --type=json -p '[{"op":"add","path":"/metadata/labels/json","value":"yes"}]' >/dev/null 2>&1
kubectl patch node n4 --type=strategic -p '{"metadata":{"labels":{"strategic":"yes"}}}' >/dev/null 2>&1
is "merge, JSON and strategic merge patches apply" \
    "$(node_json n4 | jq -r '.metadata.labels | "\(.merge) \(.json) \(.strategic)"')" "yes yes yes"
kubectl patch node n4 --subresource=status --type=strategic \
    -p '{"status":{"conditions":[{"type":"Example","status":"False","reason":"Test","message":"from kubectl"}]}}' >/dev/null 2>&1
is "status patch merges conditions by type" "$(node_json n4 | jq -r '[.status.conditions[].type] | join(",")')" "Ready,Example"
check "kubectl describe node shows the condition" sh -c "kubectl describe node n4 | grep -q 'Example .*False.*Test.*from kubectl'"
kubectl patch node n4 --type=merge -p '{"metadata":{"resourceVersion":"1","labels":{"x":"y"}}}' >"$W/out" 2>&1
check "a stale resourceVersion gets 409 Conflict" grep -q 'the object has been modified' "$W/out"
ctl POST deny '{"verb":"patch","resource":"nodes"}'
kubectl cordon n4 >"$W/out" 2>&1
check "403: kubectl names the verb it lacks" grep -q 'cannot patch resource "nodes"' "$W/out"
ctl DELETE deny ''
ctl POST fault '{"code":429,"method":"GET","path":"/api/v1/nodes/n4","count":2,"retry_after":0}'
check "429 with Retry-After: kubectl retries and succeeds" kubectl get node n4 --no-headers
is "… after two 429s" "$(grep -c 'GET /api/v1/nodes/n4 429' "$W/api.log")" 2
# deletecollection (client-go's DeleteCollection, vigil's gang restart; kubectl deletes one by one)
is "DELETE of the pod collection by label selector: 200, the PodList of what it deleted" \
    "$(acurl -X DELETE "$API/api/v1/namespaces/default/pods?labelSelector=job-name%3Dother" |
        jq -r '"\(.kind) \([.items[].metadata.labels["job-name"]] | unique | join(","))"')" "PodList other"
is "… the pods it did not select stay" "$(pods_of train | wc -l)" 3
other_back() { pods_of other | grep -q .; }
check "… the Job controller recreates the deleted pod" wait_for 5 other_back
is "… a selector the API refuses: 400" \
    "$(acurl -o /dev/null -w '%{http_code}' -X DELETE "$API/api/v1/namespaces/default/pods?labelSelector=a%20in%20(b")" 400
stop_kapi

# ---- 2. vigil serve --orchestrator k8s, over HTTPS with a bearer token ---------------
make_ca
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$W/other.key" -out "$W/other.pem" -days 2 -subj /CN=other \
    -addext "subjectAltName=IP:127.0.0.1" >/dev/null 2>&1
TOKEN="vigil-k8s-token-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
umask 077; node_tokens "$W" 'n[1-5]' >/dev/null
echo "read-token-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')" >"$W/read.token"; umask 022
RH="Authorization: Bearer $(cat "$W/read.token")"   # reads need the read token
echo 0 >"$W/seq"
start_serve() { # policy text
    printf '%s\n' "$1" >"$W/policy.conf"
    rm -f "$W/port" "$W/incidents.db"*
    "$VIGIL" serve --orchestrator k8s --kubeconfig "$W/vigil.kc" --listen 127.0.0.1:0 --port-file "$W/port" \
        --db "$W/incidents.db" --auth token --secret-file "$W/secret" --read-token-file "$W/read.token" --policy "$W/policy.conf" \
        2>>"$W/serve.log" &
    SERVE_PID=$!
    i=0; while [ ! -s "$W/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
    URL="http://127.0.0.1:$(cat "$W/port")"
}
fresh() { # policy — a fresh cluster and controller
    stop_serve; stop_kapi
    start_kapi --token "$TOKEN"
    kubeconfig "$W/vigil.kc" "$TOKEN"
    wait_for 5 running 4
    start_serve "$1"
}
gang_on_spare() {
    [ "$(pods_of train | awk '$3 == "Running"' | wc -l)" -eq 3 ] && pods_of train | grep -q ' n5 Running' &&
        ! pods_of train | grep -q ' n2 '
}
# the administrator's kubectl, with vigil's kubeconfig (kubectl sends a bearer token over HTTPS only)
kd() { kubectl --kubeconfig "$W/vigil.kc" "$@"; }

fresh "spares = n5
breaker = 100% / 600s"
before=$(pods_of train | awk '{print $1}' | sort | tr '\n' ' ')
n2pod=$(pods_of train | awk '$2 == "n2" {print $1}')
is "the gang runs on n1-n3" "$(pods_of train | awk '{print $2}' | sort | tr '\n' ' ')" "n1 n2 n3 "
is "XID 79 on n2 accepted" "$(post_xid n2 79)" 202
check "n2 cordoned" wait_for 10 node_has n2 '.spec.unschedulable == true'
is "n2 tainted vigil.dev/fault (NoExecute at DOWN)" \
    "$(node_json n2 | jq -r '.spec.taints[] | select(.key=="vigil.dev/fault") | .effect')" NoExecute
is "n2 has condition VigilHealthy=False" \
    "$(node_json n2 | jq -r '.status.conditions[] | select(.type=="VigilHealthy") | "\(.status) \(.reason)"')" "False VigilDown"
check "vigil's annotation records what it did" node_has n2 '.metadata.annotations["vigil.dev/isolated"] | fromjson | .reason | startswith("vigil:")'
kd describe node n2 >"$W/describe" 2>&1
check "kubectl describe node shows vigil's condition" grep -q 'VigilHealthy.*False.*VigilDown.*vigil: xid 79' "$W/describe"
check "… and vigil's Event (Warning VigilIsolated, from vigil, naming the fault)" \
    grep -q 'Warning  *VigilIsolated  *.*  *vigil  *vigil: xid 79.*cordoned, tainted vigil.dev/fault:NoExecute' "$W/describe"
kd get events --field-selector involvedObject.name=n2 --no-headers >"$W/events" 2>&1
check "kubectl get events --field-selector involvedObject.name=n2 lists it" grep -q 'Warning  *VigilIsolated  *node/n2  *vigil: xid 79' "$W/events"
is "the Event: core/v1, on the Node's uid, in default, source vigil, count 1, first = last" \
    "$(aget '/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dn2' | jq -r --arg uid "$(node_json n2 | jq -r .metadata.uid)" \
        '.items[0] | [.involvedObject.kind, .involvedObject.uid == $uid, .metadata.namespace, .type, .source.component, .count, .firstTimestamp == .lastTimestamp] | map(tostring) | join(" ")')" \
    "Node true default Warning vigil 1 true"
check "the spare n5 is promoted (its taint removed)" wait_for 5 node_has n5 '[.spec.taints // [] | .[] | select(.key=="vigil.dev/spare")] | length == 0'
check "the gang runs again, on the spare, not on n2" wait_for 10 gang_on_spare
after=$(pods_of train | awk '{print $1}' | sort | tr '\n' ' ')
check "all 3 pods of the gang were restarted (new pods)" sh -c "for p in $before; do echo '$after' | grep -qw \$p && exit 1; done; exit 0"
check "the pod on n2 ($n2pod) was evicted by vigil through policy/v1 Eviction (404: the NoExecute taint took it first)" \
    grep -Eq "POST /api/v1/namespaces/default/pods/$n2pod/eviction (201|404) .*ua=vigil\$" "$W/api.log"
check "the gang was restarted by one DELETE of its pods by the Job's label selector" \
    grep -q 'DELETE /api/v1/namespaces/default/pods labelSelector=batch.kubernetes.io/job-name=train 200 .*ua=vigil$' "$W/api.log"
is "… once" "$(grep -c 'DELETE /api/v1/namespaces/default/pods labelSelector=.* ua=vigil$' "$W/api.log")" 1
check "incident isolated" wait_for 5 sh -c "curl -s -H '$RH' '$URL/v1/incidents?node=n2' | grep -q '\"state\":\"isolated'"
inc=$(incident n2)
for step in isolated jobs_requeued spare_promoted; do
    case "$inc" in *"\"$step\""*) ok "timeline has $step" ;; *) nok "timeline has $step: $inc" ;; esac
done
case "$inc" in *'default/Job/train'*) ok "the requeued workload is default/Job/train" ;; *) nok "requeued workload: $inc" ;; esac

# ---- the CA inline (certificate-authority-data), and a CA that did not sign the server's certificate
stop_serve
kubeconfig "$W/vigil.kc" "$TOKEN" "certificate-authority-data: $(base64 -w0 "$W/other.pem")"
start_serve "breaker = 100% / 600s"
# (the controller cannot read which nodes the scheduler has: it takes no event on a guess)
is "a CA that did not sign the API's certificate: the event is answered 503 (the agent keeps it)" "$(post_xid n1 79)" 503
check "… the controller says why, naming TLS" wait_for 15 grep -q "scheduler: cannot read its node list (.*SSL certificate" "$W/serve.log"
stop_serve
kubeconfig "$W/vigil.kc" "$TOKEN" "certificate-authority-data: $(base64 -w0 "$W/ca.pem")"
start_serve "breaker = 100% / 600s"
post_xid n1 79 >/dev/null
check "the right CA inline: isolated" wait_for 10 sh -c "curl -s -H '$RH' '$URL/v1/incidents?node=n1' | grep -q '\"state\":\"isolated'"
stop_serve
kubeconfig "$W/vigil.kc" "$TOKEN"
start_serve "spares = n5
breaker = 100% / 600s"

# ---- ownership: an administrator's cordon is left alone
kd cordon n4 >/dev/null 2>&1
is "XID on an admin-cordoned node accepted" "$(post_xid n4 79)" 202
check "incident held: not vigil's node" wait_for 5 sh -c "curl -s -H '$RH' '$URL/v1/incidents?node=n4' | grep -q 'left alone'"
is "the admin's node carries no vigil annotation" "$(node_json n4 | jq -r '.metadata.annotations["vigil.dev/isolated"] // "none"')" none
is "… and no vigil taint" "$(node_json n4 | jq '[.spec.taints // [] | .[] | select(.key=="vigil.dev/fault")] | length')" 0

# ---- domains from the node label nvidia.com/gpu.clique (n1-n4: rackA): the third XID takes the whole rack
fresh "breaker = 100% / 600s"
post_xid n1 79 >/dev/null; post_xid n2 79 >/dev/null
wait_for 10 sh -c "[ \$(curl -s -H '$RH' '$URL/v1/incidents' | grep -o '\"state\":\"isolated' | wc -l) -eq 2 ]"
post_xid n3 79 >/dev/null
check "3 of rackA's 4 nodes out: n4 isolated with the domain" wait_for 10 node_has n4 '.spec.unschedulable == true'
case "$(node_json n4 | jq -r '.metadata.annotations["vigil.dev/isolated"] | fromjson | .reason')" in
    *"domain rackA: 3 of 4"*) ok "… its reason names the domain from the label" ;;
    *) nok "… its reason names the domain from the label: $(node_json n4 | jq -c .metadata.annotations)" ;; esac

# ---- repair: health check passes → back to the spare pool, resumed (only vigil's marks undone)
fresh "spares = n5
breaker = 100% / 600s
remediate = true {node}
healthcheck = true {node}"
post_xid n2 79 >/dev/null
check "repaired n2 returned to the pool (spare taint)" wait_for 10 node_has n2 '.spec.taints // [] | map(.key) | index("vigil.dev/spare")'
check "… uncordoned, vigil's taint and annotation gone" wait_for 5 node_has n2 '(.spec.unschedulable // false) == false and (.metadata.annotations // {} | has("vigil.dev/isolated") | not) and ([.spec.taints[] | select(.key=="vigil.dev/fault")] | length == 0)'
is "… condition VigilHealthy=True" "$(node_json n2 | jq -r '.status.conditions[] | select(.type=="VigilHealthy") | .status')" True
is "… Events on n2: VigilIsolated (Warning) then VigilReturned (Normal)" \
    "$(aget '/api/v1/events?fieldSelector=involvedObject.name%3Dn2,involvedObject.kind%3DNode' | jq -r '[.items[] | "\(.reason)/\(.type)"] | join(" ")')" \
    "VigilIsolated/Warning VigilReturned/Normal"
check "incident closed" wait_for 5 sh -c "curl -s -H '$RH' '$URL/v1/incidents?node=n2' | grep -q '\"state\":\"closed'"

# ---- crash detection by heartbeat: a silent agent's node is confirmed by probing its kubelet's
# port at the node's address (status.addresses, status.daemonEndpoints), then isolated like an XID.
# n1's kubelet: port 1 on 127.0.0.1, closed (a crashed node); n3's: the double's own port (it answers).
beat() { # node
    vcurl "$1" -o /dev/null --data-binary "{\"node\":\"$1\"}" "$URL/v1/heartbeat"
}
beating() { while [ -s "$W/beating" ]; do for n in $(cat "$W/beating"); do beat "$n"; done; sleep 0.3; done; }
kubelet_at() { # node port
    kd patch node "$1" --subresource=status --type=merge \
        -p "{\"status\":{\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"127.0.0.1\"}],\"daemonEndpoints\":{\"kubeletEndpoint\":{\"Port\":$2}}}}" >/dev/null
}
fresh "breaker = 100% / 600s"
kubelet_at n1 1
kubelet_at n3 "$KPORT"
echo "n1 n2 n3 n4 n5" >"$W/beating"
beating & BEAT_PID=$!
sleep 1.5
echo "n1 n2 n4 n5" >"$W/beating"
sleep 4
is "the agent on n3 fell silent but its kubelet answers: no incident" "$(incident n3 | jq length)" 0
check "… the controller says so" grep -q "agent on n3 is silent but the node answers" "$W/serve.log"
echo "n1 n2 n3 n4 n5" >"$W/beating"; sleep 1
echo "n2 n3 n4 n5" >"$W/beating"
t0=$(date +%s%3N)
check "n1's agent and kubelet silent: cordoned" wait_for 15 node_has n1 '.spec.unschedulable == true'
echo "# n1 silent → cordoned in $(( $(date +%s%3N) - t0 )) ms (heartbeat every 1 s, 2 missed)"
case "$(incident n1)" in *node-silent*) ok "… its incident is a node-silent one" ;; *) nok "… node-silent incident: $(incident n1)" ;; esac
is "… tainted NoExecute (down)" "$(node_json n1 | jq -r '.spec.taints[] | select(.key=="vigil.dev/fault") | .effect')" NoExecute
: >"$W/beating"; wait "$BEAT_PID"
# a node whose kubelet cannot be reached and whose API object is gone: said once, not every probe
fresh "breaker = 100% / 600s"
echo "n1 n2 n3 n4 n5" >"$W/beating"
beating & BEAT_PID=$!
sleep 1.5
kd delete node n4 >/dev/null 2>&1
echo "n1 n2 n3 n5" >"$W/beating"
sleep 5
: >"$W/beating"; wait "$BEAT_PID"
is "a silent node the API no longer knows: 'cannot be probed' said once" "$(grep -c 'n4 is silent and cannot be probed' "$W/serve.log")" 1

# ---- faults: each fails the incident with a clear error, and the retry succeeds
fault_case() { # name node expected-error-text — run after the fault is armed
    is "$1: XID accepted" "$(post_xid "$2" 79)" 202
    if wait_for 10 sh -c "curl -s -H '$RH' '$URL/v1/incidents?node=$2' | grep -q '\"state\":\"failed'"; then
        st=$(curl -s -H "$RH" "$URL/v1/incidents?node=$2" | jq -r '.[0] | .state + ": " + .detail')
        case "$st" in *"$3"*) ok "$1: failed with a clear error" ;; *) nok "$1: error names '$3': $st" ;; esac
    else nok "$1: incident recorded as failed ($(curl -s -H "$RH" "$URL/v1/incidents?node=$2"))"; fi
}
retried_ok() { # name node
    check "$1: retried and isolated" wait_for 20 sh -c "curl -s -H '$RH' '$URL/v1/incidents?node=$2' | grep -q '\"state\":\"isolated'"
}

fresh "breaker = 100% / 600s"
stop_kapi
fault_case "API server down" n1 "Couldn't connect"
kill -0 "$SERVE_PID" && ok "API down: the controller is still running" || nok "API down: the controller is still running"
start_kapi --token "$TOKEN"
retried_ok "API server back" n1

fresh "breaker = 100% / 600s"
ctl POST token '{"token":"rotated-token-the-controller-lacks"}'
fault_case "401 (expired token)" n3 "401 Unauthorized"
ctl POST token "{\"token\":\"$TOKEN\"}"
retried_ok "401 then the token is valid again" n3

fresh "breaker = 100% / 600s"
ctl POST deny '{"verb":"patch","resource":"nodes/status"}'
fault_case "403 (RBAC lacks patch on nodes/status)" n3 'cannot patch resource "nodes/status"'
ctl DELETE deny ''
retried_ok "403 then the role is fixed" n3

fresh "breaker = 100% / 600s"
ctl POST fault '{"code":409,"method":"PATCH","path":"/api/v1/nodes/n1","count":6}'
fault_case "409 storm" n1 "409 Conflict 5 times"
retried_ok "409 storm over" n1

fresh "breaker = 100% / 600s"
ctl POST fault '{"code":429,"method":"PATCH","path":"/api/v1/nodes/n1","count":2,"retry_after":0}'
ctl POST fault '{"code":503,"method":"GET","path":"/api/v1/pods","count":1}'
post_xid n1 79 >/dev/null
check "429 twice and a 503: retried within the call, isolated" wait_for 10 sh -c "curl -s -H '$RH' '$URL/v1/incidents?node=n1' | grep -q '\"state\":\"isolated'"
is "… without failing the incident" "$(curl -s -H "$RH" "$URL/metrics" | sed -n 's/^vigil_action_failures_total //p')" 0
is "… after the API's 429s and 503" "$(grep -c ' 429 .*ua=vigil$\| 503 user=[^ ]* ua=vigil$' "$W/api.log")" 3

fresh "breaker = 100% / 600s"
ctl POST deny '{"verb":"create","resource":"events"}'
post_xid n1 79 >/dev/null; post_xid n3 79 >/dev/null
check "Events refused (403): both nodes isolated all the same" \
    wait_for 10 sh -c "[ \$(curl -s -H '$RH' '$URL/v1/incidents' | grep -o '\"state\":\"isolated' | wc -l) -eq 2 ]"
is "… the refusal logged once, not per Event" "$(grep -c 'Event on node .* was not written.*cannot create resource "events"' "$W/serve.log")" 1
ctl DELETE deny ''

fresh "spares = n5
breaker = 100% / 600s"
ctl POST deny '{"verb":"deletecollection","resource":"pods"}'
is "403 on the gang's DELETE: XID on n2 accepted" "$(post_xid n2 79)" 202
check "… n2 isolated all the same (the node out is what must hold)" \
    wait_for 10 sh -c "curl -s -H '$RH' '$URL/v1/incidents?node=n2' | grep -q '\"state\":\"isolated'"
case "$(incident n2 | jq -r '.[0].steps["requeue failed"].detail')" in
    *'cannot deletecollection resource "pods"'*) ok "… the incident says the requeue failed, naming the verb RBAC lacks" ;;
    *) nok "… the incident says the requeue failed: $(incident n2)" ;;
esac
check "… and an ALERT in the log" grep -q 'ALERT incident [0-9]*: requeue: .*403' "$W/serve.log"
ctl DELETE deny ''

fresh "breaker = 100% / 600s"
kd delete node n1 >/dev/null 2>&1
is "a node gone from the cluster: XID accepted" "$(post_xid n1 79)" 202
check "… held, with the reason" wait_for 5 sh -c "curl -s -H '$RH' '$URL/v1/incidents?node=n1' | grep -q '\"state\":\"held\",\"detail\":\"node n1 is not in the cluster'"
# deleted between vigil's read of the nodes and its PATCH: the API answers 404
ctl POST fault '{"code":404,"method":"PATCH","path":"/api/v1/nodes/n3","count":1,"message":"nodes \"n3\" not found"}'
fault_case "node vanished before the PATCH" n3 'nodes "n3" not found'
retried_ok "node vanished before the PATCH" n3
kill -0 "$SERVE_PID" && ok "vanished node: the controller is still running" || nok "vanished node: the controller is still running"
stop_serve
check "no sanitizer report from the controller" sh -c "! grep -q 'ERROR: AddressSanitizer\|runtime error' '$W/serve.log'"

# ---- client certificates: the double verifies them against its client CA, the user is the CN
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$W/cca.key" -out "$W/cca.pem" -days 2 -subj /CN=vigil-client-ca >/dev/null 2>&1
openssl req -newkey rsa:2048 -nodes -keyout "$W/client.key" -out "$W/client.csr" -subj "/O=vigil/CN=vigil-controller" >/dev/null 2>&1
openssl x509 -req -in "$W/client.csr" -CA "$W/cca.pem" -CAkey "$W/cca.key" -CAcreateserial -out "$W/client.pem" -days 2 >/dev/null 2>&1
kc_cert() { # file data|files|none [cert key] — a kubeconfig whose user is a client certificate (no token)
    kubeconfig "$1"
    case $2 in
    data) printf '    client-certificate-data: %s\n    client-key-data: %s\n' "$(base64 -w0 "$W/${3:-client.pem}")" \
              "$(base64 -w0 "$W/${4:-client.key}")" >>"$1" ;;
    files) printf '    client-certificate: %s\n    client-key: %s\n' "${3:-client.pem}" "${4:-client.key}" >>"$1" ;;
    esac
}
stop_serve; stop_kapi
start_kapi --token "$TOKEN" --client-ca "$W/cca.pem"   # the token: this suite's own readers (node_json)
wait_for 5 running 4
kc_cert "$W/cert.kc" data
kubectl --kubeconfig "$W/cert.kc" get nodes --no-headers >"$W/out" 2>&1
is "kubectl with client-certificate-data: get nodes" "$(awk '{print $1}' "$W/out" | tr '\n' ' ')" "n1 n2 n3 n4 n5 "
check "… the double authenticated it as the certificate's CN" grep -q 'GET /api/v1/nodes 200 user=vigil-controller ua=kubectl' "$W/api.log"
kc_cert "$W/cert.kc" files
is "kubectl with client-certificate / client-key files (relative to the kubeconfig)" \
    "$(kubectl --kubeconfig "$W/cert.kc" get nodes --no-headers 2>&1 | wc -l)" 5
kc_cert "$W/cert.kc" data other.pem other.key
mark=$(wc -l <"$W/api.log")
kubectl --kubeconfig "$W/cert.kc" get nodes >"$W/out" 2>&1
check "a client certificate the client CA did not sign: refused, Unauthorized" grep -q 'Unauthorized' "$W/out"
check "… 401" sh -c "tail -n +$((mark + 1)) '$W/api.log' | grep -q 'GET /api.* 401 user=- ua=kubectl'"
# (kubectl without any credential asks for a user name, so curl asks here)
is "no certificate and no token: 401" "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$W/ca.pem" "$API/api/v1/nodes")" 401
mark=$(wc -l <"$W/api.log")
for form in data files; do
    kc_cert "$W/vigil.kc" "$form"
    start_serve "breaker = 100% / 600s"
    node=n1; [ $form = files ] && node=n3
    post_xid $node 79 >/dev/null
    check "vigil serve, client certificate ($form): XID 79 → $node cordoned" wait_for 10 node_has $node '.spec.unschedulable == true'
    check "… vigil's requests were the certificate's user" grep -q "PATCH /api/v1/nodes/$node 200 .* user=vigil-controller ua=vigil$" "$W/api.log"
    stop_serve
done
is "… and no vigil request went without it" "$(tail -n +$((mark + 1)) "$W/api.log" | grep 'ua=vigil$' | grep -vc 'user=vigil-controller ua=vigil$')" 0
kc_cert "$W/vigil.kc" data client.pem other.key
"$VIGIL" serve --orchestrator k8s --kubeconfig "$W/vigil.kc" --listen 127.0.0.1:0 --db "$W/mismatch.db" --auth token \
    --secret-file "$W/secret" >"$W/out" 2>&1
is "a key that is not the certificate's: exit 2" "$?" 2
check "… naming the file and the fields" grep -q "$W/vigil.kc: user 'vigil': client-key-data does not go with client-certificate-data" "$W/out"
kc_cert "$W/vigil.kc" files client.pem other.key
"$VIGIL" serve --orchestrator k8s --kubeconfig "$W/vigil.kc" --listen 127.0.0.1:0 --db "$W/mismatch.db" --auth token \
    --secret-file "$W/secret" >"$W/out" 2>&1
is "… as files: exit 2" "$?" 2
check "… naming the key's file" grep -q "client-key ($W/other.key) does not go with client-certificate ($W/client.pem)" "$W/out"

# ---- in-cluster: the service account's token and CA at their real path, in a private mount namespace
SA=/var/run/secrets/kubernetes.io/serviceaccount
in_cluster() { # sa-dir command… — run with KUBERNETES_SERVICE_HOST/PORT at the double, no kubeconfig,
               # and the service-account directory bind-mounted at $SA (tmpfs over /var/run first when it lacks $SA)
    env -u KUBECONFIG KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT="$KPORT" HOME="$W" \
        unshare --mount --propagation private sh -c '
            [ -d "$0" ] || { mount -t tmpfs tmpfs "$(readlink -f /var/run)" && mkdir -p "$0"; } || exit 97
            mount --bind "$1" "$0" || exit 97
            shift; exec "$@"' "$SA" "$@"
}
k8s_status() { # sa-dir — what vigil status says of the Kubernetes adapter: "ok detail"
    in_cluster "$1" "$VIGIL" status --json 2>>"$W/status.err" |
        jq -r '.items[] | select(.detail | startswith("k8s")) | "\(.ok) \(.detail)"'
}
if [ "$(id -u)" != 0 ] || ! unshare --mount --propagation private true 2>/dev/null; then
    skip "in-cluster configuration: needs root and unshare --mount (a private mount namespace) to put a token at $SA"
else
    mkdir -p "$W/sa" "$W/sa-nocert" "$W/sa-notoken"
    printf '%s\n' "$TOKEN" >"$W/sa/token"; cp "$W/ca.pem" "$W/sa/ca.crt"
    printf '%s\n' "$TOKEN" >"$W/sa-nocert/token"; cp "$W/other.pem" "$W/sa-nocert/ca.crt"
    cp "$W/ca.pem" "$W/sa-notoken/ca.crt"
    mark=$(wc -l <"$W/api.log")
    out=$(k8s_status "$W/sa")
    case "$out" in "true k8s: 5 node(s)"*) ok "in-cluster: vigil status reads the 5 nodes through the adapter" ;;
        *) nok "in-cluster: vigil status reads the nodes: $out" ;; esac
    check "… over HTTPS to KUBERNETES_SERVICE_HOST/PORT with the mounted token (the double names its user)" \
        sh -c "tail -n +$((mark + 1)) '$W/api.log' | grep -q 'GET /api/v1/nodes 200 user=system:serviceaccount:vigil:vigil-controller ua=vigil$'"
    out=$(k8s_status "$W/sa-nocert")
    case "$out" in *"https://127.0.0.1:$KPORT: SSL certificate problem"*) ok "in-cluster, a ca.crt that did not sign the API's certificate: curl's certificate error" ;;
        *) nok "in-cluster, wrong ca.crt: $out" ;; esac
    in_cluster "$W/sa-notoken" "$VIGIL" serve --orchestrator k8s --listen 127.0.0.1:0 --db "$W/incluster.db" \
        --auth token --secret-file "$W/secret" >"$W/out" 2>&1
    is "in-cluster without a token file: vigil serve exits 2" "$?" 2
    check "… naming the path" grep -q "$SA/token: No such file or directory" "$W/out"
    check "the host's $SA was never written" sh -c "[ ! -e '$SA/token' ] || ! grep -q '$TOKEN' '$SA/token'"
fi

# ---- RBAC: the controller's ClusterRole (deploy/kubernetes, overlays/kubernetes) = the verbs vigil used in
# this suite, no more (the manifests themselves: k8s_deploy.sh)
stop_kapi
CACERT= TOKEN=
start_kapi   # plain HTTP on the same port: kubectl's own kubeconfig ($KUBECONFIG) reads it
granted=$(kubectl kustomize "$ROOT/deploy/kubernetes/overlays/kubernetes" |
    kubectl create --dry-run=client --validate=false -o json -f - 2>/dev/null |
    jq -r 'select(.kind == "ClusterRole" and .metadata.name == "vigil-controller") | .rules[] | .resources[] as $r | .verbs[] | "\(.) \($r)"' |
    sort -u | tr '\n' ' ')
used=$(grep 'ua=vigil$' "$W/api.log" | awk '{
    m = $1; p = $2; sub(/\?.*/, "", p); n = split(p, s, "/")
    if (p ~ /\/eviction$/) r = "pods/eviction"; else if (p ~ /\/status$/) r = "nodes/status"; else if (p ~ /\/events$/) r = "events"
    else if (p ~ /\/pods$/) r = "pods"; else if (p ~ /\/nodes$/) r = "nodes"; else if (s[n-1] == "nodes") r = "nodes"; else r = p
    coll = p ~ /\/(nodes|pods)$/
    v = m == "PATCH" ? "patch" : m == "POST" ? "create" : m == "DELETE" ? (coll ? "deletecollection" : "delete") : (coll ? "list" : "get")
    print v, r }' | sort -u | tr '\n' ' ')
is "the ClusterRole grants exactly the verbs vigil used" "$used" "$granted"
done_testing
