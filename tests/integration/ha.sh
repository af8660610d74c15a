#!/bin/sh
# ha.sh — several controllers on one PostgreSQL store (a private server,
# tests/pg.sh), acting on the Kubernetes API double.  Started together,
# exactly one leads; /healthz and /metrics say who.  A follower takes an
# event and the leader acts on it.  The leader killed with SIGKILL: the
# follower takes over within seconds and acts on the next fault, no
# incident done twice or dropped.  A leader frozen (SIGSTOP) past its lease
# and resumed does not act (fenced) and exits 3.  The lease row edited by
# hand: one leader still.  PostgreSQL restarted under a stream of events:
# every acknowledged event is in the store.  The leader's own connections to
# the database go silent just after it took the writers' lock (the others
# keep theirs): it gives up, stops leading and exits 3; the server ends its
# open transaction, so the next leader's writes go on, and acts.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/vigil-ha.XXXXXX")
PGD=/tmp/vigil-ha-pg.$$   # the server runs as another user: not under the private $W
. "$ROOT/tests/k8s/harness.sh"
PIDS=""
cleanup() {
    tests/pg.sh stop "$PGD"
    for p in $PIDS; do kill -9 "$p" 2>/dev/null; kill -CONT "$p" 2>/dev/null; done
    for p in $PIDS; do wait "$p" 2>/dev/null; done
    stop_kapi
    rm -rf "$W"
}
trap cleanup EXIT

make_ca
TOKEN="ha-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
umask 077; node_tokens "$W" 'n[1-5]' >/dev/null
echo "read-token-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')" >"$W/read.token"; umask 022
RH="Authorization: Bearer $(cat "$W/read.token")"
echo 0 >"$W/seq"
start_kapi --token "$TOKEN"
kubeconfig "$W/vigil.kc" "$TOKEN"
DB=$(tests/pg.sh start "$PGD") || { nok "a private PostgreSQL starts"; done_testing; exit 1; }
printf 'spares = n5\nbreaker = 100%% / 600s\n' >"$W/policy.conf"

# start_ctl K — controller K in the background; its URL in $W/urlK once it listens
start_ctl() {
    rm -f "$W/port$1"
    "$VIGIL" serve --orchestrator k8s --kubeconfig "$W/vigil.kc" --listen 127.0.0.1:0 --port-file "$W/port$1" \
        --db "${CTL_DB:-$DB}" --auth token --secret-file "$W/secret" --read-token-file "$W/read.token" --policy "$W/policy.conf" \
        2>>"$W/ctl$1.log" &
    echo $! >"$W/pid$1"
    PIDS="$PIDS $!"
}
url_of() { wait_for 10 test -s "$W/port$1" && echo "http://127.0.0.1:$(cat "$W/port$1")"; }
health() { curl -s --max-time 2 "$(url_of "$1")/healthz"; }
role_of() { health "$1" | awk '$1 == "role" {print $2}'; }
term_of() { health "$1" | awk '$1 == "term" {print $2}'; }
leaders() { n=0; for k in "$@"; do [ "$(role_of "$k")" = leader ] && n=$((n + 1)); done; echo $n; }
one_leader() { [ "$(leaders "$@")" = 1 ]; }
role_is() { [ "$(role_of "$1")" = "$2" ]; }   # K role
term_is() { [ "$(term_of "$1")" = "$2" ]; }   # K term
annotated() { node_has "$1" ".metadata.annotations[\"vigil.dev/isolated\"] | fromjson | .reason | test(\"term $2\\\\]\")"; }
leader_of() { for k in "$@"; do [ "$(role_of "$k")" = leader ] && echo "$k"; done; }
xid_to() { # K node [bus] → HTTP status of an XID 79 (GPU 0000:BUS:00.0, default 18) posted to controller K as the node's agent
    SEQ=$(( $(cat "$W/seq") + 1 )); echo $SEQ >"$W/seq"
    vcurl "$2" -o /dev/null -w '%{http_code}' --max-time 5 \
        --data-binary "{\"node\":\"$2\",\"seq\":$SEQ,\"events\":[{\"kind\":\"xid\",\"code\":79,\"pci\":\"0000:${3:-18}:00.0\",\"gpu\":0,\"action\":\"drain-rma\",\"source\":\"kmsg\"}]}" \
        "$(url_of "$1")/v1/events"
}
cordoned() { node_has "$1" '.spec.unschedulable == true'; }
incidents_of() { curl -s -H "$RH" "$(url_of "$1")/v1/incidents?node=$2" | jq 'if type == "array" then length else .incidents | length end'; }
psql_q() { psql "$DB" -Atc "$1"; }
ms() { date +%s%3N; }

