#!/bin/sh
# burnin.sh — `vigil burnin` end to end with the stand-in tools
# (tests/standins/: dcgmi, all_reduce_perf, ib_write_bw, vigil-gpu, printing
# the real tools' output): the contract (exit codes, --json fields, unknown
# never pass, bad input), every burn-in injection kind making its test fail
# with the figure and fault named, and on a real lab cluster: one pass over
# the idle nodes, each as itself, a failed node drained with a "vigil: burnin"
# reason, a drained node left out of the next pass, `vigil check --quick` as
# Slurm's Prolog keeping a job off a node that just failed.
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
: "${FAKE_NVML:=$top/build/tests/libnvidia-ml.so.1}"
W=$(mktemp -d "${TMPDIR:-/tmp}/vigil-burnin.XXXXXX")
chmod 755 "$W"   # munged (in the lab below) refuses a socket under a 0700 parent
LAB_DIR=$W/lab
trap 'lab_down; rm -rf "$W"' EXIT
export VIGIL_NVML_LIB="$FAKE_NVML" FAKE_NVML_STATE="$W/nvml-state"
: >"$W/nvml-state"
H100=$top/tests/fixtures/sysfs/h100
STANDINS=$top/tests/standins
# field EXPR — evaluates a Python expression on the JSON document read from stdin (d).
field() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
# has TEXT PATTERN — TEXT contains the (grep) pattern.
has() { printf '%s\n' "$1" | grep -q -- "$2"; }

# ---- without stand-ins: what cannot be measured is unknown, never pass ----
json=$(PATH=/usr/bin:/bin "$VIGIL" burnin --node n1 --suite standard --root "$H100" --json)
is "no tools installed: exit 0 (no node failed)" "$?" "0"
is "no tools installed: the node is unknown" "$(echo "$json" | field 'd["result"], d["nodes"][0]["result"]')" "unknown unknown"
is "no tools installed: each tool test unknown, NVML and IB measured" \
    "$(echo "$json" | field '" ".join(t["name"] + "=" + t["result"] for t in d["nodes"][0]["tests"])')" \
    "nvml=pass ib-port=pass h2d-bw=unknown dcgm-diag=unknown nccl-allreduce=unknown ib-write-bw=unknown gemm=unknown"
check "a missing tool is named" has "$json" 'dcgmi not found on PATH'
check "vigil-gpu missing: says how it is built" has "$json" 'make cuda'

# ---- with the stand-ins: a healthy node passes the standard suite ----
export PATH="$STANDINS:$PATH"
fake=$W/fake-lab
mkdir -p "$fake/nodes/n1"
echo "nodes=1" >"$fake/.vigil-lab"
export VIGIL_BURNIN_STATE=$fake/nodes/n1/burnin-state
json=$("$VIGIL" burnin --node n1 --suite standard --root "$H100" --json)
is "healthy node: exit 0" "$?" "0"
is "healthy node: pass" "$(echo "$json" | field 'd["nodes"][0]["result"], d["nodes"][0]["model"], d["nodes"][0]["gpus"]')" \
    "pass NVIDIA H100 80GB HBM3 8"
is "nccl-allreduce: the real H200 run's busbw against the H100 floor" \
    "$(echo "$json" | field '[(t["value"], t["expected"]) for t in d["nodes"][0]["tests"] if t["name"] == "nccl-allreduce"][0]')" \
    "(476.97, '>= 460 GB/s')"
is "every figure names its source" \
    "$(echo "$json" | field 'all(t.get("source") for t in d["nodes"][0]["tests"] if t["expected"] and t["name"] != "nvml")')" "True"
out=$("$VIGIL" burnin --node n1 --suite quick --root "$H100")
is "quick suite: table output, exit 0" "$?" "0"
is "quick suite: its four tests" "$(echo "$out" | awk 'NR > 1 { print $1 }' | tr '\n' ' ')" "nvml ib-port h2d-bw gemm-small "

