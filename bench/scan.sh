#!/bin/sh
# scan.sh — `vigil scan --json` (full parse + classification + dedup) on a
# synthetic 1 GB kernel log, side by side with `grep -c 'NVRM: Xid'` on the
# same file in the same run; prints MB/s of both, the ratio (target >= 0.5)
# and vigil's peak RSS (flat: compared with a 64 MB log's).
cd "$(dirname "$0")/.." || exit 2
mkdir -p build/bench
MB=${SCAN_BENCH_MB:-1024}
log=build/bench/kmsg-${MB}m.log small=build/bench/kmsg-64m.log
cc -O2 -o build/bench/gen_kmsg bench/gen_kmsg.c || exit 1
[ -s "$log" ] || build/bench/gen_kmsg "$MB" >"$log" || exit 1
[ -s "$small" ] || build/bench/gen_kmsg 64 >"$small" || exit 1
bytes=$(wc -c <"$log")
now() { date +%s.%N; }
cat "$log" >/dev/null # warm the page cache for both
t0=$(now); grep -c 'NVRM: Xid' "$log" >build/bench/grep.count; t1=$(now)
VIGIL_DATA=data /usr/bin/time -f '%M' -o build/bench/rss build/vigil scan --json "$log" >build/bench/scan.out 2>build/bench/scan.err
t2=$(now)
VIGIL_DATA=data /usr/bin/time -f '%M' -o build/bench/rss-small build/vigil scan --json "$small" >/dev/null 2>&1
awk -v b="$bytes" -v t0="$t0" -v t1="$t1" -v t2="$t2" -v rss="$(tail -1 build/bench/rss)" \
    -v rs="$(tail -1 build/bench/rss-small)" -v n="$(cat build/bench/grep.count)" -v s="$(tail -1 build/bench/scan.err)" 'BEGIN {
    g = b / 1048576 / (t1 - t0); v = b / 1048576 / (t2 - t1)
    printf "log: %.0f MB, %d Xid lines (grep); vigil: %s\n", b / 1048576, n, s
    printf "grep -c:          %8.0f MB/s\n", g
    printf "vigil scan --json: %7.0f MB/s   ratio %.2fx grep (target >= 0.5x)\n", v, v / g
    printf "vigil peak RSS:   %8.1f MB on %.0f MB, %.1f MB on 64 MB (flat: ratio %.2f)\n", rss / 1024, b / 1048576, rs / 1024, rss / rs
}'
