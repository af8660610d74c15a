#!/bin/sh
# drill.sh — `vigil drill` and `vigil inject` on a real lab cluster (plain
# Slurm, no vigil agent): a node crash noticed through SlurmdTimeout, with
# the timeline's order and completeness checked; an XID that plain Slurm
# never notices, with the clean timeout report; the HTML report rendered in
# headless Chromium; the lab node's injections and their undo.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ] || ! command -v slurmctld >/dev/null 2>&1; then
    skip "drill: needs root and Debian's slurmctld/slurmd/munge"
    exit 0
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/vigil-drill-test.XXXXXX")
lab_up 4 --spares 1 --no-vigil --conf-extra SlurmdTimeout=5 --conf-extra MessageTimeout=2 || { nok "lab up"; exit 1; }
trap 'lab_down; rm -rf "$T"' EXIT

# ---- inject on a lab node, and clear ----
exits_with "inject: unknown fault is a usage error" 2 "$VIGIL" inject xid-79 --node n1 --lab
exits_with "inject: a node the lab lacks is an input error" 2 "$VIGIL" inject xid 79 --node n9 --lab
exits_with "inject: ib-down on a real node is refused" 2 "$VIGIL" inject ib-down --node n1 --via orch
"$VIGIL" inject xid 79 --node n1 --gpu 2 --lab --json >"$T/inj.json"
is "inject xid: record kind and code" "$(jq -c '[.kind,.code,.node,.gpu,.pci,.target]' "$T/inj.json")" \
    '["xid",79,"n1",2,"0000:3a:00.0","lab"]'
is "inject xid: one kmsg record in the node's log" "$(grep -c '^3,[0-9]*,[0-9]*,-;NVRM: Xid (PCI:0000:3a:00): 79, pid=' "$LAB_DIR/nodes/n1/kmsg")" 1
is "inject xid: vigil scan reads it back as XID 79 on 0000:3a:00.0" \
    "$("$VIGIL" scan --json "$LAB_DIR/nodes/n1/kmsg" | jq -r '[.kind,.code,.pci]|join(" ")')" "xid 79 0000:3a:00.0"
"$VIGIL" inject gpu-lost --node n1 --gpu 2 --lab >/dev/null
is "inject gpu-lost: fake NVML state" "$(cat "$LAB_DIR/nodes/n1/nvml-state")" "gpu2.lost=1"
"$VIGIL" inject ib-down --node n1 --lab >/dev/null
is "inject ib-down: port state" "$(cat "$LAB_DIR/nodes/n1/sys/class/infiniband/mlx5_0/ports/1/state")" "1: DOWN"
is "records: three injections" "$(wc -l <"$LAB_DIR/injections.jsonl")" 3
"$VIGIL" inject clear --node n1 --lab --json >"$T/clear.json"
is "clear: three undone" "$(jq .cleared "$T/clear.json")" 3
is "clear: NVML state restored" "$(cat "$LAB_DIR/nodes/n1/nvml-state")" ""
is "clear: the port is ACTIVE again" "$(cat "$LAB_DIR/nodes/n1/sys/class/infiniband/mlx5_0/ports/1/state")" "4: ACTIVE"
is "clear again: nothing left" "$("$VIGIL" inject clear --lab)" "cleared 0 injections (all nodes)"

# freeze and clear: the node's slurmd is stopped, then running again
slurmd_pid=$(awk '$1=="slurmd" && $2=="n3" {print $3}' "$LAB_DIR/run/daemons")
"$VIGIL" inject node-freeze --node n3 --lab >/dev/null
is "node-freeze: slurmd stopped" "$(awk '{print $3}' /proc/$slurmd_pid/stat)" T
"$VIGIL" inject clear --node n3 --lab >/dev/null
st=$(awk '{print $3}' /proc/$slurmd_pid/stat)
check "node-freeze clear: slurmd runs again (state $st)" test "$st" != T

# ---- a node crash: plain Slurm notices through SlurmdTimeout ----
"$VIGIL" drill --lab --dir "$LAB_DIR" --fault node-crash --nodes 2 --deadline 90 --json \
    --html "$T/crash.html" >"$T/crash.json" 2>"$T/crash.err"
rc=$?
is "node-crash drill: exit 0 (recovered)" "$rc" 0
[ "$rc" = 0 ] || { sed 's/^/# /' "$T/crash.err"; jq -c '.runs[0]' "$T/crash.json" | sed 's/^/# /'; }
is "node-crash: every stage happened" "$(jq -c '[.detect.count,.isolate.count,.requeue.count,.restart.count,.resume.count]' "$T/crash.json")" "[1,1,1,1,1]"
is "node-crash: detected by slurm" "$(jq -r '.runs[0].detect.by' "$T/crash.json")" slurm
is "node-crash: timeline in order t0<=detect<=isolate<=requeue<=restart<=resume" \
    "$(jq '.runs[0] | [.t0,.detect.at,.isolate.at,.requeue.at,.restart.at,.resume.at] | . == sort and (map(. != null) | all)' "$T/crash.json")" true
is "node-crash: after_s ascending" \
    "$(jq '.runs[0] | [.detect.after_s,.isolate.after_s,.requeue.after_s,.restart.after_s,.resume.after_s] | . == sort' "$T/crash.json")" true