# ---- each injection kind: only its test sees it; clear undoes it ----
# inj KIND TEST SUITE RESULT-KIND — inject KIND, run SUITE, TEST must fail with RESULT-KIND.
inj() {
    "$VIGIL" inject "$1" --node n1 --gpu 2 --lab --dir "$fake" >/dev/null 2>&1 || { nok "inject $1"; return; }
    json=$("$VIGIL" burnin --node n1 --suite "$3" --root "$H100" --json)
    rc=$?
    got=$(echo "$json" | field '" ".join(t["name"] + ":" + (t["kind"] or "") for t in d["nodes"][0]["tests"] if t["result"] == "fail")')
    is "inject $1: exit 1, only $2 fails, as $4" "$rc $got" "1 $2:$4"
    "$VIGIL" inject clear --node n1 --lab --dir "$fake" >/dev/null 2>&1
}
inj sdc gemm-small quick sdc
inj gpu-slow gemm standard gpu-slow
inj nccl-slow nccl-allreduce standard nccl-slow
inj ib-bw-low ib-write-bw standard ib-bw-low
inj dcgm-diag-fail dcgm-diag standard dcgm-diag-fail
is "clear restores the burn-in state" "$(cat "$VIGIL_BURNIN_STATE")" ""
# DCGM ran and skipped every hardware test (a real Blackwell run): nothing tested the GPUs
echo "dcgm-diag-skip=1" >"$VIGIL_BURNIN_STATE"
json=$("$VIGIL" burnin --node n1 --test dcgm-diag --root "$H100" --json)
is "every DCGM hardware test skipped: the test and the node unknown, not pass (exit 0: nothing failed)" \
    "$? $(echo "$json" | field '" ".join([d["nodes"][0]["tests"][0]["result"], d["nodes"][0]["result"]])')" "0 unknown unknown"
is "… with the reason" "$(echo "$json" | field 'd["nodes"][0]["tests"][0]["detail"]')" \
    "every hardware test was skipped (12: PCIe, GPU Memory, Targeted Stress, Targeted Power, Memory Bandwidth, EUD Test; DCGM 3.3.9): nothing tested the GPUs"
: >"$VIGIL_BURNIN_STATE"
"$VIGIL" inject nccl-slow --node n1 --lab --dir "$fake" >/dev/null 2>&1
json=$("$VIGIL" burnin --node n1 --suite standard --root "$H100" --json)
is "nccl-slow: the figure and the floor in the reason" "$(echo "$json" | field 'd["nodes"][0]["reason"]')" \
    "vigil: burnin nccl-allreduce: busbw at 8G 238.49 GB/s < 460 GB/s (the floor is defined at 16G)"
is "nccl-slow: the event and the catalog's action" \
    "$(echo "$json" | field 'd["nodes"][0]["events"][0]["source"], d["nodes"][0]["events"][0]["kind"], d["nodes"][0]["events"][0]["action"]')" \
    "burnin nccl-slow reboot"
"$VIGIL" inject clear --lab --dir "$fake" >/dev/null 2>&1
exits_with "inject sdc needs a lab" 2 "$VIGIL" inject sdc --node n1 --local
json=$("$VIGIL" burnin --node n1 --suite long --root "$H100" --json)
is "long suite: DCGM level 3 and the long GEMM with checksums" \
    "$(echo "$json" | field '" ".join(t["name"] for t in d["nodes"][0]["tests"])')" \
    "nvml ib-port h2d-bw nccl-allreduce ib-write-bw dcgm-diag-long gemm-sdc"
echo "gpu5.ecc_dbe_volatile=1" >"$W/nvml-state"
json=$("$VIGIL" burnin --node n1 --suite quick --root "$H100" --json)
is "a GPU fault NVML reports fails the nvml test with its kind" \
    "$(echo "$json" | field '[t["kind"] for t in d["nodes"][0]["tests"] if t["name"] == "nvml"][0]')" "ecc-dbe"
: >"$W/nvml-state"
json=$("$VIGIL" burnin --node n1 --suite quick --root "$top/tests/fixtures/sysfs/degraded" --json)
is "an IB port down fails ib-port" \
    "$(echo "$json" | field '[t["result"] + " " + t["kind"] for t in d["nodes"][0]["tests"] if t["name"] == "ib-port"][0]')" "fail ib-down"

json=$("$VIGIL" burnin --node n1 --test ib-write-bw --root "$W" --json)
is "ib_write_bw with no ACTIVE InfiniBand port: unknown" \
    "$(echo "$json" | field 'd["nodes"][0]["tests"][0]["result"], d["nodes"][0]["tests"][0]["detail"]')" \
    "unknown no ACTIVE InfiniBand port to test"
