#!/bin/sh
# serve_hardening.sh — the controller under the attacks and faults of issue
# 14, each reproduced against a real `vigil serve` over real HTTP: a new spool
# life restarting seq, oversized bodies and messages, slowloris, stalled 4 MiB
# uploads, unauthenticated and unbounded reads, --auth none off loopback,
# control characters and cut UTF-8 in fields, SIGTERM with queued incidents,
# and a full disk under the database (a small tmpfs, when mounting is allowed).
# Each node speaks with its own token; the scheduler (a one-node lab) lists
# the nodes posted for.  (Issue 27's attacks: serve_identity.sh.)
. "$(dirname "$0")/lib.sh"
LOAD=$(cd "$(dirname "$0")/../.." && pwd)/build/tests/httpload
T=$(mktemp -d /tmp/vigil-harden-XXXXXX)
SERVE_PID= MOUNTED=
cleanup() {
    [ -n "$SERVE_PID" ] && kill -9 "$SERVE_PID" 2>/dev/null
    wait 2>/dev/null
    [ -n "$MOUNTED" ] && umount "$T/full"
    lab_down
    rm -rf "$T"
}
sched_up 'n[2-9],p[1-5],a[1-5],r1,f1,bench[0-19]' || { nok "scheduler (lab) up"; rm -rf "$T"; exit 1; }
trap cleanup EXIT   # after sched_up, which sets its own

start_serve() { # db, extra serve options
    db=$1; shift
    rm -f "$T/port"
    "$VIGIL" serve --dry-run --listen 127.0.0.1:0 --port-file "$T/port" --db "$db" "$@" 2>>"$T/serve.log" &
    SERVE_PID=$!
    i=0; while [ ! -s "$T/port" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
    PORT=$(cat "$T/port" 2>/dev/null)
    URL="http://127.0.0.1:$PORT"
}
stop_serve() { kill "$SERVE_PID" 2>/dev/null; wait "$SERVE_PID" 2>/dev/null; SERVE_PID=; }
post() { # body [node: default the one it names, else n1] → "STATUS BODY" (that node's token)
    printf '%s' "$1" >"$T/body"
    _pn=${2:-$(jq -r '.node // empty' "$T/body" 2>/dev/null | head -1)}
    case "$_pn" in *[!a-z0-9]*|'') _pn=n1 ;; esac
    vcurl "$_pn" -w ' %{http_code}' --max-time 3 -H 'Content-Type: application/json' \
        --data-binary @"$T/body" "$URL/v1/events" | awk '{ s = $NF; $NF = ""; sub(/ $/, ""); print s, $0 }'
}
status() { post "$1" | cut -d' ' -f1; }
get() { # path [curl options…] → body
    p=$1; shift
    curl -s --max-time 5 -H "Authorization: Bearer $(cat "$T/read.token")" "$@" "$URL$p"
}
msg() { # node spool seq kind code → a message ("" spool: none)
    sp=; [ -n "$2" ] && sp="\"spool\":\"$2\","
    printf '{"node":"%s",%s"seq":%d,"events":[{"kind":"%s","code":%d,"pci":"0000:18:00.0","gpu":0,"action":"drain-rma","source":"kmsg"}]}' \
        "$1" "$sp" "$3" "$4" "$5"
}
metric() { get /metrics | sed -n "s/^$1 //p"; }

umask 077
node_tokens "$T" 'n[1-9],p[1-5],a[1-5],r1,f1' >/dev/null
echo "read-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')" >"$T/read.token"
umask 022
TAUTH="--auth token --secret-file $T/secret"
start_serve "$T/a.db" $TAUTH --read-token-file "$T/read.token"
check "serve starts" test -n "$PORT"

