#!/bin/sh
# k8s_deploy.sh — deploy/kubernetes, as a platform engineer applies it:
# `kubectl kustomize` renders the default (plain Kubernetes), the Slurm on
# Kubernetes overlay and the components; every rendered object goes through
# kubectl's client-side validation (the double serves Kubernetes 1.32's
# OpenAPI document) and `kubectl apply --dry-run=server` against the API
# double, then is applied for real and read back with kubectl.  What the
# objects must say: the controller kept off GPU nodes and spares by a
# required node affinity, tolerating none of vigil's taints, with the read
# token, behind a PodDisruptionBudget, a Service and a ServiceMonitor; no
# Secret in the manifests (the documented commands make them); the agents
# privileged for /dev/kmsg, the NVIDIA runtime class on NVIDIA nodes only,
# AMD nodes too, no host PID or network; the Slurm overlay with munged and
# slurm.conf and no Kubernetes API access.  A manifest with a misspelt field
# is refused by the validation.  No real API server runs here.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/vigil-k8sdeploy.XXXXXX")
. "$ROOT/tests/k8s/harness.sh"
trap 'stop_kapi; rm -rf "$W"' EXIT
need_kubectl
D=$ROOT/deploy/kubernetes

# ---- rendering
kubectl kustomize "$D" >"$W/default.yaml" 2>"$W/err"
is "kubectl kustomize deploy/kubernetes renders" "$? $(cat "$W/err")" "0 "
kubectl kustomize "$D/overlays/slurm" >"$W/slurm.yaml" 2>"$W/err"
is "… and the Slurm on Kubernetes overlay" "$? $(cat "$W/err")" "0 "
kubectl kustomize "$D/overlays/kubernetes" >"$W/plain.yaml"
check "the default is the plain Kubernetes overlay" cmp -s "$W/default.yaml" "$W/plain.yaml"
mkdir -p "$W/site"
cat >"$W/site/kustomization.yaml" <<EOF
# a platform team's own overlay: their registry's image, the NVIDIA runtime as the default runtime
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: ["$(realpath --relative-to="$W/site" "$D")"]
components: ["$(realpath --relative-to="$W/site" "$D/components/nvidia-default-runtime")"]
images: [{name: vigil, newName: registry.example.com/gpu/vigil, newTag: "1.2.3"}]
EOF
kubectl kustomize "$W/site" >"$W/site.yaml" 2>"$W/err"
is "a site overlay on top of it renders" "$? $(cat "$W/err")" "0 "
check "… every image is the site's" sh -c "! grep 'image:' '$W/site.yaml' | grep -v 'image: registry.example.com/gpu/vigil:1.2.3\$'"
is "… no runtimeClassName left with nvidia-default-runtime" "$(grep -c runtimeClassName "$W/site.yaml")" 0

# ---- validation and a server dry run against the double
make_ca
TOKEN="deploy-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
start_kapi --token "$TOKEN"
kubeconfig "$W/kc" "$TOKEN"
export KUBECONFIG="$W/kc"
count() { grep -c '^kind:' "$1"; }
# a namespace must exist for a server dry run of what goes in it (the API server's NamespaceLifecycle)
kubectl apply --dry-run=server -f "$W/default.yaml" >"$W/out" 2>&1
check "before the namespace exists, the server dry run says so" grep -q 'namespaces "vigil" not found' "$W/out"
kubectl apply -f "$D/base/namespace.yaml" >/dev/null 2>&1
for f in default slurm site; do
    kubectl apply --dry-run=server -f "$W/$f.yaml" >"$W/$f.out" 2>&1
    is "$f: kubectl apply --dry-run=server (validated against the schema): exit 0" "$?" 0
    is "… every object created or unchanged (server dry run)" "$(grep -c '(server dry run)$' "$W/$f.out")" "$(count "$W/$f.yaml")"
    grep -v '(server dry run)$' "$W/$f.out" | sed 's/^/# /'
done
check "… through /openapi/v2 (client-side validation)" grep -q 'GET /openapi/v2 200' "$W/api.log"
is "… and ?dryRun=All, nothing stored" "$(aget /apis/apps/v1/namespaces/vigil/deployments/vigil-controller | jq -r .code)" 404
sed 's/minAvailable: 1/minAvailble: 1/' "$W/default.yaml" >"$W/bad.yaml"
kubectl apply --dry-run=server -f "$W/bad.yaml" >"$W/out" 2>&1
is "a misspelt field: kubectl's validation refuses it (exit 1)" "$?" 1
check "… naming the field and the type" grep -q 'unknown field "minAvailble" in io.k8s.api.policy.v1.PodDisruptionBudgetSpec' "$W/out"

