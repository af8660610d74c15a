#!/bin/sh
# agent.sh — `vigil agent` as a real process against a real `vigil serve`:
# (a) a kernel-log line becomes an incident with the right fields, repeats
# fold into its count; (b) controller down: the agent spools, and delivers
# everything once, in order, when it returns; (c) the controller is killed
# with SIGKILL mid-storm and restarted: nothing is lost; (d) the fake NVML:
# an ECC state, an XID event, a hung call (the loop keeps reading the log);
# (e) standalone on a real lab node: drains it with a "vigil:" reason;
# (f) a log truncated and refilled past the agent's offset before it read it
# loses no line; (g) a --controller list whose first controller is dead: the
# agent fails over to the live one, says so, and its status line names it.
. "$(dirname "$0")/lib.sh"
T=$(mktemp -d /tmp/vigil-agent-XXXXXX)
SERVE_PID= AGENT_PID=
cleanup() {
    [ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null
    [ -n "$SERVE_PID" ] && kill -9 "$SERVE_PID" 2>/dev/null
    wait 2>/dev/null
    lab_down
    rm -rf "$T"
}
# the scheduler the controller takes its nodes from: two lab nodes ((e) uses
# them) and n7, the node this suite's agent speaks for
lab_up 2 --no-vigil --conf-extra "NodeName=n7 NodeAddr=127.0.0.1 CPUs=1 RealMemory=100" >/dev/null ||
    { nok "lab up"; rm -rf "$T"; exit 1; }
trap cleanup EXIT   # after lab_up, which sets its own

umask 077
node_tokens "$T" n7 >/dev/null
echo "read-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')" >"$T/token.read"
READ_TOKEN="$T/token.read"
: >"$T/kmsg"

# (a) detection and folding
start_serve 0
check "serve up" test -n "$PORT"
start_agent --interval 0 --no-gpu-events --window 3
t0=$(date +%s%N)
xid 79 3b >>"$T/kmsg"
wait_for 'test "$(incidents)" = 1'
t1=$(date +%s%N)
echo "# kernel-log line -> incident stored: $(( (t1 - t0) / 1000000 )) ms"
is "an XID 79 line becomes one incident" "$(incidents)" 1
is "incident fields: node, kind, code, pci, action" \
    "$(inc '.[] | "\(.node) \(.kind) \(.code) \(.pci) \(.action)"')" "n7 xid 79 0000:3b:00.0 reboot"
is "it arrived over the HTTP API" \
    "$(curl -s -H "Authorization: Bearer $(cat "$T/token.read")" "http://127.0.0.1:$PORT/v1/incidents" | grep -o '"pci":"0000:3b:00.0"' | head -1)" '"pci":"0000:3b:00.0"'
for i in 1 2 3 4; do xid 79 3b >>"$T/kmsg"; done
wait_for 'test "$(inc ".[].count")" = 5'
is "four repeats fold into the incident's count" "$(inc '.[].count')" 5
is "still one incident" "$(incidents)" 1
is "the repeats took one message, not four" "$(api_metric vigil_store_messages_total)" 2
check "the spool is empty after the acknowledgements" grep -qxE 'vigil-spool 2 id=[0-9a-f]{32} next=3' "$T/agent.spool"

# (b) controller down → spooled → delivered once, in order
APORT=$PORT
stop_serve
for b in 41 42 43 44 45; do xid 48 $b >>"$T/kmsg"; sleep 0.05; done
wait_for 'test "$(grep -c '\''^M '\'' "$T/agent.spool")" = 5'
is "controller down: five messages spooled" "$(grep -c '^M ' "$T/agent.spool")" 5
check "the agent says it is unreachable" grep -q 'controller unreachable' "$T/agent.log"
start_serve "$APORT"
wait_for 'grep -qxE '\''vigil-spool 2 id=[0-9a-f]{32} next=8'\'' "$T/agent.spool"'
is "controller back: all five arrived" "$(incidents code=48)" 5
is "in order" "$(inc 'sort_by(.id) | map(.pci[5:7]) | join(",")' code=48)" "41,42,43,44,45"
is "exactly once" "$(api_metric vigil_events_stored_total)" 7

# (c) SIGKILL mid-storm
( for b in $(seq 100 159); do xid 95 "$(printf '%02x' "$b")" >>"$T/kmsg"; sleep 0.01; done ) &
STORM=$!
sleep 0.3
stop_serve
wait $STORM
start_serve "$APORT"
wait_for 'test "$(incidents code=95)" = 60'
is "kill -9 mid-storm: all 60 incidents arrived" "$(incidents code=95)" 60
is "none doubled" "$(inc 'map(select(.count != 1)) | length' code=95)" 0
stop_agent
check "the agent stops cleanly on SIGTERM" grep -q 'stopping on signal 15' "$T/agent.log"

# (g) a --controller list whose first is dead (nothing listens on port 1)
LIVE="http://127.0.0.1:$PORT"
start_agent --interval 0 --no-gpu-events --window 3 --json --controller "http://127.0.0.1:1,$LIVE"
xid 61 d1 >>"$T/kmsg"
wait_for 'test "$(incidents code=61)" = 1'
is "controller list, the first dead: the event reaches the live one (its API)" \
    "$(curl -s -H "Authorization: Bearer $(cat "$T/token.read")" "$LIVE/v1/incidents" | grep -o '"pci":"0000:d1:00.0"' | head -1)" \
    '"pci":"0000:d1:00.0"'
