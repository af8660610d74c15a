#!/bin/sh
# serve_reports.sh — what nodes send besides events, on a real `vigil serve`
# whose scheduler is the Kubernetes API double (nodes n1..n5): audit reports
# and burn-in passes name only nodes the scheduler lists, each posted by
# that node's own credential (another node's report or pass: 403, counted);
# every string is
# printable text (the escape sequences, the right-to-left override and the
# line separator of the attack reports refused, naming the field), markup is
# kept as text and escaped where it is shown; a pass dated 2099 is refused; a
# 1 GB flood of reports leaves the store at its retention (the latest report,
# the newest 100 passes per node) and the reads answer, paged; the store's
# size alarm; the controller decides each event's action from its own
# catalog and site policy; a new store is readable by its owner only.
. "$(dirname "$0")/lib.sh"
LOAD=$(cd "$(dirname "$0")/../.." && pwd)/build/tests/httpload
KAPI=$(cd "$(dirname "$0")/../.." && pwd)/build/tests/kapi
T=$(mktemp -d /tmp/vigil-reports-XXXXXX)
SERVE_PID= KAPI_PID=
cleanup() {
    [ -n "$SERVE_PID" ] && kill -9 "$SERVE_PID" 2>/dev/null
    [ -n "$KAPI_PID" ] && kill "$KAPI_PID" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
if [ ! -x "$KAPI" ] || [ ! -x "$LOAD" ]; then echo "ok 1 # skip build/tests/kapi or httpload not built (make integration)"; exit 0; fi

"$KAPI" --port-file "$T/kport" --state tests/fixtures/k8s/cluster.json --log "$T/api.log" 2>>"$T/kapi.err" &
KAPI_PID=$!
wait_for '[ -s "$T/kport" ]'
printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: d\n  cluster:\n    server: http://127.0.0.1:%s\n' "$(cat "$T/kport")" >"$T/kc"
printf 'contexts:\n- name: d\n  context: {cluster: d, user: u}\ncurrent-context: d\nusers:\n- name: u\n  user: {}\n' >>"$T/kc"
umask 077; node_tokens "$T" 'n[1-5],ghost1' >/dev/null; umask 022
secret "$T/read.token" read
start() { # db [serve options…]
    db=$1; shift
    rm -f "$T/port"
    "$VIGIL" serve --dry-run --listen 127.0.0.1:0 --port-file "$T/port" --db "$db" --auth token --secret-file "$T/secret" \
        --read-token-file "$T/read.token" --orchestrator k8s --orch-config "$T/kc" --insecure-http --heartbeat 0 "$@" \
        2>>"$T/serve.log" &
    SERVE_PID=$!
    wait_for '[ -s "$T/port" ]'
    PORT=$(cat "$T/port")
    URL="http://127.0.0.1:$PORT"
}
stop() { kill "$SERVE_PID" 2>/dev/null; wait "$SERVE_PID" 2>/dev/null; SERVE_PID=; }
post() { # path file [node] → "STATUS BODY", posted as node (default: the one the file names) with its own token
    vcurl "${3:-$(jq -r '.node // .nodes[0].node' "$2")}" -w ' %{http_code}' --max-time 10 \
        -H 'Content-Type: application/json' --data-binary @"$2" "$URL$1" | awk '{ s = $NF; $NF = ""; sub(/ $/, ""); print s, $0 }'
}
status() { post "$@" | cut -d' ' -f1; }
get() { curl -s --max-time 20 -H "Authorization: Bearer $(cat "$T/read.token")" "$@"; }
metric() { get "$URL/metrics" | awk -v m="$1" '$1 == m {print $2}'; }

start "$T/a.db"
check "serve starts (the scheduler's nodes read: n1..n5)" test -n "$PORT"
check "a new store is readable by its owner only (0600, its WAL too)" \
    sh -c "[ \"\$(stat -c %a '$T/a.db')\" = 600 ] && [ \"\$(stat -c %a '$T/a.db-wal')\" = 600 ]"

# --- audit reports -----------------------------------------------------------
"$VIGIL" audit --root tests/fixtures/roots/clean-current --json >"$T/clean.json"
inv() { # node [jq filter on the report] → the request body in $T/inv.json
    jq -c --arg n "$1" "{node: \$n, report: (. | ${2:-.})}" "$T/clean.json" >"$T/inv.json"
}
inv n1
is "n1's report: kept" "$(status /v1/inventory "$T/inv.json")" 200
inv ghost1
is "a report for ghost1, a node the scheduler does not list: 403 naming it" "$(post /v1/inventory "$T/inv.json")" \
    "403 {\"error\":\"node: 'ghost1' is not a node the scheduler lists\"}"
inv '--help'
is "a report for a node named --help: 400" "$(status /v1/inventory "$T/inv.json" n1)" 400
# a node speaks only for itself: n1's credential with n2's report, counted by the intake and by the reports
refusals() { echo "$(metric 'vigil_rejected_total{reason="identity"}') $(metric 'vigil_node_reports_refused_total{reason="node"}')"; }
counted() { # refusals before → "identity node" since
    set -- $1 $(refusals)
    echo "$(( $3 - $1 )) $(( $4 - $2 ))"
}
before=$(refusals)
inv n2
is "n2's report posted with n1's credential: 403, a node reports only for itself" "$(post /v1/inventory "$T/inv.json" n1)" \
    "403 {\"error\":\"node: 'n2' is not the sender's node (n1): a node speaks only for itself\"}"
is "… counted by the intake and by the reports" "$(counted "$before")" "1 1"
# the issue's attack report: the terminal's title set, its screen cleared, a forged line
inv n2 '.components[0].name = "runc\u001b]0;owned\u0007\u001b[2J"'
is "a component name with escape sequences: 400 naming it" "$(post /v1/inventory "$T/inv.json")" \
    '400 {"error":"report.components[0].name: not printable text"}'
inv n2 '.components[0].version = "1.1.12\nALL NODES PATCHED"'
is "a version with a newline: 400 naming it" "$(status /v1/inventory "$T/inv.json")" 400
inv n2 '.components[0].version = "1.1.12 \u202e21.1.1"'
is "a right-to-left override (U+202E): 400 naming the field" "$(post /v1/inventory "$T/inv.json")" \
    '400 {"error":"report.components[0].version: not printable text"}'
inv n2 '.components[0].detail = "fine\u2028vigil: ALL NODES PATCHED"'
is "a line separator (U+2028): 400 naming the field" "$(post /v1/inventory "$T/inv.json")" \
    '400 {"error":"report.components[0].detail: not printable text"}'
inv n2 '.findings = [{id: "CVE-2024 6387", component: "openssh", severity: "high"}]'
is "a finding id that is not an advisory id: 400 naming it" "$(post /v1/inventory "$T/inv.json")" \
    '400 {"error":"report.findings[0].id: not an advisory id (letters, digits, '"'.', '_', ':', '-'"', at most 64)"}'
inv n2 '.findings = [{id: "CVE-2024-21626", component: "<script>alert(1)</script>", severity: "high", url: "https://example.org/<b>"}]'
is "markup is text: kept" "$(status /v1/inventory "$T/inv.json")" 200
"$VIGIL" audit fleet --controller "$URL" --read-token-file "$T/read.token" --format markdown --fail-on none >"$T/fleet.md" 2>&1
check "audit fleet --format markdown: the markup shown, never emitted" \
    sh -c "grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' '$T/fleet.md' && ! grep -q '<script>\|<b>' '$T/fleet.md'"
# a report an older controller kept before these checks: shown escaped on the terminal
store_sql "UPDATE audits SET report = replace(report, '\"name\":\"os\"', '\"name\":\"os\\u001b]0;owned\\u0007\"') WHERE node = 'n1'" "$T/a.db"
"$VIGIL" audit fleet --controller "$URL" --read-token-file "$T/read.token" --fail-on none >"$T/fleet.txt" 2>&1
check "audit fleet: a stored escape sequence reaches the terminal as text, never as bytes" \
    sh -c "grep -q 'os\\\\e]0;owned\\\\x07' '$T/fleet.txt' && ! grep -q \"\$(printf '\\033')\" '$T/fleet.txt'"

# --- burn-in passes ----------------------------------------------------------
pass() { # node result [time] → $T/pass.json
    jq -nc --arg n "$1" --arg r "$2" --arg t "${3:-$(date -u +%Y-%m-%dT%H:%M:%S.000Z)}" \
        '{suite: "quick", time: $t, result: $r, nodes: [{node: $n, result: $r, suite: "quick",
          tests: [{name: "nccl-allreduce", result: $r, value: 480.5, unit: "GB/s", expected: ">= 400", detail: "busbw"}]}]}' >"$T/pass.json"
}
pass ghost1 pass
is "a pass for ghost1: 403" "$(status /v1/burnin "$T/pass.json")" 403
pass n2 pass
before=$(refusals)
is "n2's pass posted with n1's credential: 403" "$(post /v1/burnin "$T/pass.json" n1)" \
    "403 {\"error\":\"nodes[0].node: 'n2' is not the sender's node (n1): a node speaks only for itself\"}"
