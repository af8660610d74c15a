#!/bin/sh
# serve_identity.sh — the attacks of issue 27 on a real `vigil serve` over
# real HTTP, on a one-node lab (its slurmctld is the scheduler, its munged
# MUNGE's), each with the load the report measured:
#  1. one forged heartbeat — for a node the scheduler does not list, for a
#     node at another address, under another node's name — refused (403),
#     counted, never in the heartbeat table;
#  2. 8 stalled sockets announcing 4 MiB each lock no one out of MUNGE
#     intake: without a credential they are answered 401 before a byte is
#     read; with a node's credential they take that node's share only;
#  3. a nonce flood from one token holder (bad requests back to back, then
#     under fresh nonce instances) locks no other node out;
#  4. the report's load (2,000 requests a second from 100 nodes, above the
#     1,747 that filled the old nonce cache): every request taken, one nonce
#     window per node;
#  5. an unauthenticated flood: every rejection counted, a bounded number of
#     log lines and a "suppressed N" line;
#  6. the old shared token: only with --allow-shared-token, and said.
. "$(dirname "$0")/lib.sh"
LOAD=$(cd "$(dirname "$0")/../.." && pwd)/build/tests/httpload
T=$(mktemp -d /tmp/vigil-identity-XXXXXX)
SERVE_PID= BG=
cleanup() {
    [ -n "$BG" ] && kill "$BG" 2>/dev/null
    [ -n "$SERVE_PID" ] && kill -9 "$SERVE_PID" 2>/dev/null
    wait 2>/dev/null
    lab_down
    rm -rf "$T"
}
lab_up 1 --no-vigil --conf-extra "NodeName=n[2-4],bench[0-99] NodeAddr=127.0.0.1 CPUs=1 RealMemory=100" \
    --conf-extra "NodeName=far1 NodeAddr=127.0.0.2 CPUs=1 RealMemory=100" >/dev/null ||
    { nok "lab up"; rm -rf "$T"; exit 1; }
trap cleanup EXIT   # after lab_up, which sets its own
SOCK=$LAB_DIR/munge/munge.socket

