#!/bin/sh
# serve.sh — `vigil serve` as a real process: per-node token and MUNGE
# authentication (a private munged), each node speaking only for itself and
# only nodes the scheduler (the Kubernetes API double) lists heard from,
# replay rejection, and durability: the controller is killed with SIGKILL in
# the middle of a stream of events, restarted, and every event it had
# acknowledged (HTTP 202) is still in its store.  The fleet audit's coverage:
# nodes the scheduler knows that sent no audit report, and reports gone stale.
. "$(dirname "$0")/lib.sh"
T=$(mktemp -d /tmp/vigil-serve-XXXXXX)
SERVE_PID= MUNGED_PID= KAPI_PID=
cleanup() {
    [ -n "$SERVE_PID" ] && kill -9 "$SERVE_PID" 2>/dev/null
    [ -n "$KAPI_PID" ] && kill "$KAPI_PID" 2>/dev/null
    [ -n "$MUNGED_PID" ] && kill "$MUNGED_PID" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT

# The scheduler: the Kubernetes API double, nodes n1..n5 (n1 at 127.0.0.1,
# where this machine's credentials come from; the others at 10.0.0.x).
KAPI=build/tests/kapi
[ -x "$KAPI" ] || { nok "build/tests/kapi not built (make integration)"; exit 1; }
jq '(.nodes[] | select(.metadata.name == "n1") | .status.addresses[] | select(.type == "InternalIP") | .address) = "127.0.0.1"' \
    tests/fixtures/k8s/cluster.json >"$T/cluster.json"
"$KAPI" --port-file "$T/kport" --state "$T/cluster.json" --log "$T/api.log" 2>>"$T/kapi.err" &
KAPI_PID=$!
i=0; while [ ! -s "$T/kport" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: d\n  cluster:\n    server: http://127.0.0.1:%s\n' \
    "$(cat "$T/kport")" >"$T/kc"
printf 'contexts:\n- name: d\n  context: {cluster: d, user: u}\ncurrent-context: d\nusers:\n- name: u\n  user: {}\n' >>"$T/kc"

start_serve() { # args: extra serve options
    rm -f "$T/port"
    "$VIGIL" serve --dry-run --listen 127.0.0.1:0 --port-file "$T/port" --db "$T/incidents.db" --orchestrator k8s \
        --orch-config "$T/kc" --insecure-http "$@" 2>>"$T/serve.log" &
    SERVE_PID=$!
    i=0; while [ ! -s "$T/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
    PORT=$(cat "$T/port" 2>/dev/null)
    URL="http://127.0.0.1:$PORT"
}
event() { # seq [node] → an agent message (node: n1..n4 by seq)
    printf '{"node":"%s","seq":%d,"events":[{"kind":"xid","code":79,"pci":"0000:18:00.0","gpu":0,"action":"drain-rma","source":"kmsg"}]}' \
        "${2:-n$(( $1 % 4 + 1 ))}" "$1"
}
post_token() { # seq → HTTP status (as the node's agent, with its own token)
    vcurl "n$(( $1 % 4 + 1 ))" -o /dev/null -w '%{http_code}' --max-time 2 -H 'Content-Type: application/json' \
        --data-binary "$(event "$1")" "$URL/v1/events"
}
raw_post() { # node token nonce body → HTTP status
    curl -s -o /dev/null -w '%{http_code}' --max-time 2 -H "Authorization: Bearer $2" -H "X-Vigil-Node: $1" \
        -H "X-Vigil-Time: $(date +%s%3N)" -H "X-Vigil-Nonce: $3" --data-binary "$4" "$URL/v1/events"
}

umask 077
node_tokens "$T" 'n[1-9]' >/dev/null
echo "read-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')" >"$T/read.token"
start_serve --auth token --secret-file "$T/secret"
check "serve starts and reports its port" test -n "$PORT"
is "token: accepted" "$(post_token 1)" 202
is "token: a nonce used once" "$(raw_post n3 "$(cat "$T/n3.token")" 00000000000000aa-7 "$(event 2)")" 202
is "token: replayed nonce rejected" "$(raw_post n3 "$(cat "$T/n3.token")" 00000000000000aa-7 "$(event 2)")" 401
is "token: wrong token rejected" "$(raw_post n3 nope 00000000000000aa-8 "$(event 3)")" 401
is "token: n1's own token presented as n2's is refused (401: not n2's token)" \
    "$(raw_post n2 "$(cat "$T/n1.token")" 00000000000000aa-9 "$(event 3 n2)")" 401
is "token: n1's credential sending n2's message is refused (403)" \
    "$(vcurl n1 -o /dev/null -w '%{http_code}' --data-binary "$(event 3 n2)" "$URL/v1/events")" 403
is "token: a node the scheduler does not list is refused (403), whatever its token" \
    "$(vcurl n9 -o /dev/null -w '%{http_code}' --data-binary "$(event 3 n9)" "$URL/v1/events")" 403
is "malformed message gets 400" "$(vcurl n1 -o /dev/null -w '%{http_code}' --data-binary '{"node":"n1"}' "$URL/v1/events")" 400
check "rejections are logged with the reason" grep -q 'replayed' "$T/serve.log"
exits_with "serve: the old shared --token-file alone is refused" 2 "$VIGIL" serve --auth token --token-file "$T/n1.token" \
    --db "$T/x.db" --listen 127.0.0.1:0
"$VIGIL" serve --auth token --token-file "$T/n1.token" --db "$T/x.db" --listen 127.0.0.1:0 >/dev/null 2>"$T/shared.err"
check "… saying how to derive per-node tokens or to keep it" grep -q 'give --secret-file .*vigil token.*--allow-shared-token' "$T/shared.err"

# Durability: stream events, SIGKILL the controller mid-stream.
: >"$T/acked"
( s=100; while [ $s -lt 400 ]; do
      [ "$(post_token $s)" = 202 ] && echo $s >>"$T/acked"
      s=$((s + 1))
  done ) &
STREAM=$!
sleep 1
kill -9 "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null
wait $STREAM
acked=$(wc -l <"$T/acked")
check "some events were acknowledged before the kill ($acked)" test "$acked" -gt 0
start_serve --auth token --secret-file "$T/secret" --read-token-file "$T/read.token"
# each acknowledged message delivered again, as its agent would: the
# controller answers whether it holds it ("duplicates":1) or takes it as new
missing=0
for s in $(cat "$T/acked"); do
    n=$(vcurl "n$(( s % 4 + 1 ))" --max-time 5 --data-binary "$(event "$s")" "$URL/v1/events" | jq .duplicates)
    [ "$n" = 1 ] || missing=$((missing + 1))
done
is "every acknowledged event survived kill -9" "$missing" 0
nodes=$(curl -s -H "Authorization: Bearer $(cat "$T/read.token")" "$URL/v1/nodes" | jq -r '.[] | select(.open_incidents > 0) | .node' | sort -u | wc -l)
is "restarted controller serves the nodes" "$nodes" 4
is "a delivery repeated after the restart is a duplicate" \
    "$(vcurl n2 --data-binary "$(event 1)" "$URL/v1/events" | grep -o '"duplicates":1')" '"duplicates":1'
kill "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null; SERVE_PID=

# The fleet audit's coverage.  Reports are real `vigil audit --json` output
# posted as an agent does; a heartbeat from n9, which the scheduler does not
# list, is refused; reports are stale after 2 s.  The old shared token is
# taken too (--allow-shared-token): it can name any node, so it carries the
# flood of beats under new names below.
secret "$T/shared.token" shared
start_serve --auth token --secret-file "$T/secret" --token-file "$T/shared.token" --allow-shared-token \
    --read-token-file "$T/read.token" --heartbeat 60 --audit-stale 2
"$VIGIL" audit --root tests/fixtures/roots/clean-current --json >"$T/clean.json"
post_json() { # node path body → HTTP status
    vcurl "$1" -o /dev/null -w '%{http_code}' --max-time 5 -H 'Content-Type: application/json' --data-binary "$3" "$URL$2"
}
report() { post_json "$1" /v1/inventory "{\"node\":\"$1\",\"report\":$(cat "$T/clean.json")}"; }
fleet() { "$VIGIL" audit fleet --controller "$URL" --read-token-file "$T/read.token" "$@"; }
m() { curl -s -H "Authorization: Bearer $(cat "$T/read.token")" "$URL/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
is "fleet: n1 and n2 send their reports" "$(report n1) $(report n2)" "200 200"
fleet --json >"$T/f1.json"
is "fleet: the scheduler's n3 n4 n5 are not reporting" "$(jq -r '.not_reporting | join(" ")' "$T/f1.json")" "n3 n4 n5"
is "fleet: no report stale yet" "$(jq -r '.stale | length' "$T/f1.json")" 0
is "fleet: when n1 and n2 reported" "$(jq -r '.reported | keys | join(" ")' "$T/f1.json")" "n1 n2"
is "fleet: the summary counts them" "$(jq -c '.summary | [.stale, .not_reporting]' "$T/f1.json")" "[0,3]"
is "fleet: nodes not reporting make the exit 1 (no finding, no skew)" "$(fleet --fail-on none >/dev/null 2>&1; echo $?)" 1
is "a heartbeat from n1, a node the scheduler lists: noted" "$(post_json n1 /v1/heartbeat '{"node":"n1","jobs":"12,345"}')" 200
is "a heartbeat from n9, which the scheduler does not list, is refused" \
    "$(post_json n9 /v1/heartbeat '{"node":"n9","jobs":"12,345"}')" 403
is "a heartbeat for a node named --help: refused before any command could see it (400)" \
    "$(post_json n1 /v1/heartbeat '{"node":"--help"}')" 400
is "a heartbeat from n3 is taken" "$(post_json n3 /v1/heartbeat '{"node":"n3","jobs":"12,345"}')" 200
is "a heartbeat whose jobs are not job ids is refused" "$(post_json n3 /v1/heartbeat '{"node":"n3","jobs":"12 345"}')" 400
is "n1's audit report under n2's name is refused" "$(post_json n1 /v1/inventory "{\"node\":\"n2\",\"report\":$(cat "$T/clean.json")}")" 403
# 100,000 beats under new names, on the shared token (which may name any node): all refused at their
# headers, none tracked, the node list read at most once per 2 s of the flood
reads=$(grep -c '^GET /api/v1/nodes[ ?]' "$T/api.log")
identity=$(m 'vigil_rejected_total{reason="identity"}')
printf '{"node":"fake@N@"}' >"$T/beat.tpl"
t0=$(date +%s)
out=$(build/tests/httpload bulk "$PORT" 8 100000 /v1/heartbeat "$T/shared.token" 'fake@N@' "$T/beat.tpl")
took=$(( $(date +%s) - t0 ))
echo "# 100,000 forged beats: $out in ${took} s"
is "100,000 beats under new names: every one refused" "$(echo "$out" | grep -o 'answered_4xx=[0-9]*')" \
    answered_4xx=100000
is "… counted as identity refusals" "$(( $(m 'vigil_rejected_total{reason="identity"}') - identity ))" 100000
is "… none reached the heartbeat monitor" "$(m vigil_heartbeat_refused_total)" 0
is "… and the table holds n1 and n3 alone" "$(m vigil_heartbeat_nodes)" 2
reads2=$(grep -c '^GET /api/v1/nodes[ ?]' "$T/api.log")
check "… the scheduler's node list read at most once per 2 s of the flood ($((reads2 - reads)) reads in $took s)" \
    test $((reads2 - reads)) -le $((took / 2 + 3))
dom=3d5e9c1a-7b20-4f1e-9a4c-55d1e2f0a7b3/32766
is "a heartbeat naming the NVLink domain of n1's GPUs: noted" \
    "$(post_json n1 /v1/heartbeat "{\"node\":\"n1\",\"domain\":\"$dom\"}")" 200
is "… the scheduler's label (nvidia.com/gpu.clique) stays n1's domain: an override" \
    "$(curl -s -H "Authorization: Bearer $(cat "$T/read.token")" "$URL/v1/nodes" | jq -r '.[] | select(.node == "n1") | .domain')" \
    rackA
is "a heartbeat whose domain is not a name: refused (400)" \
    "$(post_json n1 /v1/heartbeat '{"node":"n1","domain":"rack 1<script>"}')" 400
for n in n3 n4 n5; do report $n >/dev/null; done
sleep 2.5
report n1 >/dev/null
fleet --json >"$T/f2.json"
is "fleet: every node the scheduler lists reported (n9 is not known)" "$(jq -r '.not_reporting | join(" ")' "$T/f2.json")" ""
is "fleet: n9 (never a node of the scheduler) is nowhere" "$(jq -c '.reported | has("n9")' "$T/f2.json")" false
is "fleet: n2..n5, older than --audit-stale 2, are stale; n1 is not" "$(jq -r '.stale | join(" ")' "$T/f2.json")" \
    "n2 n3 n4 n5"
is "fleet: the controller's own document says the same" \
    "$(curl -s -H "Authorization: Bearer $(cat "$T/read.token")" "$URL/v1/audit" | jq -c '[.stale_after_s, .not_reporting, (.stale | length)]')" \
    '[2,[],4]'
fleet >"$T/f2.txt"
check "fleet table: a section lists them" grep -q '^Nodes without a current audit' "$T/f2.txt"
check "fleet table: n9 is not in it" sh -c "! grep -q '^n9 ' '$T/f2.txt'"
check "fleet table: n2 stale with its last report's time" grep -Eq '^n2 +stale \(older than 2 s\) +20[0-9-]+T' "$T/f2.txt"
check "fleet markdown: the section" sh -c "'$VIGIL' audit fleet --controller '$URL' --read-token-file '$T/read.token' --format markdown | grep -q '^### Nodes without a current audit'"
kill "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null; SERVE_PID=
exits_with "serve: a bad --audit-stale is an input error" 2 "$VIGIL" serve --audit-stale 0 --db "$T/x.db" --auth none

# MUNGE: a private munged with its own key, its credentials from 127.0.0.1
# (n1's address in the scheduler).  Posted as an agent posts: the credential
# in the Authorization header over the body's SHA-256.
if command -v munged >/dev/null && [ "$(id -u)" = 0 ]; then
    mkdir -p "$T/munge" && chmod 0755 "$T" "$T/munge"
    dd if=/dev/urandom of="$T/munge/key" bs=1024 count=1 2>/dev/null && chmod 0400 "$T/munge/key"
    munged --socket="$T/munge/sock" --key-file="$T/munge/key" --pid-file="$T/munge/pid" --origin=127.0.0.1 \
        --log-file="$T/munge/log" --seed-file="$T/munge/seed" -F 2>>"$T/munge/log" &
    MUNGED_PID=$!
    i=0; while [ ! -S "$T/munge/sock" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
    start_serve --auth munge --munge-socket "$T/munge/sock"
    cred() { # node body → a credential over the body's digest, speaking for node
        printf 'vigil-1 node=%s sha256=%s' "$1" "$(printf '%s' "$2" | sha256sum | cut -c1-64)" | munge -S "$T/munge/sock"
    }
    mpost() { # credential body → HTTP status
        curl -s -o /dev/null -w '%{http_code}' -H "Authorization: MUNGE $1" --data-binary "$2" "$URL/v1/events"
    }
    body=$(event 500 n1)
    c=$(cred n1 "$body")
    is "munge: credential accepted" "$(mpost "$c" "$body")" 202
    is "munge: replayed credential rejected" "$(mpost "$c" "$body")" 401
    is "munge: a body other than the one the credential signs is rejected" "$(mpost "$(cred n1 "$body")" "$(event 502 n1)")" 401
    body=$(event 503 n2)
    is "munge: a credential made at 127.0.0.1 speaking for n2 (10.0.0.2 in the scheduler) is refused" \
        "$(mpost "$(cred n2 "$body")" "$body")" 403
    body=$(event 504 n9)
    is "munge: a node the scheduler does not list is refused" "$(mpost "$(cred n9 "$body")" "$body")" 403
    is "munge: plain JSON without credential rejected" \
        "$(curl -s -o /dev/null -w '%{http_code}' --data-binary "$(event 501)" "$URL/v1/events")" 401
    is "munge: the credential as the body (agents before this controller) is refused, saying so" \
        "$(curl -s --data-binary "$(event 505 n1 | munge -S "$T/munge/sock")" "$URL/v1/events" | jq -r .error)" \
        "munge: no credential (Authorization: MUNGE); an agent older than the controller sends it as the body: upgrade it"
    check "the refusals are counted by reason" sh -c "grep -c 'rejected POST' '$T/serve.log' | grep -qv '^0$'"
else
    skip "munge tests: need root and munged"
fi
exits_with "serve: bad --listen is an input error" 2 "$VIGIL" serve --listen nonsense --db "$T/x.db" --auth none
exits_with "serve: unreadable secret file is an input error" 2 "$VIGIL" serve --auth token --secret-file /nonexistent --db "$T/x.db"
exits_with "serve: unreadable shared token file is an input error" 2 "$VIGIL" serve --auth token --secret-file "$T/secret" \
    --token-file /nonexistent --allow-shared-token --db "$T/x.db"
# the state directory: every missing directory of the path created (0700), as mkdir -p; else
# one line naming the one that cannot be made.  Without -v, serve says where it listens.
secret "$T/sd.read"
"$VIGIL" serve --listen 127.0.0.1:0 --port-file "$T/sd.port" --db "$T/state/a/b/incidents.db" --auth none --dry-run \
    --read-token-file "$T/sd.read" 2>"$T/sd.err" &
sd=$!
wait_for 'test -s "$T/sd.port"'
is "serve: every missing state directory is created 0700" \
    "$(stat -c %a "$T/state" "$T/state/a" "$T/state/a/b" 2>/dev/null | tr '\n' ' ')" "700 700 700 "
sdp=$(cat "$T/sd.port")
check "serve: without -v, stderr says where it listens" \
    grep -q "^vigil: serve: listening on http://127.0.0.1:$sdp, store $T/state/a/b/incidents.db, auth none" "$T/sd.err"
check "serve: … and where the dashboard is, with the read token's file" \
    grep -qx "vigil: serve: dashboard http://127.0.0.1:$sdp/ (open it once as http://127.0.0.1:$sdp/?token=<the read token in $T/sd.read>)" "$T/sd.err"
kill "$sd"; wait "$sd" 2>/dev/null
: >"$T/a-file"
"$VIGIL" serve --listen 127.0.0.1:0 --db "$T/a-file/dir/incidents.db" --auth none --dry-run 2>"$T/sd2.err"
is "serve: a state directory that cannot be made: exit 2" "$?" 2
check "serve: the message names the directory and --db" grep -q "cannot create $T/a-file/dir (Not a directory).*--db" "$T/sd2.err"
done_testing
