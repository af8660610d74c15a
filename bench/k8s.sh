#!/bin/sh
# k8s.sh — `vigil serve --orchestrator k8s` against the Kubernetes API double
# (build/tests/kapi; no real API server here): the API calls vigil makes for
# one XID 79 on a node of a running 3-pod gang (goal: at most 5, plus one per
# pod moved; the VigilIsolated Event counts), and the time from posting the
# XID to the node being cordoned, next to a bare cordon (one PATCH with curl) against the same server in the
# same run.  Median of 3 runs.
cd "$(dirname "$0")/.." || exit 2
V=$PWD/build/vigil
K=$PWD/build/tests/kapi
[ -x "$K" ] || make --no-print-directory build/tests/kapi >/dev/null || exit 1
command -v jq >/dev/null || { echo "k8s: needs jq"; exit 0; }
T=$(mktemp -d /tmp/vigil-bench-k8s-XXXXXX)
KP= SP=
trap '[ -n "$SP" ] && kill $SP 2>/dev/null; [ -n "$KP" ] && kill $KP 2>/dev/null; rm -rf "$T"' EXIT
TOKEN="bench-api-token-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
umask 077; "$V" token --new-secret "$T/secret" && "$V" token --secret-file "$T/secret" --node 'n[1-5]' --out "$T/%n.token" || exit 1
echo "read-token-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')" >"$T/read.token"; umask 022
printf 'spares = n5\nbreaker = 100%% / 600s\n' >"$T/policy"
# the API over HTTPS, as vigil speaks it (it refuses plain HTTP)
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/ca.key" -out "$T/ca.pem" -days 2 -subj /CN=kapi \
    -addext "subjectAltName=IP:127.0.0.1" >/dev/null 2>&1
api() { curl -s --cacert "$T/ca.pem" -H "Authorization: Bearer $TOKEN" "$@"; }
now() { date +%s%N; }

gang() { api "$A/api/v1/namespaces/default/pods?labelSelector=batch.kubernetes.io%2Fjob-name%3Dtrain" | jq -r '.items[].metadata.name' | sort; }
run() { # → "calls moved latency_s baseline_s"
    rm -f "$T/kport" "$T/port" "$T/db"* "$T/api.log"
    "$K" --port-file "$T/kport" --state tests/fixtures/k8s/cluster.json --token "$TOKEN" --log "$T/api.log" \
        --tls-cert "$T/ca.pem" --tls-key "$T/ca.key" &
    KP=$!
    while [ ! -s "$T/kport" ]; do sleep 0.02; done
    A="https://127.0.0.1:$(cat "$T/kport")"
    printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: k\n  cluster: {server: "%s", certificate-authority: ca.pem}\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {token: "%s"}\n' "$A" "$TOKEN" >"$T/kc"
    while [ "$(api "$A/api/v1/namespaces/default/pods" | jq '[.items[] | select(.status.phase=="Running")] | length')" != 4 ]; do sleep 0.02; done
    # baseline: one bare cordon of n4 and back
    b0=$(now)
    api -o /dev/null -X PATCH -H 'Content-Type: application/strategic-merge-patch+json' -d '{"spec":{"unschedulable":true}}' "$A/api/v1/nodes/n4"
    b1=$(now)
    api -o /dev/null -X PATCH -H 'Content-Type: application/strategic-merge-patch+json' -d '{"spec":{"unschedulable":null}}' "$A/api/v1/nodes/n4"
    "$V" serve --orchestrator k8s --orch-config "$T/kc" --listen 127.0.0.1:0 --port-file "$T/port" --db "$T/db" \
        --auth token --secret-file "$T/secret" --read-token-file "$T/read.token" --policy "$T/policy" 2>>"$T/serve.log" &
    SP=$!
    while [ ! -s "$T/port" ]; do sleep 0.02; done
    URL="http://127.0.0.1:$(cat "$T/port")"
    sleep 0.3   # the spare pool read at start is not the incident's
    before=$(grep -c 'ua=vigil$' "$T/api.log")
    gang >"$T/gang.before"
    t0=$(now)
    curl -s -o /dev/null -H "Authorization: Bearer $(cat "$T/n2.token")" -H "X-Vigil-Node: n2" \
        -H "X-Vigil-Time: $(date +%s%3N)" -H "X-Vigil-Nonce: 00000000000000b1-$(date +%s%6N)" --data-binary '{"node":"n2","seq":1,"events":[{"kind":"xid","code":79,"pci":"0000:18:00.0","gpu":0,"action":"reboot","source":"kmsg"}]}' \
        "$URL/v1/events"
    end=$(( $(date +%s) + 60 ))   # never wait for ever: a run that does not finish says so
    while [ "$(api "$A/api/v1/nodes/n2" | jq -r '.spec.unschedulable')" != true ]; do
        [ "$(date +%s)" -lt $end ] || { echo "k8s: n2 was not cordoned within 60 s" >&2; return 1; }
    done
    t1=$(now)
    while ! curl -s -H "Authorization: Bearer $(cat "$T/read.token")" "$URL/v1/incidents?node=n2" | grep -q '"spare_promoted":{'; do
        [ "$(date +%s)" -lt $end ] || { echo "k8s: no spare promoted within 60 s" >&2; return 1; }
        sleep 0.02
    done
    all=$(grep 'ua=vigil$' "$T/api.log" | tail -n +$((before + 1)))
    calls=$(printf '%s\n' "$all" | grep -c .)
    gang >"$T/gang.after"
    ev=$(comm -23 "$T/gang.before" "$T/gang.after" | grep -c .)   # the gang's pods that are gone: moved
    kill $SP; wait $SP 2>/dev/null; SP=
    kill $KP; wait $KP 2>/dev/null; KP=
    awk -v c="$calls" -v e="$ev" -v a="$t0" -v b="$t1" -v c0="$b0" -v c1="$b1" \
        'BEGIN { printf "%d %d %.4f %.4f\n", c, e, (b - a) / 1e9, (c1 - c0) / 1e9 }'
}
for i in 1 2 3; do run; done >"$T/runs"
sort -k3 -n "$T/runs" | sed -n 2p | {
    read -r calls ev lat base
    printf 'k8s (API double): XID 79 on a node of a running 3-pod gang, median of 3\n'
    printf '  API calls per incident      %3d  for %d pods moved (goal: <= 5 + %d = %d)\n' "$calls" "$ev" "$ev" $((5 + ev))
    printf '    (1 node list, the executor'"'"'s, one per batch; pods on the node, node PATCH, nodes/status PATCH,\n'
    printf '     the eviction of the pod on the node at DOWN, the VigilIsolated Event, one DELETE of the gang'"'"'s\n'
    printf '     pods by its label selector, the spare'"'"'s PATCH)\n'
    printf '  XID → node cordoned         %.4f s\n' "$lat"
    printf '  bare cordon (1 PATCH, curl) %.4f s   ratio %.1fx\n' "$base" "$(awk -v a="$lat" -v b="$base" 'BEGIN { print (b > 0 ? a / b : 0) }')"
}

