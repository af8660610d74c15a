#!/bin/sh
# lab_ha.sh — a lab of two controllers on a private PostgreSQL server
# (`vigil lab up 3 --spares 1 --controllers 2 --store postgres`): status
# shows one leader and one follower with their pids, env lists both URLs,
# status, audit fleet, report and drill given the list ask the leader; the
# controller-crash drill (the leader SIGKILLed a moment before an XID 79)
# reports the takeover, the node out and the job restarted, and brings the
# killed controller back; on a one-controller lab it is refused (exit 2);
# down stops PostgreSQL and every controller and removes the directory.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ] || ! command -v slurmctld >/dev/null 2>&1 || ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    skip "lab_ha: needs root, Debian's slurmctld and a PostgreSQL server"
    exit 0
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/vigil-lab-ha.XXXXXX")
lab_up 3 --spares 1 --controllers 2 --store postgres || { nok "lab up 3 --controllers 2 --store postgres"; exit 1; }
trap 'lab_down; [ -n "$ONE" ] && "$VIGIL" lab down --dir "$ONE" >/dev/null 2>&1; rm -rf "$T"' EXIT
ok "lab up 3 --spares 1 --controllers 2 --store postgres"

"$VIGIL" lab status --dir "$LAB_DIR" --json >"$T/status.json"
is "status: two controllers, one leader and one follower" \
    "$(jq -r '[.controllers[].role] | sort | join(" ")' "$T/status.json")" "follower leader"
is "status: both in the same term" "$(jq '[.controllers[].term] | unique | length' "$T/status.json")" "1"
LEADER=$(jq -r '.controllers[] | select(.role == "leader") | .url' "$T/status.json")
FOLLOWER=$(jq -r '.controllers[] | select(.role == "follower") | .url' "$T/status.json")
alive=0
for p in $(jq -r '.controllers[].pid' "$T/status.json"); do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
is "status: each controller's pid runs" "$alive" "2"
is "status: the store is postgres" "$(jq -r .store "$T/status.json")" "postgres"
pg=$(jq -r '.daemons[] | select(.name == "postgres") | .pid' "$T/status.json")
is "the lab's PostgreSQL server runs as nobody" "$(ps -o user= -p "$pg" | tr -d ' ')" "nobody"
check "… listening on a socket in the lab only" test -S "$LAB_DIR/pg/.s.PGSQL.5432"
is "lab env: VIGIL_CONTROLLER lists both controllers" "$(echo "$VIGIL_CONTROLLER" | tr ',' '\n' | sort | tr '\n' ' ')" \
    "$(printf '%s\n%s\n' "$LEADER" "$FOLLOWER" | sort | tr '\n' ' ')"
check "status (text) has the controllers' table" sh -c "'$VIGIL' lab status --dir '$LAB_DIR' | grep -q '^CONTROLLER '"
agent=$(awk '$1 == "agent" && $2 == "n1" {print $3}' "$LAB_DIR/run/daemons")
is "the agents are given both URLs" "$(tr '\0' '\n' </proc/"$agent"/cmdline | grep -A1 -x -- --controller | tail -1)" \
    "$VIGIL_CONTROLLER"

# ---- the commands reading a list ask the leader (the follower listed first) ----
LIST="$FOLLOWER,$LEADER"
is "status: the leader of the list is the one checked" \
    "$(VIGIL_CONTROLLER=$LIST "$VIGIL" status --json | jq -r '.items[] | select(.item == "controller") | .detail')" \
    "$LEADER answers (the leader of the list)"
exits_with "audit fleet --controller FOLLOWER,LEADER answers" 0 "$VIGIL" audit fleet --controller "$LIST" --fail-on none
exits_with "audit fleet: a dead controller first, then the leader" 0 "$VIGIL" audit fleet --controller "http://127.0.0.1:1,$LEADER" --fail-on none
exits_with "report --controller FOLLOWER,LEADER" 0 "$VIGIL" report --controller "$LIST" --json
exits_with "report: an empty item in the list is bad input" 2 "$VIGIL" report --controller "$LEADER,,$FOLLOWER" --json

