#!/bin/sh
# nvl72.sh — the faults between the GPUs on a real lab (Slurm, the controller,
# an agent per node with the fake NVML and the fake verbs library), scaled
# down to stay cheap on two cores: two NVL72-shaped racks of 4 trays
# (`--nvl72 --rack-size 4`), the second all spares.  The racks' NVLink domains
# come from the GPUs' fabric registration, none is written in the policy; one
# link flap and one error burst are recorded and drain nothing; 3 trays of a
# rack hung at once take the rack out by the domain rule and promote the spare
# rack, whose time down is the rack's SLA in `vigil report --controller`; a
# wedged NIC (nic-hung) is found by the NIC probe and the job runs again on
# other nodes (`vigil drill --fault nic-hung`); the third flap within 3 h
# drains its node; a GPU whose fabric registration failed takes its node out.
# The full-size rack (18 trays + 18 spares) is `BENCH=nic make bench`.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ] || ! command -v slurmctld >/dev/null 2>&1; then
    skip "nvl72: needs root and Debian's slurmctld/slurmd/munge"
    done_testing
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/vigil-nvl72-test.XXXXXX")
start=$(date +%s)
# the breaker at 100 %: this suite isolates more than half of 8 nodes within 30 s on purpose
lab_up 8 --spares 4 --gpus-per-node 4 --nvl72 --rack-size 4 --policy-extra 'breaker = 100% / 30s' ||
    { nok "lab up"; done_testing; }
trap 'lab_down; rm -rf "$T"' EXIT
RH="Authorization: Bearer $VIGIL_READ_TOKEN"
nodes() { curl -s -H "$RH" "$VIGIL_CONTROLLER/v1/nodes"; }
incs() { curl -s -H "$RH" "$VIGIL_CONTROLLER/v1/incidents?node=$1&limit=20"; }
within() { # SECONDS COMMAND… — until it succeeds
    _t=$(( $(date +%s) + $1 )); shift
    while ! "$@" >/dev/null 2>&1; do [ "$(date +%s)" -ge "$_t" ] && return 1; sleep 0.2; done
}
jqe() { jq -e "$@" >/dev/null; }   # a jq test on a file: its exit status only
R1=4c414231-0000-4000-8000-000000000072/1 R2=4c414231-0000-4000-8000-000000000072/2

# ---- the NVLink domains from the fabric ----
check "the policy names no domain" sh -c "! grep -q '^domain ' '$LAB_DIR/etc/vigil-policy.conf'"
check "every node's domain is its rack's NVLink clique (from the agents' fabric info)" within 20 sh -c \
    "[ \"\$(curl -s -H '$RH' $VIGIL_CONTROLLER/v1/nodes | jq -r '[.[] | .node + \"=\" + (.domain // \"-\")] | join(\" \")')\" = \
'n1=$R1 n2=$R1 n3=$R1 n4=$R1 n5=$R2 n6=$R2 n7=$R2 n8=$R2' ]"
is "the agent says its domain" "$(grep -c "NVLink domain $R1" "$LAB_DIR/log/agent-n1.out")" 1

# ---- one flap, one error burst: recorded, nothing drained ----
"$VIGIL" inject link-flap --node n3 --lab >/dev/null
check "one link flap: a link-flap incident for n3" within 10 sh -c \
    "curl -s -H '$RH' '$VIGIL_CONTROLLER/v1/incidents?node=n3' | jq -e 'map(select(.kind == \"link-flap\")) | length == 1' >/dev/null"
is "… recorded only" "$(incs n3 | jq -r '.[] | select(.kind == "link-flap") | "\(.state): \(.detail)"')" \
    "recorded: ignore: recorded only (below drain_at)"
is "… naming the port and the GPU beside it" \
    "$(incs n3 | jq -r '.[] | select(.kind == "link-flap") | .event.raw' | grep -o 'mlx5_0 port 1 ([^)]*)')" \
    "mlx5_0 port 1 (0000:1a:00.0, beside GPU 0 0000:18:00.0)"
"$VIGIL" inject ib-errors --node n3 --lab >/dev/null
check "an error burst: ib-errors for n3" within 10 sh -c \
    "curl -s -H '$RH' '$VIGIL_CONTROLLER/v1/incidents?node=n3' | jq -e 'map(select(.kind == \"ib-errors\")) | length == 1' >/dev/null"
check "… naming symbol_error ($(incs n3 | jq -r '.[] | select(.kind == "ib-errors") | .event.raw'))" sh -c \
    "curl -s -H '$RH' '$VIGIL_CONTROLLER/v1/incidents?node=n3' | jq -r '.[] | select(.kind == \"ib-errors\") | .event.raw' | grep -q symbol_error"
check "… n3 drained by nothing" sh -c "! scontrol show node -o n3 | grep -q 'State=[A-Z+]*\(DOWN\|DRAIN\)'"

# ---- 3 trays of the rack at once: the rack out, the spare rack in ----
# one rank per node: Slurm 22.05 fails a GPU job requeued after every node of its allocation went
# DOWN ("gres/gpu: _step_get_gres_cnt … node offset invalid"), which the domain rule does here
"$VIGIL" drill --lab --dir "$LAB_DIR" --fault nic-hung --nodes 4 --victims 3 --gpus-per-node 0 --deadline 40 --json \
    >"$T/rack.json" 2>"$T/rack.err"
rc=$?
is "rack drill: exit 0 (recovered)" "$rc" 0
[ "$rc" = 0 ] || { sed 's/^/# /' "$T/rack.err"; jq -c '.runs[0]' "$T/rack.json" | sed 's/^/# /'; }
is "rack drill: 3 victims" "$(jq '.runs[0].victims | length' "$T/rack.json")" 3
is "rack drill: the rack counted down (4 of its 4 nodes out)" \
    "$(jq -c '.runs[0].controller_view.domain | [.name, .nodes, .out]' "$T/rack.json")" "[\"$R1\",4,4]"