# ---- two controllers started at once: exactly one leads ----------------------------
start_ctl 1; start_ctl 2
check "two controllers started together: one leader" wait_for 10 one_leader 1 2
L=$(leader_of 1 2); F=$((3 - L))
is "the other is a follower" "$(role_of $F)" follower
is "the follower names the leader's URL" "$(health $F | awk '$1 == "leader" {print $2}')" "$(url_of $L)"
is "term 1" "$(term_of $L)" 1
is "/metrics: vigil_leader 1 on the leader, 0 on the follower" \
    "$(curl -s -H "$RH" "$(url_of $L)/metrics" | awk '$1 == "vigil_leader" {print $2}') $(curl -s -H "$RH" "$(url_of $F)/metrics" | awk '$1 == "vigil_leader" {print $2}')" "1 0"
is "a follower refuses beats (503: they go to the leader)" \
    "$(vcurl n1 -o /dev/null -w '%{http_code}' --data-binary '{"node":"n1"}' "$(url_of $F)/v1/heartbeat")" 503

# ---- an event to the follower: the leader acts on it --------------------------------
is "XID 79 on n2, sent to the follower, is accepted" "$(xid_to $F n2)" 202
check "the leader cordons n2" wait_for 10 cordoned n2
check "the reason carries the leader's term" annotated n2 1
is "one incident for n2, read through either controller" "$(incidents_of $L n2) $(incidents_of $F n2)" "1 1"
check "the follower did not act (its log names no isolation)" sh -c "! grep -q 'isolat' '$W/ctl$F.log'"

# ---- the leader killed: the follower takes over ------------------------------------
t0=$(ms)
kill -9 "$(cat "$W/pid$L")"
until role_is $F leader || [ $(( $(ms) - t0 )) -gt 10000 ]; do sleep 0.05; done
took=$(( $(ms) - t0 ))
check "after the leader's SIGKILL the follower leads" role_is $F leader
echo "# takeover: $took ms"
check "…within the lease and a look (under 5 s: $took ms)" test "$took" -lt 5000
is "with term 2" "$(term_of $F)" 2
is "XID 79 on n3 to the new leader" "$(xid_to $F n3)" 202
check "the new leader cordons n3" wait_for 10 cordoned n3
check "…under term 2" annotated n3 2
is "n2's incident was not done again (still one, isolated)" "$(incidents_of $F n2) $(curl -s -H "$RH" "$(url_of $F)/v1/incidents?node=n2" | jq -r '.[0].state // .incidents[0].state')" "1 isolated"
is "n3: one incident" "$(incidents_of $F n3)" 1

# ---- the old leader comes back as a follower; the new one frozen past its lease -----
start_ctl $L
check "the restarted controller follows" wait_for 10 role_is $L follower
kill -STOP "$(cat "$W/pid$F")"
check "with the leader frozen, the other takes over (term 3)" wait_for 10 term_is $L 3
is "…and leads" "$(role_of $L)" leader
is "XID 79 on n4, to the new leader" "$(xid_to $L n4)" 202
check "n4 cordoned under term 3" wait_for 10 annotated n4 3
kill -CONT "$(cat "$W/pid$F")"
wait_exit() { ! kill -0 "$1" 2>/dev/null; }
check "the frozen leader, resumed, stops (it lost its lease)" wait_for 10 wait_exit "$(cat "$W/pid$F")"
wait "$(cat "$W/pid$F")" 2>/dev/null; rc=$?
is "…with status 3" "$rc" 3
check "…saying so" grep -q 'no longer the leader (term 2)' "$W/ctl$F.log"
reasons_kept() { annotated n2 1 && annotated n3 2 && annotated n4 3; }
check "…having changed nothing: n2, n3, n4 keep the reasons of terms 1, 2, 3" reasons_kept
is "n4: one incident" "$(incidents_of $L n4)" 1

# ---- the lease edited by hand: still one leader -------------------------------------
start_ctl $F
check "the stopped controller, started again, follows" wait_for 10 role_is $F follower
alive() { for k in "$@"; do kill -0 "$(cat "$W/pid$k")" 2>/dev/null && echo "$k"; done; }
psql_q "UPDATE leader SET expires_at = now() - interval '1 second'" >/dev/null
# the lease ends early (a hand edit, a clock jump) while the leader still trusts it: whoever claims it
# next, the old leader's decisions are fenced (its term no longer holds the lease), so the event sent to
# it a moment later is acted on by the next leader, under the next term
is "XID 79 on n1 to the old leader, just after" "$(xid_to $L n1)" 202
check "n1 cordoned under a later term (4 or more), not 3" wait_for 10 node_has n1 \
    '.metadata.annotations["vigil.dev/isolated"] | fromjson | .reason | test("term ([4-9]|[1-9][0-9])\\]")'
