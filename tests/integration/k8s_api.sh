#!/bin/sh
# k8s_api.sh — `vigil serve --orchestrator k8s` when the Kubernetes API
# misbehaves (the double, tests/k8s/kapi_faults.c): a PATCH of one node that
# the API server holds unanswered (a stuck admission webhook) delays no other
# node's isolation, and the held node is isolated once the API answers; a
# node a node list once leaves out is read by name and isolated, not held as
# "not in the cluster"; node lists of about 37 and 75 MB are read in pages,
# the controller's memory growing by far less than the list; an answer over
# vigil's cap fails the read, saying so; a kubeconfig whose server is
# http:// is refused (exit 2) unless --insecure-http, and then no token
# crosses plain HTTP (as kubectl).  No real API server runs here.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/vigil-k8sapi.XXXXXX")
. "$ROOT/tests/k8s/harness.sh"
trap 'ctl DELETE hang "" 2>/dev/null; stop_serve; stop_kapi; rm -rf "$W"' EXIT

make_ca
TOKEN="api-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
umask 077; echo "agent-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')" >"$W/token"
echo "read-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')" >"$W/read.token"; umask 022
RH="Authorization: Bearer $(cat "$W/read.token")"
echo 0 >"$W/seq"
printf 'breaker = 100%% / 600s\n' >"$W/policy.conf"
start_serve() { # kubeconfig [vigil binary [options…]]
    kc=$1; bin=${2:-$VIGIL}; shift; [ $# -gt 0 ] && shift
    rm -f "$W/port" "$W/incidents.db"*
    "$bin" serve --orchestrator k8s --kubeconfig "$kc" --listen 127.0.0.1:0 --port-file "$W/port" \
        --db "$W/incidents.db" --auth token --token-file "$W/token" --read-token-file "$W/read.token" \
        --policy "$W/policy.conf" "$@" 2>>"$W/serve.log" &
    SERVE_PID=$!
    wait_for 5 test -s "$W/port"
    URL="http://127.0.0.1:$(cat "$W/port")"
}
isolated() { state_of "$1" | grep -q '^isolated'; }
kd() { kubectl --kubeconfig "$W/kc" "$@"; }

# ---- plain HTTP: refused unless --insecure-http; with it, no credentials cross it
cat >"$W/http.kc" <<KC
apiVersion: v1
kind: Config
clusters: [{name: plain, cluster: {server: "http://127.0.0.1:1"}}]
contexts: [{name: plain, context: {cluster: plain, user: vigil}}]
current-context: plain
users: [{name: vigil, user: {token: "$TOKEN"}}]
KC
exits_with "a kubeconfig whose server is http://: vigil serve exits 2" 2 \
    timeout 10 "$VIGIL" serve --orchestrator k8s --kubeconfig "$W/http.kc" --listen 127.0.0.1:0 --db "$W/x.db" --auth token --token-file "$W/token"
timeout 10 "$VIGIL" serve --orchestrator k8s --kubeconfig "$W/http.kc" --listen 127.0.0.1:0 --db "$W/x.db" --auth token \
    --token-file "$W/token" 2>"$W/err"
check "… naming the file, the server and --insecure-http" \
    grep -q "http.kc: server http://127.0.0.1:1 is plain HTTP.*--insecure-http" "$W/err"
exits_with "… vigil drill too" 2 timeout 10 "$VIGIL" drill --orchestrator k8s --kubeconfig "$W/http.kc"
CACERT_SAVED=$CACERT; CACERT=
start_kapi --token "$TOKEN"   # plain HTTP, a token required
sed -i "s|http://127.0.0.1:1|$API|" "$W/http.kc"
start_serve "$W/http.kc" "$VIGIL" --insecure-http
is "with --insecure-http it starts: XID accepted" "$(post_xid n1 79)" 202
check "… and no token crossed plain HTTP: the API answered 401, said on the incident" \
    wait_for 10 sh -c "curl -s -H '$RH' '$URL/v1/incidents?node=n1' | grep -q '401 Unauthorized'"
check "… the API server saw no bearer token" sh -c "! grep -q 'user=system:serviceaccount' '$W/api.log'"
stop_serve; stop_kapi
CACERT=$CACERT_SAVED

# ---- a PATCH that hangs on n1 holds no other node
start_kapi --token "$TOKEN"
kubeconfig "$W/kc" "$TOKEN"
wait_for 5 running 4
start_serve "$W/kc"
ctl POST hang '{"method":"PATCH","path":"/api/v1/nodes/n1"}'
is "XID on n1 (its PATCH will hang) accepted" "$(post_xid n1 79)" 202
held() { [ "$(aget /_test/hang | jq .held)" -ge 1 ]; }
check "… the API server holds n1's PATCH" wait_for 8 held
is "XID on n2, after it, accepted" "$(post_xid n2 79)" 202
check "n2 is cordoned while n1's PATCH is still held" wait_for 8 node_has n2 '.spec.unschedulable == true'
check "… n2's incident isolated" wait_for 5 isolated n2
is "… n1 not cordoned yet" "$(node_json n1 | jq -r '.spec.unschedulable // false')" false
check "n1's incident says its write is still waiting for the API server" \
    sh -c "curl -s -H '$RH' '$URL/v1/incidents?node=n1' | grep -q 'still waiting for the API server'"
ctl DELETE hang ''
check "the API answers again: n1 cordoned" wait_for 10 node_has n1 '.spec.unschedulable == true'
check "… and its incident isolated (the retry took the write's result)" wait_for 20 isolated n1
is "… n1 PATCHed once: the retries waited for the write under way, none started another" \
    "$(grep -c 'PATCH /api/v1/nodes/n1 200 application/strategic-merge-patch+json.*ua=vigil$' "$W/api.log")" 1

# ---- a node list that once leaves n3 out: n3 read by name, isolated (not "not in the cluster")
ctl POST omit '{"node":"n3","count":1}'
is "XID on n3, which the next node list leaves out" "$(post_xid n3 79)" 202
check "n3 cordoned" wait_for 8 node_has n3 '.spec.unschedulable == true'
check "… its incident isolated, not held" wait_for 5 isolated n3
check "… the controller read it by name" grep -q "node n3 was missing from the node list; read by name" "$W/serve.log"
check "… after a list that lacked it" grep -q 'GET /api/v1/nodes/n3 200' "$W/api.log"
stop_serve

# ---- an answer larger than the cap (32 MiB): the read fails, saying so
acurl -s -o /dev/null -X POST --data-binary '{"count":1,"bytes":36000000,"prefix":"huge"}' "$API/_test/fatten"
start_serve "$W/kc"
is "XID on n5 accepted" "$(post_xid n5 79)" 202
check "the node list's page with a 36 MB node fails the read, naming the cap" \
    wait_for 20 sh -c "curl -s -H '$RH' '$URL/v1/incidents?node=n5' | grep -q 'larger than 32 MiB'"
stop_serve
stop_kapi; start_kapi --token "$TOKEN"   # a fresh cluster

# ---- node lists of about 37 and 75 MB: read in pages, the controller's memory does not follow the list
peak() { # nodes to add (PREFIX-0001…) prefix → "list-bytes peak-RSS-kB" of a controller that read the whole list
    acurl -o /dev/null -X POST --data-binary "{\"count\":$1,\"bytes\":25000,\"prefix\":\"$2\"}" "$API/_test/fatten"
    mark=$(wc -l <"$W/api.log")
    start_serve "$W/kc" "$ROOT/build/vigil"   # not sanitized: its memory is the program's own
    post_xid n4 79 >/dev/null
    wait_for 30 isolated n4 || echo "# n4 not isolated: $(state_of n4)" >&2
    pages=$(tail -n +$((mark + 1)) "$W/api.log" | grep -c '^GET /api/v1/nodes 200 .*ua=vigil$')
    echo "$(acurl "$API/api/v1/nodes" | wc -c) $(awk '/^VmHWM/ {print $2}' "/proc/$SERVE_PID/status") $pages"
    stop_serve
    kd uncordon n4 >/dev/null 2>&1; kd taint node n4 vigil.dev/fault- >/dev/null 2>&1
    kd annotate node n4 vigil.dev/isolated- >/dev/null 2>&1
}
set -- $(peak 1500 fat); l1=$1 p1=$2 pages=$3
echo "# a $l1-byte node list ($pages pages of 100 nodes): vigil serve's peak RSS $p1 kB"
check "a node list of more than 35 MB is read in pages of 100 (16 requests or more)" test "$l1" -gt 35000000 -a "$pages" -ge 16
set -- $(peak 1500 wide); l2=$1 p2=$2
echo "# a $l2-byte node list: peak RSS $p2 kB"
# (the controller keeps what it needs of each node, in more than one place: that grows with the node
# count; reading a whole list as one answer grew by several times the list's bytes: 365 → 580 MB here)
check "the list twice as long: the peak grows by less than half of what the list grew" \
    test $(( (p2 - p1) * 1024 )) -lt $(( (l2 - l1) / 2 ))

check "no sanitizer report" sh -c "! grep -q 'Sanitizer' '$W/serve.log'"
done_testing