json=$("$VIGIL" burnin --node n1 --test ib-write-bw --root "$H100" --json)
is "ib_write_bw runs on each ACTIVE InfiniBand port, the port named" \
    "$(echo "$json" | field 'd["nodes"][0]["tests"][0]["detail"]')" "mlx5_0:1: BW average 392.34 Gb/s >= 380 Gb/s"

# ---- bad input ----
exits_with "unknown suite exits 2" 2 "$VIGIL" burnin --suite medium
exits_with "bad --tool exits 2" 2 "$VIGIL" burnin --tool dcgmi
exits_with "unknown test exits 2" 2 "$VIGIL" burnin --test frobnicate
exits_with "other nodes without the lab exit 2" 2 "$VIGIL" burnin --node n1 --nodes n2
printf 'model\tmetric\tmin\tunit\tat\tsource\nX\tnccl-busbw\tfast\tGB/s\t8G\ts\n' >"$W/bad.tsv"
err=$("$VIGIL" burnin --thresholds "$W/bad.tsv" 2>&1 >/dev/null)
is "a bad thresholds line exits 2" "$?" "2"
is "and names file:line" "$err" "vigil: burnin: $W/bad.tsv:2: min is not a positive number"
exits_with "--lab on a dir that is not a lab exits 2" 2 "$VIGIL" burnin --lab --dir "$W"
# the verdicts of failures come from the catalog with the site policy, as for every reader: a policy
# that cannot be read stops the pass (before, it was skipped and the verdicts quietly changed)
cp -r "$H100" "$W/root" && mkdir -p "$W/root/etc/vigil" && printf 'kind sdc action=explode\n' >"$W/root/etc/vigil/policy.tsv"
err=$("$VIGIL" burnin --node n1 --suite quick --root "$W/root" 2>&1 >/dev/null)
is "a bad site policy under --root exits 2" "$?" "2"
check "… naming its file and line" sh -c "echo '$err' | grep -q 'root/etc/vigil/policy.tsv:1: '"
# a configured tool path replaces PATH's
printf '#!/bin/sh\necho "# nThread 1 nGpus 8"\necho "# Avg bus bandwidth    : 12.5"\n' >"$W/slow_allreduce"
chmod +x "$W/slow_allreduce"
json=$("$VIGIL" burnin --node n1 --test nccl-allreduce --tool "all_reduce_perf=$W/slow_allreduce" --json)
is "--tool NAME=PATH runs that program (its average alone, no size row: not judged)" \
    "$(echo "$json" | field 'd["nodes"][0]["tests"][0]["value"], d["nodes"][0]["result"]')" "12.5 unknown"
unset VIGIL_BURNIN_STATE

# ---- on a real Slurm lab ----
if [ "$(id -u)" != 0 ] || ! command -v slurmctld >/dev/null; then
    echo "ok $((_tap_n + 1)) # skip the lab part needs root and slurmctld"; exit 0
fi
cat >"$W/vigil.conf" <<EOF
* || gpu count=8 ecc_dbe=0
EOF
# slurmd runs the Prolog with SLURMD_NODENAME set and no arguments.
cat >"$W/prolog" <<EOF
#!/bin/sh
export VIGIL_CONFIG=$W/vigil.conf VIGIL_NVML_LIB=$FAKE_NVML FAKE_NVML_STATE=$LAB_DIR/nodes/\$SLURMD_NODENAME/nvml-state
export SLURM_CONF=$LAB_DIR/etc/slurm.conf VIGIL_DATA=${VIGIL_DATA:-$top/data}
exec $VIGIL check --quick --drain >>$W/prolog-\$SLURMD_NODENAME.log 2>&1
EOF
chmod +x "$W/prolog"
"$VIGIL" lab up 3 --no-vigil --dir "$LAB_DIR" --conf-extra "Prolog=$W/prolog" \
    --conf-extra SchedulerParameters=bf_interval=1,sched_interval=1,nohold_on_prolog_fail >"$W/lab.env" 2>&1 ||
    { nok "lab up 3"; sed 's/^/# /' "$W/lab.env"; exit 1; }
. "$W/lab.env"
ok "lab up 3 with vigil check --quick --drain as Prolog"
state() { sinfo -h -N -n "$1" -o '%T|%E' | head -1; }