check "then one leads" wait_for 10 one_leader $(alive 1 2)
check "with a later term (4 or more)" test "$(term_of "$(leader_of $(alive 1 2))")" -ge 4
check "the leader of term 3 stopped (exit 3)" wait_for 10 wait_exit "$(cat "$W/pid$L")"
start_ctl $L
check "started again, it follows" wait_for 10 role_is $L follower
F=$(leader_of 1 2)
# ---- PostgreSQL restarted under a stream of events ----------------------------------
msg31() { # seq → n1's message of the stream: an XID 31 (recorded, no action)
    printf '{"node":"n1","seq":%d,"events":[{"kind":"xid","code":31,"pci":"0000:18:00.0","gpu":0,"action":"ignore","source":"kmsg"}]}' "$1"
}
: >"$W/acked"
( s=1000; while [ $s -lt 1150 ]; do
      c=$(vcurl n1 -o /dev/null -w '%{http_code}' --max-time 5 \
          --data-binary "$(msg31 $s)" "$(url_of $F)/v1/events")
      [ "$c" = 202 ] && echo $s >>"$W/acked"
      s=$((s + 1))
  done ) &
STREAM=$!
wait_for 10 test -s "$W/acked"
tests/pg.sh restart "$PGD"
wait $STREAM
acked=$(wc -l <"$W/acked")
check "events were acknowledged around the restart ($acked of 150)" test "$acked" -gt 0
# each acknowledged message delivered again, as its agent would, to a controller that takes it (either
# does, leader or follower): the store holds it when the answer counts it a duplicate ("duplicates":1)
redeliver() { # seq → true once a live controller answered; the answer's duplicates in $W/dup
    for k in $(alive 1 2); do
        vcurl n1 --max-time 5 --data-binary "$(msg31 "$1")" "$(url_of "$k")/v1/events" |
            jq -r '.duplicates // empty' >"$W/dup"
        [ -s "$W/dup" ] && return 0
    done
    return 1
}
missing=0
for s in $(cat "$W/acked"); do
    wait_for 10 redeliver "$s" && [ "$(cat "$W/dup")" = 1 ] || missing=$((missing + 1))
done
stored=$(curl -s -H "$RH" "$(url_of "$(alive 1 2 | head -1)")/v1/incidents?node=n1&code=31&limit=1000" | jq 'map(.count) | add')
is "every acknowledged event is in the store ($stored stored)" "$missing" 0
# the leader keeps its lease through a short restart, or loses it (exit 3) and the other takes over
check "after the restart one controller leads" wait_for 15 one_leader $(alive 1 2)
is "…and acts: XID 79 on n5 accepted" "$(xid_to "$(leader_of $(alive 1 2))" n5)" 202
check "n5 cordoned" wait_for 10 cordoned n5

# ---- the leader's database connections go silent; the others keep theirs -----------
# controller 3 reaches PostgreSQL through a forwarder that cuts its traffic
# without closing anything (a network gone quiet), just after a transaction of
# it took the writers' lock
mkdir -p "$W/cut"
build/tests/sockcut "$W/cut/.s.PGSQL.5432" "$PGD/.s.PGSQL.5432" --after "pg_advisory_xact_lock(764201)" >"$W/cut.out" &
CUT=$!; PIDS="$PIDS $CUT"
wait_for 10 test -S "$W/cut/.s.PGSQL.5432"
CTL_DB="host=$W/cut user=vigil dbname=postgres" start_ctl 3
for k in $(alive 1 2); do kill -9 "$(cat "$W/pid$k")"; wait "$(cat "$W/pid$k")" 2>/dev/null; done
check "controller 3, through the forwarder, leads" wait_for 15 role_is 3 leader
T3=$(term_of 3)
start_ctl 1
check "controller 1 follows" wait_for 10 role_is 1 follower
# n1 back in service by hand: the next fault on it is a new one to act on
acurl -o /dev/null -X PATCH -H 'Content-Type: application/merge-patch+json' \
    --data-binary '{"spec":{"unschedulable":false,"taints":null},"metadata":{"annotations":{"vigil.dev/isolated":null}}}' "$API/api/v1/nodes/n1"
kill -USR1 $CUT
code=$(xid_to 3 n1 3b)
check "the event that took the lock just before the cut is not acknowledged ($code)" test "$code" != 202
check "the cut happened there" grep -qx cut "$W/cut.out"
check "the cut-off leader stops (its renewal unanswered past its trust window)" wait_for 15 wait_exit "$(cat "$W/pid3")"
kill -9 "$(cat "$W/pid3")" 2>/dev/null   # one that did not stop: the status below says so
wait "$(cat "$W/pid3")" 2>/dev/null; rc=$?
is "…with status 3" "$rc" 3
check "…saying why" grep -q "no longer the leader (term $T3): PostgreSQL did not answer in time" "$W/ctl3.log"
check "the other controller leads, with a later term" wait_for 10 role_is 1 leader
check "…term $((T3 + 1))" term_is 1 $((T3 + 1))
# its writes wait on the writers' lock the silent session holds until the server ends it
is "XID 79 on n1 to the new leader (the lock the cut session held was freed)" "$(xid_to 1 n1 3b)" 202
check "n1 cordoned under term $((T3 + 1))" wait_for 10 annotated n1 $((T3 + 1))
done_testing
