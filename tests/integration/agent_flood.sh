#!/bin/sh
# agent_flood.sh — floods through a real agent and a real `vigil serve`:
# (a) 15,000 kernel-log lines (distinct GPUs) in one loop turn with token
# auth, an XID 79 behind them: the agent splits them into messages within
# wire/limits.h's caps, and the XID 79 arrives (one message of them all was
# 413, retried forever); (b) the same with 3,000 lines through MUNGE (the
# lab's munged; one message of them all was above MUNGE's payload limit);
# (c) an XID storm, 200,000 XID 95 lines on one GPU, written over longer than
# the controller's fold window: one incident counting all 200,000, whose
# first event arrived at once.
. "$(dirname "$0")/lib.sh"
T=$(mktemp -d /tmp/vigil-agent-flood-XXXXXX)
SERVE_PID= AGENT_PID=
cleanup() {
    [ -n "$AGENT_PID" ] && kill -CONT "$AGENT_PID" 2>/dev/null && kill "$AGENT_PID" 2>/dev/null
    [ -n "$SERVE_PID" ] && kill -9 "$SERVE_PID" 2>/dev/null
    wait 2>/dev/null
    lab_down
    rm -rf "$T"
}
# the scheduler (and, for (b), the munged) of a one-node lab that also lists n7
sched_up n7 || { nok "scheduler (lab) up"; rm -rf "$T"; exit 1; }
trap cleanup EXIT   # after sched_up, which sets its own
umask 077
node_tokens "$T" n7 >/dev/null
secret "$T/read.token" read
READ_TOKEN="$T/read.token"

# lines N CODE → N /dev/kmsg-format XID lines (xid's format), GPU i at PCI
# domain i/256, bus i%256
lines() {
    awk -v n="$1" -v code="$2" 'BEGIN {
        for (i = 0; i < n; i++)
            printf "6,%d,%d,-;NVRM: Xid (PCI:%04x:%02x:00): %d, pid=1, name=python, test\n", 1, 1000, int(i / 256) + 1, i % 256, code
    }'
}
# flood N — N lines and an XID 79 behind them, appended while the agent is
# stopped, so it reads them all in one loop turn
flood() {
    lines "$1" 13 >"$T/flood"
    xid 79 3b >>"$T/flood"
    kill -STOP "$AGENT_PID"
    cat "$T/flood" >>"$T/kmsg"
    kill -CONT "$AGENT_PID"
}
xid79() { incidents "code=79&pci=0000:3b:00.0"; }
# the most events the controller stored from one message: how the agent split
# them is seen nowhere but in the store's messages (one row per event)
most_events() { store_sql "select max(n) from (select count(*) n from messages group by seq)"; }

# (a) 15,000 lines, token auth
: >"$T/kmsg"
start_serve 0
check "serve up" test -n "$PORT"
start_agent --interval 0 --no-gpu-events
flood 15000
wait_for 'test "$(xid79)" = 1' 120
is "token auth: an XID 79 behind 15,000 lines in one loop turn arrives" "$(xid79)" 1
is "all 15,000 lines before it arrived too" "$(incidents code=13)" 15000
most=$(most_events)
check "no message held more than 1,000 events ($most)" test -n "$most" -a "${most:-0}" -le 1000
check "every message went through at its first try" sh -c "! grep -q 'retry in' '$T/agent.log'"
stop_agent
stop_serve

# (b) 3,000 lines through MUNGE
if command -v munged >/dev/null; then
    AUTH="--auth munge --munge-socket $LAB_DIR/munge/munge.socket"
    rm -f "$T/incidents.db" "$T/agent.spool"
    : >"$T/kmsg"
    start_serve 0
    check "serve up with MUNGE" test -n "$PORT"
    start_agent --interval 0 --no-gpu-events
    flood 3000
    wait_for 'test "$(xid79)" = 1' 120
    is "MUNGE: an XID 79 behind 3,000 lines in one loop turn arrives" "$(xid79)" 1
    is "all 3,000 lines before it arrived too" "$(incidents code=13)" 3000
    check "every message went through at its first try" sh -c "! grep -q 'retry in' '$T/agent.log'"
    stop_agent
    stop_serve
    AUTH=
else
    skip "MUNGE flood: needs munged"
fi

# (c) an XID storm on one GPU, longer than the controller's 1 s fold window
rm -f "$T/incidents.db" "$T/agent.spool"
: >"$T/kmsg"
start_serve 0 --window 1
start_agent --interval 0 --no-gpu-events --window 2
awk 'BEGIN { for (i = 0; i < 10000; i++) print "6,1,1000,-;NVRM: Xid (PCI:0000:9b:00): 95, pid=1, name=python, test" }' \
    >"$T/chunk"
cat "$T/chunk" >>"$T/kmsg"
wait_for 'test "$(incidents code=95)" = 1'
is "the storm's first event reached the controller at once" "$(inc '.[].count' code=95)" 1
for i in $(seq 2 20); do cat "$T/chunk" >>"$T/kmsg"; sleep 0.15; done
wait_for 'test "$(inc "map(.count) | add" code=95)" = 200000' 60
is "200,000 XID 95 lines on one GPU: one incident" "$(incidents code=95)" 1
is "counting all of them" "$(inc '.[].count' code=95)" 200000
stop_agent
done_testing
