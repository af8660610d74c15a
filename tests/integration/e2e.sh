#!/bin/sh
# e2e.sh — the whole loop on a real cluster: `vigil lab` with a `vigil agent`
# per node (fake NVML, its own kernel-log file) and one `vigil serve`; a
# 3-node --requeue training job runs; `vigil inject` writes an XID 79 record to
# one node's kernel log; the agent reports it, the controller DOWNs the node
# with a vigil: reason, requeues the job and promotes the spare; the job runs
# again and resumes from its checkpoint.  Measured by `vigil drill`.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ] || ! command -v slurmctld >/dev/null; then skip "needs root and slurmctld"; exit 0; fi
W=$(mktemp -d "${TMPDIR:-/tmp}/vigil-e2e.XXXXXX"); chmod 755 "$W"
lab_up 5 --spares 1 --rack-size 2 --dir "$W/lab" >/dev/null || { nok "lab up with vigil"; rm -rf "$W"; exit 1; }
trap 'lab_down; rm -rf "$W"' EXIT
check "the lab runs a controller" test -n "$VIGIL_CONTROLLER"
is "an agent per node" "$("$VIGIL" lab status --dir "$LAB_DIR" --json | jq '[.daemons[] | select(.name == "agent" and .alive)] | length')" 5
check "the spare pool is the reservation" sh -c 'scontrol show reservation vigil_spares | grep -q "Nodes=n5 "'
# n4 busy, n5 in the spare pool: the 3-node job runs on n[1-3], and after the
# fault it can only run again if the controller promotes the spare.
filler=$(sbatch --parsable --exclusive -N1 -w n4 -o /dev/null --wrap 'sleep 900')
# both runs fault GPU 0 (of the same victim, n2, as Slurm places the job on n[1-3] again): the
# second is the same fault on a node returned to service after the first, caught at once
"$VIGIL" drill --lab --dir "$LAB_DIR" --nodes 3 --fault xid:79 --gpu 0 --runs 2 --deadline 60 --json >"$W/drill.json" 2>"$W/drill.err"
is "drill: every run recovered (exit 0)" "$?" 0
[ -s "$W/drill.json" ] || { nok "drill JSON"; sed 's/^/# /' "$W/drill.err"; exit 1; }
is "detected by vigil, not by Slurm" "$(jq -r '[.runs[].detect.by] | unique | join(",")' "$W/drill.json")" vigil
for st in detect isolate requeue restart resume; do
    check "stage $st happened in every run" jq -e ".$st.count == 2 and .$st.max != null" "$W/drill.json"
done
check "stages in order: detect <= isolate <= requeue <= restart <= resume" jq -e \
    '[.runs[] | [.detect.after_s, .isolate.after_s, .requeue.after_s, .restart.after_s, .resume.after_s]
      | . == sort] | all' "$W/drill.json"
check "work lost at most one checkpoint interval" jq -e '.work_lost_steps.max <= 5' "$W/drill.json"
check "the restarted job left the failed node" jq -e '[.runs[].restart.same_node] | any | not' "$W/drill.json"
check "run 1: the job runs again on nodes including the spare" jq -e '.runs[0].restart.spare == true' "$W/drill.json"
scancel "$filler"
inc=$(curl -s -H "Authorization: Bearer $VIGIL_READ_TOKEN" "$VIGIL_CONTROLLER/v1/incidents?limit=1")
inc1=$(curl -s -H "Authorization: Bearer $VIGIL_READ_TOKEN" "$VIGIL_CONTROLLER/v1/incidents" | jq '.[-1]')
check "run 1's incident: spare n5 promoted" sh -c "echo '$inc1' | jq -e '.steps.spare_promoted.detail == \"n5\"' >/dev/null"
for step in detected isolated jobs_requeued; do
    check "incident timeline has $step" sh -c "echo '$inc' | jq -e '.[0].steps.$step.at != null' >/dev/null"
done
check "incident: xid 79 from the kernel log" sh -c "echo '$inc' | jq -e '.[0].kind == \"xid\" and .[0].code == 79 and .[0].event.source == \"kmsg\"' >/dev/null"
check "both runs hit the same GPU of the same node" jq -e '[.runs[] | [.victim, .injection.gpu]] | unique | length == 1' "$W/drill.json"
check "run 2 (the same fault on the node returned after run 1) detected as fast as run 1 (within 10 s)" \
    jq -e '.runs[1].detect.after_s < 10' "$W/drill.json"
printf '# medians: detect %s s, isolate %s s, restart %s s\n' "$(jq .detect.median "$W/drill.json")" \
    "$(jq .isolate.median "$W/drill.json")" "$(jq .restart.median "$W/drill.json")"

# ---- spares inside the job's own allocation (vigil launch): 2 nodes + 1 warm,
# told by the controller, restarted on its own spare without a requeue (on GPU 5)
"$VIGIL" drill --lab --dir "$LAB_DIR" --nodes 2 --spares-in-job 1 --fault xid:79 --gpu 5 --deadline 60 --json >"$W/inalloc.json" 2>"$W/inalloc.err"
is "in-allocation: recovered (exit 0)" "$?" 0; jq -r '.runs[0].message // empty' "$W/inalloc.json" | sed 's/^/# /'
is "in-allocation: the report says the job held one spare" "$(jq .spares_in_job "$W/inalloc.json")" 1
is "in-allocation: restarted on its own spare, not requeued" "$(jq -r '.runs[0].restart.how' "$W/inalloc.json")" "in-allocation spare"
check "in-allocation: the new step left the failed node" jq -e '.runs[0].restart.same_node == false and (.runs[0].restart.nodes | length > 0)' "$W/inalloc.json"
check "in-allocation: told before it ran again, resumed after" jq -e \
    '.runs[0] | .requeue.after_s <= .restart.after_s and .restart.after_s <= .resume.after_s' "$W/inalloc.json"
