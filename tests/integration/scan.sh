#!/bin/sh
# scan.sh — `vigil scan` end to end: exit codes, --json lines, --summary,
# --policy overrides and bad input (exit 2 naming the file/line).
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.." || exit 2
F=tests/fixtures/logs
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

exits_with "reset-gpu or worse -> exit 1" 1 "$VIGIL" scan "$F/gpud-dmesg-with-xid-119.log"
exits_with "noise only -> exit 0" 0 "$VIGIL" scan "$F/gpud-kmsg.1.log"
exits_with "restart-app only -> exit 0" 0 "$VIGIL" scan --year 2024 "$F/syslog-old.log"
exits_with "unreadable file -> exit 2" 2 "$VIGIL" scan "$tmp/missing.log"
exits_with "bad option -> exit 2" 2 "$VIGIL" scan --bogus "$F/sxid.log"
exits_with "bad --window -> exit 2" 2 "$VIGIL" scan --window x "$F/sxid.log"

"$VIGIL" scan --json "$F/gpud-dmesg-with-xid-119.log" >"$tmp/out.json" 2>"$tmp/err"
is "json: 3 incidents (5 Xid 119; repeats within 60 s folded)" "$(wc -l <"$tmp/out.json" | tr -d ' ')" 3
is "json: fields" "$(head -1 "$tmp/out.json" | jq -c '[.time,.pci,.gpu,.code,.kind,.action,.count,.first,.last,.source]')" \
   '["2025-02-23T16:24:18.000Z","0000:9b:00.0",4,119,"xid","reset-gpu",3,"2025-02-23T16:24:18.000Z","2025-02-23T16:24:30.000Z","kmsg"]'
is "json: raw is the source line" "$(head -1 "$tmp/out.json" | jq -r .raw)" "$(sed -n 3p "$F/gpud-dmesg-with-xid-119.log")"
is "stderr: lines/events/malformed" "$(tail -1 "$tmp/err")" "43 lines, 5 events, 0 malformed lines skipped"

# dmesg -H of a fatal PCIe error that needs a reboot: read, not "malformed"
"$VIGIL" scan --json "$F/aer-reltime-returnn.log" >"$tmp/rel.json" 2>"$tmp/err"; rc=$?
is "dmesg -H fatal AER: exit 1" "$rc" 1
is "dmesg -H fatal AER: one incident, reboot, on the root port" "$(jq -c '[.kind,.action,.pci]' "$tmp/rel.json")" \
   '["aer-fatal","reboot","0000:00:03.0"]'
is "dmesg -H: nothing malformed" "$(tail -1 "$tmp/err")" "12 lines, 1 events, 0 malformed lines skipped"

"$VIGIL" scan --json --window 600 "$F/gpud-dmesg-with-xid-119.log" >"$tmp/w600.json" 2>/dev/null
is "--window 600: one incident of 5" "$(jq -c '[.count,.last]' "$tmp/w600.json")" '[5,"2025-02-23T16:30:13.000Z"]'
"$VIGIL" scan --json --window 1 "$F/gpud-dmesg-with-xid-119.log" >"$tmp/w1.json" 2>/dev/null
is "--window 1: no folding" "$(wc -l <"$tmp/w1.json" | tr -d ' ')" 5

cat "$F/sxid.log" "$F/fallen-off-bus.log" | "$VIGIL" scan --json --summary --year 2024 - >"$tmp/sum.json" 2>/dev/null
is "summary: one line per PCI device" "$(wc -l <"$tmp/sum.json" | tr -d ' ')" 4
is "summary: worst verdict of the switch" "$(jq -r 'select(.pci=="0000:06:00.0") | .action' "$tmp/sum.json")" reboot
is "summary: non-fatal SXid" "$(jq -r 'select(.pci=="0000:05:00.0") | .action' "$tmp/sum.json")" ignore
"$VIGIL" scan --summary --year 2024 "$F/fallen-off-bus.log" >"$tmp/sum.txt" 2>/dev/null
check "summary table has a header and 3 GPUs" test "$(grep -c '^-' "$tmp/sum.txt")" = 3

printf 'kind sxid-fatal action=ignore\nxid 79 action=ignore\nkind fallen-off-bus action=restart-app\n' >"$tmp/policy.tsv"
exits_with "policy lowers every verdict -> exit 0" 0 "$VIGIL" scan --policy "$tmp/policy.tsv" "$F/sxid.log" "$F/fallen-off-bus.log"
printf 'xid 63 action=ignore\nxid 64 action=sometimes\n' >"$tmp/bad.tsv"
"$VIGIL" scan --policy "$tmp/bad.tsv" "$F/sxid.log" >/dev/null 2>"$tmp/err"; rc=$?
is "malformed policy -> exit 2" "$rc" 2
check "malformed policy names file:line" grep -q "bad.tsv:2: unknown action 'sometimes'" "$tmp/err"

mkdir -p "$tmp/root/dev" "$tmp/root/proc"
cp "$F/kmsg-records.log" "$tmp/root/dev/kmsg"
printf 'cpu 1 2 3\nbtime 1732492800\n' >"$tmp/root/proc/stat"
"$VIGIL" scan --json --root "$tmp/root" >"$tmp/live.json" 2>/dev/null
is "--root: /dev/kmsg with btime from /proc/stat" "$(jq -r 'select(.code==43) | .time' "$tmp/live.json")" "2024-11-25T00:00:05.000Z"
"$VIGIL" scan --json --node gpu-7 "$F/sxid.log" >"$tmp/node.json" 2>/dev/null
is "--node sets node" "$(jq -r .node "$tmp/node.json" | sort -u)" gpu-7
done_testing
