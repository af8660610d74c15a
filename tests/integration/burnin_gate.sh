#!/bin/sh
# burnin_gate.sh — burn-in results as evidence, and the burn-in gate, on a
# real lab (3 nodes, Slurm, munge) with a real `vigil serve` (token auth, read
# token): `vigil burnin --lab --controller` sends each node's pass, GET
# /v1/burnin gives the history and the cadence, bad input is refused naming
# the field; scheduled passes send their own results; `vigil score` reads
# the history for the Reliability criterion.  Then the repair path: an XID on
# a node whose GPU corrupts data is repaired and passes its health check, but
# the burn-in gate (burnin_gate, the lab's quick checksum test) fails — the
# node stays out; the same on a healthy node returns it.  Last, a lab of AMD
# nodes: the scheduled passes through the Slurm partition and the gate run
# AMD's suite; XGMI at half its bandwidth keeps a repaired node out.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ] || ! command -v slurmctld >/dev/null; then
    skip "needs root and slurmctld"; exit 0
fi
top=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/vigil-bgate.XXXXXX")
chmod 755 "$W"   # munged refuses a socket under a 0700 parent
SERVE_PID=
stop_serve() { [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null; SERVE_PID=; }
lab_up 3 --no-vigil >/dev/null || { nok "lab up"; rm -rf "$W"; exit 1; }
trap 'stop_serve; [ -n "$KEEP" ] && cp "$W"/serve*.log /tmp/; scancel -u root >/dev/null 2>&1; lab_down; rm -rf "$W"' EXIT   # after lab_up, which sets its own
export PATH="$top/tests/standins:$PATH" VIGIL_NVML_LIB="$top/build/tests/libnvidia-ml.so.1"
node_tokens "$W" 'n[1-3]' >/dev/null; secret "$W/read.token" read; secret "$W/bad.token"
RH="Authorization: Bearer $(cat "$W/read.token")"
GATE="$VIGIL burnin --lab --dir $LAB_DIR --nodes {node} --suite {suite} --test gemm-small --no-drain --json"
cat >"$W/policy.conf" <<EOF
breaker = 100% / 600s
repair quick = true {node}
healthcheck = true {node}
burnin_gate = $GATE
burnin_suite = quick
repair_timeout = 120
EOF
lab_serve "$W" "$W/policy.conf" "$W/incidents.db" "$W/serve.log"
wait_for() { # seconds command…
    t=$(( $(date +%s) + $1 )); shift
    while ! "$@" >/dev/null 2>&1; do [ "$(date +%s)" -ge "$t" ] && return 1; sleep 0.2; done
}
hist() { curl -s -H "$RH" "$URL/v1/burnin$1"; }
has() { printf '%s\n' "$1" | grep -q -- "$2"; }
burnin() { "$VIGIL" burnin --lab --dir "$LAB_DIR" --test gemm-small --no-drain "$@"; }
TOK="--auth token --token-file $W/%n.token"   # each node's results posted as that node

# ---- results into the controller
out=$(burnin --controller "$URL" $TOK --json)
is "a lab pass sent to the controller: exit 0, every node passed" \
    "$? $(echo "$out" | jq -r '[.nodes[] | .node + "=" + .result] | join(" ")')" "0 n1=pass n2=pass n3=pass"
h=$(hist)
is "GET /v1/burnin: three nodes tested, one pass each, all of the cluster covered" \
    "$(echo "$h" | jq -r '.burnin | [.nodes_tested, .runs, .passes, .nodes_in_cluster, .coverage] | join(" ")')" "3 3 3 3 1"
is "… each node's last pass with its figure" \
    "$(echo "$h" | jq -r '.nodes[] | select(.node == "n2") | .last_result + " " + .last_suite + " " + .tests[0].name')" \
    "pass quick gemm-small"
err=$(burnin --controller "$URL" --auth token --token-file "$W/bad.token" 2>&1 >/dev/null)
is "a wrong token: exit 1, the controller's refusal said" "$?" 1
check "… naming the controller and HTTP 401" has "$err" "results of n1 not recorded by $URL/v1/burnin: HTTP 401"
err=$(burnin --controller http://127.0.0.1:1 $TOK 2>&1 >/dev/null)
is "a controller that is down: exit 1, said" "$?" 1
check "… with the reason" has "$err" "results of n1 not recorded by http://127.0.0.1:1/v1/burnin: "
exits_with "--token-file without --controller: exit 2" 2 "$VIGIL" burnin --lab --dir "$LAB_DIR" --token-file "$W/n1.token"
post() { # body → "CODE BODY"
    printf '%s' "$1" >"$W/body"
    vcurl n1 -w ' %{http_code}' --data-binary @"$W/body" "$URL/v1/burnin"
}
is "POST /v1/burnin: a bad result is refused naming the field" \
    "$(post '{"nodes":[{"node":"n1","result":"great","suite":"quick","tests":[]}]}')" \
    '{"error":"nodes[0].result: not pass, fail, unknown or preempted"} 400'
is "… a node name that is not one" \
    "$(post '{"nodes":[{"node":"../n1","result":"pass","suite":"quick","tests":[]}]}' | jq -r .error)" \
    "nodes[0].node: missing or not a node name"
is "… nothing of a refused document kept" "$(hist | jq .burnin.runs)" 3
is "GET /v1/burnin needs the read token" "$(curl -s -o /dev/null -w '%{http_code}' "$URL/v1/burnin")" 401
is "… ?days= must be a number of days" "$(curl -s -H "$RH" -w ' %{http_code}' "$URL/v1/burnin?days=x" | sed 's/.* //')" 400

# ---- scheduled passes send their own results
ST=$W/sched.json
out=$("$VIGIL" burnin --schedule --lab --dir "$LAB_DIR" --state "$ST" --test gemm-small --controller "$URL" $TOK --json)
is "schedule with --controller: a pass submitted on each idle node" \
    "$(echo "$out" | jq -r '[.nodes[] | select(.action == "submitted")] | length')" 3
check "… each job's pass reaches the controller" wait_for 60 sh -c "[ \$(curl -s -H '$RH' '$URL/v1/burnin' | jq .burnin.runs) -ge 6 ]"
is "… recorded per node" "$(hist '?node=n3' | jq -r '.nodes[0].runs')" 2

# ---- vigil score reads the history
hist >"$W/burnin.json"
sc=$("$VIGIL" score "$W/burnin.json" --json)
is "score: the burn-in history is evidence of its own kind; coverage and failing rules met" \
    "$(echo "$sc" | jq -r '[.criteria[].rules[] | select(.id == "rel-burnin-coverage" or .id == "rel-burnin-failing") | .status] | join(" ")')" \
    "met met"

# ---- the gate: the repair held by the health check, the burn-in says no
echo 0 >"$W/seq"
xid() { # node → HTTP status (the message number lives in a file: callers use $(…))
    SEQ=$(( $(cat "$W/seq") + 1 )); echo $SEQ >"$W/seq"
    printf '{"node":"%s","seq":%d,"events":[{"kind":"xid","code":79,"pci":"0000:18:00.0","gpu":0,"action":"reboot","source":"kmsg"}]}' \
        "$1" "$SEQ" >"$W/body"
    vcurl "$1" -o /dev/null -w '%{http_code}' --data-binary @"$W/body" "$URL/v1/events"
}
state_of() { curl -s -H "$RH" "$URL/v1/incidents?node=$1&limit=1" | jq -r '.[0] // empty | .state + (if .detail != "" then ": " + .detail else "" end)'; }
state_is() { case "$(state_of "$1")" in "$2"*) return 0 ;; esac; return 1; }
wait_for 60 sh -c "[ -z \"\$(squeue -h)\" ]"
"$VIGIL" inject sdc --node n2 --gpu 1 --lab --dir "$LAB_DIR" >/dev/null
is "XID 79 on n2 (whose GPU 1 corrupts data) accepted" "$(xid n2)" 202
check "n2: repaired, health check passed, burn-in failed: stays isolated" \
    wait_for 60 state_is n2 "unrepaired: burn-in failed, node stays isolated: fail: vigil: burnin gemm-small: GPU 1: 17 elements differ"
inc=$(curl -s -H "$RH" "$URL/v1/incidents?node=n2&limit=1" | jq '.[0]')
is "… the steps: repair, health check, burn-in quick after it; not returned" \
    "$(echo "$inc" | jq -r '.steps | [.["repair quick"], .["health check after quick"], .["burn-in quick after quick"], .returned] | map(. != null) | join(" ")')" \
    "true true true false"
is "… Slurm keeps n2 out" "$(sinfo -h -N -n n2 -o %t | head -1 | tr -d '*')" down
is "… the gate's pass kept as burn-in evidence" \
    "$(hist '?node=n2' | jq -r '.nodes[0] | .last_result + " " + .last_failure.failed[0].name')" "fail gemm-small"
"$VIGIL" inject clear --node n2 --lab --dir "$LAB_DIR" >/dev/null
is "XID 79 on healthy n3 accepted" "$(xid n3)" 202
check "n3: repaired, health check and burn-in passed: returned" wait_for 60 state_is n3 closed
is "… burn-in step recorded" \
    "$(curl -s -H "$RH" "$URL/v1/incidents?node=n3&limit=1" | jq -r '.[0].steps["burn-in quick after quick"].detail')" pass
check "… node back in Slurm" wait_for 30 sh -c '[ "$(sinfo -h -N -n n3 -o %t | head -1)" = idle ]'
m=$(curl -s -H "$RH" "$URL/metrics")
check "/metrics counts the gates by result" sh -c "printf '%s\n' \"\$1\" | grep -qx 'vigil_burnin_gates_total{result=\"failed\"} 1' &&
    printf '%s\n' \"\$1\" | grep -qx 'vigil_burnin_gates_total{result=\"passed\"} 1'" - "$m"
hist >"$W/burnin.json"
is "score: n2's latest pass failed: the rule misses" \
    "$("$VIGIL" score "$W/burnin.json" --json | jq -r '.criteria[].rules[] | select(.id == "rel-burnin-failing") | .status')" "missed"

# ---- new nodes: the first look takes the nodes in service as known; a node
# that comes into service later runs the suite once before it takes work
stop_serve
scontrol update nodename=n1 state=down reason=racking
cat >"$W/policy2.conf" <<EOF2
burnin_gate = $GATE
new_node_suite = quick
new_node_every = 1
EOF2
lab_serve "$W" "$W/policy2.conf" "$W/new.db" "$W/serve2.log" -v
check "first look: the one node in service (n3) taken as known" \
    wait_for 20 grep -q "new-node gate: 1 nodes in service taken as known" "$W/serve2.log"
"$VIGIL" inject sdc --node n2 --gpu 1 --lab --dir "$LAB_DIR" >/dev/null
scontrol update nodename=n1,n2 state=resume
check "n1 and n2 come into service: drained for their burn-in" \
    wait_for 30 sh -c "grep -q 'new node n1: drained for burn-in quick' '$W/serve2.log' && grep -q 'new node n2: drained for burn-in quick' '$W/serve2.log'"
check "n1 passed: back in service" wait_for 30 sh -c "grep -q 'new node n1 passed burn-in quick: in service' '$W/serve2.log' && [ \"\$(sinfo -h -N -n n1 -o %t | head -1)\" = idle ]"
check "n2 failed (its GPU corrupts data): ALERT, it stays drained with vigil's reason" \
    wait_for 30 sh -c "grep -q 'ALERT new node n2 failed burn-in quick, it stays drained: fail: vigil: burnin gemm-small' '$W/serve2.log'"
is "… Slurm shows why" "$(sinfo -h -N -n n2 -o '%t|%E' | head -1)" "drain|vigil: new node: burn-in quick before service"
is "… the known node n3 was never drained" "$(grep -c 'new node n3' "$W/serve2.log")" 0
is "… both passes kept as burn-in evidence" \
    "$(hist | jq -r '[.nodes[] | .node + "=" + .last_result] | join(" ")')" "n1=pass n2=fail"

# ---- AMD nodes: the scheduled pass and the gate run AMD's suite ----
stop_serve
lab_down
unset VIGIL_NVML_LIB   # each lab node's GPU library is its own: the fake AMD SMI
lab_up 2 --gpu amd --no-vigil >/dev/null || { nok "lab up 2 --gpu amd"; done_testing; exit 1; }
cat >"$W/policy3.conf" <<EOF3
breaker = 100% / 600s
repair quick = true {node}
healthcheck = true {node}
burnin_gate = $VIGIL burnin --lab --dir $LAB_DIR --nodes {node} --suite {suite} --no-drain --json
burnin_suite = quick
repair_timeout = 120
EOF3
lab_serve "$W" "$W/policy3.conf" "$W/amd.db" "$W/serve3.log"
out=$("$VIGIL" burnin --schedule --lab --dir "$LAB_DIR" --state "$W/amd-sched.json" --controller "$URL" $TOK --json)
is "AMD lab: a pass submitted to the burn-in partition on each idle node" \
    "$(echo "$out" | jq -r '[.partition, ([.nodes[] | select(.action == "submitted")] | length)] | join(" ")')" "vigil-burnin 2"
check "… each job's pass reaches the controller" wait_for 60 sh -c "[ \$(curl -s -H '$RH' '$URL/v1/burnin' | jq .burnin.runs) -ge 2 ]"
is "… AMD's quick suite ran and passed" \
    "$(hist '?node=n2' | jq -r '.nodes[0] | .last_result + " " + ([.tests[].name] | join(","))')" \
    "pass nvml,ib-port,rvs-peqt,transferbench-a2a"
amd_ue() { # node → HTTP status: an uncorrectable error the AMD SMI counted
    SEQ=$(( $(cat "$W/seq") + 1 )); echo $SEQ >"$W/seq"
    printf '{"node":"%s","seq":%d,"events":[{"kind":"amd-ras-ue","pci":"0000:0c:00.0","gpu":0,"action":"reboot","source":"amdsmi"}]}' \
        "$1" "$SEQ" >"$W/body"
    vcurl "$1" -o /dev/null -w '%{http_code}' --data-binary @"$W/body" "$URL/v1/events"
}
wait_for 60 sh -c "[ -z \"\$(squeue -h)\" ]"
"$VIGIL" inject amd-xgmi-bw-low --node n2 --lab --dir "$LAB_DIR" >/dev/null
is "an AMD UE on n2 (whose XGMI runs at half its bandwidth) accepted" "$(amd_ue n2)" 202
check "n2: repaired, health check passed, AMD's burn-in failed: stays isolated" \
    wait_for 60 state_is n2 "unrepaired: burn-in failed, node stays isolated: fail: vigil: burnin transferbench-a2a: avg GPU-GPU 23.28 GB/s < 32.9 GB/s"
is "… Slurm keeps n2 out" "$(sinfo -h -N -n n2 -o %t | head -1 | tr -d '*')" down
is "an AMD UE on healthy n1 accepted" "$(amd_ue n1)" 202
check "n1: repaired, AMD's burn-in passed: returned" wait_for 60 state_is n1 closed
done_testing