is "… counted by the intake and by the reports" "$(counted "$before")" "1 1"
pass n2 pass 2099-01-01T00:00:00.000Z
is "a pass dated 2099: 400 naming its time" "$(post /v1/burnin "$T/pass.json")" \
    '400 {"error":"time: 2099-01-01T00:00:00.000Z is ahead of the controller'"'"'s clock by more than 300 s"}'
pass n2 fail
is "n2's failed pass: recorded" "$(post /v1/burnin "$T/pass.json")" '200 {"ok":true,"recorded":1}'
jq -c '.nodes[0].tests[0].name = "nccl\u001b[2J"' "$T/pass.json" >"$T/pass2.json"
is "a test name with an escape sequence: 400 naming it" "$(post /v1/burnin "$T/pass2.json")" \
    '400 {"error":"nodes[0].tests[0].name: not printable text"}'

# --- a 1 GB flood of reports -------------------------------------------------
# 220 documents of 4 MiB (over the 2 MiB a report may take: refused at their headers, never read), 85 audit
# reports of 0.94 MB for the five nodes (kept: the latest per node), 85 of the same size naming nodes the
# scheduler does not list (refused), and 300 passes for n3 (the newest 100 kept)
awk 'BEGIN { printf "{\"node\":\"n@N@\",\"report\":{\"findings\":[],\"components\":["
             for (i = 0; i < 4000; i++) printf "%s{\"name\":\"lib%04d-%090d\",\"version\":\"1.%d.%090d\"}", i ? "," : "", i, 0, i, 0
             printf "]}}" }' >"$T/big.tpl"