# 1. A new spool life restarts seq at 1: new data, not a duplicate.
A=0123456789abcdef0123456789abcdef B=fedcba9876543210fedcba9876543210
is "spool A seq 1 (XID 48) accepted" "$(status "$(msg n9 $A 1 xid 48)")" 202
out=$(post "$(msg n9 $B 1 xid 79)")
is "spool B seq 1 (XID 79, spool deleted and restarted) is new data" \
    "$(echo "$out" | grep -o '"duplicates":[0-9]*')" '"duplicates":0'
is "... and opens the XID 79 incident" "$(get '/v1/incidents?node=n9' | jq '[.[] | select(.code == 79)] | length')" 1
is "a redelivery under spool B is a duplicate" "$(post "$(msg n9 $B 1 xid 79)" | grep -o '"duplicates":[0-9]*')" '"duplicates":1'
is "an older agent (no spool): seq 1 accepted" "$(post "$(msg n8 '' 1 xid 79)" | grep -o '"duplicates":[0-9]*')" '"duplicates":0'
is "... and its redelivery is a duplicate" "$(post "$(msg n8 '' 1 xid 79)" | grep -o '"duplicates":[0-9]*')" '"duplicates":1'
is "a malformed spool id is refused, naming the field" "$(post "$(msg n9 XYZ 2 xid 79)")" \
    '400 {"error":"message: field '\''spool'\'' must be 32 lowercase hex characters"}'

# 2. Limits, named with their figures.
stored=$(metric vigil_events_stored_total)   # nothing from here to section 10's end is stored
head -c 5242880 /dev/zero | tr '\0' 'x' >"$T/big"
is "a 5 MiB body: 413 naming the limit" "$(vcurl n1 -w ' %{http_code}' --data-binary @"$T/big" "$URL/v1/events")" \
    '{"error":"body: 5242880 bytes is over the limit of 4194304"} 413'
ev=$(awk 'BEGIN { for (i = 0; i < 10001; i++) printf "%s{\"kind\":\"xid\",\"code\":13}", i ? "," : "" }')
is "10,001 events: 400 naming the limit" "$(post "{\"node\":\"n1\",\"seq\":50,\"events\":[$ev]}")" \
    '400 {"error":"events: 10001 is over the limit of 10000"}'

# 10, 11. Fields validated at intake; nothing forged in the log.
is "newline in kind: 400 naming kind" "$(post "$(msg n1 '' 60 'xid\n' 79)" | grep -o "field 'kind'")" "field 'kind'"
is "carriage return in pci: 400 naming pci" \
    "$(post '{"node":"n1","seq":61,"events":[{"kind":"xid","code":79,"pci":"0000:18:00.0\r"}]}' | grep -o "field 'pci'")" "field 'pci'"
is "tab in raw: 400 naming raw" \
    "$(post '{"node":"n1","seq":62,"events":[{"kind":"xid","code":79,"raw":"a\tb"}]}' | grep -o "field 'raw'")" "field 'raw'"
out=$(post "$(msg 'n1\nvigil: serve: forged line' '' 63 xid 79)")
is "newline in the node name: 400 naming node" "$(echo "$out" | grep -o "field 'node'")" "field 'node'"
check "no forged line reached the log" sh -c "! grep -q '^vigil: serve: forged line' '$T/serve.log'"
is "a kind the catalog does not know: 400" "$(post "$(msg n1 '' 64 boom 1)" | grep -o "'boom' is not a kind the catalog knows")" \
    "'boom' is not a kind the catalog knows"
# 22 ASCII bytes then a 2-byte character: cut at 23 bytes it would be invalid UTF-8.
is "a kind longer than its field (a UTF-8 character across the cut): 400, not truncated" \
    "$(post "$(msg n1 '' 65 "$(printf 'xidxidxidxidxidxidxidx\303\251')" 79)" | grep -o "field 'kind': 24 bytes is over the limit of 23")" \
    "field 'kind': 24 bytes is over the limit of 23"
is "nothing of the rejected messages was stored ($stored events before them)" "$(metric vigil_events_stored_total)" "${stored:-unread}"

