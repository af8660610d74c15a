#!/bin/sh
# slurm_rpc.sh — slurmctld's load from vigil, counted by slurmctld itself
# (`sdiag`): RPCs per incident by message type, for an XID 79 on a node of a
# running 3-node job (the cluster view, DOWN, the jobs the DOWN left listed,
# a spare promoted; a requeue only for a job it left), on a real lab with the
# controller, twice in the same run: with the default policy (the cluster read
# for every batch of incidents) and with `view_max_age = 30s` (the view kept).
# In the window nothing else asks slurmctld for anything but the bench's own
# `squeue -j` calls (their REQUEST_PARTITION_INFO taken off; their other two
# message types vigil never sends), the job's own steps (message types vigil
# never sends, not counted) and the slurmds.  The controller's periodic reads
# of every node's state (every 2 s while a node is out; every 15 s with the
# kept view) are shown apart, from its own counter.  Baseline in the same
# run: the RPCs one `scontrol show node` and one `squeue` cost (what any
# Slurm client pays for a read).  Target: <= 3.
cd "$(dirname "$0")/.." || exit 2
[ "$(id -u)" = 0 ] || { echo "slurm_rpc: needs root (the lab)"; exit 0; }
command -v sdiag >/dev/null || { echo "slurm_rpc: sdiag not installed, skipped"; exit 0; }
RUNS=${BENCH_RPC_RUNS:-2}   # a 6-node lab with 2 spares holds two requeues; RPC_DEBUG=1 prints the window
V=$PWD/build/vigil
T=$(mktemp -d /tmp/vigil-bench-rpc-XXXXXX); chmod 755 "$T"
trap '"$V" lab down --dir "$T/lab" >/dev/null 2>&1; rm -rf "$T"' EXIT
# what vigil's Slurm adapter can send (the bench's `squeue -j` is REQUEST_JOB_INFO_SINGLE and
# REQUEST_FED_INFO, plus one REQUEST_PARTITION_INFO per call, taken off below)
TYPES="REQUEST_NODE_INFO REQUEST_PARTITION_INFO REQUEST_JOB_INFO REQUEST_JOB_REQUEUE REQUEST_UPDATE_NODE
       REQUEST_UPDATE_RESERVATION REQUEST_CREATE_RESERVATION REQUEST_DELETE_RESERVATION REQUEST_RESERVATION_INFO
       REQUEST_KILL_JOB REQUEST_CANCEL_JOB_STEP"
count() { # TYPE → its count in sdiag now, or in FILE ($2) when given
    { if [ -n "$2" ]; then cat "$2"; else sdiag; fi; } | awk -v t="$1" '/by message type/ {on = 1} /by user/ {on = 0} on && $1 == t { sub(/.*count:/, ""); print $1 + 0; f = 1 } END { if (!f) print 0 }'
}
metric() { curl -s -H "Authorization: Bearer $VIGIL_READ_TOKEN" "$VIGIL_CONTROLLER/metrics" | awk -v m="$1" '$1 ~ "^"m {print $2; exit}'; }
incidents() { curl -s -H "Authorization: Bearer $VIGIL_READ_TOKEN" "$VIGIL_CONTROLLER/v1/incidents?limit=1000" | jq length; }
latest_state() { curl -s -H "Authorization: Bearer $VIGIL_READ_TOKEN" "$VIGIL_CONTROLLER/v1/incidents?limit=1" | jq -r '.[0].state'; }
where() { # the bench's own read: the job's nodes when it runs (each call counted, taken off below)
    echo >>"$T/own"; squeue -h -j "$jid" -t RUNNING -o %N
}

# measure LABEL [--policy-extra LINE]: one lab, RUNS incidents, one line
measure() {
    label=$1; shift
    eval "$("$V" lab up 6 --spares 2 --dir "$T/lab" "$@")" || exit 1
    if [ -z "$base_node" ]; then   # the baseline: one read, as any client makes it
        sdiag -r >/dev/null; scontrol show node -o >/dev/null
        base_node=$(( $(count REQUEST_NODE_INFO) + $(count REQUEST_PARTITION_INFO) ))
        sdiag -r >/dev/null; squeue -h >/dev/null
        base_sq=$(( $(count REQUEST_JOB_INFO) + $(count REQUEST_PARTITION_INFO) ))
    fi
    jid=$(sbatch --parsable --requeue -N3 -p gpu -o /dev/null --wrap 'sleep 3000')
    i=0; while [ "$(squeue -h -j "$jid" -o %T)" != RUNNING ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    r0=$(metric vigil_orchestrator_reconcile_calls_total); c0=$(metric vigil_orchestrator_calls_total); n0=$(incidents)
    : >"$T/own"
    sdiag -r >/dev/null
    done_runs=0
    for run in $(seq "$RUNS"); do
        # where the job runs again (hostnames are expanded locally); the requeued job waits out its hold
        i=0; nodes=$(where); while [ -z "$nodes" ] && [ $i -lt 60 ]; do sleep 0.5; nodes=$(where); i=$((i + 1)); done
        first=$(scontrol show hostnames "$nodes" 2>/dev/null | head -1)
        case "$first" in n*) ;; *) break ;; esac
        "$V" inject xid 79 --node "$first" --lab --dir "$T/lab" >/dev/null 2>&1
        # wait through the controller (HTTP only): the incident opened, then acted on (all its steps done)
        i=0; while [ "$(incidents)" -le $((n0 + done_runs)) ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
        i=0; while case "$(latest_state)" in open | acting) true ;; *) false ;; esac && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
        done_runs=$((done_runs + 1))
    done
    [ "$done_runs" -gt 0 ] || { echo "slurm_rpc: the job never ran"; exit 1; }
    sdiag >"$T/sdiag.txt"   # before anything else asks (the controller's /metrics reads the cluster for its gauges)
    [ -n "$RPC_DEBUG" ] && sed -n "/by message type/,/by user/p" "$T/sdiag.txt" >&2
    recon=$(( $(metric vigil_orchestrator_reconcile_calls_total) - r0 ))
    calls=$(( $(metric vigil_orchestrator_calls_total) - c0 - recon ))
    own_part=$(wc -l <"$T/own")   # the bench's squeue calls
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
    awk -v t="$total" -v r="$done_runs" -v k="$calls" -v l="$line" -v rc="$recon" -v bn="$base_node" -v lb="$label" 'BEGIN {
        printf "slurmctld RPCs per incident, %s (sdiag, %d XID 79 runs): %.1f (target <= 3) from %.1f Slurm commands:%s\n", lb, r, t / r, k / r, l
        printf "  plus %d periodic node-state reads in the window (%d RPCs each)\n", rc, bn }'
    "$V" lab down --dir "$T/lab" >/dev/null 2>&1
}

measure "default policy (the cluster read per batch)"
measure "view_max_age = 30s (the view kept)" --policy-extra "view_max_age = 30s"
echo "baseline, the same run: one scontrol show node = $base_node RPCs, one squeue = $base_sq RPCs"