# ---- the controller-crash drill: takeover, isolate, restart ----
"$VIGIL" drill --lab --dir "$LAB_DIR" --fault controller-crash --deadline 60 --save "$T/crash.json" >"$T/crash.txt" 2>"$T/crash.err"
is "drill --fault controller-crash: exit 0 (recovered)" "$?" "0"
grep 'warning' "$T/crash.err" | sed 's/^/# /'
run='.runs[0]'
is "the leader was the one killed" "$(jq -r "$run.takeover.killed" "$T/crash.json")" "$LEADER"
is "the follower took over" "$(jq -r "$run.takeover.leader" "$T/crash.json")" "$FOLLOWER"
check "… in a later term" test "$(jq "$run.takeover.term" "$T/crash.json")" -gt "$(jq "$run.takeover.killed_term" "$T/crash.json")"
for s in takeover isolate restart; do
    check "the report times $s" test "$(jq "$run.$s.after_s | type" "$T/crash.json")" = '"number"'
done
check "the fault came after the kill" test "$(jq -r "$run.t0 > $run.takeover.killed_at" "$T/crash.json")" = true
is "the node went out: vigil's incident on it" "$(jq -r "$run.controller_view.incidents[0].node" "$T/crash.json")" \
    "$(jq -r "$run.victim" "$T/crash.json")"
is "the job restarted on the spare" "$(jq -r "$run.restart.spare" "$T/crash.json")" "true"
is "the summary has the takeover" "$(jq .takeover.count "$T/crash.json")" "1"
check "the text report has the takeover row" grep -q '^takeover (s after kill) ' "$T/crash.txt"
check "… and says who took over" grep -q "^run 1 controller-crash: leader $LEADER (pid [0-9]*, term [0-9]*) killed .*; $FOLLOWER leads after [0-9.]* s$" "$T/crash.txt"
# the drill started it again once its port file was written: it answers as a follower once it has
# read the lease (a loaded machine may take a moment)
role_of() { "$VIGIL" lab status --dir "$LAB_DIR" --json | jq -r ".controllers[] | select(.url == \"$1\") | .role"; }
if wait_for '[ "$(role_of "$LEADER")" = follower ]' 10; then ok "after the drill: the killed controller runs again, as a follower"
else
    nok "after the drill: the killed controller runs again, as a follower (it is $(role_of "$LEADER"))"
    grep -hv 'rejected POST' "$LAB_DIR"/log/serve*.out | tail -n 6 | sed 's/^/# /'
fi
"$VIGIL" lab status --dir "$LAB_DIR" --json >"$T/after.json"
is "… and the lab is healthy" "$(jq .healthy "$T/after.json")" "true"

# ---- refusals ----
ONE=$(mktemp -u "${TMPDIR:-/tmp}/vigil-lab-one.XXXXXX")
"$VIGIL" lab up 1 --dir "$ONE" >/dev/null 2>&1 || nok "a one-controller lab comes up"
err=$("$VIGIL" drill --lab --dir "$ONE" --fault controller-crash 2>&1)
is "drill --fault controller-crash on a one-controller lab: exit 2" "$?" "2"
is "… saying why" "$err" "vigil: drill: --fault controller-crash: the lab in $ONE runs 1 controller(s); it needs 2 or more (vigil lab up N --controllers 2 --store postgres)"
is "… and its controller still runs" "$("$VIGIL" lab status --dir "$ONE" --json | jq -r '.controllers[0].role')" "single"
"$VIGIL" lab down --dir "$ONE" >/dev/null 2>&1
exits_with "--controllers 2 without --store postgres: exit 2" 2 "$VIGIL" lab up 2 --controllers 2 --dir "$T/x"
exits_with "--store mysql: exit 2" 2 "$VIGIL" lab up 2 --store mysql --dir "$T/x"
exits_with "--controllers 0: exit 2" 2 "$VIGIL" lab up 2 --controllers 0 --store postgres --dir "$T/x"

# ---- down: PostgreSQL and every controller stopped, the directory gone ----
"$VIGIL" lab down --dir "$LAB_DIR"
is "down exits 0" "$?" "0"
left=0
for e in /proc/[0-9]*/environ; do grep -qs "VIGIL_LAB_DAEMON=$LAB_DIR" "$e" && left=$((left + 1)); done
is "no process of the lab is left" "$left" "0"
is "no postgres of the lab is left" "$(pgrep -c -f "postgres.*$LAB_DIR" || true)" "0"
check "the lab directory is gone" test ! -e "$LAB_DIR"
done_testing