check "rack drill: the domain rule, and the spare rack promoted" \
    jqe --arg r1 "$R1" --arg r2 "$R2" '.runs[0].controller_view.incidents | map("\(.state): \(.detail)") |
        any(. == "isolated: domain rule: \($r1) has 3 of 4 nodes unavailable (> 2); spare domain \($r2) promoted")' "$T/rack.json"
jq -r '.runs[0].controller_view.incidents[] | "# \(.node): \(.state): \(.detail)"' "$T/rack.json"
is "rack drill: the job runs again on the spare rack" "$(jq -r '.runs[0].restart | [.nodes, .spare] | join(" ")' "$T/rack.json")" \
    "n[5-8] true"
"$VIGIL" drill --lab --dir "$LAB_DIR" --fault nic-hung --victims 3 --nodes 2 >/dev/null 2>&1
is "--victims more than --nodes: a usage error" "$?" 2
"$VIGIL" report --controller "$VIGIL_CONTROLLER" --read-token-file "$LAB_DIR/etc/read.token" --json >"$T/report.json"
check "report --controller: the rack's SLA time down ($(jq --arg r "$R1" '.racks[] | select(.rack == $r) | .sla_down_s' "$T/report.json") s)" \
    jqe --arg r "$R1" '.racks[] | select(.rack == $r) | .sla_down_s > 0 and .nodes == 4' "$T/report.json"
is "report --controller: the spare rack never down" \
    "$(jq --arg r "$R2" '.racks[] | select(.rack == $r) | .sla_down_s' "$T/report.json")" 0
"$VIGIL" report --controller "$VIGIL_CONTROLLER" --read-token-file "$LAB_DIR/etc/read.token" >"$T/report.txt"
check "report: the rack table shows the fabric's domain" grep -q "^$R1 *4 " "$T/report.txt"

# ---- a wedged NIC: the drill ----
# (n1 stays out: the domain rule's nodes are returned by hand; the spares are in production now)
"$VIGIL" drill --lab --dir "$LAB_DIR" --fault nic-hung --nodes 2 --deadline 40 --json >"$T/hung.json" 2>"$T/hung.err"
rc=$?
is "nic-hung drill: exit 0 (recovered)" "$rc" 0
[ "$rc" = 0 ] || { sed 's/^/# /' "$T/hung.err"; jq -c '.runs[0]' "$T/hung.json" | sed 's/^/# /'; }
is "nic-hung: detected by vigil" "$(jq -r '.runs[0].detect.by' "$T/hung.json")" vigil
check "nic-hung: detected within 5 s ($(jq '.runs[0].detect.after_s' "$T/hung.json") s; the goal, a median of 3 s, is make bench's)" \
    jqe '.runs[0].detect.after_s < 5' "$T/hung.json"
check "nic-hung: the job runs again within 15 s ($(jq '.runs[0].restart.after_s' "$T/hung.json") s)" \
    jqe '.runs[0].restart.after_s < 15 and .runs[0].restart.same_node == false' "$T/hung.json"
v=$(jq -r '.runs[0].victim' "$T/hung.json")
is "nic-hung: the incident names the device and the call" \
    "$(incs "$v" | jq -r '[.[] | select(.kind == "nic-hung")][0].event.raw' | sed 's/within [0-9]* ms/within N ms/')" \
    "mlx5_0 unresponsive: ibv_query_port (port 1) did not answer within N ms"
t0=$(jq -r '.runs[0].t0' "$T/hung.json")
check "nic-hung: the victim is back, no second incident" within 10 sh -c \
    "[ \"\$(sinfo -h -N -n $v -o %t | sort -u)\" = idle ] && [ \"\$(curl -s -H '$RH' '$VIGIL_CONTROLLER/v1/incidents?node=$v' | jq --arg t0 '$t0' '[.[] | select(.kind == \"nic-hung\" and .first >= \$t0)] | length')\" = 1 ]"

# ---- the third flap within 3 h drains; a failed fabric registration is out now ----
# (n3 came back from the rack drill; its first flap still counts)
"$VIGIL" inject link-flap --node n3 --lab >/dev/null
within 10 sh -c "curl -s -H '$RH' '$VIGIL_CONTROLLER/v1/incidents?node=n3' | jq -e 'map(select(.kind == \"link-flap\")) | length == 2' >/dev/null"
check "two flaps: still not drained" sh -c "! scontrol show node -o n3 | grep -q 'State=[A-Z+]*\(DOWN\|DRAIN\)'"
"$VIGIL" inject link-flap --node n3 --lab >/dev/null
check "the third flap within 3 h: link-flapping drains n3" within 10 sh -c \
    "scontrol show node -o n3 | grep -q 'State=[A-Z+]*DRAIN.*Reason=vigil: link-flapping'"
"$VIGIL" inject fabric-degraded --node n4 --gpu 1 --lab >/dev/null
# (n1 is still out by the domain rule and n3 drained: n4 takes the rack out again, its reason says why)
check "fabric-degraded on GPU 1: n4 out" within 15 sh -c \
    "scontrol show node -o n4 | grep -q 'State=DOWN.*Reason=vigil: .*fabric-degraded gpu 1'"
is "… the GPU named" "$(incs n4 | jq -r '[.[] | select(.kind == "fabric-degraded")][0] | [.gpu, .pci] | map(tostring) | join(" ")')" \
    "1 0000:2a:00.0"
echo "# nvl72 suite: $(($(date +%s) - start)) s"
done_testing