# `vigil drill --orchestrator k8s` on the double whose kubelet runs the pods
# (--exec): a 4-pod Indexed Job, XID 79 injected through a pod into the
# victim's kernel-log file that its agent follows; isolate and restart from
# the API's stamps, resume from the trainer's log in the shared workdir.
rm -f "$T/kport" "$T/port" "$T/db"* && mkdir -p "$T/nodes"
PATH="$PWD/build:$PATH" "$K" --port-file "$T/kport" --state tests/fixtures/k8s/cluster.json --token "$TOKEN" --exec "$T/pods" \
    --tls-cert "$T/ca.pem" --tls-key "$T/ca.key" &
KP=$!
while [ ! -s "$T/kport" ]; do sleep 0.02; done
A="https://127.0.0.1:$(cat "$T/kport")"
sed -i "s|server: \"[^\"]*\"|server: \"$A\"|" "$T/kc"
for j in train other; do api -o /dev/null -X DELETE "$A/apis/batch/v1/namespaces/default/jobs/$j"; done
"$V" serve --orchestrator k8s --orch-config "$T/kc" --listen 127.0.0.1:0 --port-file "$T/port" --db "$T/db" \
    --auth token --secret-file "$T/secret" --read-token-file "$T/read.token" --policy "$T/policy" 2>>"$T/serve.log" &
SP=$!
while [ ! -s "$T/port" ]; do sleep 0.02; done
URL="http://127.0.0.1:$(cat "$T/port")"
AG=
for n in n1 n2 n3 n4; do
    : >"$T/nodes/$n"
    "$V" agent --node "$n" --kmsg "$T/nodes/$n" --controller "$URL" --auth token --token-file "$T/$n.token" \
        --spool "$T/$n.spool" --interval 0 --no-nvml-events >/dev/null 2>&1 &
    AG="$AG $!"
done
VIGIL_K8S_IMAGE=vigil:bench VIGIL_READ_TOKEN=$(cat "$T/read.token") "$V" drill --orchestrator k8s --kubeconfig "$T/kc" \
    --controller "$URL" --nodes 4 --gpus-per-node 8 --kmsg "$T/nodes/{node}" --deadline 60 --workdir "$T/drill" \
    --shared-workdir --json >"$T/drill.json" 2>"$T/drill.err"
for p in $AG; do kill "$p"; done
jq -r '.runs[0] | "k8s drill (API double, --exec): XID 79 on \(.victim) of a 4-pod Job\n" +
    "  detect  \(.detect.after_s) s (\(.detect.by))\n  isolate \(.isolate.after_s) s (VigilHealthy, to the second)\n" +
    "  restart \(.restart.after_s) s on \(.restart.nodes) (spare: \(.restart.spare); the end of the API stamp'"'"'s second)\n" +
    "  resume  \(.resume.after_s) s from step \(.resume.from_step) (the trainer'"'"'s log in the shared workdir, to the ms)"' \
    "$T/drill.json" 2>/dev/null || { echo "k8s drill: no report"; tail -3 "$T/drill.err"; }
