#!/bin/sh
# slurm_rpc.sh — slurmctld's load from vigil, counted by slurmctld itself
# (`sdiag`): RPCs per incident by message type, for an XID 79 on a node of a
# running 3-node job (DOWN, requeue, a spare promoted), on a real lab with the
# controller.  In the window nothing else asks slurmctld for anything but the
# bench's own `squeue -j` per run (its REQUEST_PARTITION_INFO taken off;
# its other two message types vigil never sends), the job's own steps (message types vigil
# never sends, not counted) and the slurmds.  The controller's node-state reads
# while a node is out (one every 2 s, reconcile) are shown apart, from its own
# counter.  Baseline in the same run: the RPCs one `scontrol show node` and
# one `squeue` cost (what any Slurm client pays for a read).  Target: <= 3.
cd "$(dirname "$0")/.." || exit 2
[ "$(id -u)" = 0 ] || { echo "slurm_rpc: needs root (the lab)"; exit 0; }
command -v sdiag >/dev/null || { echo "slurm_rpc: sdiag not installed, skipped"; exit 0; }
RUNS=${BENCH_RPC_RUNS:-2}   # a 6-node lab with 2 spares holds two requeues; RPC_DEBUG=1 prints the window
V=$PWD/build/vigil
T=$(mktemp -d /tmp/vigil-bench-rpc-XXXXXX); chmod 755 "$T"
trap '"$V" lab down --dir "$T/lab" >/dev/null 2>&1; rm -rf "$T"' EXIT
eval "$("$V" lab up 6 --spares 2 --dir "$T/lab")" || exit 1
# what vigil's Slurm adapter can send (the bench's `squeue -j` is REQUEST_JOB_INFO_SINGLE and
# REQUEST_FED_INFO, plus one REQUEST_PARTITION_INFO per run, taken off below)
TYPES="REQUEST_NODE_INFO REQUEST_PARTITION_INFO REQUEST_JOB_INFO REQUEST_JOB_REQUEUE REQUEST_UPDATE_NODE
       REQUEST_UPDATE_RESERVATION REQUEST_CREATE_RESERVATION REQUEST_DELETE_RESERVATION REQUEST_RESERVATION_INFO
       REQUEST_KILL_JOB REQUEST_CANCEL_JOB_STEP"
count() { # TYPE → its count in sdiag now, or in FILE ($2) when given
    { if [ -n "$2" ]; then cat "$2"; else sdiag; fi; } | awk -v t="$1" '/by message type/ {on = 1} /by user/ {on = 0} on && $1 == t { sub(/.*count:/, ""); print $1 + 0; f = 1 } END { if (!f) print 0 }'
}
metric() { curl -s -H "Authorization: Bearer $VIGIL_READ_TOKEN" "$VIGIL_CONTROLLER/metrics" | awk -v m="$1" '$1 ~ "^"m {print $2; exit}'; }
# the baseline: one read, as any client makes it
sdiag -r >/dev/null; scontrol show node -o >/dev/null
base_node=$(( $(count REQUEST_NODE_INFO) + $(count REQUEST_PARTITION_INFO) ))
sdiag -r >/dev/null; squeue -h >/dev/null
base_sq=$(( $(count REQUEST_JOB_INFO) + $(count REQUEST_PARTITION_INFO) ))

jid=$(sbatch --parsable --requeue -N3 -p gpu -o /dev/null --wrap 'sleep 3000')
i=0; while [ "$(squeue -h -j "$jid" -o %T)" != RUNNING ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
incidents() { curl -s -H "Authorization: Bearer $VIGIL_READ_TOKEN" "$VIGIL_CONTROLLER/v1/incidents?limit=1000" | jq length; }
r0=$(metric vigil_orchestrator_reconcile_calls_total); c0=$(metric vigil_orchestrator_calls_total); n0=$(incidents)
sdiag -r >/dev/null
done_runs=0
for run in $(seq "$RUNS"); do
    # the bench's one read per run: where the job runs (hostnames are expanded locally)
    first=$(scontrol show hostnames "$(squeue -h -j "$jid" -t RUNNING -o %N)" 2>/dev/null | head -1)
    case "$first" in n*) ;; *) break ;; esac
    "$V" inject xid 79 --node "$first" --lab --dir "$T/lab" >/dev/null 2>&1
    # wait through the controller (HTTP only): the incident isolated and its job requeued
    i=0; while [ "$(incidents)" -le $((n0 + done_runs)) ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    sleep 9   # the requeued job is held cred_expire + 1 s, then runs on the spare
    done_runs=$((done_runs + 1))
done
[ "$done_runs" -gt 0 ] || { echo "slurm_rpc: the job never ran"; exit 1; }
sdiag >"$T/sdiag.txt"   # before anything else asks (the controller's /metrics reads the cluster for its gauges)
[ -n "$RPC_DEBUG" ] && sed -n "/by message type/,/by user/p" "$T/sdiag.txt" >&2
recon=$(( $(metric vigil_orchestrator_reconcile_calls_total) - r0 ))
calls=$(( $(metric vigil_orchestrator_calls_total) - c0 - recon ))
own_part=$done_runs   # the bench's squeue per run
total=0; line=""
for t in $TYPES; do
    c=$(count "$t" "$T/sdiag.txt")
    case $t in
        REQUEST_PARTITION_INFO) c=$((c - own_part - recon)) ;;
        REQUEST_NODE_INFO) c=$((c - recon)) ;;
    esac
    [ "$c" -gt 0 ] || continue
    total=$((total + c))
    line="$line $(echo "$t" | sed 's/^REQUEST_//' | tr 'A-Z' 'a-z')=$(awk -v c="$c" -v r="$done_runs" 'BEGIN { printf "%.1f", c / r }')"
done
awk -v t="$total" -v r="$done_runs" -v k="$calls" -v l="$line" -v rc="$recon" -v bn="$base_node" -v bs="$base_sq" 'BEGIN {
    printf "slurmctld RPCs per incident (sdiag, %d XID 79 runs): %.1f (target <= 3) from %.1f Slurm commands:%s\n", r, t / r, k / r, l
    printf "  plus %d node-state reads while the nodes were out (%d RPCs each)\n", rc, bn
    printf "baseline, the same run: one scontrol show node = %d RPCs, one squeue = %d RPCs\n", bn, bs }'