is "node-crash: work lost within one checkpoint interval" \
    "$(jq '.runs[0].work_lost_steps >= 0 and .runs[0].work_lost_steps <= .ckpt_every' "$T/crash.json")" true
is "node-crash: the victim was not the batch host" "$(jq '.runs[0].victim != .runs[0].batch_host' "$T/crash.json")" true
is "node-crash: restarted without the crashed node" "$(jq '.runs[0].restart.same_node' "$T/crash.json")" false
is "node-crash: the stage medians are the run's figures (1 run)" \
    "$(jq '.detect.median == (.runs[0].detect.after_s*1000|round/1000)' "$T/crash.json")" true
is "node-crash: the job's log shows the resume" \
    "$(grep -c 'resumed from step' "$(jq -r '.runs[0].log' "$T/crash.json")")" 1
is "cleanup: no drill job left" "$(squeue -h -n vigil-drill | wc -l)" 0
is "cleanup: all nodes idle again" "$(sinfo -h -N -o '%t' | sort -u | tr '\n' ' ')" "idle "

# ---- an XID on plain Slurm: never detected, clean timeout ----
"$VIGIL" drill --lab --dir "$LAB_DIR" --fault xid:79 --deadline 4 --json >"$T/xid.json" 2>"$T/xid.err"
is "xid drill on plain Slurm: exit 1 (never recovered)" "$?" 1
is "xid: detect is null" "$(jq -c '[.runs[0].detect.at, .detect.median, .detect.never]' "$T/xid.json")" "[null,null,1]"
is "xid: the run says never detected" "$(jq -r '.runs[0].message' "$T/xid.json")" "never detected within the 4 s deadline"
is "xid: never = detect" "$(jq -r '.runs[0].never' "$T/xid.json")" detect
is "xid: injection recorded with its time" "$(jq -r '.runs[0].injection.time == .runs[0].t0' "$T/xid.json")" true
"$VIGIL" drill --lab --dir "$LAB_DIR" --fault xid:79 --deadline 3 >"$T/xid.txt" 2>&1
check "xid: the table says never detected" grep -q "never detected" "$T/xid.txt"
is "xid cleanup: all nodes idle, no job" "$(sinfo -h -N -o '%t' | sort -u | tr '\n' ' ')$(squeue -h | wc -l)" "idle 0"

# ---- a victim out with a reason vigil wrote is vigil's detection, not Slurm's ----
# (the drill cannot read vigil's incidents here: no controller; the node's reason says who found it)
scontrol update nodename=n2 state=drain reason="vigil: node-silent"
"$VIGIL" drill --lab --dir "$LAB_DIR" --fault xid:79 --victim n2 --deadline 3 --json >"$T/ours.json" 2>"$T/ours.err"
is "a node vigil drained: detected by vigil, the reason in the detail" \
    "$(jq -r '.runs[0].detect | "\(.by) \(.detail)"' "$T/ours.json")" "vigil n2 IDLE+DRAIN: vigil: node-silent"
is "… and the drill undid vigil's drain" "$(sinfo -h -N -n n2 -o %t | sort -u)" idle

# ---- side by side: the crash and the XID on plain Slurm, one page ----
"$VIGIL" report "$T/crash.json" "$T/xid.json" --html "$T/compare.html" >"$T/compare.txt"
is "report: exit 0" "$?" 0
check "report: a row per report" sh -c "grep -c '^plain Slurm (vigil off)' '$T/compare.txt' | grep -qx 2"
check "report: the XID row says never" grep -q '^plain Slurm (vigil off), xid:79 *never' "$T/compare.txt"
check "report: the HTML names both and draws a chart per stage" sh -c \
    "grep -q 'plain Slurm (vigil off), node-crash' '$T/compare.html' && [ \$(grep -c '<svg' '$T/compare.html') -ge 5 ]"
"$VIGIL" report "$T/xid.json" --json | jq -e '.[0].detect == null' >/dev/null
is "report --json: never is null" "$?" 0
exits_with "report: not a drill report" 2 "$VIGIL" report "$T/crash.err"

# ---- usage ----
exits_with "drill: bad --fault" 2 "$VIGIL" drill --lab --dir "$LAB_DIR" --fault xid
exits_with "drill: --job-script without --resume-pattern" 2 "$VIGIL" drill --lab --dir "$LAB_DIR" --job-script /bin/true
exits_with "drill: not a lab" 2 "$VIGIL" drill --lab --dir "$T"

# ---- the HTML report in a real headless Chromium ----
check "html: self-contained (no http/https reference, inline svg)" \
    sh -c "! grep -Eq '(src|href)=\"?(https?:)?//' '$T/crash.html' && grep -q '<svg' '$T/crash.html'"
if command -v chromium >/dev/null 2>&1; then
    timeout 90 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1000,1100 \
        --screenshot="$T/crash.png" "file://$T/crash.html" >/dev/null 2>&1
    size=$(stat -c %s "$T/crash.png" 2>/dev/null || echo 0)
    check "html: chromium renders a screenshot ($size bytes)" test "$size" -gt 20000
    if [ -n "$DRILL_SCREENSHOT" ]; then cp "$T/crash.png" "$DRILL_SCREENSHOT"; fi
else
    skip "html: chromium is not installed"
fi
done_testing