sed 's/"n@N@"/"ghost@N@"/' "$T/big.tpl" >"$T/ghost.tpl"
head -c 4194000 /dev/zero | tr '\0' 'x' | sed 's/^/{"pad":"/; s/$/"}/' >"$T/huge.tpl"
pass n3 pass && cp "$T/pass.json" "$T/pass.tpl"
t0=$(date +%s)
# each request as the node it names, with that node's own token
o1=$("$LOAD" bulk "$PORT" 4 220 /v1/burnin "secret:$T/secret" n1 "$T/huge.tpl")
"$LOAD" bulk "$PORT" 4 85 /v1/inventory "secret:$T/secret" 'n@N@' "$T/big.tpl" >"$T/o2"   # n0..n84: n1..n5 kept, the others refused
o3=$("$LOAD" bulk "$PORT" 4 85 /v1/inventory "secret:$T/secret" 'ghost@N@' "$T/ghost.tpl")
o4=$("$LOAD" bulk "$PORT" 4 300 /v1/burnin "secret:$T/secret" n3 "$T/pass.tpl")
took=$(( $(date +%s) - t0 ))
sum=$(printf '%s\n' "$o1" "$(cat "$T/o2")" "$o3" "$o4" | sed -n 's/.* bytes=\([0-9]*\).*/\1/p' | awk '{ s += $1 } END { printf "%d", s / 1048576 }')
echo "# flood: $sum MiB offered in $took s: $o1 | $(cat "$T/o2") | $o3 | $o4"
check "the flood offered 1 GB ($sum MiB)" test "$sum" -ge 1000
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
is "4 MiB documents: refused at their headers (413), their bodies never sent" \
    "$(field "$o1" answered_4xx) $(field "$o1" refused_unsent)" "220 $(field "$o1" bytes)"
is "the five nodes' reports kept, the rest refused" "$(grep -o 'answered_2xx=[0-9]* answered_4xx=[0-9]*' "$T/o2")" "answered_2xx=5 answered_4xx=80"
is "reports for nodes the scheduler does not list: every one refused" "$(echo "$o3" | grep -o 'answered_4xx=[0-9]*')" answered_4xx=85
is "300 passes for n3: every one recorded" "$(echo "$o4" | grep -o 'answered_2xx=[0-9]*')" answered_2xx=300
mib=$(( $(cat "$T/a.db" "$T/a.db-wal" | wc -c) / 1048576 ))
echo "# store after the flood: $mib MiB"
check "the store stays small: the latest report per node, 100 passes per node ($mib MiB)" test "$mib" -lt 32
is "n3 keeps its newest 100 passes" "$(get "$URL/v1/burnin?node=n3&days=3650" | jq '.nodes[0].runs')" 100
is "one report per node the scheduler lists" "$(get "$URL/v1/audit?raw=1&limit=1000" | jq -r '[.[].node] | join(" ")')" "n1 n2 n3 n4 n5"