# ---- the objects
kubectl apply --dry-run=server -o json -f "$W/default.yaml" >"$W/default.json"
kubectl apply --dry-run=server -o json -f "$W/slurm.yaml" >"$W/slurm.json"
obj() { jq -c --arg k "$2" --arg n "$3" '.items[] | select(.kind == $k and .metadata.name == $n)' "$W/$1.json"; }
ctl=$(obj default Deployment vigil-controller)
is "no Secret in the manifests (the documented commands make them)" \
    "$(jq '[.items[] | select(.kind == "Secret")] | length' "$W/default.json" "$W/slurm.json" | tr '\n' ' ')" "0 0 "
is "controller: required node affinity off NVIDIA and AMD GPU nodes and spares" \
    "$(printf "%s" "$ctl" | jq -r '.spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions | map("\(.key) \(.operator)") | join(", ")')" \
    "nvidia.com/gpu.present DoesNotExist, amd.com/gpu.device-id DoesNotExist, feature.node.kubernetes.io/amd-gpu DoesNotExist, vigil.dev/spare DoesNotExist"
is "… tolerates no taint (vigil's least of all)" "$(printf "%s" "$ctl" | jq '.spec.template.spec.tolerations // [] | length')" 0
is "… one replica, Recreate" "$(printf "%s" "$ctl" | jq -r '"\(.spec.replicas) \(.spec.strategy.type)"')" "1 Recreate"
is "… the read token and the agents' token from their Secrets" \
    "$(printf "%s" "$ctl" | jq -r '[.spec.template.spec.volumes[] | .secret.secretName // empty] | join(" ")')" "vigil-token vigil-read-token"
is "… --read-token-file given" "$(printf "%s" "$ctl" | jq -r '.spec.template.spec.containers[0].args | index("--read-token-file") != null')" true
is "… on plain Kubernetes: --orchestrator k8s, the ServiceAccount's token mounted" \
    "$(printf "%s" "$ctl" | jq -r '.spec.template.spec | "\(.containers[0].args[-2:] | join(" ")) \(.automountServiceAccountToken)"')" "--orchestrator k8s true"
is "… no privilege: all capabilities dropped, read-only root, no escalation" \
    "$(printf "%s" "$ctl" | jq -r '.spec.template.spec.containers[0].securityContext | "\(.capabilities.drop) \(.readOnlyRootFilesystem) \(.allowPrivilegeEscalation)"')" '["ALL"] true false'
is "a PodDisruptionBudget on the controller's pods" \
    "$(obj default PodDisruptionBudget vigil-controller | jq -r '"\(.spec.selector.matchLabels["app.kubernetes.io/name"]) \(.spec.minAvailable)"')" "vigil-controller 1"
is "a Service on its port" "$(obj default Service vigil-controller | jq -r '.spec.ports[0] | "\(.port) \(.targetPort)"')" "8470 http"
is "a ServiceMonitor scraping /metrics with the read token" \
    "$(obj default ServiceMonitor vigil-controller | jq -r '.spec.endpoints[0] | "\(.port) \(.path) \(.authorization.credentials.name)"')" "http /metrics vigil-read-token"
nv=$(obj default DaemonSet vigil-agent-nvidia) amd=$(obj default DaemonSet vigil-agent-amd)
is "NVIDIA agents: runtimeClassName nvidia, on nodes labelled nvidia.com/gpu.present, NVML asked of the runtime" \
    "$(printf "%s" "$nv" | jq -r '.spec.template.spec | "\(.runtimeClassName) \(.nodeSelector["nvidia.com/gpu.present"]) \([.containers[0].env[] | select(.name | startswith("NVIDIA")) | .value] | join(","))"')" \
    "nvidia true all,utility"
is "AMD agents: on AMD nodes (either label), no NVIDIA runtime" \
    "$(printf "%s" "$amd" | jq -r '.spec.template.spec | "\(.runtimeClassName) \([.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[].matchExpressions[0].key] | join(","))"')" \
    "null amd.com/gpu.device-id,feature.node.kubernetes.io/amd-gpu"
