#!/bin/sh
# agent_spool.sh — the agent's spool against a real `vigil serve`:
# (a) its identity: every message carries the spool life's random id; an
# agent killed, its spool deleted and restarted starts a new spool (new id,
# seq from 1) and an XID 79 it then sees becomes an incident, not a
# "duplicate"; (a2) a spool file restored from a snapshot (the attack of
# issue 27: its id and seqs reused) loses no fault either;
# (c) the spool's cap with the controller away: the oldest record-only
# events go (counted, and the controller told: its metric), every fault
# arrives;
# (b) a spool on a read-only filesystem at start, or on a disk that fills up
# while the agent runs: the agent says so loudly, flags it in its --json
# status line, keeps detecting and delivers from memory.  Mounts are made in a
# private mount namespace (unshare -m) and skipped where that is not allowed.
if [ -z "$VIGIL_AGENT_SPOOL_NS" ] && [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
    VIGIL_AGENT_SPOOL_NS=1 exec unshare -m --propagation private sh "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
T=$(mktemp -d /tmp/vigil-agent-spool-XXXXXX)
SERVE_PID= AGENT_PID=
cleanup() {
    [ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null
    [ -n "$SERVE_PID" ] && kill -9 "$SERVE_PID" 2>/dev/null
    wait 2>/dev/null
    for m in "$T/ro" "$T/rw"; do mountpoint -q "$m" 2>/dev/null && umount "$m"; done
    lab_down
    rm -rf "$T"
}
sched_up 'n[7-9]' || { nok "scheduler (lab) up"; rm -rf "$T"; exit 1; }
trap cleanup EXIT   # after sched_up, which sets its own
umask 077
node_tokens "$T" 'n[7-9]' >/dev/null
secret "$T/read.token" read
READ_TOKEN="$T/read.token"
: >"$T/kmsg"
start_serve 0
check "serve up" test -n "$PORT"
# spool_id FILE → the id in a spool file's header
spool_id() { sed -n '1s/^vigil-spool 2 id=\([0-9a-f]\{32\}\) next=[0-9]*$/\1/p' "$1"; }
# sent FIELD PCI → FIELD of the message (the agent's --json lines) that carried PCI
sent() { jq -r --arg p "$2" "select(.events) | select(any(.events[]; .pci == \$p)) | .$1" "$T/agent.out" | tail -1; }
by_pci() { incidents "pci=$1"; }

# (a) a deleted spool is a new spool
start_agent --interval 0 --no-gpu-events --json
xid 79 3b >>"$T/kmsg"
wait_for 'test "$(by_pci 0000:3b:00.0)" = 1'
is "an XID 79 becomes an incident" "$(by_pci 0000:3b:00.0)" 1
id1=$(spool_id "$T/agent.spool")
check "the spool file holds a 32-hex-character id" test ${#id1} = 32
is "the message carried it as \"spool\"" "$(sent spool 0000:3b:00.0)" "$id1"
is "its seq was 1" "$(sent seq 0000:3b:00.0)" 1
kill -9 "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null; AGENT_PID=
rm -f "$T/agent.spool"
start_agent --interval 0 --no-gpu-events --json
xid 79 5e >>"$T/kmsg"
wait_for 'test "$(by_pci 0000:5e:00.0)" = 1'
id2=$(spool_id "$T/agent.spool")
check "the new spool has a new id" test ${#id2} = 32 -a "$id2" != "$id1"
is "its first message is seq 1 again, under the new id" "$(sent seq 0000:5e:00.0) $(sent spool 0000:5e:00.0)" "1 $id2"
is "spool deleted while the agent was down: the next XID 79 is an incident (not a duplicate)" \
    "$(by_pci 0000:5e:00.0)" 1
stop_agent
check "the agent's status lines name the spool id" sh -c "jq -r 'select(.status) | .status.spool_id' '$T/agent.out' | grep -qx '$id2'"

# (a2) the spool file restored from a snapshot: its id and seqs are those of
# messages the controller already has, with other events in them
cp "$T/agent.spool" "$T/snapshot"
start_agent --interval 0 --no-nvml-events --json
xid 79 5f >>"$T/kmsg"
wait_for 'test "$(by_pci 0000:5f:00.0)" = 1'
stop_agent
cp "$T/snapshot" "$T/agent.spool"
start_agent --interval 0 --no-nvml-events --json
xid 79 60 >>"$T/kmsg"
wait_for 'test "$(by_pci 0000:60:00.0)" = 1'
is "spool restored from a snapshot: the next XID 79 is an incident (not a duplicate)" "$(by_pci 0000:60:00.0)" 1
check "… sent under another spool id than the one it replaced" \
    test "$(sent spool 0000:60:00.0)" != "$(sent spool 0000:5f:00.0)" -a "$(sent seq 0000:60:00.0)" = "$(sent seq 0000:5f:00.0)"
stop_agent

# (c) the cap: the controller away, 120 record-only XID 43s and an XID 79 in
# ten loop turns into a spool capped at 16 KiB
APORT=$PORT
stop_serve
: >"$T/agent.out"
start_agent --interval 0 --no-nvml-events --json --spool-max 0.015625 --retry-max 0.2
for turn in 0 1 2 3 4 5 6 7 8 9; do
    for k in 0 1 2 3 4 5 6 7 8 9 a b; do xid 43 "$turn$k"; done >>"$T/kmsg"
    [ $turn = 3 ] && xid 79 aa >>"$T/kmsg"
    wait_for 'grep -q "^M .*0000:$turn$k:00.0" "$T/agent.spool"'
done
size=$(stat -c %s "$T/agent.spool")
check "the spool stayed near its cap while the controller was away ($size bytes)" test "$size" -le $((16384 + 8192))
check "the agent said what it dropped" grep -q 'spool at its cap of 16384 bytes: dropped the oldest' "$T/agent.log"
start_serve "$APORT"
wait_for 'test "$(by_pci 0000:aa:00.0)" = 1' 20
is "the XID 79 spooled amid them arrived" "$(by_pci 0000:aa:00.0)" 1
# every message delivered: the spool compacted to its header alone (a header is written at every
# compaction, the cap's too, so it alone says nothing)
wait_for 'grep -qxE "vigil-spool 2 id=[0-9a-f]{32} next=[0-9]+" "$T/agent.spool" && ! grep -q "^M " "$T/agent.spool"'
arrived=$(incidents "code=43&node=n7")
told=$(api_metric vigil_agent_spool_dropped_events_total)
check "some XID 43s were dropped ($arrived of 120 arrived)" test "$arrived" -lt 120
is "the controller was told of every one dropped" "$((arrived + told))" 120
stop_agent

mkdir "$T/ro" "$T/rw"
# (b) a read-only spool (other node names than (a), so these messages are
# new to the controller whatever it makes of spool ids)
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o ro,size=1m vigil-ro "$T/ro" 2>/dev/null; then
    : >"$T/agent.out"
    AGENT_NODE=n8 start_agent --interval 0 --no-gpu-events --json --spool "$T/ro/agent.spool"
    check "read-only spool: the agent says so loudly on stderr" grep -q 'SPOOL NOT WRITABLE.*ro/agent.spool' "$T/agent.log"
    is "and in its --json status line" \
        "$(jq -r 'select(.status.event == "start") | "\(.status.spool) \(.status.spool_memory_only)"' "$T/agent.out")" \
        "memory-only true"
    xid 79 e7 >>"$T/kmsg"
    wait_for 'test "$(by_pci 0000:e7:00.0)" = 1'
    is "it keeps detecting: an XID 79 is delivered from memory" "$(inc '.[].node' pci=0000:e7:00.0)" n8
    check "the agent is still running" kill -0 "$AGENT_PID"
    stop_agent
    umount "$T/ro"

    # the disk under the spool fills up while the agent runs
    mount -t tmpfs -o size=64k vigil-full "$T/rw"
    : >"$T/agent.out"
    AGENT_NODE=n9 start_agent --interval 0 --no-gpu-events --json --spool "$T/rw/agent.spool"
    xid 43 61 >>"$T/kmsg"
    wait_for 'test "$(by_pci 0000:61:00.0)" = 1'
    wait_for 'grep -qE "^vigil-spool 2 id=[0-9a-f]{32} next=2$" "$T/rw/agent.spool"'
    check "a writable spool is used as usual" grep -qE '^vigil-spool 2 id=[0-9a-f]{32} next=2$' "$T/rw/agent.spool"
    dd if=/dev/zero of="$T/rw/fill" bs=4k 2>/dev/null
    kill -STOP "$AGENT_PID"
    for b in 62 63 64 65 66 67 68 69 6a 6b 6c 6d 6e 6f 70 71 72 73 74 75; do xid 43 $b; done >>"$T/kmsg"
    kill -CONT "$AGENT_PID"
    wait_for 'test "$(incidents node=n9)" = 21'
    is "disk full while running: the next 20 XIDs are still delivered" \
        "$(inc 'map(select(.pci != "0000:61:00.0")) | length' node=n9)" 20
    check "with a loud warning" grep -q 'SPOOL NOT WRITABLE.*rw/agent.spool.*No space left' "$T/agent.log"
    is "and a status line" "$(jq -r 'select(.status.event == "spool-memory-only") | .status.spool' "$T/agent.out")" \
        "memory-only"
    check "the agent is still running" kill -0 "$AGENT_PID"
    stop_agent
    umount "$T/rw"
else
    skip "read-only spool: mounting a tmpfs is not permitted here"
fi
done_testing
