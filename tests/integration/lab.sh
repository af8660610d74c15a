#!/bin/sh
# lab.sh — `vigil lab`: a real 5-node Slurm cluster (n5 a spare) comes up, runs
# srun and a requeueable batch job on distinct nodes, reports its status, and
# goes down leaving no process and no directory (also when DIR is typed with a
# trailing slash); `down` refuses a non-lab dir, and a dir a daemon of the lab
# still runs from; `env` puts the burn-in's stand-in tools on PATH.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ] || ! command -v slurmctld >/dev/null; then
    echo "ok 1 # skip vigil lab needs root and slurmctld"; exit 0
fi
lab_up 5 --spares 1 --rack-size 2 || { nok "lab up 5"; exit 1; }
ok "lab up 5 --spares 1"
is "SLURM_CONF points into the lab" "$SLURM_CONF" "$LAB_DIR/etc/slurm.conf"
is "sinfo: 5 idle nodes" "$(sinfo -h -o '%n %t' | sort | tr '\n' ' ')" "n1 idle n2 idle n3 idle n4 idle n5 idle "
is "n5 is the spare" "$(sinfo -h -n n5 -o '%f')" "rack3,spare"
is "racks file" "$(grep -c rack "$LAB_DIR/racks")" "5"
check "per-node directories" test -f "$LAB_DIR/nodes/n3/kmsg" -a -f "$LAB_DIR/nodes/n3/nvml-state" -a -d "$LAB_DIR/nodes/n3/sys"
# every lab agent connects from 127.0.0.1: the controller holds 2N+32 connections from it (42
# here), not the 32 a single address gets by default (at 128 nodes that refused most heartbeats)
held=$("$(dirname "$0")/../../build/tests/httpload" slow "${VIGIL_CONTROLLER##*:}" 40 2 | tr '\n' ' ')
is "the lab's controller holds 40 connections from 127.0.0.1" "$held" "connected=40 closed=0 open=40 "
is "srun -N3 hostname: 3 distinct node names" "$(timeout 30 srun -N3 hostname | sort -u | grep -c '^n[1-5]$')" "3"
out=$LAB_DIR/job.out
job=$(sbatch --parsable --requeue -N1 -o "$out" --wrap 'echo "ran on $(hostname)"') 
for i in $(seq 1 100); do grep -q 'ran on n' "$out" 2>/dev/null && break; sleep 0.1; done
check "sbatch --requeue job ran on a lab node" grep -q '^ran on n[1-5]$' "$out"
# burn-in never gets in the way: a job of the production partition preempts one of vigil-burnin
is "the burn-in partition: the same nodes, a lower priority tier, preempted by cancelling" \
    "$(scontrol show partition vigil-burnin -o | grep -o ' Nodes=[^ ]*\| PriorityTier=[0-9]*\| PreemptMode=[A-Z]*' | tr -d '\n')" \
    " Nodes=n[1-5] PriorityTier=1 PreemptMode=CANCEL"
is "the production partition gpu: a higher tier, never preempted" \
    "$(scontrol show partition gpu -o | grep -o ' PriorityTier=[0-9]*\| PreemptMode=[A-Z]*' | tr -d '\n')" \
    " PriorityTier=10 PreemptMode=OFF"
jstate() { scontrol show job -o "$1" 2>/dev/null | sed -n 's/.* JobState=\([A-Z_]*\).*/\1/p'; }
bi=$(sbatch --parsable --exclusive -p vigil-burnin -w n1 -o /dev/null --wrap 'sleep 300')
wait_for '[ "$(jstate "$bi")" = RUNNING ]' 30
prod=$(sbatch --parsable --exclusive -p gpu -w n1 -o /dev/null --wrap 'sleep 1')
check "a gpu job on a node a vigil-burnin job holds runs (within 30 s)" wait_for '[ "$(jstate "$prod")" = RUNNING ]' 30
is "the burn-in job was preempted" "$(jstate "$bi")" "PREEMPTED"
is "status: healthy" "$("$VIGIL" lab status --dir "$LAB_DIR" --json | grep -c '"healthy": true')" "1"
exits_with "status exits 0" 0 "$VIGIL" lab status --dir "$LAB_DIR"
is "env prints the client environment" "$("$VIGIL" lab env --dir "$LAB_DIR" | head -1)" "export SLURM_CONF=$LAB_DIR/etc/slurm.conf"
# with nothing but the system's PATH and the lab's environment, a fault only the burn-in's
# tools see (injected into n4's stand-in dcgmi) is found, not `unknown` for want of the tools
bi=$(PATH=/usr/sbin:/usr/bin:/sbin:/bin
    eval "$("$VIGIL" lab env --dir "$LAB_DIR/")"
    "$VIGIL" inject dcgm-diag-fail --node n4 --lab >/dev/null &&
        "$VIGIL" burnin --lab --nodes n4 --test dcgm-diag --no-drain --json 2>"$LAB_DIR/bi.err"
    "$VIGIL" inject clear --node n4 --lab >/dev/null)
is "lab env: burnin --lab after inject dcgm-diag-fail --lab: dcgm-diag fails on n4" \
    "$(echo "$bi" | jq -r '.nodes[] | select(.node == "n4") | .tests[] | select(.name == "dcgm-diag") | .result')" "fail"