"$VIGIL" inject sdc --node n2 --gpu 1 --lab --dir "$LAB_DIR" >/dev/null
json=$("$VIGIL" burnin --lab --dir "$LAB_DIR" --json)
is "lab: exit 1 when a node failed" "$?" "1"
# (a lab node's simulated HCA is ACTIVE: a sound node passes every test)
is "lab: every idle node tested, each as itself" \
    "$(echo "$json" | field '" ".join(n["node"] + "=" + n["result"] for n in d["nodes"])')" "n1=pass n2=fail n3=pass"
is "lab: n2's checksum test names the GPU" \
    "$(echo "$json" | field '[t["detail"] for t in d["nodes"][1]["tests"] if t["result"] == "fail"][0]')" \
    "GPU 1: 17 elements differ from the reference result"
is "lab: n2 drained" "$(echo "$json" | field 'd["nodes"][1]["drain"]["action"]')" "drain"
is "lab: Slurm shows the reason" "$(state n2)" "drained|vigil: burnin gemm-small: GPU 1: 17 elements differ from the reference result"
json=$("$VIGIL" burnin --lab --dir "$LAB_DIR" --json)
is "lab: the next pass leaves the drained node out" "$(echo "$json" | field '" ".join(n["node"] for n in d["nodes"])') $?" "n1 n3 0"
"$VIGIL" inject clear --node n2 --lab --dir "$LAB_DIR" >/dev/null
json=$("$VIGIL" burnin --lab --dir "$LAB_DIR" --nodes n2 --json)
is "lab: --nodes tests a drained node on request; cleared, it passes its tests" \
    "$(echo "$json" | field '" ".join(t["result"] for t in d["nodes"][0]["tests"] if t["name"] != "ib-port")')" "pass pass pass"
exits_with "lab: --nodes names a node the lab lacks: exit 2" 2 "$VIGIL" burnin --lab --dir "$LAB_DIR" --nodes n9
scontrol update nodename=n2 state=resume

# check --quick --drain as Prolog: a node whose GPU just failed runs no job;
# vigil drains it with its own reason and Slurm requeues the job elsewhere.
echo "gpu4.ecc_dbe_volatile=1" >"$LAB_DIR/nodes/n1/nvml-state"
start=$(date +%s)
out=$(VIGIL_NVML_LIB=$FAKE_NVML FAKE_NVML_STATE=$LAB_DIR/nodes/n1/nvml-state "$VIGIL" check --quick --config "$W/vigil.conf" --node n1)
rc=$?
is "check --quick: the DBE fails it" "$rc" "1"
check "check --quick: within its 5 s" test $(( $(date +%s) - start )) -le 5
jid=$(sbatch --parsable -N1 -o /dev/null --wrap 'hostname')
i=0
while [ $i -lt 300 ]; do
    st=$(scontrol show job "$jid" -o 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
    [ "$st" = COMPLETED ] && break
    sleep 0.1; i=$((i + 1))
done
is "Prolog: n1 drained with vigil's reason" "$(state n1)" \
    "drained|vigil: gpu ecc_dbe: GPU 4 (0000:9a:00.0): 1 volatile double-bit ECC errors"
host=$(scontrol show job "$jid" -o | sed -n 's/.* BatchHost=\([^ ]*\).*/\1/p')
restarts=$(scontrol show job "$jid" -o | sed -n 's/.* Restarts=\([0-9]*\).*/\1/p')
is "Prolog: the job was requeued and ran on another node" "$st $restarts $([ "$host" != n1 ] && echo elsewhere)" \
    "COMPLETED 1 elsewhere"
: >"$LAB_DIR/nodes/n1/nvml-state"

# ---- scheduled burn-in (--schedule): idle nodes only, within the budget, never in the way ----
scontrol update nodename=n1 state=resume
wait_for '[ "$(sinfo -h -N -o %t | sort -u | tr -d "\n")" = idle ]' 30
ST=$W/sched-state.json
sched() { "$VIGIL" burnin --schedule --lab --dir "$LAB_DIR" --state "$ST" "$@"; }
jstate() { scontrol show job -o "$1" 2>/dev/null | sed -n 's/.* JobState=\([A-Z_]*\).*/\1/p'; }
# ended JOB… — every job has left PENDING, RUNNING and COMPLETING
ended() { for j in "$@"; do case "$(jstate "$j")" in PENDING | RUNNING | COMPLETING | CONFIGURING) return 1 ;; esac; done; }
running() { for j in "$@"; do [ "$(jstate "$j")" = RUNNING ] || return 1; done; }
err=$(sched --budget x 2>&1 >/dev/null)
is "schedule: --budget x exits 2, naming the field" "$? $err" "2 vigil: burnin: --budget: 'x' is not a number of minutes from 1 to 60"
err=$(sched --burnin-partition nosuch 2>&1 >/dev/null)
is "schedule: an unknown partition exits 2, naming it" "$? $err" \
    "2 vigil: burnin: --burnin-partition: no node is in partition 'nosuch' (the slurm orchestrator knows 3 nodes)"
