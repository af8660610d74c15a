#!/bin/sh
# agent.sh — `vigil agent` idle cost and detection latency, each side by side
# with a baseline measured in the same run:
#  - RSS (VmRSS, VmHWM) and CPU (utime+stime) of the agent over IDLE seconds
#    before it has had anything to report, and its RSS after 20 deliveries
#    (default 60) next to `tail -F` following the same kernel-log file
#    (targets: < 8 MB, < 0.1 % of a core); and the floor under the agent's
#    RSS: a program that only loads and initialises libcurl as the agent does
#    (bench/curl_floor.c);
#  - kernel-log line → POST acknowledged by `vigil serve` over 20 lines
#    (median, p99), next to the time `tail -F` takes to show the same line.
# Both are measured by polling files every ~1 ms from this script, so they are
# upper bounds.  The agent runs with the fake NVML library when it is built.
# The controller hears only from nodes its scheduler lists: a one-node lab
# whose slurm.conf also lists the agent's node b1 (as root).
cd "$(dirname "$0")/.." || exit 2
IDLE=${BENCH_AGENT_IDLE_S:-60}
T=$(mktemp -d /tmp/vigil-bench-agent-XXXXXX)
V=build/vigil
export VIGIL_DATA=data
[ -r build/tests/libnvidia-ml.so.1 ] && export VIGIL_NVML_LIB=$PWD/build/tests/libnvidia-ml.so.1 FAKE_NVML_STATE=$T/nvml
PIDS=
trap 'kill $PIDS 2>/dev/null; wait 2>/dev/null; $V lab down --dir "$T/lab" >/dev/null 2>&1; rm -rf "$T"' EXIT
[ "$(id -u)" = 0 ] || { echo "agent: needs root (the lab is the controller's scheduler)"; exit 0; }
chmod 755 "$T"
eval "$($V lab up 1 --no-vigil --dir "$T/lab" --conf-extra "NodeName=b1 NodeAddr=127.0.0.1 CPUs=1 RealMemory=100")" ||
    { echo "agent: the lab (the scheduler) did not come up"; exit 1; }
: >"$T/kmsg"
$V serve --listen 127.0.0.1:0 --port-file "$T/port" --db "$T/db" --auth none --dry-run 2>"$T/serve.log" &
PIDS="$PIDS $!"
while [ ! -s "$T/port" ]; do sleep 0.02; done
$V agent --node b1 --kmsg "$T/kmsg" --controller "http://127.0.0.1:$(cat "$T/port")" --auth none \
    --spool "$T/spool" 2>"$T/agent.log" &
AGENT=$!
tail -F "$T/kmsg" >"$T/tail.out" 2>/dev/null &
TAIL=$!
mkdir -p build/bench && cc -std=c11 -O2 -o build/bench/curl_floor bench/curl_floor.c -ldl || exit 1
build/bench/curl_floor &
FLOOR=$!
PIDS="$PIDS $AGENT $TAIL $FLOOR"
sleep 2   # past start-up and the first periodic check
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
pss() { awk '$1 == "Pss:" { print $2 }' "/proc/$1/smaps_rollup"; }
a0=$(ticks $AGENT) t0=$(ticks $TAIL)
sleep "$IDLE"
a1=$(ticks $AGENT) t1=$(ticks $TAIL)
hz=$(getconf CLK_TCK)
awk -v s="$IDLE" -v hz="$hz" -v ac=$((a1 - a0)) -v tc=$((t1 - t0)) -v ar="$(kb $AGENT VmRSS)" \
    -v ah="$(kb $AGENT VmHWM)" -v tr="$(kb $TAIL VmRSS)" -v th="$(kb $TAIL VmHWM)" -v aa="$(kb $AGENT RssAnon)" \
    -v ta="$(kb $TAIL RssAnon)" -v ap="$(pss $AGENT)" -v tp="$(pss $TAIL)" 'BEGIN {
    printf "idle %d s            RSS MB  peak MB  anon MB  PSS MB   CPU %% of a core\n", s
    printf "vigil agent         %6.1f  %7.1f  %7.1f  %6.1f   %.3f\n", ar / 1024, ah / 1024, aa / 1024, ap / 1024, 100 * ac / hz / s
    printf "tail -F (baseline)  %6.1f  %7.1f  %7.1f  %6.1f   %.3f\n", tr / 1024, th / 1024, ta / 1024, tp / 1024, 100 * tc / hz / s
    printf "ratio agent/tail    %6.2f  %7.2f  %7.2f  %6.2f   (targets: < 8 MB, < 0.1 %%)\n", ar / tr, ah / th, aa / ta, ap / tp
}'
awk -v ar="$(kb $AGENT VmRSS)" -v fr="$(kb $FLOOR VmRSS)" -v fa="$(kb $FLOOR RssAnon)" 'BEGIN {
    printf "floor: libcurl loaded and initialised, nothing else (bench/curl_floor.c): RSS %.1f MB (anon %.1f MB); the agent above it: %.1f MB, ratio agent/floor %.2f\n", fr / 1024, fa / 1024, (ar - fr) / 1024, ar / fr }'
# Latency: 20 lines, each on another GPU (no folding).
now() { date +%s%N; }
: >"$T/lat"
for i in $(seq 1 20); do
    bus=$(printf '%02x' $((i + 16)))
    s=$(now)
    printf '6,%d,1000,-;NVRM: Xid (PCI:0000:%s:00): 79, pid=1, name=bench, GPU has fallen off the bus.\n' "$i" "$bus" >>"$T/kmsg"
    until grep -q "message $i delivered" "$T/agent.log"; do :; done
    a=$(now)
    until grep -q "PCI:0000:$bus:00" "$T/tail.out"; do :; done
    b=$(now)
    echo "$(( (a - s) / 1000 )) $(( (b - s) / 1000 ))" >>"$T/lat"
    sleep 0.2
done
sort -n -k1 "$T/lat" | awk '{ a[NR] = $1 } END { printf "line -> POST acknowledged (agent): median %.1f ms, p99 %.1f ms\n", a[int((NR + 1) / 2)] / 1000, a[NR] / 1000; m = a[int((NR + 1) / 2)] } END { print m > "/dev/stderr" }' 2>"$T/am"
sort -n -k2 "$T/lat" | awk '{ a[NR] = $2 } END { printf "line -> shown by tail -F (baseline): median %.1f ms, p99 %.1f ms\n", a[int((NR + 1) / 2)] / 1000, a[NR] / 1000; print a[int((NR + 1) / 2)] > "/dev/stderr" }' 2>"$T/tm"
awk -v a="$(cat "$T/am")" -v t="$(cat "$T/tm")" 'BEGIN { printf "ratio agent/tail (median): %.1fx (target: well under 1 s)\n", a / t }'
# After delivering: libcurl (and its TLS and Kerberos libraries) is loaded on
# the first message, so the resident size of an agent that has reported goes up.
awk -v ar="$(kb $AGENT VmRSS)" -v aa="$(kb $AGENT RssAnon)" -v tr="$(kb $TAIL VmRSS)" 'BEGIN {
    printf "after 20 deliveries: agent RSS %.1f MB (anon %.1f MB), tail -F %.1f MB, ratio %.2f\n", ar / 1024, aa / 1024, tr / 1024, ar / tr }'
