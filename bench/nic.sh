#!/bin/sh
# nic.sh — the faults between the GPUs on a real local Slurm cluster (`vigil
# lab --nvl72`: agents with the fake NVML and the fake verbs library, their
# NIC probe every 2 s with a 1 s deadline):
#   a wedged NIC (nic-hung, BENCH_NIC_RUNS, default 10) in a 2-node job:
#     detected (goal: median <= 3 s), isolated, job running again (goal
#     <= 10 s), side by side with an XID 79 on the same lab (the kernel-log
#     path, BENCH_NIC_XID_RUNS, default 4: one per GPU of the victim);
#   link flaps: one flap on every node (goal: 0 drains), then a node's third
#     flap within 3 h (drained; the time from the flap to the drain);
#   the full-size NVL72 shape (BENCH_NVL72=0 skips it): 36 nodes, a rack of 18
#     trays and a spare rack of 18, 4 GPUs each: the lab's start, the racks'
#     domains learned from the fabric, 3 trays hung at once (the rack out by
#     the domain rule, the spare rack promoted, the job running again) and
#     the rack's SLA time down in `vigil report --controller`.
cd "$(dirname "$0")/.." || exit 2
[ "$(id -u)" = 0 ] || { echo "nic: needs root (the lab)"; exit 0; }
command -v slurmctld >/dev/null 2>&1 || { echo "nic: needs Debian's slurmctld/slurmd/munge"; exit 0; }
RUNS=${BENCH_NIC_RUNS:-10} XRUNS=${BENCH_NIC_XID_RUNS:-4}
V=$PWD/build/vigil
T=$(mktemp -d /tmp/vigil-bench-nic-XXXXXX); chmod 755 "$T"
trap '"$V" lab down --dir "$T/lab" >/dev/null 2>&1; "$V" lab down --dir "$T/lab36" >/dev/null 2>&1; rm -rf "$T"' EXIT
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
stat() { # file stage → "median p99" (nearest rank over the runs; "never" when missing)
    jq -r --arg s "$2" '[.runs[] | .[$s].after_s] as $v | ($v | map(select(. != null)) | sort) as $ok |
        if ($ok | length) < ($v | length) or ($v | length) == 0 then "never never" else
        "\($ok[(($ok | length) * 0.5 | ceil) - 1]) \($ok[(($ok | length) * 0.99 | ceil) - 1])" end' "$1"
}
eval "$("$V" lab up 8 --spares 4 --gpus-per-node 4 --nvl72 --rack-size 4 --dir "$T/lab" 2>/dev/null)" || exit 1
RH="Authorization: Bearer $VIGIL_READ_TOKEN"
"$V" drill --lab --dir "$T/lab" --nodes 2 --runs "$RUNS" --fault nic-hung --deadline 60 --save "$T/hung.json" >/dev/null 2>&1
"$V" drill --lab --dir "$T/lab" --nodes 2 --runs "$XRUNS" --fault xid:79 --deadline 60 --save "$T/xid.json" >/dev/null 2>&1

# one flap on every node, two probe periods for the agents to read it
for i in 1 2 3 4 5 6 7 8; do "$V" inject link-flap --node n$i --lab --dir "$T/lab" >/dev/null; done
sleep 5
flaps=$(curl -s -H "$RH" "$VIGIL_CONTROLLER/v1/incidents?limit=200" | jq '[.[] | select(.kind == "link-flap")] | length')
drains=$(sinfo -h -N -o '%N %E' | grep -c 'vigil: link-flapping')
# two more on n5, one period apart: the third within 3 h drains
"$V" inject link-flap --node n5 --lab --dir "$T/lab" >/dev/null
sleep 3
t3=$(now)
"$V" inject link-flap --node n5 --lab --dir "$T/lab" >/dev/null
i=0
until scontrol show node -o n5 | grep -q 'State=[A-Z+]*DRAIN.*Reason=vigil: link-flapping'; do
    i=$((i + 1)); [ $i -gt 150 ] && break; sleep 0.1
done
tdrain=$(now)
[ $i -gt 150 ] && third="never (15 s)" || third="$(secs "$t3" "$tdrain") s"
"$V" lab down --dir "$T/lab" >/dev/null

