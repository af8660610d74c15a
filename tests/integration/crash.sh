#!/bin/sh
# crash.sh — the controller's state survives crashes, its own and the
# scheduler's, on a real lab (4 nodes, munge, real slurmctld): `kill -9` and
# SIGTERM of `vigil serve` while a repair rung runs (the rung runs again after
# the restart and the node returns); slurmctld killed right after vigil's
# DOWN and restarted from a state without it (the DOWN is put back, the
# incident stays isolated) and an operator's `scontrol update state=resume`
# while slurmctld stays up (returned by someone else); the store deleted and
# its pages corrupted under a running controller (503, ALERT, /healthz), a
# corrupt store at start (exit 2; --new-store moves it aside); a second
# controller on the same store (refused, naming the holder) and one on the
# same cluster with its own store (ALERT); and the wall clock stepped back
# 563 s while a node is out (libfaketime: no negative MTTR, availability
# below 1, the step logged).
. "$(dirname "$0")/lib.sh"
W=$(mktemp -d "${TMPDIR:-/tmp}/vigil-crash.XXXXXX")
chmod 755 "$W"   # munged refuses a socket under a 0700 parent
PLAIN=$(dirname "$VIGIL")/vigil   # the unsanitized build, for LD_PRELOAD (ASan must come first)
FAKETIME_LIB=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1
SERVE_PID= OTHER_PID=
stop_serve() { [ -n "$SERVE_PID" ] && kill -9 "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null; SERVE_PID=; }
lab_up 4 --no-vigil --dir "$W/lab" >/dev/null || { nok "lab up"; rm -rf "$W"; exit 1; }
trap 'stop_serve; [ -n "$OTHER_PID" ] && kill -9 "$OTHER_PID" 2>/dev/null; lab_down; rm -rf "$W"' EXIT
node_tokens "$W" 'n[1-4]' >/dev/null
secret "$W/read.token" read
RH="Authorization: Bearer $(cat "$W/read.token")"
echo 0 >"$W/seq"
# a repair rung that runs until the test lets it finish: each start is a line in rung-NODE.log
cat >"$W/rung.sh" <<EOF
#!/bin/sh
echo started >>"$W/rung-\$1.log"
while [ ! -e "$W/go-\$1" ]; do sleep 0.05; done
EOF
chmod 755 "$W/rung.sh"
LADDER="breaker = 100% / 600s
repair wait = $W/rung.sh {node}
healthcheck = true {node}"

serve() { # DB LOG POLICY [serve options…] — starts `vigil serve`: SERVE_PID, URL; $PRE runs it (faketime)
    _db=$1 _log=$2; printf '%s\n' "$3" >"$W/policy.conf"; shift 3
    rm -f "$W/port"
    $PRE "$VIGIL" serve --listen 127.0.0.1:0 --port-file "$W/port" --db "$_db" --auth token --secret-file "$W/secret" \
        --read-token-file "$W/read.token" --policy "$W/policy.conf" --heartbeat 0 "$@" 2>>"$_log" &
    SERVE_PID=$!
    wait_for '[ -s "$W/port" ] || ! kill -0 $SERVE_PID' 10
    URL="http://127.0.0.1:$(cat "$W/port" 2>/dev/null)"
}
post_xid() { # NODE → HTTP status, as the node's agent posts it (its own token)
    SEQ=$(( $(cat "$W/seq") + 1 )); echo $SEQ >"$W/seq"
    vcurl "$1" -o /dev/null -w '%{http_code}' --max-time 5 \
        --data-binary "{\"node\":\"$1\",\"seq\":$SEQ,\"events\":[{\"kind\":\"xid\",\"code\":79,\"pci\":\"0000:18:00.0\",\"gpu\":0,\"action\":\"reboot\",\"source\":\"kmsg\"}]}" \
        "$URL/v1/events"
}
inc() { curl -s -H "$RH" "$URL/v1/incidents?node=$1&limit=1" | jq -c '.[0]'; }
state_of() { inc "$1" | jq -r '.state'; }
is_out() { scontrol show node -o "$1" | grep -q 'State=[A-Z+]*\(DOWN\|DRAIN\)'; }
reason() { scontrol show node -o "$1" | sed -n 's/.* Reason=\(.*\) \[.*/\1/p'; }
rungs() { [ -e "$W/rung-$1.log" ] && wc -l <"$W/rung-$1.log" || echo 0; }
metric() { curl -s -H "$RH" "$URL/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
healthz() { curl -s -o "$W/healthz" -w '%{http_code}' "$URL/healthz"; }

# ---- 1. kill -9 while a repair rung runs: the restarted controller runs the rung again
serve "$W/a.db" "$W/a.log" "$LADDER"
is "XID 79 on n2 accepted" "$(post_xid n2)" 202
check "n2 out, its repair rung running" wait_for 'is_out n2 && [ "$(rungs n2)" = 1 ]' 15
is "n2's incident says so" "$(state_of n2)" repairing
kill -9 "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null
serve "$W/a.db" "$W/a.log" "$LADDER"
check "kill -9: after the restart the rung runs again" wait_for '[ "$(rungs n2)" = 2 ]' 10
touch "$W/go-n2"
check "kill -9: the rung ends, the health check passes, n2 back in service" \
    wait_for '[ "$(state_of n2)" = closed ] && ! is_out n2' 15
check "kill -9: the incident has its return" sh -c "curl -s -H '$RH' '$URL/v1/incidents?node=n2' | jq -e '.[0].steps.returned.at' >/dev/null"
is "kill -9: one incident for the fault" "$(curl -s -H "$RH" "$URL/v1/incidents?node=n2" | jq length)" 1

# ---- 2. SIGTERM (systemctl restart) while a repair rung runs: the same
is "XID 79 on n3 accepted" "$(post_xid n3)" 202
check "n3 out, its repair rung running" wait_for 'is_out n3 && [ "$(rungs n3)" = 1 ]' 15
kill -TERM "$SERVE_PID"
check "SIGTERM: the controller exits within 6 s" wait_for '! kill -0 $SERVE_PID' 7
wait "$SERVE_PID" 2>/dev/null
serve "$W/a.db" "$W/a.log" "$LADDER"
check "SIGTERM: after the restart the rung runs again" wait_for '[ "$(rungs n3)" = 2 ]' 10
touch "$W/go-n3"
check "SIGTERM: n3 repaired and back" wait_for '[ "$(state_of n3)" = closed ] && ! is_out n3' 15
check "both restarts logged what they resumed" grep -q 'resuming incident [0-9]* (n3, repairing): repair at its last rung' "$W/a.log"

# ---- 3. slurmctld killed right after the DOWN, back from a state without it:
# vigil puts its DOWN back and the incident stays isolated
stop_serve
serve "$W/b.db" "$W/b.log" "breaker = 100% / 600s"
is "XID 79 on n1 accepted" "$(post_xid n1)" 202
check "n1 DOWN" wait_for 'is_out n1' 10
ctld=$(cat "$LAB_DIR/run/slurmctld.pid")
kill -9 "$ctld"
wait_for '! kill -0 '"$ctld" 10
rm -f "$LAB_DIR"/ctld/node_state*   # its saved state lost (a failover to a stale copy looks the same)
VIGIL_LAB_DAEMON=$LAB_DIR slurmctld -f "$SLURM_CONF"
check "vigil DOWNs n1 again" wait_for '[ "$(metric vigil_reisolated_total)" = 1 ] && is_out n1' 20
case "$(reason n1)" in "vigil: xid 79 gpu 0 0000:18:00.0 [controller "*"]") ok "n1's reason is vigil's again" ;;
    *) nok "n1's reason: '$(reason n1)'" ;; esac