exits_with "schedule: a budget too small for the suite exits 2" 2 sched --suite long --budget 20
exits_with "schedule: --budget without --schedule exits 2" 2 "$VIGIL" burnin --budget 5
exits_with "schedule: --node does not go with --schedule" 2 sched --node n1
check "schedule: bad input submitted nothing" test -z "$(squeue -h -p vigil-burnin)"

# n1 runs a production job; n3's GPU 1 corrupts data
prod1=$(sbatch --parsable -p gpu -w n1 --exclusive -o /dev/null --wrap 'sleep 600')
wait_for '[ "$(jstate "$prod1")" = RUNNING ]' 30
"$VIGIL" inject sdc --node n3 --gpu 1 --lab --dir "$LAB_DIR" >/dev/null
json=$(sched --test gemm-small --json)
is "schedule: exit 0" "$?" "0"
is "schedule: a pass on each idle node, none on the busy one" \
    "$(echo "$json" | field '" ".join(n["node"] + "=" + n["action"] for n in d["nodes"])')" "n1=skipped n2=submitted n3=submitted"
is "schedule: the busy node's reason" "$(echo "$json" | field '[n["why"] for n in d["nodes"] if n["node"] == "n1"][0]')" \
    "not idle (ALLOCATED)"
j2=$(echo "$json" | field '[n["job"] for n in d["nodes"] if n["node"] == "n2"][0]')
j3=$(echo "$json" | field '[n["job"] for n in d["nodes"] if n["node"] == "n3"][0]')
is "schedule: each pass in the burn-in partition, on exactly its node, alone on it, limited to the budget" \
    "$(for j in "$j2" "$j3"; do scontrol show job -o "$j" | grep -o ' Partition=[^ ]*\| ReqNodeList=[^ ]*\| OverSubscribe=[^ ]*\| TimeLimit=[^ ]*' | tr -d '\n'; echo; done | tr '\n' '|')" \
    " TimeLimit=00:20:00 Partition=vigil-burnin ReqNodeList=n2 OverSubscribe=NO| TimeLimit=00:20:00 Partition=vigil-burnin ReqNodeList=n3 OverSubscribe=NO|"
wait_for "ended $j2 $j3" 60
json=$(sched --test gemm-small --nodes n1 --json)
rc=$?
is "schedule: the next round records each pass's result from its job (exit 1: n3 failed)" \
    "$rc $(echo "$json" | field '" ".join(e["node"] + "=" + e["result"] for e in d["ended"])')" "1 n2=pass n3=fail"
is "schedule: n3's pass drained it with the burn-in reason" "$(state n3)" \
    "drained|vigil: burnin gemm-small: GPU 1: 17 elements differ from the reference result"
# the failing pass's document is alone in its output file, srun's own line about the
# task's exit in the job's stderr beside it (in one shared file it landed inside the document)
out3=$(ls "$W"/burnin-jobs/n3-*.out | head -1)
check "schedule: the failing pass's output file is its JSON document alone" \
    sh -c "python3 -c 'import json, sys; json.load(open(sys.argv[1]))' '$out3'"
check "schedule: srun's exit line is in the job's stderr file beside it" grep -q '^srun: error: n3: task 0: Exited with exit code 1' "${out3%.out}.err"
"$VIGIL" inject clear --node n3 --lab --dir "$LAB_DIR" >/dev/null
scontrol update nodename=n3 state=resume
scancel "$prod1"