# 7. Reads: the read token only; pagination with a capped limit and a cursor.
is "GET /v1/incidents without credentials: 401" "$(curl -s -o /dev/null -w '%{http_code}' "$URL/v1/incidents")" 401
is "GET /v1/incidents with an agent's token: 401" \
    "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$T/n1.token")" "$URL/v1/incidents")" 401
is "GET /metrics without credentials: 401" "$(curl -s -o /dev/null -w '%{http_code}' "$URL/metrics")" 401
is "GET /v1/nodes without credentials: 401" "$(curl -s -o /dev/null -w '%{http_code}' "$URL/v1/nodes")" 401
is "GET /metrics with the read token: 200" "$(get /metrics -o /dev/null -w '%{http_code}')" 200
is "/healthz stays open" "$(curl -s "$URL/healthz")" ok
is "limit=4294967297: 400 naming limit" "$(get '/v1/incidents?limit=4294967297')" '{"error":"limit: must be an integer from 1 to 1000"}'
is "limit=0: 400" "$(get '/v1/incidents?limit=0' -o /dev/null -w '%{http_code}')" 400
is "before=abc: 400 naming before" "$(get '/v1/incidents?before=abc')" '{"error":"before: must be a positive incident id"}'
for s in 1 2 3 4 5; do post "$(msg p$s '' 1 xid 79)" >/dev/null; done
get '/v1/incidents?limit=2' -D "$T/h1" >"$T/p1"
is "a page holds limit incidents" "$(jq length "$T/p1")" 2
next=$(sed -n 's/^Link: <\(.*\)>; rel="next".*/\1/p' "$T/h1" | tr -d '\r')
check "a full page carries the cursor to the next ($next)" test -n "$next"
get "$next" >"$T/p2"
check "the next page continues below the first" \
    test "$(jq '.[0].id' "$T/p2")" -lt "$(jq '.[-1].id' "$T/p1")"
get '/v1/incidents?limit=1&kind=xid&code=79&open=1' -D "$T/h3" >/dev/null
is "a filtered page's cursor keeps its filters" \
    "$(sed -n 's/^Link: <\(.*\)>; rel="next".*/\1/p' "$T/h3" | tr -d '\r' | sed 's/before=[0-9]*/before=ID/')" \
    "/v1/incidents?limit=1&before=ID&open=1&kind=xid&code=79"
curl -s -D "$T/dh" -o /dev/null "$URL/?token=$(cat "$T/read.token")"
check "/?token= sets an HttpOnly, SameSite=Strict cookie" grep -qi '^Set-Cookie: vigil_read=.*HttpOnly; SameSite=Strict' "$T/dh"
cookie=$(sed -n 's/^Set-Cookie: \(vigil_read=[^;]*\);.*/\1/p' "$T/dh")
curl -s -D "$T/dp" -H "Cookie: $cookie" "$URL/" >"$T/page"
check "with the cookie: the dashboard page, which polls /v1/summary" grep -q "fetch('/v1/summary'" "$T/page"
check "… under a policy that runs only its own nonce'd script" sh -c \
    "grep -qi \"^Content-Security-Policy: default-src 'none'; script-src 'nonce-[0-9a-f]\\{32\\}'\" '$T/dp'"
check "… and the summary, read with the cookie, lists the open incidents" sh -c \
    "curl -s -H 'Cookie: $cookie' '$URL/v1/summary' | jq -e '[.incidents[] | select(.node == \"p5\" and .code == 79)] | length == 1' >/dev/null"
is "the dashboard without the token: 401" "$(curl -s -o /dev/null -w '%{http_code}' "$URL/")" 401
is "GET /v1/summary without credentials: 401" "$(curl -s -o /dev/null -w '%{http_code}' "$URL/v1/summary")" 401
stop_serve

