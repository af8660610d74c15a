#!/bin/sh
# serve.sh — `vigil serve` intake under load, each figure side by side with a
# baseline measured in the same run, on the same server:
#  - agent messages acknowledged (HTTP 202, every acknowledgement durable:
#    group commit, one fsync per batch) by 200 concurrent keep-alive
#    connections for SECONDS (default 10): events/s and p99 latency (targets
#    >= 5,000/s, p99 < 50 ms), next to GET /healthz under the same load;
#  - messages per commit (what group commit saves in fsyncs);
#  - intake in a second run by the same nodes, their nonce windows in use,
#    as a ratio to the first (a linear scan of the old global nonce cache
#    made this fall 15-fold);
#  - RSS with 1,000 slow clients (one header byte a second) connected (target
#    < 64 MB), next to the RSS of the idle server.
#  - 1,000 agents (per-client cap raised, as if from 1,000 addresses), each
#    sending 5 messages a second on a schedule (open loop, as agents send:
#    5,000 events/s offered; latency counted from when each message was
#    due): acknowledged events/s and p99 (targets >= 5,000/s, < 50 ms), on a
#    fresh store (every node's first message opens an incident) and in the
#    10 s after it; then the same 1,000 posting back to back (closed loop:
#    the intake's saturation, where p99 is the queue 1,000 clients make,
#    N / throughput by Little's law); the controller's peak RSS (target
#    <= 50 MB).  Then the same open-loop 1,000 agents with MUNGE instead of
#    the token (as root, with a private munged): every message a credential
#    minted by munged and decoded by the controller through it; and once more
#    with every credential minted before the run, as agents mint theirs on
#    their own nodes, so only the controller's decode is on this machine.
# Every node posts with its own token (derived from the cluster secret) or
# its own MUNGE credential; the scheduler is a one-node lab whose slurm.conf
# also lists the 1,000 bench nodes (the controller hears only from those).
# The load client is build/tests/httpload (plain sockets, one thread per connection).
cd "$(dirname "$0")/.." || exit 2
S=${BENCH_SERVE_S:-10}
T=$(mktemp -d /tmp/vigil-bench-serve-XXXXXX)
V=build/vigil L=build/tests/httpload
export VIGIL_DATA=data
[ -x "$L" ] || { echo "serve: build/tests/httpload missing (make bench builds it)"; exit 1; }
PID=
trap 'kill $PID 2>/dev/null; wait 2>/dev/null; $V lab down --dir "$T/lab" >/dev/null 2>&1; rm -rf "$T"' EXIT
chmod 755 "$T"
eval "$($V lab up 1 --no-vigil --dir "$T/lab" --conf-extra "NodeName=bench[0-999] NodeAddr=127.0.0.1 CPUs=1 RealMemory=100")" ||
    { echo "serve: the lab (the scheduler) did not come up"; exit 1; }
umask 077
$V token --new-secret "$T/secret" || exit 1
echo "read-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')" >"$T/read"
umask 022
AUTH="secret:$T/secret"
$V serve --listen 127.0.0.1:0 --port-file "$T/port" --db "$T/db" --auth token --secret-file "$T/secret" \
    --read-token-file "$T/read" --dry-run 2>"$T/serve.log" &
PID=$!
while [ ! -s "$T/port" ]; do sleep 0.02; done
P=$(cat "$T/port")
field() { sed -n "s/.*$2=\([0-9.]*\).*/\1/p" "$1"; }
metric() { curl -s -H "Authorization: Bearer $(cat "$T/read")" "http://127.0.0.1:$P/metrics" | sed -n "s/^$1 //p"; }
rss() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$PID/status"; }
rss_idle=$(rss)
$L slow "$P" 1000 8 40 >"$T/slow" &
SL=$!
peak=0
for i in 1 2 3 4 5 6; do sleep 1; r=$(rss); [ "${r:-0}" -gt $peak ] && peak=$r; done
wait $SL
$L get "$P" 200 "$S" /healthz 20 >"$T/base"
$L post "$P" 200 "$S" 1 "$AUTH" 20 >"$T/load1"
m1=$(metric vigil_store_messages_total) c1=$(metric vigil_store_commits_total)
$L post "$P" 200 "$S" 1 "$AUTH" 20 >"$T/load2"
$L post "$P" 200 "$S" 10 "$AUTH" 20 >"$T/load10"
rss_load=$(rss)
printf 'serve: %s s per run, 200 connections, token auth, durable 202s (group commit)\n' "$S"
printf '%-46s %-14s %-10s %-16s %s\n' "" "figure" "p99 ms" "target" "baseline: GET /healthz, same load"
printf '%-46s %-14s %-10s %-16s %s/s, p99 %s ms\n' "events acknowledged/s (1 event per message)" \
    "$(field "$T/load1" events_per_s)" "$(field "$T/load1" p99_ms)" ">= 5000, < 50" "$(field "$T/base" ok_per_s)" "$(field "$T/base" p99_ms)"
printf '%-46s %-14s %-10s %-16s\n' "events acknowledged/s (10 events per message)" \
    "$(field "$T/load10" events_per_s)" "$(field "$T/load10" p99_ms)" "-"
