#!/bin/sh
# burnin.sh — `vigil burnin --lab --suite quick` over a 5-node lab (each
# node's pass runs as that node, in parallel), next to a baseline measured in
# the same run: the quick suite's tools themselves (the stand-ins under
# tests/standins/, per node, in parallel) without vigil.  Prints the median
# of 5 passes of each, the ratio, and the standard suite's time.  Needs root
# (the lab); skipped otherwise.
# Then "never in the way": the time from a production job's submission
# (sbatch -p gpu -N5) to RUNNING on nodes that `vigil burnin --schedule`
# holds with passes (preempted), next to the same submission on idle nodes
# without burn-in (the baseline), median of 5 each; goal <= 5 s.
# Last, the quick pass over a 5-node lab of AMD nodes (`--gpu amd`: the GPU
# probe through the fake AMD SMI, AMD's quick suite) next to AMD's quick
# tools alone (the stand-ins `rvs -m peqt`, `TransferBench a2a`), and AMD's
# standard suite's time.
cd "$(dirname "$0")/.." || exit 2
if [ "$(id -u)" != 0 ] || ! command -v slurmctld >/dev/null; then echo "skipped: needs root and slurmctld"; exit 0; fi
top=$PWD
W=$(mktemp -d /tmp/vigil-bench-burnin.XXXXXX)
chmod 755 "$W"
trap 'build/vigil lab down --dir "$W/lab" >/dev/null 2>&1; build/vigil lab down --dir "$W/amd" >/dev/null 2>&1; rm -rf "$W"' EXIT
export VIGIL_DATA=$top/data PATH="$top/tests/standins:$PATH" VIGIL_NVML_LIB=$top/build/tests/libnvidia-ml.so.1
build/vigil lab up 5 --no-vigil --dir "$W/lab" >"$W/env" 2>&1 || { cat "$W/env"; exit 1; }
. "$W/env"
now() { date +%s%N; }
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
base() {
    for n in n1 n2 n3 n4 n5; do
        (export VIGIL_BURNIN_STATE=$W/lab/nodes/$n/burnin-state FAKE_NVML_STATE=$W/lab/nodes/$n/nvml-state
         vigil-gpu copy --bytes 268435456 >/dev/null; vigil-gpu gemm --n 2048 --iters 10 >/dev/null) &
    done
    wait
}
# quick_passes LAB BASE — 5 rounds of BASE (the tools alone) then of the quick
# pass over LAB: the medians in $b and $v, the last pass in $W/out.json, the
# standard suite's time over LAB in $std.
quick_passes() {
    : >"$W/times"
    for i in 1 2 3 4 5; do
        t0=$(now); $2; t1=$(now)
        build/vigil burnin --lab --dir "$1" --suite quick --json >"$W/out.json" || { cat "$W/out.json"; exit 1; }
        t2=$(now)
        echo "$(( (t1 - t0) / 1000000 )) $(( (t2 - t1) / 1000000 ))" >>"$W/times"
    done
    t0=$(now)
    build/vigil burnin --lab --dir "$1" --suite standard --json >/dev/null
    std=$(( ($(now) - t0) / 1000000 ))
    b=$(cut -d' ' -f1 "$W/times" | median) v=$(cut -d' ' -f2 "$W/times" | median)
}
quick_passes "$W/lab" base
nodes=$(python3 -c "import json; print(len(json.load(open('$W/out.json'))['nodes']))")
echo "quick pass over the lab ($nodes nodes in parallel, median of 5):"
echo "  the quick suite's tools alone (baseline): $b ms"
echo "  vigil burnin --lab --suite quick:          $v ms   ratio $(awk -v b="$b" -v v="$v" 'BEGIN { printf "%.1f", v / b }')x"
echo "  (vigil adds: NVML probe per node, the nvml and ib-port tests, one process per node, JSON)"
echo "standard suite over the lab: $std ms (stand-ins print at once; real tools take minutes)"