is "the incident stays isolated" "$(state_of n1)" isolated
case "$(inc n1 | jq -r '.steps["re-isolated"].detail')" in *"the scheduler lost it (epoch "*) ok "a re-isolated step says why" ;;
    *) nok "re-isolated step: $(inc n1 | jq -c .steps)" ;; esac

# ---- 4. an operator resumes n1 while slurmctld stays up: returned by someone else
scontrol update NodeName=n1 State=RESUME
check "resumed by hand: the incident closes" wait_for '[ "$(state_of n1)" = closed ]' 10
is "resumed by hand: returned outside vigil" "$(inc n1 | jq -r '.steps.returned.detail')" \
    "back in service outside vigil (resumed by someone else)"
check "resumed by hand: n1 stays in service" sh -c "sleep 2.5; ! scontrol show node -o n1 | grep -q 'State=[A-Z+]*DOWN'"

# ---- 5. two controllers on one store: the second refuses; on one cluster: ALERT
"$VIGIL" serve --listen 127.0.0.1:0 --db "$W/b.db" --auth token --secret-file "$W/secret" 2>"$W/second.err" </dev/null &
OTHER_PID=$!
wait_for '! kill -0 '"$OTHER_PID" 10
kill -9 "$OTHER_PID" 2>/dev/null   # still running: it did not refuse
wait "$OTHER_PID"; rc=$?; OTHER_PID=
is "a second controller on the same store exits 2" "$rc" 2
is "… with one line naming the holder" "$(grep -c "another controller holds this store (pid $SERVE_PID on " "$W/second.err")/$(wc -l <"$W/second.err")" 1/1
is "XID 79 on n4 (to the first controller)" "$(post_xid n4)" 202
check "n4 DOWN" wait_for 'is_out n4' 10
first=$SERVE_PID URL1=$URL
SERVE_PID=
serve "$W/c.db" "$W/c.log" "breaker = 100% / 600s"
check "a second controller on the cluster raises an ALERT naming the other" \
    wait_for 'grep -q "ALERT another vigil controller" "$W/c.log"' 10
is "vigil_other_controllers" "$(metric vigil_other_controllers)" 1
stop_serve
SERVE_PID=$first URL=$URL1
stop_serve
scontrol update NodeName=n4 State=RESUME

# ---- 6. the store deleted under the running controller: no more 202s
serve "$W/d.db" "$W/d.log" "breaker = 100% / 600s"
is "healthz ok" "$(healthz)" 200
rm -f "$W"/d.db*
is "deleted store: the next event is refused 503 (the agent keeps it)" "$(post_xid n3)" 503
is "deleted store: /healthz 503" "$(healthz)" 503
check "deleted store: /healthz says why" grep -q '^store lost: .*deleted' "$W/healthz"
check "deleted store: one ALERT line" test "$(grep -c 'ALERT store .*deleted' "$W/d.log")" = 1
is "deleted store: vigil_store_ok" "$(metric vigil_store_ok)" 0
stop_serve

# ---- 7. pages corrupted under the running controller: refused, ALERT, /healthz
serve "$W/e.db" "$W/e.log" "breaker = 100% / 600s" --dry-run
for n in n1 n2 n3 n4 n1 n2 n3 n4; do post_xid $n >/dev/null; done
store_sql "PRAGMA wal_checkpoint(TRUNCATE);" "$W/e.db" >/dev/null
size=$(stat -c %s "$W/e.db")
head -c $((size - 4096)) /dev/urandom | dd of="$W/e.db" bs=4096 seek=1 conv=notrunc status=none
code=$(post_xid n2)
check "corrupt pages: the event is refused 503 (got $code)" test "$code" = 503
is "corrupt pages: /healthz 503" "$(healthz)" 503
check "corrupt pages: ALERT" grep -q 'ALERT store .*corrupt' "$W/e.log"
stop_serve

# ---- 8. a corrupt store at start: refused; --new-store moves it aside
timeout 10 "$VIGIL" serve --listen 127.0.0.1:0 --db "$W/e.db" --auth token --secret-file "$W/secret" 2>"$W/start.err" </dev/null
is "corrupt store at start: exit 2" "$?" 2
is "… one line naming the option" "$(grep -c 'the store is corrupt .*--new-store' "$W/start.err")/$(wc -l <"$W/start.err")" 1/1
serve "$W/e.db" "$W/e2.log" "breaker = 100% / 600s" --dry-run --new-store
is "--new-store: the controller starts and answers" "$(healthz)" 200
check "--new-store: the bad file moved aside, not deleted" sh -c "ls '$W'/e.db.corrupt-* >/dev/null"
stop_serve

# ---- 9. the wall clock steps back 563 s while n4 is out and repairing
if [ -e "$FAKETIME_LIB" ]; then
    echo "+0" >"$W/faketime"
    PRE="env LD_PRELOAD=$FAKETIME_LIB FAKETIME_TIMESTAMP_FILE=$W/faketime FAKETIME_NO_CACHE=1 FAKETIME_DONT_FAKE_MONOTONIC=1"
    VIGIL_SAN=$VIGIL VIGIL=$PLAIN
    rm -f "$W/go-n4" "$W/rung-n4.log"
    serve "$W/f.db" "$W/f.log" "$LADDER"
    is "XID 79 on n4 accepted" "$(post_xid n4)" 202
    check "n4 out, repairing" wait_for '[ "$(rungs n4)" = 1 ]' 15
    echo "-563" >"$W/faketime"
    check "the step back is logged" wait_for 'grep -q "clock: the wall clock stepped back by 56[0-9]" "$W/f.log"' 5
    av=$(curl -s -H "$RH" "$URL/v1/summary" | jq '.accounting.availability')
    check "availability below 1 while the clock is back ($av)" awk "BEGIN { exit !($av < 1) }"
    is "vigil_clock_steps_total" "$(metric vigil_clock_steps_total)" 1
    $PRE "$VIGIL" report --db "$W/f.db" --json >"$W/report.json" 2>"$W/report.err"
    is "vigil report on the stepped clock: availability unknown, not 1" "$(jq -c '.availability' "$W/report.json")" null
    check "… and it says the clock is behind the store" grep -q "clock is 56[0-9] s behind the store's newest record" "$W/report.err"
    touch "$W/go-n4"
    check "n4 repaired and back" wait_for '[ "$(state_of n4)" = closed ]' 15
    i=$(inc n4)
    d=$(echo "$i" | jq -r '.steps.detected.at') r=$(echo "$i" | jq -r '.steps.returned.at')
    check "returned ($r) not before detected ($d)" test "$(printf '%s\n%s\n' "$d" "$r" | sort | head -1)" = "$d"
    stop_serve
    mttr=$("$VIGIL_SAN" report --db "$W/f.db" --json | jq '.mttr_s')
    check "vigil report: MTTR $mttr s, not negative" awk "BEGIN { exit !($mttr >= 0) }"
    PRE= VIGIL=$VIGIL_SAN
else
    skip "the clock step needs libfaketime (Debian: faketime)"
fi
done_testing