# the budget: n2 ran 20 minutes of burn-in in the last hour, n3 25 minutes of which 15 more than an hour ago
python3 - "$W/spent.json" <<'PY'
import json, sys, datetime
now = datetime.datetime.now(datetime.timezone.utc)
t = lambda m: (now - datetime.timedelta(minutes=m)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
p = lambda node, job, a, b: {"node": node, "job": job, "suite": "quick", "result": "pass", "submitted": t(a), "start": t(a), "end": t(b)}
json.dump({"version": 1, "passes": [p("n2", "1", 30, 10), p("n3", "2", 75, 50)]}, open(sys.argv[1], "w"))
PY
wait_for '[ "$(sinfo -h -N -n n2,n3 -o %t | sort -u | tr -d "\n")" = idle ]' 30
json=$("$VIGIL" burnin --schedule --lab --dir "$LAB_DIR" --state "$W/spent.json" --nodes n2,n3 --test gemm-small --json)
is "budget: n2's spent, n3 has 10 minutes left" "$(echo "$json" | field '" ".join(n["node"] + "=" + n["action"] for n in d["nodes"])')" \
    "n2=skipped n3=submitted"
is "budget: n2's reason" "$(echo "$json" | field '[n["why"] for n in d["nodes"] if n["node"] == "n2"][0]')" \
    "budget spent: 1200 s of 1200 s used in the last 60 min"
j3=$(echo "$json" | field '[n["job"] for n in d["nodes"] if n["node"] == "n3"][0]')
is "budget: n3's pass is limited to what is left" "$(scontrol show job -o "$j3" | grep -o ' TimeLimit=[^ ]*')" " TimeLimit=00:10:00"
wait_for "ended $j3" 60

# never in the way: a production job that needs the nodes preempts the burn-in and runs
printf '#!/bin/sh\n# a pass that takes minutes, as the standard suite does on real GPUs\nexec sleep 300.13\n' >"$W/slow-gpu"
chmod +x "$W/slow-gpu"
wait_for '[ "$(sinfo -h -N -o %t | sort -u | tr -d "\n")" = idle ]' 30
json=$(sched --tool "vigil-gpu=$W/slow-gpu" --json)
jobs=$(echo "$json" | field '" ".join(n["job"] for n in d["nodes"] if n["action"] == "submitted")')
is "preemption: a pass on each of the 3 idle nodes" "$(echo "$jobs" | wc -w)" "3"
wait_for "running $jobs" 30
check "preemption: the burn-in passes run" running $jobs
sleep 1
prod=$(sbatch --parsable -p gpu -N3 -o /dev/null --wrap 'sleep 120')
check "preemption: a production job needing the 3 nodes runs (within 30 s)" wait_for '[ "$(jstate "$prod")" = RUNNING ]' 30
check "preemption: nothing of the passes is left running on the nodes" wait_for '! pgrep -f "^sleep 300.13$" >/dev/null' 15
json=$(sched --json)
is "preemption: the next round records each pass as preempted" \
    "$(echo "$json" | field '" ".join(e["node"] + "=" + e["result"] for e in d["ended"])')" \
    "n1=preempted n2=preempted n3=preempted"
is "preemption: it counts against the budget only for what it ran" \
    "$(echo "$json" | field '[e["ran_s"] for e in d["ended"] if e["node"] == "n1"][0] == [n["budget_used_s"] for n in d["nodes"] if n["node"] == "n1"][0] and 0 < [e["ran_s"] for e in d["ended"] if e["node"] == "n1"][0] < 60')" "True"
is "preemption: no new pass while production runs" \
    "$(echo "$json" | field '" ".join(n["node"] + "=" + n["action"] for n in d["nodes"])')" "n1=skipped n2=skipped n3=skipped"
is "preemption: the state file keeps the passes" \
    "$(field '" ".join(p["node"] + "=" + p["result"] for p in d["passes"])' <"$ST")" \
    "n2=pass n3=fail n1=preempted n2=preempted n3=preempted"
out=$(timeout 3 "$VIGIL" burnin --schedule --lab --dir "$LAB_DIR" --state "$ST" --every 1 --json)
is "--every 1: a JSON line per round, each round skipping the busy nodes" \
    "$(echo "$out" | python3 -c 'import json, sys; r = [json.loads(l) for l in sys.stdin]; print(len(r) >= 2, all(n["action"] == "skipped" for d in r for n in d["nodes"]))')" \
    "True True"
scancel "$prod"
done_testing