# 7 (no stall), 5, 6 on a store with thousands of incidents.
start_serve "$T/b.db" $TAUTH --read-token-file "$T/read.token" --window 0
# 3 s of load at a time until the store holds 2,000 incidents (a slow machine takes more rounds)
incs=0 rounds=0
while [ "${incs:-0}" -lt 2000 ] && [ $rounds -lt 40 ]; do
    "$LOAD" post "$PORT" 20 3 50 "secret:$T/secret" >/dev/null
    incs=$(get /metrics | sed -n 's/^vigil_incidents_total //p'); rounds=$((rounds + 1))
done
check "thousands of incidents stored ($incs)" test "${incs:-0}" -ge 2000
HTTPLOAD_BEARER=$(cat "$T/read.token") "$LOAD" get "$PORT" 5 6 '/v1/incidents?limit=1000' >"$T/reads" &
RP=$!
sleep 1
slow=0
for s in 1 2 3 4 5; do
    t0=$(date +%s%3N); st=$(status "$(msg r1 '' $s xid 79)"); t1=$(date +%s%3N)
    [ "$st" = 202 ] && [ $((t1 - t0)) -lt 3000 ] || slow=$((slow + 1))
done
wait $RP
is "five readers of 1,000-incident pages never hold up a POST (each answered 202 within the agents' 3 s)" "$slow" 0

# 5. Slowloris: 1,100 sockets over 20 addresses send a header byte a second.
"$LOAD" slow "$PORT" 1100 15 20 >"$T/slow" &
SL=$!
sleep 3
agents=0
for s in 1 2 3 4 5; do [ "$(status "$(msg a$s '' 1 xid 79)")" = 202 ] && agents=$((agents + 1)); sleep 1; done
is "agents are answered while 1,100 slow sockets are open" "$agents" 5
wait $SL
is "the slow sockets are closed by the request deadline, bytes or not" "$(sed -n 's/.*open=//p' "$T/slow")" 0
check "deadline closures counted" test "$(metric vigil_http_deadline_closed_total)" -gt 0

"$LOAD" slow "$PORT" 40 3 >"$T/one"
check "one client address holds at most 32 connections ($(tail -1 "$T/one"))" \
    test "$(sed -n 's/.*open=//p' "$T/one")" -le 32 -a "$(sed -n 's/^closed=\([0-9]*\).*/\1/p' "$T/one")" -ge 8

# 6. 250 stalled 4 MiB uploads: without the token they are refused before any body is read.
# Measured on a fresh server on a new store, as with MUNGE below: under the sanitizers, the heap of
# one that served the sections above is full of freed memory the sanitizer holds back, and its RSS
# moves by several MB either way whatever this section does.
stop_serve
start_serve "$T/s.db" $TAUTH --read-token-file "$T/read.token"
rss0=$(awk '/VmRSS/ {print $2}' "/proc/$SERVE_PID/status")
"$LOAD" stall "$PORT" 250 3 4194304 10 >"$T/stall"
rss1=$(awk '/VmRSS/ {print $2}' "/proc/$SERVE_PID/status")
is "stalled uploads without a token: all answered 401 at once" "$(sed -n 's/.*answered_401=\([0-9]*\).*/\1/p' "$T/stall")" 250
check "RSS grew less than 16 MB ($rss0 → $rss1 kB)" test $((rss1 - rss0)) -lt 16384
stop_serve
# With MUNGE too the credential comes first (in the headers): nothing is
# reserved or read for a request without one.
start_serve "$T/c.db" --auth munge --munge-socket "$LAB_DIR/munge/munge.socket"
rss0=$(awk '/VmRSS/ {print $2}' "/proc/$SERVE_PID/status")
"$LOAD" stall "$PORT" 250 3 4194304 10 >"$T/stall"
rss1=$(awk '/VmRSS/ {print $2}' "/proc/$SERVE_PID/status")
is "MUNGE: stalled uploads without a credential: all answered 401 at once" \
    "$(sed -n 's/.*answered_401=\([0-9]*\).*/\1/p' "$T/stall")" 250
