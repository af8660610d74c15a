#!/bin/sh
# nic.sh — the faults between the GPUs, end to end without a lab: (a) `vigil
# scan` of a real log where NIC links and a bond member go down after an
# NVSwitch SXid reports them all; (b) the agent's NIC probe against the fake
# verbs library: a wedged query is nic-hung (a reboot, the node out), a healthy
# stack says nothing; (c) the running agent judging a copy of the H100 sysfs
# tree's counters over time: one flap is recorded and drains nothing, the
# third within 3 h is link-flapping (a drain); an error burst is ib-errors; a
# counter reset by a driver reload, a counter holding garbage and one that
# disappears are said in the log and are no fault.
. "$(dirname "$0")/lib.sh"
T=$(mktemp -d /tmp/vigil-nic-XXXXXX)
AGENT_PID=
cleanup() {
    [ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
export VIGIL_VERBS_LIB="$FAKE_VERBS" FAKE_VERBS_STATE="$T/verbs-state" VIGIL_NVML_LIB="$FAKE_NVML"
export FAKE_NVML_STATE="$T/nvml-state"
printf 'gpus=2\n' >"$FAKE_NVML_STATE"
: >"$T/kmsg"

# (a) the issue's log
out=$("$VIGIL" scan --json tests/fixtures/logs/nic-after-sxid.log)
is "scan: the SXids and the NIC faults after them, all reported" \
    "$(echo "$out" | sed -n 's/.*"kind":"\([a-z-]*\)".*"pci":\("[^"]*"\|null\).*/\1 \2/p' | tr '\n' ' ')" \
    'sxid "0000:06:00.0" sxid "0000:05:00.0" nic-link-down "0000:01:00.0" nic-link-down "0000:01:00.1" bond-slave-down null '
is "scan: a link down is recorded, not acted on" "$(echo "$out" | grep -c '"kind":"nic-link-down".*"action":"ignore"')" 2
exits_with "scan: exit 1 (the fatal SXid)" 1 "$VIGIL" scan tests/fixtures/logs/nic-after-sxid.log

# (b) the RDMA probe
once() { "$VIGIL" agent --once --node n1 --kmsg "$T/kmsg" --spool "$T/spool" --slurmd-spool "" --json \
    --interval 1 --no-gpu-events --root tests/fixtures/sysfs/h100 "$@" 2>>"$T/once.log"; }
printf 'devices=mlx5_0,mlx5_1\nmlx5_1.hang=query\n' >"$FAKE_VERBS_STATE"
out=$(once)
is "a wedged verbs query: nic-hung on the device's function, a reboot" \
    "$(echo "$out" | grep -o '"kind":"nic-hung","code":1,"pci":"0000:2b:00.0","gpu":null,"action":"reboot"')" \
    '"kind":"nic-hung","code":1,"pci":"0000:2b:00.0","gpu":null,"action":"reboot"'
check "… naming the device and the call" grep -q 'mlx5_1 unresponsive: ibv_query_port (port 1) did not answer' "$T/once.log"
exits_with "… the node is unhealthy (exit 1)" 1 once
is "--interval 0 --nic-interval 1: the NIC probe alone still runs" \
    "$(once --interval 0 --nic-interval 1 | grep -c '"kind":"nic-hung"')" 1
printf 'devices=mlx5_0,mlx5_1\n' >"$FAKE_VERBS_STATE"
is "a healthy RDMA stack: no event" "$(once | grep -c nic-)" 0
exits_with "… exit 0" 0 once

# (c) counters over time, in the running agent
cp -a tests/fixtures/sysfs/h100 "$T/root"
C="$T/root/sys/class/infiniband/mlx5_0/ports/1/counters"
"$VIGIL" agent --node n1 --kmsg "$T/kmsg" --spool "$T/spool2" --slurmd-spool "" --json --interval 0.3 \
    --no-gpu-events --root "$T/root" >"$T/agent.out" 2>"$T/agent.log" &
AGENT_PID=$!
settle() { sleep 0.7; }   # two more periods pass: what they would say is said
set_counter() { echo "$2" >"$C/$1.tmp" && mv "$C/$1.tmp" "$C/$1"; }
sleep 0.7   # a baseline is read
set_counter link_downed 1
wait_for 'grep -q "\"kind\":\"link-flap\"" "$T/agent.out"'
check "one flap: link-flap, beside GPU 0" grep -q '"kind":"link-flap","code":1,"pci":"0000:1a:00.0","gpu":0,"action":"ignore"' "$T/agent.out"
settle
is "one flap drains nothing" "$(grep -c 'link-flapping' "$T/agent.out")" 0
set_counter link_downed 2
sleep 0.7
set_counter link_downed 3
wait_for 'grep -q "link-flapping" "$T/agent.out"'
check "the third flap within 3 h: link-flapping, a drain" \
    grep -q '"kind":"link-flapping","code":1,"pci":"0000:1a:00.0","gpu":0,"action":"restart-app"' "$T/agent.out"
set_counter symbol_error 5000
wait_for 'grep -q "\"kind\":\"ib-errors\"" "$T/agent.out"'
check "a symbol error burst: ib-errors naming the rate and its threshold" \
    grep -q 'symbol_error +5000 in [0-9.]* s = [0-9.]*/s (above 10/s)' "$T/agent.out"
before=$(grep -c '' "$T/agent.out")
set_counter link_downed 0
set_counter port_rcv_errors 'N/A'
rm "$C/port_xmit_discards"
wait_for 'grep -q "port_xmit_discards disappeared" "$T/agent.log"'
check "a counter reset (driver reload) is said" grep -q 'link_downed went back from 3 to 0 (its counters were reset' "$T/agent.log"
check "garbage in a counter is said" grep -q 'port_rcv_errors holds no number' "$T/agent.log"
settle
is "… and none of them is a fault" "$(tail -n +$((before + 1)) "$T/agent.out" | grep -c '"kind"')" 0
kill -0 "$AGENT_PID" 2>/dev/null
is "the agent is still running" "$?" 0
done_testing
