#!/bin/sh
# burnin_amd.sh — `vigil burnin --test NAME` with AMD's tools through the real
# spawn path, the stand-ins printing their real output (tests/standins/: rvs,
# TransferBench, all_reduce_perf as rccl-tests): an RVS verdict that says
# FALSE fails its test whatever the GPU model, with the fault the catalog
# drains for and RVS's own line in the reason; a clean RVS run, TransferBench
# figures and the rccl-tests sweep are measured but `unknown` when no GPU
# library names the node's Instinct model (no figure is held to an unknown
# model: the judgement at AMD's floors is in test_burnin_amd, on the AMD lab in
# amd.sh); a missing tool
# and a tool that prints something else are unknown, never pass.  No lab, no
# GPU library: a few seconds.
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/vigil-burnin-amd.XXXXXX")
trap 'rm -rf "$W"' EXIT
export VIGIL_NVML_LIB="$W/no-such-libnvidia-ml.so.1"   # no GPU library answers: the model is unknown
export VIGIL_BURNIN_STATE="$W/burnin-state"
: >"$VIGIL_BURNIN_STATE"
STANDINS=$top/tests/standins
field() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
# run TEST [PATH] — one pass of that test as node n1; sets json and rc.
run() {
    json=$(PATH="${2:-$STANDINS:$PATH}" "$VIGIL" burnin --node n1 --test "$1" --json)
    rc=$?
}
t() { echo "$json" | field "$1"; }   # an expression on the pass's JSON (T: its one test)
T='d["nodes"][0]["tests"][0]'

# ---- the ROCm Validation Suite ----
run rvs-gst
is "rvs-gst, a clean run: exit 0, unknown (no AMD model to hold it to), the verdicts counted" \
    "$rc $(t "$T[\"result\"], $T[\"detail\"]")" \
    "0 unknown verdicts passed 1.00 ratio; no rvs-pass figure for GPU model '(unknown)' in the thresholds"
for m in gst iet mem pebb pbqt peqt; do
    echo "rvs-fail=$m" >"$VIGIL_BURNIN_STATE"
    run "rvs-$m"
    is "rvs-$m: the module's FALSE fails the test (exit 1) with rvs-fail" "$rc $(t "$T[\"result\"], $T[\"kind\"]")" \
        "1 fail rvs-fail"
done
echo "rvs-fail=gst" >"$VIGIL_BURNIN_STATE"
run rvs-gst
is "rvs-gst failed: RVS's own line in the detail" "$(t "$T[\"detail\"]")" \
    "gst: 2 of 5 verdicts failed: [gst-Tflops-2K2K2K-trig-fp4] [GPU:: 42583] GFLOPS 1063560 Target GFLOPS: 0 met: FALSE"
is "… the event the catalog drains for (AMD: report to the system manufacturer)" \
    "$(t 'd["nodes"][0]["events"][0]["kind"], d["nodes"][0]["events"][0]["action"]')" "rvs-fail drain-rma"
is "… and the drain reason names it" "$(t 'd["nodes"][0]["reason"][:60]')" \
    "vigil: burnin rvs-gst: gst: 2 of 5 verdicts failed: [gst-Tfl"
echo "rvs-fail=iet" >"$VIGIL_BURNIN_STATE"
run rvs-gst
is "another module's failure leaves gst alone" "$(t "$T[\"result\"]")" "unknown"
: >"$VIGIL_BURNIN_STATE"
run rvs-gst /usr/bin:/bin
is "no rvs on PATH: unknown, said so" "$rc $(t "$T[\"result\"], $T[\"detail\"]")" \
    "0 unknown rvs not found on PATH (or --tool rvs=PATH)"
json=$(PATH="$STANDINS:$PATH" "$VIGIL" burnin --node n1 --test rvs-gst --tool rvs="$STANDINS/TransferBench" --json)
is "a tool that prints no RVS output: unknown with the reason" "$(t "$T[\"result\"], $T[\"detail\"]")" \
    "unknown rvs (exit 1): not RVS output (no 'Action name :' line, verdict, summary or RVS error)"

# ---- TransferBench ----
run transferbench-a2a
is "transferbench-a2a: the real MI300X run's average, measured" "$rc $(t "$T[\"result\"], $T[\"value\"]")" \
    "0 unknown 46.552"
echo "xgmi-bw-low=0.5" >"$VIGIL_BURNIN_STATE"
run transferbench-a2a
is "transferbench-a2a with xgmi-bw-low=0.5: half the figure, the slowest link named" \
    "$(t "$T[\"value\"]") $(t "$T[\"detail\"].split(\"; \")[-1]")" "23.276 slowest link GPU 07 -> GPU 00 22.547 GB/s"
run transferbench-p2p
is "transferbench-p2p with xgmi-bw-low=0.5: the GPU->GPU averages halved" \
    "$(t "$T[\"detail\"].split(\";\")[0]"), $(t "$T[\"detail\"].split(\"; \")[2]")" \
    "GPU->GPU unidirectional 24.32 GB/s, bidirectional 23.14 GB/s"
: >"$VIGIL_BURNIN_STATE"

# ---- rccl-tests (same program and format as nccl-tests) ----
echo "vendor=amd" >"$VIGIL_BURNIN_STATE"
run nccl-allreduce
is "rccl-tests on an AMD node: the real MI300X sweep read (no floor for an unknown model: its average reported)" \
    "$(t "$T[\"result\"], $T[\"value\"]")" "unknown 116.669"
: >"$VIGIL_BURNIN_STATE"
done_testing