printf '%-46s %-14s %-10s %-16s idle: %s kB\n' "RSS with 1,000 slow clients (kB, peak)" "$peak" "-" "< 65536" "$rss_idle"
printf '%-46s %-14s\n' "RSS after the load runs (kB)" "$rss_load"
awk -v e1="$(field "$T/load1" ok_per_s)" -v e2="$(field "$T/load2" ok_per_s)" -v b="$(field "$T/base" ok_per_s)" \
    -v p1="$(field "$T/load1" p99_ms)" -v pb="$(field "$T/base" p99_ms)" -v m="$m1" -v c="$c1" -v r="$peak" -v ri="$rss_idle" 'BEGIN {
    printf "ratio: acknowledged messages/s / GET /healthz/s = %.2f; p99 POST / p99 GET = %.1f\n", e1 / b, p1 / (pb > 0 ? pb : 0.01)
    printf "ratio: messages per commit (fsync) = %.1f\n", (c > 0 ? m / c : 0)
    printf "ratio: intake in the second run (the same nodes, their nonce windows in use) / first = %.2f\n", e2 / e1
    printf "ratio: RSS with 1,000 slow clients / idle = %.2f\n", r / ri }'

# 1,000 agents at once (one connection each: the per-client cap raised, as
# when they come from 1,000 addresses): acknowledged events/s, p99, peak RSS
kill $PID 2>/dev/null; wait $PID 2>/dev/null
rm -f "$T/port" "$T/db"*
$V serve --listen 127.0.0.1:0 --port-file "$T/port" --db "$T/db" --auth token --secret-file "$T/secret" \
    --read-token-file "$T/read" --dry-run --max-per-client 1100 --max-connections 1100 2>>"$T/serve.log" &
PID=$!
while [ ! -s "$T/port" ]; do sleep 0.02; done
P=$(cat "$T/port")
peak1000=0
watch_rss() { while kill -0 "$1" 2>/dev/null; do r=$(rss); [ "${r:-0}" -gt $peak1000 ] && peak1000=$r; sleep 0.5; done; }
$L post "$P" 1000 "$S" 1 "$AUTH" 1000 5 >"$T/open1" & watch_rss $!
$L post "$P" 1000 "$S" 1 "$AUTH" 1000 5 >"$T/open2" & watch_rss $!
$L post "$P" 1000 "$S" 1 "$AUTH" 1000 >"$T/load1000" & watch_rss $!
printf '%-46s %-14s %-10s %-16s\n' "1,000 agents x 5 msg/s, fresh store: ack/s" "$(field "$T/open1" events_per_s)" \
    "$(field "$T/open1" p99_ms)" ">= 5000, < 50"
printf '%-46s %-14s %-10s %-16s\n' "1,000 agents x 5 msg/s, the next $S s: ack/s" "$(field "$T/open2" events_per_s)" \
    "$(field "$T/open2" p99_ms)" ">= 5000, < 50"
printf '%-46s %-14s %-10s %-16s\n' "1,000 agents back to back (saturation): ack/s" "$(field "$T/load1000" events_per_s)" \
    "$(field "$T/load1000" p99_ms)" "(queue of 1,000)"
printf '%-46s %-14s %-10s %-16s\n' "1,000 agents: controller RSS (kB, peak)" "$peak1000" "-" "<= 51200"

# the same 1,000 agents with MUNGE (a private munged; needs root for its key)
if [ "$(id -u)" = 0 ] && command -v munged >/dev/null; then
    kill $PID 2>/dev/null; wait $PID 2>/dev/null
    M=$T/munge; mkdir -p "$M"; chmod 755 "$T" "$M"
    dd if=/dev/urandom of="$M/key" bs=1024 count=1 2>/dev/null; chmod 400 "$M/key"
    munged -F --socket="$M/sock" --key-file="$M/key" --pid-file="$M/pid" --log-file="$M/log" --seed-file="$M/seed" \
        --origin=127.0.0.1 2>/dev/null &   # the bench nodes' NodeAddr
    MP=$!
    i=0; while [ ! -S "$M/sock" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
    rm -f "$T/port" "$T/db"*
    $V serve --listen 127.0.0.1:0 --port-file "$T/port" --db "$T/db" --auth munge --munge-socket "$M/sock" \
        --dry-run --max-per-client 1100 --max-connections 1100 2>>"$T/serve.log" &
    PID=$!
    while [ ! -s "$T/port" ]; do sleep 0.02; done
    P=$(cat "$T/port")
    $L post "$P" 1000 "$S" 1 "munge:$M/sock" 1000 5 >"$T/munge1"
    $L post "$P" 1000 "$S" 1 "munge:$M/sock" 1000 5 >"$T/munge2"
    # each agent mints on its own node: minted before the run, the controller's decode alone
    $L post "$P" 1000 "$S" 1 "munge-pre:$M/sock" 1000 5 >"$T/munge3"
    kill $MP 2>/dev/null
    printf '%-46s %-14s %-10s %-16s\n' "MUNGE, 1,000 x 5 msg/s, fresh store: ack/s" "$(field "$T/munge1" events_per_s)" \
        "$(field "$T/munge1" p99_ms)" ">= 5000, < 50"
    printf '%-46s %-14s %-10s %-16s\n' "MUNGE, 1,000 x 5 msg/s, the next $S s: ack/s" "$(field "$T/munge2" events_per_s)" \
        "$(field "$T/munge2" p99_ms)" ">= 5000, < 50"
    printf '%-46s %-14s %-10s %-16s\n' "MUNGE, credentials minted before the run: ack/s" "$(field "$T/munge3" events_per_s)" \
        "$(field "$T/munge3" p99_ms)" ">= 5000, < 50"
else
    echo "serve: MUNGE intake skipped (needs root and munged)"
fi
