#!/bin/sh
# burnin_amd.sh — `vigil burnin --lab --suite quick` over a 5-node lab of AMD
# nodes (`--gpu amd`: the fake AMD SMI, each node's pass as that node, in
# parallel), next to a baseline measured in the same run: AMD's quick suite's
# tools themselves (the stand-ins `rvs -m peqt` and `TransferBench a2a`, per
# node, in parallel) without vigil.  Prints the median of 5 passes of each,
# the ratio, and AMD's standard suite's time.  Needs root (the lab); skipped
# otherwise.
cd "$(dirname "$0")/.." || exit 2
if [ "$(id -u)" != 0 ] || ! command -v slurmctld >/dev/null; then echo "skipped: needs root and slurmctld"; exit 0; fi
top=$PWD
W=$(mktemp -d /tmp/vigil-bench-burnin-amd.XXXXXX)
chmod 755 "$W"
trap 'build/vigil lab down --dir "$W/lab" >/dev/null 2>&1; rm -rf "$W"' EXIT
unset VIGIL_NVML_LIB   # each lab node's own GPU library: the fake AMD SMI the lab names
export VIGIL_DATA=$top/data PATH="$top/tests/standins:$PATH"
build/vigil lab up 5 --gpu amd --gpus-per-node 8 --no-vigil --dir "$W/lab" >"$W/env" 2>&1 || { cat "$W/env"; exit 1; }
. "$W/env"
now() { date +%s%N; }
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
base() {
    for n in n1 n2 n3 n4 n5; do
        (export VIGIL_BURNIN_STATE=$W/lab/nodes/$n/burnin-state
         rvs -m peqt >/dev/null 2>&1; TransferBench a2a >/dev/null) &
    done
    wait
}
for i in 1 2 3 4 5; do
    t0=$(now); base; t1=$(now)
    build/vigil burnin --lab --dir "$W/lab" --suite quick --json >"$W/out.json" || { cat "$W/out.json"; exit 1; }
    t2=$(now)
    echo "$(( (t1 - t0) / 1000000 )) $(( (t2 - t1) / 1000000 ))" >>"$W/times"
done
t0=$(now)
build/vigil burnin --lab --dir "$W/lab" --suite standard --json >"$W/std.json"
std=$(( ($(now) - t0) / 1000000 ))
b=$(cut -d' ' -f1 "$W/times" | median) v=$(cut -d' ' -f2 "$W/times" | median)
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