# ---- never in the way: production job submission -> RUNNING, idle vs held by burn-in ----
jstate() { squeue -h -j "$1" -o %T 2>/dev/null; }
all_idle() {
    i=0
    while [ "$(sinfo -h -N -o %t | sort -u | tr -d '\n')" != idle ] && [ $i -lt 1500 ]; do sleep 0.02; i=$((i + 1)); done
}
# to_running: ms from sbatch of a 5-node gpu job to its RUNNING (polled every 20 ms); then cancels it
to_running() {
    t0=$(now)
    j=$(sbatch --parsable -p gpu -N5 -o /dev/null --wrap 'sleep 120')
    i=0
    while [ "$(jstate "$j")" != RUNNING ] && [ $i -lt 3000 ]; do sleep 0.02; i=$((i + 1)); done
    t1=$(now)
    [ "$(jstate "$j")" = RUNNING ] || { echo "timeout"; scancel "$j"; return; }
    echo $(( (t1 - t0) / 1000000 ))
    scancel "$j"
}
printf '#!/bin/sh\nexec sleep 300.17\n' >"$W/slow-gpu"   # a pass that takes minutes, as on real GPUs
chmod +x "$W/slow-gpu"
for i in 1 2 3 4 5; do
    all_idle
    base=$(to_running)
    all_idle
    build/vigil burnin --schedule --lab --dir "$W/lab" --state "$W/sched.json" --tool "vigil-gpu=$W/slow-gpu" >/dev/null
    k=0
    while [ "$(squeue -h -p vigil-burnin -t RUNNING | wc -l)" != 5 ] && [ $k -lt 1500 ]; do sleep 0.02; k=$((k + 1)); done
    [ "$(squeue -h -p vigil-burnin -t RUNNING | wc -l)" = 5 ] || { echo "burn-in passes did not start"; exit 1; }
    held=$(to_running)
    echo "$base $held" >>"$W/preempt"
done
sleep 3
left=$(pgrep -c -f '^sleep 300.17$')
build/vigil burnin --schedule --lab --dir "$W/lab" --state "$W/sched.json" --json >"$W/last.json"
pre=$(python3 -c "import json; print(sum(p['result'] == 'preempted' for p in json.load(open('$W/sched.json'))['passes']))")
b=$(cut -d' ' -f1 "$W/preempt" | median) h=$(cut -d' ' -f2 "$W/preempt" | median)
echo "production job (sbatch -p gpu -N5) from submission to RUNNING, median of 5:"
echo "  on idle nodes, no burn-in (baseline):      $b ms"
echo "  on 5 nodes held by scheduled burn-in:      $h ms   ratio $(awk -v b="$b" -v h="$h" 'BEGIN { printf "%.1f", h / b }')x   (goal <= 5000 ms)"
echo "  ($pre burn-in passes recorded preempted, $left of their processes left running; PreemptType=preempt/partition_prio, PreemptMode=CANCEL)"
echo "node-time the default budget allows: 20 min per node per hour = 33%, taken only while the node is idle"

# ---- AMD nodes: AMD's quick suite beside its tools alone ----
build/vigil lab down --dir "$W/lab" >/dev/null 2>&1
unset VIGIL_NVML_LIB   # each lab node's own GPU library: the fake AMD SMI the lab names
build/vigil lab up 5 --gpu amd --gpus-per-node 8 --no-vigil --dir "$W/amd" >"$W/env" 2>&1 || { cat "$W/env"; exit 1; }
. "$W/env"
amd_base() {
    for n in n1 n2 n3 n4 n5; do
        (export VIGIL_BURNIN_STATE=$W/amd/nodes/$n/burnin-state
         rvs -m peqt >/dev/null 2>&1; TransferBench a2a >/dev/null) &
    done
    wait
}
quick_passes "$W/amd" amd_base
what=$(python3 -c "
import json
d = json.load(open('$W/out.json'))['nodes']
print(len(d), 'nodes,', ' '.join(sorted({','.join(n['vendors']) for n in d})), 'suite:', ' '.join(t['name'] for t in d[0]['tests']),
      '-', ' '.join(sorted({n['result'] for n in d})))")
echo "AMD quick pass over the lab ($what; in parallel, median of 5):"
echo "  AMD's quick tools alone (baseline):        $b ms"
echo "  vigil burnin --lab --suite quick:          $v ms   ratio $(awk -v b="$b" -v v="$v" 'BEGIN { printf "%.1f", v / b }')x"
echo "  (vigil adds: the GPU probe through AMD SMI per node, the nvml and ib-port tests, one process per node, JSON)"
echo "AMD standard suite over the lab: $std ms (stand-ins print at once; RVS and TransferBench take minutes to hours)"