second=$(mktemp -d)
"$VIGIL" lab up 2 --dir "$second" --policy-extra 'view_max_age = 30s' --json >"$second.json" 2>"$second.err"
is "a second lab comes up beside the first" "$?" "0"
ctl=$(jq -r .env.VIGIL_CONTROLLER "$second.json")
check "up names the dashboard's URL and the read token's file on stderr" \
    grep -qx "vigil: lab up: dashboard $ctl/?token=$(cat "$second/etc/read.token") (the read token is in $second/etc/read.token)" "$second.err"
is "--policy-extra: the line is in the controller's policy (which took it)" \
    "$(grep -c '^view_max_age = 30s$' "$second/etc/vigil-policy.conf")" "1"
p1=$(sed -n 's/^SlurmctldPort=//p' "$SLURM_CONF")
p2=$(sed -n 's/.*"port_base": \([0-9]*\).*/\1/p' "$second.json")
check "on other ports ($p1, $p2)" test -n "$p2" -a "$p1" != "$p2"
# shell completion writes the directory with a trailing slash: the same lab, every daemon stopped
"$VIGIL" lab down --dir "$second/"
is "down DIR/ exits 0" "$?" "0"
left=0
for e in /proc/[0-9]*/environ; do grep -qs "VIGIL_LAB_DAEMON=$second" "$e" && left=$((left + 1)); done
is "down DIR/: no process of that lab is left" "$left" "0"
check "down DIR/: its directory is gone" test ! -e "$second"
rm -f "$second.json" "$second.err"
exits_with "the first lab is still healthy" 0 "$VIGIL" lab status --dir "$LAB_DIR"
sbatch -N2 -o /dev/null --wrap 'srun sleep 307' >/dev/null
# the job's two tasks running (a step still starting when the lab goes down left its task behind):
# the tasks' own command lines only, not srun's ("srun sleep 307", two processes of its own)
check "a two-node job step runs" wait_for '[ "$(pgrep -c -x -f "(/usr/bin/)?sleep 307")" = 2 ]' 20
"$VIGIL" lab down --dir "$LAB_DIR"
is "down exits 0" "$?" "0"
check "down removed the lab directory" test ! -e "$LAB_DIR"
left=0
for e in /proc/[0-9]*/environ; do grep -qs "VIGIL_LAB_DAEMON=$LAB_DIR" "$e" && left=$((left + 1)); done
is "no process carries the lab's tag" "$left" "0"
is "no slurmstepd of the lab left" "$(pgrep -c -f "sleep 307" || true)" "0"
not_lab=$(mktemp -d)
touch "$not_lab/precious"
exits_with "down on a non-lab dir exits 2" 2 "$VIGIL" lab down --dir "$not_lab"
check "and leaves it alone" test -f "$not_lab/precious"
rm -rf "$not_lab"
err=$("$VIGIL" lab down --dir "$not_lab" 2>&1)
is "down on a dir that does not exist exits 2" "$?" "2"
is "and says there is no lab" "$err" "vigil: lab down: $not_lab: not a vigil lab (No such file or directory); nothing to take down"
# a daemon the lab started that still runs from DIR (here one that does not carry the lab's
# tag): down does not pull the directory from under it, and names it
orph=$(mktemp -d)
printf 'nodes=1\nconf=%s/etc/slurm.conf\n' "$orph" >"$orph/.vigil-lab"
mkdir "$orph/run" "$orph/log"
sleep 300 >"$orph/log/slurmd-n1.out" 2>&1 &
op=$!
echo "slurmd n1 $op" >"$orph/run/daemons"
err=$("$VIGIL" lab down --dir "$orph" 2>&1)
is "down while a daemon of the lab runs from DIR: exit 1" "$?" "1"
is "and names it" "$err" "vigil: lab down: $orph: slurmd of n1 (pid $op) still runs from it; not removed (stop it, then run \`vigil lab down --dir $orph\` again)"
check "and keeps DIR" test -f "$orph/.vigil-lab"
kill "$op"; wait "$op" 2>/dev/null
exits_with "once it is stopped, down removes DIR" 0 "$VIGIL" lab down --dir "$orph"
check "… and DIR is gone" test ! -e "$orph"
exits_with "status on a non-lab dir exits 2" 2 "$VIGIL" lab status --dir /nonexistent
exits_with "--policy-extra without '=' exits 2" 2 "$VIGIL" lab up 2 --dir "$(mktemp -u)" --policy-extra 'view_max_age'
bad=$(mktemp -u)
exits_with "a policy line the controller refuses: lab up fails" 1 "$VIGIL" lab up 2 --dir "$bad" \
    --policy-extra 'view_max_age = soon'
left=0
for e in /proc/[0-9]*/environ; do grep -qs "VIGIL_LAB_DAEMON=$bad" "$e" && left=$((left + 1)); done
is "and leaves no process of that lab behind" "$left" "0"
check "nor its directory" test ! -e "$bad"
exits_with "up without N exits 2" 2 "$VIGIL" lab up --dir /tmp/x
exits_with "up with all nodes spares exits 2" 2 "$VIGIL" lab up 2 --spares 2 --dir /tmp/x
done_testing