check "MUNGE: RSS grew less than 16 MB ($rss0 → $rss1 kB)" test $((rss1 - rss0)) -lt 16384
is "MUNGE: a request without a credential is refused" \
    "$(curl -s -w ' %{http_code}' --data-binary '{"node":"n1"}' "$URL/v1/events")" \
    '{"error":"munge: no credential (Authorization: MUNGE); an agent older than the controller sends it as the body: upgrade it"} 401'
stop_serve

chmod 0644 "$T/read.token"
exits_with "a read token file readable by others is refused" 2 "$VIGIL" serve --auth none --listen 127.0.0.1:0 \
    --db "$T/x.db" --read-token-file "$T/read.token"
chmod 0600 "$T/read.token"

# 8. No authentication off loopback.
exits_with "--auth none --listen 0.0.0.0 is refused" 2 "$VIGIL" serve --auth none --listen 0.0.0.0:0 --db "$T/x.db"
start_serve "$T/d.db" --auth none
is "--auth none on loopback starts" "$(curl -s "$URL/healthz")" ok
stop_serve

# 13. SIGTERM with incidents queued: the controller exits within a bound.
start_serve "$T/e.db" $TAUTH --read-token-file "$T/read.token" --window 0
"$LOAD" post "$PORT" 20 2 50 "secret:$T/secret" >/dev/null
kill -TERM "$SERVE_PID"
t0=$(date +%s)
while kill -0 "$SERVE_PID" 2>/dev/null && [ $(( $(date +%s) - t0 )) -lt 15 ]; do sleep 0.2; done
check "SIGTERM with queued incidents: exited within 10 s ($(( $(date +%s) - t0 )) s)" \
    sh -c "! kill -0 $SERVE_PID 2>/dev/null && [ $(( $(date +%s) - t0 )) -le 10 ]"
wait "$SERVE_PID" 2>/dev/null; SERVE_PID=

# 14. A full disk under the database.
mkdir -p "$T/full"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=4m tmpfs "$T/full" 2>/dev/null; then
    MOUNTED=1
    : >"$T/serve.log"
    start_serve "$T/full/f.db" $TAUTH --read-token-file "$T/read.token"
    is "the store on a small tmpfs accepts" "$(status "$(msg f1 '' 1 xid 79)")" 202
    dd if=/dev/zero of="$T/full/fill" bs=64k 2>/dev/null
    raw=$(head -c 400 /dev/zero | tr '\0' 'r')
    ev=$(awk -v r="$raw" 'BEGIN { for (i = 0; i < 200; i++) printf "%s{\"kind\":\"xid\",\"code\":13,\"gpu\":%d,\"raw\":\"%s\"}", i ? "," : "", i, r }')
    fails=0
    for s in $(seq 2 21); do [ "$(status "{\"node\":\"f1\",\"seq\":$s,\"events\":[$ev]}")" = 503 ] && fails=$((fails + 1)); done
    check "disk full: messages answered 503 ($fails of 20)" test "$fails" -ge 5
    check "counted as rejected{reason=\"storage\"}" test "$(metric 'vigil_rejected_total{reason="storage"}')" -ge 5
    is "... not as input" "$(metric 'vigil_rejected_total{reason="input"}')" 0
    check "SQLite's reason is logged" grep -q 'storage: cannot record a message from f1: database or disk is full' "$T/serve.log"
    check "the log is rate-limited ($(grep -c 'storage: cannot record' "$T/serve.log") lines for $fails failures)" \
        test "$(grep -c 'storage: cannot record' "$T/serve.log")" -le 2
    rm -f "$T/full/fill"
    is "space again: accepted" "$(status "$(msg f1 '' 99 xid 79)")" 202
    stop_serve
else
    skip "full disk: cannot mount a tmpfs here"
fi
done_testing