# --- reads: paged, answered ----------------------------------------------------
get -D "$T/h1" "$URL/v1/audit?raw=1&limit=2" >"$T/raw1.json"
is "GET /v1/audit?raw=1&limit=2: two reports" "$(jq -r '[.[].node] | join(" ")' "$T/raw1.json")" "n1 n2"
next=$(sed -n 's/^Link: <\(.*\)>; rel="next".*/\1/p' "$T/h1" | tr -d '\r')
is "… and the cursor to the next page" "$next" "/v1/audit?raw=1&limit=2&after=n2"
is "the next page" "$(get "$URL$next" | jq -r '[.[].node] | join(" ")')" "n3 n4"
is "a bad cursor: 400 naming it" "$(get -o /dev/null -w '%{http_code}' "$URL/v1/audit?raw=1&after=--x")" 400
get -D "$T/h2" "$URL/v1/burnin?days=3650&limit=1" >"$T/b1.json"
is "GET /v1/burnin?days=3650&limit=1: answered, one node, the summary of all" \
    "$(jq -c '[(.nodes | length), .burnin.nodes_tested, .burnin.runs, .next_after]' "$T/b1.json")" '[1,2,101,"n2"]'
check "… with the cursor to the next page" grep -q '^Link: </v1/burnin?days=3650&limit=1&after=n2>; rel="next"' "$T/h2"
is "the merged fleet audit answers" "$(get "$URL/v1/audit" | jq -c '[.summary.nodes, .not_reporting]')" '[5,[]]'

# --- the store's size alarm ----------------------------------------------------
stop
start "$T/a.db" --store-alarm-mb 1
inv n4
out=$(post /v1/inventory "$T/inv.json")
check "over the store's alarm: a report is refused, 507 with the figures ($out)" \
    sh -c "echo '$out' | grep -Eq '^507 \{\"error\":\"storage: the store is [0-9]+ MiB, over its alarm of 1 MiB: not kept\"\}\$'"
check "… an ALERT is logged" grep -Eq "ALERT store: [0-9]+ MiB, over the alarm of 1 MiB \(--store-alarm-mb\)" "$T/serve.log"

bytes=$(metric vigil_store_bytes)
is "… and the alarm and the store's size are in the metrics" "$(metric vigil_store_alarm_bytes) $(( ${bytes:-0} > 1048576 ))" \
    "1048576 1"
msg() { printf '{"node":"n1","seq":%d,"events":[{"kind":"xid","code":79,"pci":"0000:18:00.0","gpu":0%s}]}' "$1" "$2" >"$T/ev.json"; }
msg 1 ''
is "… events are still taken" "$(status /v1/events "$T/ev.json")" 202

# --- the controller decides the action ---------------------------------------
stop
start "$T/b.db"
msg 1 ',"action":"ignore"'
status /v1/events "$T/ev.json" >/dev/null
msg 2 ''
sed -i 's/"code":79,"pci":"0000:18:00.0"/"code":79,"pci":"0000:3b:00.0"/' "$T/ev.json"
status /v1/events "$T/ev.json" >/dev/null
is "an XID 79 an agent called 'ignore', and one with no action: both the catalog's reboot" \
    "$(get "$URL/v1/incidents?node=n1" | jq -r '[.[].action] | join(" ")')" "reboot reboot"
stop
site_policy() { # DB MESSAGE-NUMBER POLICY-TEXT DESCRIPTION: an XID 79 the agent called 'ignore' → drain-rma
    printf '%s' "$3" >"$T/site.tsv"
    start "$T/$1" --fault-policy "$T/site.tsv"
    msg "$2" ',"action":"ignore"'
    status /v1/events "$T/ev.json" >/dev/null
    is "$4" "$(get "$URL/v1/incidents?node=n1" | jq -r '.[0].action')" "drain-rma"
    stop
}
site_policy c.db 3 "$(printf '# the site says: a GPU off the bus goes for RMA\nxid 79 action=drain-rma')" \
    "with --fault-policy: the site's action, whatever the agent said"
site_policy e.db 4 "$(printf '# every PCIe fault, NVIDIA or AMD, goes for RMA\ncategory pcie action=drain-rma')" \
    "with a category in --fault-policy: the category's action (XID 79 is pcie)"
printf 'xid 79 action=explode\n' >"$T/bad.tsv"
"$VIGIL" serve --dry-run --listen 127.0.0.1:0 --db "$T/d.db" --auth none --fault-policy "$T/bad.tsv" 2>"$T/bad.err"
is "a bad --fault-policy: exit 2" "$?" 2
check "… naming the file and line" grep -q "bad.tsv:1: " "$T/bad.err"
done_testing
