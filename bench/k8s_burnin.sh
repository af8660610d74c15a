#!/bin/sh
# k8s_burnin.sh — "never in the way" on Kubernetes, against the API double
# (build/tests/kapi --exec: containers run as local processes; no real API
# server here): the time from creating a production pod (priority 1000, all
# 8 GPUs of a node) to Running on a node a `vigil burnin --schedule
# --orchestrator k8s` pass holds (the double's scheduler preempts it), next
# to the same pod on an idle node in the same run.  Median of 3 each, ratio.
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
VIGIL=$ROOT/build/vigil
[ -x build/tests/kapi ] || make --no-print-directory build/tests/kapi >/dev/null || exit 1
command -v jq >/dev/null || { echo "k8s_burnin: needs jq"; exit 0; }
W=$(mktemp -d /tmp/vigil-bench-k8sburnin-XXXXXX)
trap 'stop_kapi; rm -rf "$W"' EXIT
. tests/k8s/harness.sh
KAPI_EXEC=$W/containers
printf '#!/bin/sh\nexec sleep 300.19\n' >"$W/slow-gpu"; chmod +x "$W/slow-gpu"
export PATH="$ROOT/build:$ROOT/tests/standins:$PATH" VIGIL_K8S_IMAGE=vigil:bench KUBECONFIG=$W/kc
export VIGIL_NVML_LIB=$ROOT/build/tests/libnvidia-ml.so.1
now() { date +%s%N; }
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
phase() { aget "/api/v1/namespaces/default/pods/$1" | jq -r .status.phase; }
prod() { # name node → ms from create to Running
    t0=$(now)
    acurl -o /dev/null -H 'Content-Type: application/json' --data-binary "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",
      \"metadata\":{\"name\":\"$1\"},\"spec\":{\"priorityClassName\":\"production\",\"restartPolicy\":\"Never\",
      \"nodeSelector\":{\"kubernetes.io/hostname\":\"$2\"},\"containers\":[{\"name\":\"t\",\"image\":\"x\",\"command\":[\"sleep\",\"60\"],
      \"resources\":{\"limits\":{\"nvidia.com/gpu\":\"8\"}}}]}}" "$API/api/v1/namespaces/default/pods"
    while [ "$(phase "$1")" != Running ]; do sleep 0.005; done
    echo $(( ($(now) - t0) / 1000000 ))
}
make_ca   # vigil speaks HTTPS only: the passes' vigil reads the same kubeconfig
TOKEN="bench-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
for i in 1 2 3; do
    start_kapi --token "$TOKEN"; kubeconfig "$W/kc" "$TOKEN"
    wait_for 5 running 4
    acurl -o /dev/null -X DELETE "$API/apis/batch/v1/namespaces/default/jobs/train"
    acurl -o /dev/null -X DELETE "$API/apis/batch/v1/namespaces/default/jobs/other"
    acurl -o /dev/null -H 'Content-Type: application/json' --data-binary \
        '{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"production"},"value":1000}' \
        "$API/apis/scheduling.k8s.io/v1/priorityclasses"
    wait_for 5 running 0
    "$VIGIL" burnin --schedule --orchestrator k8s --kubeconfig "$W/kc" --state "$W/st$i.json" --nodes n2 \
        --tool "vigil-gpu=$W/slow-gpu" --json >/dev/null
    wait_for 10 sh -c "aget '/api/v1/namespaces/default/pods?labelSelector=vigil.dev%2Fburnin%3Dn2' | jq -e '.items[0].status.phase == \"Running\"'" ||
        { echo "k8s_burnin: the pass did not start"; exit 1; }
    sleep 0.5
    prod "p$i" n2 >>"$W/held"
    prod "q$i" n3 >>"$W/idle"
    stop_kapi
done
held=$(median <"$W/held"); idle=$(median <"$W/idle")
echo "production pod to Running on a node a burn-in pass holds (preempted): ${held} ms (median of 3)"
echo "the same on an idle node (baseline):                                   ${idle} ms"
echo "ratio held/idle: $(awk -v a="$held" -v b="$idle" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')   (goal on the lab: <= 5 s)"
