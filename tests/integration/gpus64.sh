#!/bin/sh
# gpus64.sh — the drill at the scale buyers are told to ask for: 64 GPUs.  A
# lab of 9 nodes × 8 GPUs (Slurm Gres=gpu:8 backed by files, the fake NVML
# with 8 GPUs per node; one node a hot spare) with an agent per node and the
# controller; the trainer runs one rank per GPU (64 ranks); an XID 79 on one
# node: detected, isolated, the job running again on the spare and resumed
# from its checkpoint, and the report (terminal, JSON, HTML) says 64 GPUs.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ] || ! command -v slurmctld >/dev/null; then
    echo "ok 1 # skip needs root and slurmctld"; exit 0
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/vigil-g64.XXXXXX"); chmod 755 "$T"
lab_up 9 --spares 1 --rack-size 3 --gpus-per-node 8 || { nok "lab up 9 × 8 GPUs"; rm -rf "$T"; exit 1; }
trap 'lab_down; rm -rf "$T"' EXIT
is "Slurm knows 8 GPUs per node" "$(scontrol show node n1 | sed -n 's/^ *Gres=//p')" "gpu:8"
is "the fake NVML shows 8 GPUs on n4" "$(VIGIL_NODE=n4 FAKE_NVML_STATE=$LAB_DIR/nodes/n4/nvml-state \
    VIGIL_NVML_LIB=$FAKE_NVML "$VIGIL" check --config /dev/null --json 2>/dev/null | jq -r '.ok')" "true"
"$VIGIL" drill --lab --dir "$LAB_DIR" --nodes 8 --runs 1 --fault xid:79 --deadline 90 --json --html "$T/d.html" \
    >"$T/d.json" 2>"$T/d.err"
is "drill exit: recovered" "$?" 0
is "report: gpus" "$(jq -r .gpus "$T/d.json")" 64
is "report: one rank per GPU" "$(jq -r .ranks "$T/d.json")" 64
is "detected by vigil" "$(jq -r '.runs[0].detect.by' "$T/d.json")" vigil
check "job running again on the spare" jq -e '.runs[0].restart.spare == true' "$T/d.json"
check "resumed from a checkpoint" jq -e '.runs[0].resume.after_s != null' "$T/d.json"
check "HTML says 64 GPUs" grep -q '64-GPU job: 8 nodes' "$T/d.html"
"$VIGIL" drill --lab --dir "$LAB_DIR" --nodes 8 --gpus-per-node 9 >/dev/null 2>&1
is "more than 8 GPUs per node refused" "$?" 2
# vigil status on a lab node: the scheduler and the controller are seen, the GPUs through the (fake) NVML
VIGIL_NVML_LIB=$FAKE_NVML FAKE_NVML_STATE=$LAB_DIR/nodes/n1/nvml-state VIGIL_NODE=n1 "$VIGIL" status --json >"$T/st.json" 2>/dev/null
is "status: Slurm answers" "$(jq -r '.items[] | select(.item == "scheduler" and (.detail | startswith("slurm:"))) | .ok' "$T/st.json")" true
is "status: the controller answers" "$(jq -r '.items[] | select(.item == "controller") | .ok' "$T/st.json")" true
check "status: 8 GPUs seen" sh -c "jq -r '.items[] | select(.item == \"GPUs (NVML)\") | .detail' '$T/st.json' | grep -q '^8 ×'"
check "status: what is missing comes with a fix" sh -c "jq -e '[.items[] | select(.ok | not) | .fix] | all(. != null)' '$T/st.json' >/dev/null"
"$VIGIL" status --bogus >/dev/null 2>&1
is "status: a bad option is exit 2" "$?" 2
# the fleet view without srun or ssh: every agent sent its node's audit at start
RT="$LAB_DIR/etc/read.token"
check "every node's audit report reached the controller" sh -c \
    "i=0; while [ \$i -lt 100 ]; do [ \"\$(curl -s -H \"Authorization: Bearer \$(cat $RT)\" '$VIGIL_CONTROLLER/v1/audit?raw=1' | jq length)\" = 9 ] && exit 0; sleep 0.3; i=\$((i+1)); done; exit 1"
curl -s -H "Authorization: Bearer $(cat "$RT")" "$VIGIL_CONTROLLER/v1/audit" >"$T/fleet.json"
is "GET /v1/audit: merged over the nine nodes" "$(jq -r '.nodes | length' "$T/fleet.json")" 9
is "GET /v1/audit: when each node reported" "$(jq -r '.reported | length' "$T/fleet.json")" 9
is "GET /v1/audit: every node Slurm knows reported, none stale" "$(jq -c '[.not_reporting, .stale]' "$T/fleet.json")" '[[],[]]'
"$VIGIL" audit fleet --controller "$VIGIL_CONTROLLER" --read-token-file "$RT" --json --fail-on none >"$T/fleet2.json" 2>"$T/fleet2.err"
is "vigil audit fleet: exit 0" "$?" 0
is "vigil audit fleet: the same nodes" "$(jq -r '.nodes | length' "$T/fleet2.json")" 9
env -u VIGIL_READ_TOKEN "$VIGIL" audit fleet --controller "$VIGIL_CONTROLLER" >/dev/null 2>&1
is "vigil audit fleet without the read token: exit 2" "$?" 2
done_testing