printf 'nic: a wedged NIC (nic-hung), %s runs, and %s XID 79 runs on the same lab (2-node job, 4 GPUs a node)\n' "$RUNS" "$XRUNS"
printf '%-10s %-20s %-16s %s\n' "seconds" "nic-hung" "goal" "XID 79 (kernel log)"
printf '%-10s %-20s %-16s %s\n' "" "(median p99)" "" "(median p99)"
for s in detect isolate restart resume; do
    case $s in detect) g="median <= 3 s";; restart) g="<= 10 s";; *) g="-";; esac
    printf '%-10s %-20s %-16s %s\n' "$s" "$(stat "$T/hung.json" $s)" "$g" "$(stat "$T/xid.json" $s)"
done
hd=$(stat "$T/hung.json" detect | cut -d' ' -f1) xd=$(stat "$T/xid.json" detect | cut -d' ' -f1)
hr=$(stat "$T/hung.json" restart | cut -d' ' -f1) xr=$(stat "$T/xid.json" restart | cut -d' ' -f1)
awk -v hd="$hd" -v xd="$xd" -v hr="$hr" -v xr="$xr" 'BEGIN { if (hd + 0 > 0 && xd + 0 > 0 && hr + 0 > 0 && xr + 0 > 0)
    printf "nic-hung against XID 79: detected %.2f s later (a probe period and its deadline against a log line); running again: ratio %.2f\n", hd - xd, hr / xr }'
jq -r '.runs[] | select(.message != null) | "nic-hung run \(.run): \(.message)"' "$T/hung.json" 2>/dev/null
echo "link flaps: one on each of 8 nodes: $flaps link-flap incidents recorded, $drains drained (goal 0); the third within 3 h on n5: drained after $third"

[ "${BENCH_NVL72:-1}" = 0 ] && exit 0
t0=$(now)
eval "$("$V" lab up 36 --spares 18 --gpus-per-node 4 --nvl72 --dir "$T/lab36" 2>/dev/null)" || exit 1
t1=$(now)
RH="Authorization: Bearer $VIGIL_READ_TOKEN"
i=0
until [ "$(curl -s -H "$RH" "$VIGIL_CONTROLLER/v1/nodes" | jq '[.[] | select(.domain != null)] | length')" = 36 ]; do
    i=$((i + 1)); [ $i -gt 300 ] && break; sleep 0.1
done
t2=$(now)
sleep 3   # a few periods of 36 agents' probes: the load the drill runs under
load=$(cut -d' ' -f1 /proc/loadavg)
"$V" drill --lab --dir "$T/lab36" --nodes 18 --victims 3 --gpus-per-node 0 --fault nic-hung --deadline 60 \
    --save "$T/rack.json" >/dev/null 2>&1
"$V" report --controller "$VIGIL_CONTROLLER" --json >"$T/report.json" 2>/dev/null
R1=$(jq -r '.runs[0].controller_view.domain.name // "?"' "$T/rack.json")
echo
echo "NVL72: 36 nodes (a rack of 18 trays, a spare rack of 18), 4 GPUs each, one agent each"
echo "lab up: $(secs "$t0" "$t1") s; every node's NVLink domain learned from the fabric $(secs "$t1" "$t2") s later; load $load on $(nproc) cores"
jq -r '.runs[0] | "3 trays hung at once (\(.victims | join(", "))): detected \(.detect.after_s) s, isolated \(.isolate.after_s) s; the rack counted down: \(.controller_view.domain.out) of \(.controller_view.domain.nodes) out; job (18 nodes, one rank each) running again \(.restart.after_s) s on \(.restart.nodes)\(if .restart.spare then " (spares)" else "" end)",
    (.controller_view.incidents[] | select(.state | test("domain rule")) | "  \(.node): \(.state)")' "$T/rack.json"
jq -r --arg r "$R1" '.racks[] | select(.rack == $r) | "rack SLA (vigil report --controller): \(.rack) down \(.sla_down_s) s (more than domain_max_unavailable out)"' "$T/report.json"
echo "the whole NVL72 bench (lab up to here): $(secs "$t0" "$(now)") s"
