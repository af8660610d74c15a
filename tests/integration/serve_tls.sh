#!/bin/sh
# serve_tls.sh — `vigil serve --tls-cert --tls-key` (GnuTLS through
# libmicrohttpd) with a certificate authority made by openssl here: curl
# --cacert and every vigil client given --ca (a real agent, `audit fleet`,
# `report`) verify it, and fail without it; the dashboard's cookie is Secure;
# the read token goes in a header; no token reaches a log; a key that is not
# the certificate's, or readable by all, is refused at start; a plain
# listener off loopback is warned about.
. "$(dirname "$0")/lib.sh"
T=$(mktemp -d /tmp/vigil-tls-XXXXXX)
SERVE_PID= AGENT_PID=
cleanup() {
    [ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null
    [ -n "$SERVE_PID" ] && kill -9 "$SERVE_PID" 2>/dev/null
    wait 2>/dev/null
    lab_down
    rm -rf "$T"
}
lab_up 1 --no-vigil --conf-extra "NodeName=n7 NodeAddr=127.0.0.1 CPUs=1 RealMemory=100" >/dev/null ||
    { nok "lab up"; rm -rf "$T"; exit 1; }
trap cleanup EXIT   # after lab_up, which sets its own

# a CA, the server's certificate for 127.0.0.1 signed by it, and a CA nobody uses
ossl() { openssl "$@" >/dev/null 2>&1; }
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=vigil-test-ca \
    -keyout "$T/ca.key" -out "$T/ca.pem"
ossl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 -keyout "$T/srv.key" -out "$T/srv.csr"
printf 'subjectAltName=IP:127.0.0.1\n' >"$T/ext"
ossl x509 -req -in "$T/srv.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" -CAcreateserial -days 2 -extfile "$T/ext" -out "$T/srv.pem"
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=other -keyout "$T/other.key" \
    -out "$T/other.pem"
chmod 600 "$T/srv.key" "$T/other.key"
check "openssl made the CA and the server's certificate" test -s "$T/srv.pem" -a -s "$T/ca.pem"

umask 077
node_tokens "$T" 'n[1],n7' >/dev/null
secret "$T/read.token" read
umask 022
rm -f "$T/port"
"$VIGIL" serve --listen 127.0.0.1:0 --port-file "$T/port" --db "$T/db" --auth token --secret-file "$T/secret" \
    --read-token-file "$T/read.token" --tls-cert "$T/srv.pem" --tls-key "$T/srv.key" --dry-run --heartbeat 0 \
    2>>"$T/serve.log" &
SERVE_PID=$!
wait_for 'test -s "$T/port"'
URL="https://127.0.0.1:$(cat "$T/port")"
RH="Authorization: Bearer $(cat "$T/read.token")"
API_URL=$URL API_TOKEN=$T/read.token API_CURL="--cacert $T/ca.pem"   # lib.sh's reads
is "curl --cacert: /healthz over HTTPS" "$(curl -s --cacert "$T/ca.pem" "$URL/healthz")" ok
curl -s -o /dev/null "$URL/healthz"
is "without the CA: curl refuses the certificate (exit 60)" "$?" 60
curl -s -o /dev/null --cacert "$T/other.pem" "$URL/healthz"
is "with another CA: refused as well" "$?" 60
check "plain HTTP to the HTTPS port gets no answer" sh -c "! curl -s --max-time 3 'http://${URL#https://}/healthz' | grep -q ok"
is "an agent's event over HTTPS" \
    "$(vcurl n1 --cacert "$T/ca.pem" -o /dev/null -w '%{http_code}' \
        --data-binary '{"node":"n1","seq":1,"events":[{"kind":"xid","code":79,"pci":"0000:18:00.0","gpu":0,"action":"reboot","source":"kmsg"}]}' \
        "$URL/v1/events")" 202

# the dashboard under TLS: the read token in a header, or the cookie, now Secure
is "the dashboard with the read token in a header" "$(curl -s --cacert "$T/ca.pem" -o /dev/null -w '%{http_code}' -H "$RH" "$URL/")" 200
curl -s --cacert "$T/ca.pem" -D "$T/h" -o /dev/null "$URL/?token=$(cat "$T/read.token")"
check "/?token= sets a Secure, HttpOnly, SameSite=Strict cookie" \
    grep -qi '^Set-Cookie: vigil_read=[^;]*; HttpOnly; SameSite=Strict; Path=/; Secure' "$T/h"

# a real agent: with --ca it delivers; without, it keeps the message and says why
: >"$T/kmsg"
"$VIGIL" agent --node n7 --kmsg "$T/kmsg" --controller "$URL" --auth token --token-file "$T/n7.token" --ca "$T/ca.pem" \
    --spool "$T/a.spool" --interval 0 --no-nvml-events --heartbeat 0 --audit-every 0 2>"$T/agent.log" &
AGENT_PID=$!
wait_for 'grep -q "agent: node n7" "$T/agent.log"'
xid 79 3b >>"$T/kmsg"
wait_for 'test "$(incidents node=n7)" = 1'
is "an agent given --ca delivers its XID 79 over HTTPS" "$(incidents node=n7)" 1
kill "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null
"$VIGIL" agent --node n7 --kmsg "$T/kmsg" --controller "$URL" --auth token --token-file "$T/n7.token" \
    --spool "$T/b.spool" --interval 0 --no-nvml-events --heartbeat 0 --audit-every 0 --retry-max 0.2 2>"$T/agent2.log" &
AGENT_PID=$!
wait_for 'grep -q "agent: node n7" "$T/agent2.log"'
xid 79 5e >>"$T/kmsg"
wait_for 'grep -q "controller unreachable" "$T/agent2.log"'
check "without --ca the agent refuses the certificate, says so" grep -q 'controller unreachable.*certificate' "$T/agent2.log"
check "… and keeps the message spooled" grep -q '^M .*0000:5e:00.0' "$T/b.spool"
is "… nothing of it reached the controller" "$(incidents pci=0000:5e:00.0)" 0
kill "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null; AGENT_PID=

# the read clients
"$VIGIL" audit fleet --controller "$URL" --read-token-file "$T/read.token" --ca "$T/ca.pem" --json >"$T/fleet.json" 2>"$T/fleet.err"
check "audit fleet --ca over HTTPS: the fleet document" jq -e '.not_reporting' "$T/fleet.json"
VIGIL_CA="$T/ca.pem" "$VIGIL" audit fleet --controller "$URL" --read-token-file "$T/read.token" --json >"$T/fleet2.json" 2>/dev/null
check "… the same with \$VIGIL_CA" jq -e '.not_reporting' "$T/fleet2.json"
"$VIGIL" audit fleet --controller "$URL" --read-token-file "$T/read.token" --json >/dev/null 2>"$T/fleet3.err"
is "… without a CA: exit 2" "$?" 2
"$VIGIL" report --controller "$URL" --read-token-file "$T/read.token" --ca "$T/ca.pem" --json >"$T/report.json" 2>"$T/report.err"
is "report --controller https:// --ca: exit 0" "$?" 0
kill "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null; SERVE_PID=
tok=$(cat "$T/n7.token") rt=$(cat "$T/read.token")
check "no token in any log" sh -c "! grep -qF -e '$tok' -e '$rt' '$T/serve.log' '$T/agent.log' '$T/agent2.log'"

# refused at start, one line each
"$VIGIL" serve --listen 127.0.0.1:0 --db "$T/x.db" --auth none --tls-cert "$T/srv.pem" --tls-key "$T/other.key" \
    --dry-run >/dev/null 2>"$T/e1"
is "a key that is not the certificate's: exit 2" "$?" 2
check "… saying it cannot serve HTTPS" grep -q 'cannot serve HTTPS' "$T/e1"
cp "$T/srv.key" "$T/open.key"; chmod 644 "$T/open.key"
exits_with "a private key readable by all: exit 2" 2 "$VIGIL" serve --listen 127.0.0.1:0 --db "$T/x.db" --auth none \
    --tls-cert "$T/srv.pem" --tls-key "$T/open.key" --dry-run
exits_with "--tls-cert without --tls-key: exit 2" 2 "$VIGIL" serve --listen 127.0.0.1:0 --db "$T/x.db" --auth none \
    --tls-cert "$T/srv.pem"
# a plain listener off loopback: warned about
rm -f "$T/port"
"$VIGIL" serve --listen 0.0.0.0:0 --port-file "$T/port" --db "$T/p.db" --auth token --secret-file "$T/secret" \
    --dry-run --heartbeat 0 2>"$T/plain.log" &
SERVE_PID=$!
wait_for 'test -s "$T/port"'
kill "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null; SERVE_PID=
check "plain HTTP on 0.0.0.0: warned (give --tls-cert and --tls-key)" grep -q 'plain HTTP.*give --tls-cert and --tls-key' "$T/plain.log"
check "no sanitizer report" sh -c "! grep -q 'ERROR: AddressSanitizer\|runtime error' '$T'/*.log"
done_testing
