#!/bin/sh
# bmc.sh — `vigil bmc`.  First the Redfish service double (build/tests/redfish,
# HTTPS, basic auth, the DMTF mockups) is proven with the real client, curl,
# making the requests vigil makes: the systems collection, the system, the
# Reset POST answered 202 with a Location task monitor that answers 202 and
# then the Completed task, a ResetType not allowed (400 with the error
# response), 401 without credentials, and no answer at all.  Then `vigil bmc`
# against it (Redfish) and against the ipmitool stand-in (IPMI): done, the
# BMC's refusals, 401, a task in Exception, no answer, and bad input (exit 2).
# Last, `vigil serve` on a real lab with a power-cycle rung that is `vigil bmc
# --redfish`: a held cycle returns the node; a refused one is recorded with
# the BMC's message and ends in the RMA ticket, the node kept out.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/vigil-bmc.XXXXXX")
chmod 755 "$W"   # munged refuses a socket under a 0700 parent
RF_PID= SERVE_PID=
stop_rf() { [ -n "$RF_PID" ] && kill "$RF_PID" 2>/dev/null && wait "$RF_PID" 2>/dev/null; RF_PID=; }
stop_serve() { [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null; SERVE_PID=; }
trap 'stop_serve; stop_rf; [ -n "$KEEP" ] || rm -rf "$W"' EXIT
command -v curl >/dev/null && command -v openssl >/dev/null || { skip "curl and openssl are needed"; exit 0; }
echo "# $(curl --version | head -1)"

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$W/ca.key" -out "$W/ca.pem" -days 2 -subj /CN=bmc \
    -addext "subjectAltName=IP:127.0.0.1" >/dev/null 2>&1
"$ROOT/build/tests/redfish" --port-file "$W/port" --tls-cert "$W/ca.pem" --tls-key "$W/ca.key" \
    --mockups "$ROOT/tests/fixtures/redfish" --user admin --password 's3cret' --task-ms 400 --log "$W/rf.log" \
    2>"$W/rf.err" &
RF_PID=$!
i=0; while [ ! -s "$W/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
BMC="https://127.0.0.1:$(cat "$W/port")"
C="curl -s --cacert $W/ca.pem"
mode() { $C --data-binary "$1" "$BMC/_test/mode"; }

# ---- 1. the double, proven with curl --------------------------------------------
is "curl: no credentials → 401" "$($C -o /dev/null -w '%{http_code}' "$BMC/redfish/v1/Systems")" 401
check "… with a WWW-Authenticate: Basic challenge" sh -c "$C -D - -o /dev/null '$BMC/redfish/v1/Systems' | grep -qi '^WWW-Authenticate: Basic'"
is "curl -u: the systems collection's member" \
    "$($C -u admin:s3cret "$BMC/redfish/v1/Systems" | jq -r '.Members[0]."@odata.id"')" /redfish/v1/Systems/437XR1138R2
SYS=$($C -u admin:s3cret "$BMC/redfish/v1/Systems/437XR1138R2")
TARGET=$(echo "$SYS" | jq -r '.Actions."#ComputerSystem.Reset".target')
is "… the system's Reset action target" "$TARGET" /redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset
is "… its allowed ResetType values (the mockup's: no PowerCycle)" \
    "$(echo "$SYS" | jq -r '.Actions."#ComputerSystem.Reset"."ResetType@Redfish.AllowableValues" | join(",")')" \
    On,ForceOff,GracefulShutdown,GracefulRestart,ForceRestart,Nmi,ForceOn,PushPowerButton
$C -u admin:s3cret -D "$W/h" -o "$W/b" -H 'Content-Type: application/json' -d '{"ResetType":"ForceRestart"}' "$BMC$TARGET"
is "curl POST Reset ForceRestart → 202 Accepted" "$(head -1 "$W/h" | cut -d' ' -f2)" 202
LOC=$(sed -n 's/^Location: *//Ip' "$W/h" | tr -d '\r')
is "… Location: the task monitor" "$LOC" /redfish/v1/TaskService/Tasks/545
is "… the task monitor answers 202 while it runs (TaskState Running)" \
    "$($C -u admin:s3cret -o "$W/t" -w '%{http_code}' "$BMC$LOC") $(jq -r .TaskState "$W/t")" "202 Running"
is "… the system is off during the restart" "$($C -u admin:s3cret "$BMC/redfish/v1/Systems/437XR1138R2" | jq -r .PowerState)" Off
sleep 0.5
is "… then 200 with the task as the mockup has it (Completed, OK)" \
    "$($C -u admin:s3cret -o "$W/t" -w '%{http_code}' "$BMC$LOC") $(jq -r '.TaskState + " " + .TaskStatus' "$W/t")" "200 Completed OK"
is "… and PowerState On" "$($C -u admin:s3cret "$BMC/redfish/v1/Systems/437XR1138R2" | jq -r .PowerState)" On
is "curl POST ResetType PowerCycle (not allowed) → 400 with the error response" \
    "$($C -u admin:s3cret -o "$W/e" -w '%{http_code}' -d '{"ResetType":"PowerCycle"}' "$BMC$TARGET") $(jq -r '.error."@Message.ExtendedInfo"[0].MessageId' "$W/e")" "400 GEN1234"
mode hang
$C -u admin:s3cret --max-time 1 -o /dev/null "$BMC/redfish/v1/Systems"
is "mode hang: curl gets no answer (exit 28, timed out)" "$?" 28
mode normal

# ---- 2. vigil bmc ------------------------------------------------------------------
umask 077; echo 'admin:s3cret' >"$W/bmc.user"; echo 'admin:pw' >"$W/ipmi.user"; umask 022
B() { "$VIGIL" bmc "$@" --redfish "$BMC" --user-file "$W/bmc.user" --cacert "$W/ca.pem" --poll 0.1; }
B power-cycle n1 >"$W/out" 2>"$W/err"
is "vigil bmc power-cycle --redfish: exit 0" "$?" 0
is "… one line: the ResetType the BMC allows, its task, the PowerState" "$(cat "$W/out")" \
    "power-cycle n1: done: /redfish/v1/Systems/437XR1138R2: ResetType ForceRestart, task Completed, PowerState On"
is "… the double saw basic auth, the POST, the task monitor polled" \
    "$(grep -c 'POST /redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset 202' "$W/rf.log")" 2
is "vigil bmc status --json" "$(B status n1 --json | jq -r '.power_state + " " + .result')" "On done"
B power-cycle n1 --reset-type PowerCycle 2>"$W/err"
is "a ResetType the BMC does not allow: exit 1" "$?" 1
check "… naming it and what the BMC allows" grep -q "does not allow ResetType PowerCycle (it allows: On," "$W/err"
mode refuse; B power-cycle n1 2>"$W/err"; rc=$?
is "the BMC refuses (400): exit 1 with its message" "$rc $(cat "$W/err")" \
    "1 power-cycle n1: refused: POST /redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset: HTTP 400: Unable to process the request because an error occurred."
mode conflict; B power-cycle n1 2>"$W/err"
check "409: the BMC's message" grep -q "HTTP 409: Unable to process the request" "$W/err"
mode unauthorized; B power-cycle n1 2>"$W/err"; rc=$?
is "401: exit 1" "$rc" 1
check "… said as such" grep -q "HTTP 401 Unauthorized (the BMC does not accept the credentials)" "$W/err"
mode exception; B power-cycle n1 2>"$W/err"; rc=$?
is "a task that ends in Exception: exit 1 with the task's message" "$rc $(cat "$W/err")" \
    "1 power-cycle n1: refused: the task ended in Exception: The property SKU is a read only property and cannot be assigned a value"
mode hang; B power-cycle n1 --timeout 1 2>"$W/err"; rc=$?
is "a BMC that never answers: exit 1 at the deadline" "$rc $(cat "$W/err")" \
    "1 power-cycle n1: refused: GET /redfish/v1/Systems: the BMC did not answer in time"
mode normal
exits_with "bad input: no --user-file → 2" 2 "$VIGIL" bmc power-cycle n1 --redfish "$BMC"
chmod 644 "$W/bmc.user"
"$VIGIL" bmc power-cycle n1 --redfish "$BMC" --user-file "$W/bmc.user" 2>"$W/err"; rc=$?
is "a credentials file others can read: exit 2 naming it" "$rc $(cat "$W/err")" \
    "2 vigil: bmc: $W/bmc.user: mode 0644: a credentials file must be readable by its owner only (chmod 600)"
chmod 600 "$W/bmc.user"
exits_with "http:// (credentials in clear): 2" 2 "$VIGIL" bmc status n1 --redfish "http://127.0.0.1:1" --user-file "$W/bmc.user"
exits_with "--cacert with --insecure: 2" 2 B status n1 --insecure
exits_with "an unknown action: 2" 2 B reboot n1

export PATH="$ROOT/tests/standins:$PATH" VIGIL_IPMI_STATE="$W/ipmi.state"
echo password=pw >"$W/ipmi.state"
I() { "$VIGIL" bmc "$@" --ipmi n1-bmc --user-file "$W/ipmi.user" --timeout 2; }
is "vigil bmc power-cycle --ipmi (ipmitool stand-in): done" "$(I power-cycle n1)" "power-cycle n1: done: Chassis Power Control: Cycle"
is "… power-off, then status" "$(I power-off n1; I status n1)" "power-off n1: done: Chassis Power Control: Down/Off
status n1: done: Chassis Power is off"
is "… a cycle of a chassis that is off: refused (exit 1) with ipmitool's line" "$(I power-cycle n1 2>&1; echo $?)" \
    "power-cycle n1: refused: Set Chassis Power Control to Cycle failed: Command not supported in present state
1"
echo password=other >"$W/ipmi.state"
is "… wrong password: the lanplus session error" "$(I status n1 2>&1)" "status n1: refused: Error: Unable to establish IPMI v2 / RMCP+ session"
echo hang=1 >"$W/ipmi.state"
is "… a BMC that never answers: the deadline" "$(I power-cycle n1 2>&1)" "power-cycle n1: refused: ipmitool did not finish within 2 s (the BMC does not answer)"

# ---- 3. a power-cycle rung in vigil serve, on a real lab ------------------------------
if [ "$(id -u)" != 0 ] || ! command -v slurmctld >/dev/null; then skip "the lab needs root and slurmctld"; exit 0; fi
lab_up 3 --no-vigil >/dev/null || { nok "lab up"; exit 1; }
trap 'stop_serve; stop_rf; lab_down; [ -n "$KEEP" ] || rm -rf "$W"' EXIT
node_tokens "$W" 'n[1-3]' >/dev/null; secret "$W/read.token" read
mkdir -p "$W/rma"
cat >"$W/policy.conf" <<EOF
breaker = 100% / 600s
repair power-cycle = $VIGIL bmc power-cycle {node} --redfish $BMC --user-file $W/bmc.user --cacert $W/ca.pem --poll 0.1 --timeout 20
repair_timeout power-cycle = 30
healthcheck = true {node}
rma_dir = $W/rma
rma_attach kernel-log = echo NVRM: Xid (PCI:0000:18:00): 79, pid=1234, GPU has fallen off the bus. node={node}
EOF
lab_serve "$W" "$W/policy.conf" "$W/incidents.db" "$W/serve.log"
xid() { # node seq
    vcurl "$1" -o /dev/null --data-binary \
        "{\"node\":\"$1\",\"seq\":$2,\"events\":[{\"kind\":\"xid\",\"code\":79,\"gpu\":0,\"action\":\"reboot\",\"source\":\"kmsg\"}]}" \
        "$URL/v1/events"
}
inc() { curl -s -H "Authorization: Bearer $(cat "$W/read.token")" "$URL/v1/incidents?node=$1&limit=1"; }
wait_state() { # node prefix
    t=$(( $(date +%s) + 40 ))
    while :; do case "$(inc "$1" | jq -r '.[0].state // empty')" in "$2"*) return 0 ;; esac
        [ "$(date +%s)" -ge "$t" ] && return 1; sleep 0.2; done
}
xid n1 1
check "XID 79 on n1: the power-cycle rung held, the node returned (incident closed)" wait_state n1 closed
is "… the rung's step is vigil bmc's line" "$(inc n1 | jq -r '.[0].steps."repair power-cycle".detail')" \
    "$VIGIL: ok: power-cycle n1: done: /redfish/v1/Systems/437XR1138R2: ResetType ForceRestart, task Completed, PowerState On"
check "… n1 is back in Slurm" sh -c "! scontrol show node n1 | grep -q 'State=DOWN'"
mode refuse
xid n2 1
check "XID 79 on n2, the BMC refuses: handed off for RMA" wait_state n2 rma
is "… the rung recorded as failed with the BMC's message" "$(inc n2 | jq -r '.[0].steps."repair power-cycle".detail')" \
    "$VIGIL: failed: power-cycle n2: refused: POST /redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset: HTTP 400: Unable to process the request because an error occurred."
T=$(ls "$W"/rma/vigil-rma-*.json 2>/dev/null | head -1)
is "… the ticket's attempts carry it" "$(jq -r '.attempts[0].result' "$T" | grep -c 'HTTP 400: Unable to process')" 1
is "… and the kernel-log attachment" "$(jq -r '.attachments[0].name + " " + .attachments[0].result' "$T")" "kernel-log ok"
check "… n2 stays out (DOWN in Slurm)" sh -c "scontrol show node n2 | grep -q 'State=DOWN'"
done_testing