start_serve() { # db, extra serve options
    db=$1; shift
    rm -f "$T/port"
    "$VIGIL" serve --dry-run --listen 127.0.0.1:0 --port-file "$T/port" --db "$db" --read-token-file "$T/read.token" \
        "$@" 2>>"$T/serve.log" &
    SERVE_PID=$!
    i=0; while [ ! -s "$T/port" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
    PORT=$(cat "$T/port" 2>/dev/null)
    URL="http://127.0.0.1:$PORT"
}
stop_serve() { kill "$SERVE_PID" 2>/dev/null; wait "$SERVE_PID" 2>/dev/null; SERVE_PID=; }
metric() { curl -s -H "Authorization: Bearer $(cat "$T/read.token")" "$URL/metrics" | sed -n "s/^$1 //p"; }
field() { sed -n "s/.*$2=\([0-9.]*\).*/\1/p" "$1"; }
msg() { # node seq → a message with an XID 79
    printf '{"node":"%s","seq":%d,"events":[{"kind":"xid","code":79,"pci":"0000:18:00.0","gpu":0,"action":"reboot","source":"kmsg"}]}' "$1" "$2"
}
mpost() { # node path body → HTTP status, as node's agent posts with MUNGE (the lab's munged)
    _c=$(printf 'vigil-1 node=%s sha256=%s' "$1" "$(printf '%s' "$3" | sha256sum | cut -c1-64)" | munge -S "$SOCK")
    curl -s -o /dev/null -w '%{http_code}' --max-time 5 -H "Authorization: MUNGE $_c" --data-binary "$3" "$URL$2"
}
umask 077
node_tokens "$T" 'n[1-4],bench[0-99],ghost1' >/dev/null
secret "$T/read.token" read
API_TOKEN="$T/read.token"   # lib.sh's reads (incidents) of start_serve's controller
secret "$T/shared.token" shared
umask 022

# 1. One forged heartbeat, with MUNGE (any holder of the cluster's key can mint one)
start_serve "$T/m.db" --auth munge --munge-socket "$SOCK" --heartbeat 1
is "MUNGE: n1's heartbeat is taken" "$(mpost n1 /v1/heartbeat '{"node":"n1"}')" 200
is "a heartbeat for ghost1, a node the scheduler does not list: 403" "$(mpost ghost1 /v1/heartbeat '{"node":"ghost1"}')" 403
is "a heartbeat for far1, made here while the scheduler has far1 at 127.0.0.2: 403" \
    "$(mpost far1 /v1/heartbeat '{"node":"far1"}')" 403
is "n1's credential with a heartbeat naming n2: 403" "$(mpost n1 /v1/heartbeat '{"node":"n2"}')" 403
is "an event for ghost1: 403" "$(mpost ghost1 /v1/events "$(msg ghost1 1)")" 403
is "the refusals counted as identity" "$(metric 'vigil_rejected_total{reason="identity"}')" 4
is "the heartbeat table holds n1 alone" "$(metric vigil_heartbeat_nodes)" 1
check "ghost1 never reached the store" test "$(incidents node=ghost1)" = 0
check "the log names why" grep -q "'ghost1' is not a node the scheduler lists" "$T/serve.log"

# 2. Stalled uploads: 8 from one address announcing 4 MiB, no credential
"$LOAD" stall "$PORT" 8 4 4194304 >"$T/stall" &
BG=$!
sleep 1
is "8 stalled 4 MiB uploads without a credential: an agent's event is still taken" "$(mpost n1 /v1/events "$(msg n1 1)")" 202
wait $BG; BG=
is "… and the 8 were answered 401 before a byte of their bodies was read" \
    "$(field "$T/stall" answered_401)" 8
# … and 8 with n2's credential: n2's share of the body budget, no more
"$LOAD" stall "$PORT" 8 4 4194304 1 "munge:$SOCK" n2 >"$T/stall2" &
BG=$!
sleep 1
is "8 stalled uploads with n2's credential: n1's event is still taken" "$(mpost n1 /v1/events "$(msg n1 2)")" 202
is "… and n3's" "$(mpost n3 /v1/events "$(msg n3 1)")" 202
wait $BG; BG=
check "… n2 got its share and no more ($(tail -1 "$T/stall2"))" test "$(field "$T/stall2" answered_503)" -ge 6
stop_serve

# 3. A nonce flood from one token holder
start_serve "$T/t.db" --auth token --secret-file "$T/secret"
"$LOAD" flood "$PORT" 4 3 "secret:$T/secret" n3 >"$T/flood"
echo "# n3's flood of bad requests: $(field "$T/flood" req_per_s) requests/s"
check "n3's flood: every request authenticated, then refused as malformed ($(tail -1 "$T/flood"))" \
    test "$(field "$T/flood" answered_400)" -gt 1000 -a "$(field "$T/flood" answered_401)" = 0
is "after it, n1 is taken" "$(vcurl n1 -o /dev/null -w '%{http_code}' --data-binary "$(msg n1 1)" "$URL/v1/events")" 202
"$LOAD" flood "$PORT" 4 2 "secret:$T/secret" n4 fresh >"$T/fresh"
check "n4 floods under fresh nonce instances: its own 17th on are refused ($(tail -1 "$T/fresh"))" \
    test "$(field "$T/fresh" answered_401)" -gt 100 -a "$(field "$T/fresh" answered_400)" -le 16
is "after it, n2 is taken" "$(vcurl n2 -o /dev/null -w '%{http_code}' --data-binary "$(msg n2 1)" "$URL/v1/events")" 202
is "the nonce windows: one per node that spoke" "$(metric vigil_auth_nonce_windows)" 4

# 4. The report's load: 100 nodes x 20 requests/s (2,000/s; 1,747/s filled the old cache)
"$LOAD" post "$PORT" 100 5 1 "secret:$T/secret" 5 20 >"$T/load"
echo "# 100 agents x 20 msg/s: $(field "$T/load" req_per_s) requests/s answered, p99 $(field "$T/load" p99_ms) ms"
check "every one of them taken ($(tail -1 "$T/load"))" \
    test "$(field "$T/load" answered_2xx)" = "$(field "$T/load" requests)" -a "$(field "$T/load" requests)" -gt 0
is "one nonce window per node, whatever the rate" "$(metric vigil_auth_nonce_windows)" 104

# 5. An unauthenticated flood: counted, logged at a bounded rate
before=$(grep -c 'rejected POST' "$T/serve.log")
auth0=$(metric 'vigil_rejected_total{reason="auth"}')
"$LOAD" flood "$PORT" 4 3 none bench2 >"$T/anon"
lines=$(( $(grep -c 'rejected POST' "$T/serve.log") - before ))
sent=$(field "$T/anon" answered_401)
echo "# unauthenticated flood: $sent requests refused, $lines log lines"
check "$sent unauthenticated requests refused, each counted" \
    test "$sent" -gt 1000 -a $(( $(metric 'vigil_rejected_total{reason="auth"}') - auth0 )) -ge "$sent"
check "… in at most 20 log lines ($lines)" test "$lines" -le 20
check "… and a line says how many were left out" wait_for "grep -q \"suppressed [0-9]* 'rejected request' lines\" '$T/serve.log'" 15
stop_serve

# 6. The old shared token: only when told, and said
exits_with "the shared --token-file without --allow-shared-token: exit 2" 2 "$VIGIL" serve --auth token \
    --token-file "$T/shared.token" --listen 127.0.0.1:0 --db "$T/x.db"
start_serve "$T/s.db" --auth token --secret-file "$T/secret" --token-file "$T/shared.token" --allow-shared-token
check "--allow-shared-token is warned about" grep -q 'allow-shared-token: any holder of .* can speak for every node' "$T/serve.log"
shared_post() { # node → HTTP status, with the shared token
    curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$T/shared.token")" -H "X-Vigil-Node: $1" \
        -H "X-Vigil-Time: $(date +%s%3N)" -H "X-Vigil-Nonce: $VCURL_INSTANCE-$(date +%s%6N)" \
        --data-binary "$(msg "$1" 1)" "$URL/v1/events"
}
is "the shared token is taken for n3" "$(shared_post n3)" 202
check "… and said" grep -q 'node n3 was taken on the cluster.s shared token' "$T/serve.log"
is "… but not for a node the scheduler does not list" "$(shared_post ghost1)" 403
is "n4's own token is taken beside it" "$(vcurl n4 -o /dev/null -w '%{http_code}' --data-binary "$(msg n4 1)" "$URL/v1/events")" 202
stop_serve
check "no sanitizer report" sh -c "! grep -q 'ERROR: AddressSanitizer\|runtime error' '$T/serve.log'"
done_testing