for a in "$nv" "$amd"; do
    is "$(printf "%s" "$a" | jq -r .metadata.name): privileged (/dev/kmsg is outside the runtime's device list), no host PID or network, no API token" \
        "$(printf "%s" "$a" | jq -r '.spec.template.spec | "\(.containers[0].securityContext.privileged) \(.hostPID // false) \(.hostNetwork // false) \(.automountServiceAccountToken)"')" \
        "true false false false"
    is "… tolerates every taint, its node's name from the downward API" \
        "$(printf "%s" "$a" | jq -r '.spec.template.spec | "\(.tolerations[0].operator) \(.containers[0].env[] | select(.name == "VIGIL_NODE") | .valueFrom.fieldRef.fieldPath)"')" "Exists spec.nodeName"
done
sctl=$(obj slurm Deployment vigil-controller)
is "Slurm overlay: --orchestrator slurm --slurm-conf from the ConfigMap" \
    "$(printf "%s" "$sctl" | jq -r '.spec.template.spec | "\(.containers[0].args[-4:] | join(" ")) \(.volumes[] | select(.name == "slurm-conf") | .configMap.name)"')" \
    "--orchestrator slurm --slurm-conf /etc/slurm/slurm.conf vigil-slurm-conf"
is "… munged beside it (a sidecar) with the key from vigil-munge-key, its socket shared" \
    "$(printf "%s" "$sctl" | jq -r '.spec.template.spec | "\(.initContainers[0].restartPolicy) \(.initContainers[0].command[0]) \(.volumes[] | select(.name == "munge-key") | .secret.secretName) \([.containers[0].volumeMounts[] | select(.name == "munge-run") | .mountPath] | join(""))"')" \
    "Always munged vigil-munge-key /run/munge"
is "… no Kubernetes API access: no ClusterRole, no token mounted" \
    "$(jq '[.items[] | select(.kind | test("ClusterRole"))] | length' "$W/slurm.json") $(printf "%s" "$sctl" | jq .spec.template.spec.automountServiceAccountToken)" "0 false"

# ---- the Secrets by the documented commands, the whole default applied, read back with kubectl
sed -n '/^kubectl -n vigil create secret generic vigil-[a-z-]*token/p' "$ROOT/docs/kubernetes.md" >"$W/secrets.sh"
is "docs/kubernetes.md gives the commands for both tokens" "$(grep -c 'create secret generic vigil-' "$W/secrets.sh")" 2
sh -e "$W/secrets.sh" >"$W/out" 2>&1
is "… they run" "$? $(grep -c 'created' "$W/out")" "0 2"
tok() { aget "/api/v1/namespaces/vigil/secrets/$1" | jq -r '.data.token' | base64 -d | wc -c; }
check "… each token 32 characters or more" test "$(tok vigil-token)" -ge 32 -a "$(tok vigil-read-token)" -ge 32
kubectl apply -f "$W/default.yaml" >"$W/out" 2>&1
is "kubectl apply -f (the default): every object created" "$(grep -c ' created$' "$W/out")" "$(( $(count "$W/default.yaml") - 1 ))"
is "kubectl get deploy,ds,pdb,svc -n vigil (labelled vigil's)" \
    "$(kubectl -n vigil get deploy,ds,pdb,svc -l app.kubernetes.io/name -o name 2>&1 | sort | tr '\n' ' ')" \
    "daemonset.apps/vigil-agent-amd daemonset.apps/vigil-agent-nvidia deployment.apps/vigil-controller service/vigil-controller "
is "kubectl get servicemonitor (a custom resource)" "$(kubectl -n vigil get servicemonitor --no-headers 2>&1 | awk '{print $1}')" vigil-controller
kubectl apply -f "$W/default.yaml" >"$W/out" 2>&1
# (kubectl re-sends a PodDisruptionBudget's selector every time: its patch strategy is "replace")
is "applied again: nothing created, all unchanged but the PodDisruptionBudget" \
    "$(grep -c ' unchanged$' "$W/out") $(grep ' configured$' "$W/out")" \
    "$(( $(count "$W/default.yaml") - 1 )) poddisruptionbudget.policy/vigil-controller configured"
done_testing