check "the agent says it switched" grep -q "agent: controller http://127.0.0.1:1 failed (.*); now $LIVE\$" "$T/agent.log"
stop_agent
is "its last status line names the live controller" \
    "$(grep '^{"status"' "$T/agent.out" | tail -1 | jq -r .status.controller)" "$LIVE/v1/events"

# (f) the log truncated and refilled past the agent's offset before it reads
# (the agent stopped meanwhile): the same inode, a larger size, other bytes
: >"$T/kmsg"
start_agent --interval 0 --no-nvml-events --window 3   # the option's former name, still read
xid 31 c0 >>"$T/kmsg"
wait_for 'test "$(incidents code=31)" = 1'
kill -STOP "$AGENT_PID"
for b in c1 c2 c3 c4 c5 c6 c7 c8 c9 ca; do xid 31 $b; done >"$T/kmsg"
kill -CONT "$AGENT_PID"
wait_for 'test "$(incidents code=31)" = 11'
is "a log truncated and refilled past the offset: all 10 new lines read, the first too" \
    "$(inc 'map(select(.pci != "0000:c0:00.0")) | length' code=31)" 10
check "the agent says the file was rewritten" grep -q 'was truncated and rewritten' "$T/agent.log"
stop_agent

# (d) fake NVML: state, events, a hung call
if [ -r "$FAKE_NVML" ]; then
    export VIGIL_NVML_LIB="$FAKE_NVML" FAKE_NVML_STATE="$T/nvml-state"
    printf 'gpus=4\n' >"$T/nvml-state"
    : >"$T/nvml-state.events"
    start_agent --interval 1 --window 1
    wait_for 'grep -q '\''nvidia: watching'\'' "$T/agent.log"'
    check "the NVIDIA event watcher is up" grep -q 'nvidia: watching the nvml events of 4 GPUs' "$T/agent.log"
    printf 'gpus=4\ngpu2.ecc_dbe_volatile=1\n' >"$T/nvml-state.new" && mv "$T/nvml-state.new" "$T/nvml-state"
    wait_for 'test "$(incidents "kind=ecc-dbe&gpu=2")" -ge 1'
    is "an ECC DBE in the NVML state → an ecc-dbe incident for GPU 2" "$(incidents "kind=ecc-dbe&gpu=2")" 1
    echo 'event=79 gpu=1' >>"$T/nvml-state.events"
    wait_for 'test "$(incidents "kind=xid&code=79&gpu=1")" = 1'
    is "an XID from the NVML event set is delivered" \
        "$(inc '.[] | "\(.event.source) \(.pci)"' "kind=xid&code=79&gpu=1")" "nvml 0000:2a:00.0"
    printf 'gpus=4\ngpu*.hang=nvmlDeviceGetTotalEccErrors\n' >"$T/nvml-state.new" && mv "$T/nvml-state.new" "$T/nvml-state"
    wait_for 'test "$(incidents kind=probe-hung)" -ge 1'
    is "a hung NVML call → a probe-hung incident" "$(incidents kind=probe-hung)" 1
    xid 43 77 >>"$T/kmsg"
    wait_for 'test "$(incidents code=43)" = 1'
    is "the kernel log is still read while NVML hangs" "$(incidents code=43)" 1
    stop_agent
    unset VIGIL_NVML_LIB FAKE_NVML_STATE
else
    skip "fake NVML library not built"
fi

# input errors
exits_with "bad --interval is an input error" 2 "$VIGIL" agent --interval abc
exits_with "bad --drain-at is an input error" 2 "$VIGIL" agent --drain-at sometimes
exits_with "unknown option is an input error" 2 "$VIGIL" agent --bogus
exits_with "--once with a fault in the log exits 1" 1 "$VIGIL" agent --once --kmsg "$T/kmsg" --interval 0 \
    --no-gpu-events
printf 'plain text\n' >"$T/quiet"
exits_with "--once on a clean log exits 0" 0 "$VIGIL" agent --once --kmsg "$T/quiet" --interval 0 --no-gpu-events
"$VIGIL" agent --controller http://127.0.0.1:1,ftp://b --auth none --kmsg "$T/quiet" --once --no-gpu-events \
    2>"$T/badlist.err" >/dev/null
is "a bad URL in the --controller list is an input error" "$?" 2
is "said in one line naming it" "$(wc -l <"$T/badlist.err") $(grep -c "'ftp://b'" "$T/badlist.err")" "1 1"

# (e) standalone on a real lab node
umask 022
if [ -n "$LAB_DIR" ]; then
    check "--no-vigil: no controller in the lab's env" sh -c "! $VIGIL lab env --dir $LAB_DIR | grep -q VIGIL_CONTROLLER"
    : >"$T/agent.log"
    "$VIGIL" agent --node n1 --kmsg "$LAB_DIR/nodes/n1/kmsg" --drain --interval 0 --no-gpu-events \
        2>>"$T/agent.log" &
    AGENT_PID=$!
    wait_for 'grep -q '\''agent: node n1'\'' "$T/agent.log"'
    xid 79 18 >>"$LAB_DIR/nodes/n1/kmsg"
    wait_for 'sh -c "scontrol show node n1 | grep -q '\''State=.*DRAIN'\''"'
    st=$(scontrol show node n1)
    check "standalone: the node is drained" sh -c "echo '$st' | grep -q 'State=.*DRAIN'"
    check "with a vigil: reason naming the XID" sh -c "echo '$st' | grep -q 'Reason=vigil: xid 79 on 0000:18:00.0'"
    check "the other node is untouched" sh -c "scontrol show node n2 | grep -q 'State=IDLE '"
    stop_agent
fi
done_testing
