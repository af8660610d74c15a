#!/bin/sh
# demo.sh — `make demo`: vigil end to end on this machine, in a few minutes.
#  1. audits a fixture root (an H100 node with a .run-installed 535 driver and
#     an old container stack) against the bundled advisory database;
#  2. classifies the GPU faults in real-world kernel logs;
#  3. starts a real local Slurm cluster (munged, slurmctld, 9 `slurmd -N` nodes
#     of 8 GPUs each (Slurm Gres, the fake NVML), one of them a hot spare) with
#     a `vigil agent` per node and `vigil serve`, and runs a 3-run node-failure
#     drill on 64 GPUs: XID 79 written to a node's kernel log while an 8-node
#     job with one rank per GPU runs; prints the timeline and the HTML report;
#  4. the same fault on plain Slurm (vigil off), and a node crash, for contrast.
# Everything lives under $VIGIL_DEMO_DIR (default /tmp/vigil-demo): the labs
# are stopped and removed; the reports stay there.
set -u
cd "$(dirname "$0")/.." || exit 2
V=$PWD/build/vigil
STATE=${VIGIL_DEMO_DIR:-/tmp/vigil-demo}
[ "$(id -u)" = 0 ] || { echo "make demo: the local Slurm cluster needs root" >&2; exit 1; }
rm -rf "$STATE/lab"
mkdir -p "$STATE" && chmod 0755 "$STATE"   # munged wants a world-executable path
cleanup() { [ -d "$STATE/lab" ] && "$V" lab down --dir "$STATE/lab" >/dev/null 2>&1; }
trap cleanup EXIT INT TERM
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "1. vigil audit: an H100 node's software stack against published CVEs"
"$V" audit --root tests/fixtures/roots/ubuntu2204-h100-run535 --now 2026-09-01 --fail-on none | head -9
echo "   … (the full table: build/vigil audit --root tests/fixtures/roots/ubuntu2204-h100-run535)"

step "2. vigil scan: GPU faults in real kernel logs, one line per GPU with its worst verdict"
"$V" scan --summary tests/fixtures/logs/fallen-off-bus.log tests/fixtures/logs/gpud-dmesg-with-xid-119.log \
    tests/fixtures/logs/sxid.log 2>&1

step "3. a real Slurm cluster with vigil: 8 nodes × 8 GPUs + 1 hot spare, an agent per node, the controller"
eval "$("$V" lab up 9 --spares 1 --rack-size 3 --gpus-per-node 8 --dir "$STATE/lab")" || exit 1
sinfo -N -p gpu -o '%N %t %G %f' | column -t
echo "controller: $VIGIL_CONTROLLER   spare pool: $(scontrol show reservation vigil_spares | grep -o 'Nodes=[^ ]*')"
step "   drill: XID 79 on a node of a running 64-GPU job (8 nodes × 8 ranks), 3 runs (vigil on)"
"$V" drill --lab --dir "$STATE/lab" --nodes 8 --runs 3 --fault xid:79 --deadline 90 \
    --html "$STATE/drill-vigil.html" --save "$STATE/drill-vigil.json"
"$V" lab down --dir "$STATE/lab" >/dev/null

step "4. the same on plain Slurm (vigil off): XID 79, then a node crash"
eval "$("$V" lab up 9 --spares 1 --rack-size 3 --gpus-per-node 8 --no-vigil --dir "$STATE/lab")" || exit 1
"$V" drill --lab --dir "$STATE/lab" --nodes 8 --runs 1 --fault xid:79 --deadline 20 \
    --save "$STATE/drill-plain-xid.json" | head -3
"$V" drill --lab --dir "$STATE/lab" --nodes 8 --runs 1 --fault node-crash --deadline 120 \
    --save "$STATE/drill-plain-crash.json" | head -3
"$V" lab down --dir "$STATE/lab" >/dev/null

step "side by side: seconds after the fault (median)"
row() { jq -r --arg n "$1" '[$n, (["detect","isolate","restart","resume"][] as $s | (.[$s].median // "never" | tostring))] | @tsv' "$2"; }
{ printf 'stack\tdetect\tisolate\trestart\tresume\n'
  row "vigil, XID 79" "$STATE/drill-vigil.json"
  row "plain Slurm, XID 79" "$STATE/drill-plain-xid.json"
  row "plain Slurm, node crash" "$STATE/drill-plain-crash.json"; } | column -t -s "$(printf '\t')"
"$V" report "$STATE/drill-vigil.json" "$STATE/drill-plain-xid.json" "$STATE/drill-plain-crash.json" \
    --html "$STATE/drill-compare.html" >/dev/null
echo
echo "HTML reports: $STATE/drill-compare.html (side by side), $STATE/drill-vigil.html   (JSON: $STATE/*.json)"