check "in-allocation: work lost at most one checkpoint interval" jq -e '.work_lost_steps.max <= 5' "$W/inalloc.json"
job=$(jq -r '.runs[0].job' "$W/inalloc.json")
is "in-allocation: Slurm never requeued the job" "$(scontrol show job "$job" -o | grep -o 'Restarts=[0-9]*')" "Restarts=0"
is "in-allocation: no rank started under a requeue" "$(grep -c 'restart [1-9][0-9][0-9][0-9]' "$(jq -r '.runs[0].log' "$W/inalloc.json")")" 0
inc=$(curl -s -H "Authorization: Bearer $VIGIL_READ_TOKEN" "$VIGIL_CONTROLLER/v1/incidents?limit=1")
check "in-allocation: the incident says the job was told, not requeued" sh -c \
    "echo '$inc' | jq -e '.[0].steps.jobs_requeued.detail | test(\"^$job: told\")' >/dev/null"
printf '# in-allocation: told %s s, running again %s s, resumed %s s after the fault\n' \
    "$(jq .runs[0].requeue.after_s "$W/inalloc.json")" "$(jq .runs[0].restart.after_s "$W/inalloc.json")" \
    "$(jq .runs[0].resume.after_s "$W/inalloc.json")"
# the batch host itself fails: the launcher goes with it, and the controller requeues (the fallback)
"$VIGIL" drill --lab --dir "$LAB_DIR" --nodes 2 --spares-in-job 1 --hit-batch-host --gpu 6 --deadline 60 --json >"$W/inalloc-bh.json" 2>"$W/inalloc-bh.err"
is "in-allocation, batch host hit: recovered by the requeue" "$?$(jq -r '.runs[0].restart.how' "$W/inalloc-bh.json")" "0requeue"
jq -r '.runs[0].message // empty' "$W/inalloc-bh.json" | sed 's/^/# /'
# vigil launch outside a job, and bad input
exits_with "launch outside a Slurm job: an input error" 2 env -u SLURM_JOB_ID "$VIGIL" launch --spares 1 -- true
exits_with "launch: --spares must be a count" 2 "$VIGIL" launch --spares many -- true
exits_with "launch: a program is required" 2 "$VIGIL" launch --spares 1

# ---- a fault that comes back after its node returned is a new incident at once:
# XID 79 on n4 → DOWN; the node is resumed (the controller closes the incident,
# `returned`); the same XID on the same GPU again → DOWN at once, not after the
# agent's 60 s fold window (the agent learns of the return from its heartbeat's answer)
RH="Authorization: Bearer $VIGIL_READ_TOKEN"
is_down() { scontrol show node -o "$1" | grep -q 'State=[A-Z+]*\(DOWN\|DRAIN\)'; }
n4_incidents() { curl -s -H "$RH" "$VIGIL_CONTROLLER/v1/incidents?node=n4&limit=10"; }
until_true() { # seconds command… — polls until the command succeeds
    t=$(( $(date +%s) + $1 )); shift
    while ! "$@" >/dev/null 2>&1; do [ "$(date +%s)" -ge "$t" ] && return 1; sleep 0.2; done
}
wait_for '[ "$(sinfo -h -N -n n4 -o %t)" = idle ]' 30
"$VIGIL" inject xid 79 --node n4 --gpu 3 --lab --dir "$LAB_DIR" >/dev/null
check "repeat: XID 79 on n4 GPU 3 → DOWN" until_true 15 is_down n4
scontrol update nodename=n4 state=resume
check "repeat: n4 resumed, its incident closed (returned)" until_true 15 sh -c \
    "curl -s -H '$RH' '$VIGIL_CONTROLLER/v1/incidents?node=n4&limit=1' | jq -e '.[0].state == \"closed\" and .[0].steps.returned != null'"
t0=$(date +%s%3N)
"$VIGIL" inject xid 79 --node n4 --gpu 3 --lab --dir "$LAB_DIR" >/dev/null
check "repeat: the same XID 79 on the same GPU again → DOWN again within 15 s (not after the 60 s fold)" \
    until_true 15 is_down n4
t1=$(date +%s%3N)
check "repeat: the agent closed its fold when its heartbeat's answer said n4 was back" \
    grep -q 'agent: node returned to service at .*: 1 folded incident closed' "$LAB_DIR/log/agent-n4.out"
n4_incidents >"$W/n4.json"
is "repeat: two incidents for n4, the second opened by the second XID, counted once" \
    "$(jq -c --argjson t0 "$t0" '[length, (.[0].count), (.[0].steps.detected.at | sub("\\.[0-9]+Z$"; "Z") | fromdate * 1000 >= ($t0 / 1000 | floor) * 1000)]' "$W/n4.json")" \
    "[2,1,true]"
printf '# repeat: n4 seen DOWN again %s ms after the second XID\n' "$(( t1 - t0 ))"
scontrol update nodename=n4 state=resume
done_testing
