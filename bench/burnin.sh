#!/bin/sh
# burnin.sh — `vigil burnin --lab --suite quick` over a 5-node lab (each
# node's pass runs as that node, in parallel), next to a baseline measured in
# the same run: the quick suite's tools themselves (the stand-ins under
# tests/standins/, per node, in parallel) without vigil.  Prints the median
# of 5 passes of each, the ratio, and the standard suite's time.  Needs root
# (the lab); skipped otherwise.
cd "$(dirname "$0")/.." || exit 2
if [ "$(id -u)" != 0 ] || ! command -v slurmctld >/dev/null; then echo "skipped: needs root and slurmctld"; exit 0; fi
top=$PWD
W=$(mktemp -d /tmp/vigil-bench-burnin.XXXXXX)
chmod 755 "$W"
trap 'build/vigil lab down --dir "$W/lab" >/dev/null 2>&1; rm -rf "$W"' EXIT
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
for i in 1 2 3 4 5; do
    t0=$(now); base; t1=$(now)
    build/vigil burnin --lab --dir "$W/lab" --suite quick --json >"$W/out.json" || { cat "$W/out.json"; exit 1; }
    t2=$(now)
    echo "$(( (t1 - t0) / 1000000 )) $(( (t2 - t1) / 1000000 ))" >>"$W/times"
done
t0=$(now)
build/vigil burnin --lab --dir "$W/lab" --suite standard --json >/dev/null
std=$(( ($(now) - t0) / 1000000 ))
b=$(cut -d' ' -f1 "$W/times" | median) v=$(cut -d' ' -f2 "$W/times" | median)
nodes=$(python3 -c "import json; print(len(json.load(open('$W/out.json'))['nodes']))")
echo "quick pass over the lab ($nodes nodes in parallel, median of 5):"
echo "  the quick suite's tools alone (baseline): $b ms"
echo "  vigil burnin --lab --suite quick:          $v ms   ratio $(awk -v b="$b" -v v="$v" 'BEGIN { printf "%.1f", v / b }')x"
echo "  (vigil adds: NVML probe per node, the nvml and ib-port tests, one process per node, JSON)"
echo "standard suite over the lab: $std ms (stand-ins print at once; real tools take minutes)"
