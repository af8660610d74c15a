#!/bin/sh
# dashboard.sh — the live dashboard at `/` in a real browser (headless
# Chromium) against a real lab (4 nodes + 2 hot spares in two racks, Slurm,
# munge) and a real `vigil serve` (token auth, read token): the browser signs
# in once with /?token=, the page polls /v1/summary with the cookie, and the
# DOM shows every lab node in its rack with its state — spares first; then,
# after an XID 79 on a node running a job (isolated, job requeued, a spare
# promoted, repair ladder tried, health check failed), an XID 48 whose repair
# step is still running (repairing), an XID on a node an administrator drained
# (held) and a recorded event whose kernel-log line is markup (shown as text,
# never run) — the incidents with their step timelines, and a PNG screenshot.
# Then /metrics on the same lab: node-state gauges, ladder counters and the
# requeue histogram, linted by promtool.  Last, an XID on n6 whose repair and
# health check pass (the policy's health check passes on n6 only): the node
# comes back and the page shows it `returned`, with the time and its incident.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ] || ! command -v slurmctld >/dev/null; then
    skip "needs root and slurmctld"; exit 0
fi
if ! command -v chromium >/dev/null; then skip "chromium is not installed"; exit 0; fi
W=$(mktemp -d "${TMPDIR:-/tmp}/vigil-dash.XXXXXX")
chmod 755 "$W"   # munged refuses a socket under a 0700 parent
SERVE_PID=
stop_serve() {
    [ -n "$SERVE_PID" ] || return 0
    for c in $(pgrep -P "$SERVE_PID"); do kill "$c" 2>/dev/null; done   # a repair step still running
    kill "$SERVE_PID" 2>/dev/null; wait "$SERVE_PID" 2>/dev/null; SERVE_PID=
}
lab_up 6 --spares 2 --no-vigil >/dev/null || { nok "lab up"; rm -rf "$W"; exit 1; }
trap 'stop_serve; scancel -u root >/dev/null 2>&1; lab_down; rm -rf "$W"' EXIT   # after lab_up, which sets its own
node_tokens "$W" 'n[1-6]' >/dev/null; secret "$W/read.token" read
RH="Authorization: Bearer $(cat "$W/read.token")"
cat >"$W/policy.conf" <<EOF
spares = n[5-6]
domain rackA = n[1-3]
domain rackB = n[4-6]
domain_max_unavailable = 2
breaker = 100% / 600s
repair quick = true {node}
repair slow = sleep 60
ladder = quick
ladder xid 48 = slow
healthcheck = test {node} = n6
repair_timeout = 120
EOF
lab_serve "$W" "$W/policy.conf" "$W/incidents.db" "$W/serve.log"
echo 0 >"$W/seq"
post() { # node events-json → HTTP status (the message number lives in a file: callers use $(…))
    SEQ=$(( $(cat "$W/seq") + 1 )); echo $SEQ >"$W/seq"
    printf '{"node":"%s","seq":%d,"events":[%s]}' "$1" "$SEQ" "$2" >"$W/body"
    vcurl "$1" -o /dev/null -w '%{http_code}' --data-binary @"$W/body" "$URL/v1/events"
}
xid() { # node code [jobs: what the node's agent lists from slurmd's spool]
    post "$1" "{\"kind\":\"xid\",\"code\":$2,\"pci\":\"0000:18:00.0\",\"gpu\":0,\"action\":\"reboot\",\"source\":\"kmsg\"${3:+,\"jobs\":\"$3\"}}"
}
wait_for() { # seconds command…
    t=$(( $(date +%s) + $1 )); shift
    while ! "$@" >/dev/null 2>&1; do [ "$(date +%s)" -ge "$t" ] && return 1; sleep 0.2; done
}
state_of() { curl -s -H "$RH" "$URL/v1/incidents?node=$1&limit=1" | jq -r '.[0] // empty | .state + (if .detail != "" then ": " + .detail else "" end)'; }
state_is() { case "$(state_of "$1")" in "$2"*) return 0 ;; esac; return 1; }
NB=0
browse() { # what URL → the page as the browser has it after 5 s, or its screenshot (what = dom | FILE.png)
    NB=$((NB + 1))
    if [ "$1" = dom ]; then set -- --dump-dom "$2"; else set -- --window-size=1280,1000 --screenshot="$1" "$2"; fi
    timeout 90 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$W/chrome$NB" \
        --virtual-time-budget=5000 "$@" 2>>"$W/chromium.log"
}
jqt() { jq -e "$@" >/dev/null; }
cell() { grep -q "data-node=\"$2\" data-state=\"$3\"" "$1"; }
in_dom() { grep -qF -- "$2" "$1"; }

check "the spare pool is a reservation holding n5 and n6" \
    wait_for 15 sh -c 'scontrol show reservation vigil_spares | grep -q "Nodes=n\[5-6\] "'

# ---- before any fault: every node in its rack, the spares as spares
browse dom "$URL/" >"$W/anon.html"
check "without the read token the page asks for it and shows no node" \
    sh -c "grep -q 'Open <code>/?token=READ-TOKEN</code>' '$W/anon.html' && ! grep -q 'data-node=' '$W/anon.html'"
browse dom "$URL/?token=$(cat "$W/read.token")" >"$W/dom1.html"
check "signed in with /?token=: the page loaded the summary" grep -q '<body data-loaded="20' "$W/dom1.html"
n=0; for node in n1 n2 n3 n4 n5 n6; do grep -q "data-node=\"$node\"" "$W/dom1.html" && n=$((n + 1)); done
is "a cell for each of the lab's 6 nodes" "$n" 6
is "grouped by rack: rackA holds n1 n2 n3, rackB n4 n5 n6" \
    "$(tr '<' '\n' <"$W/dom1.html" | sed -n 's/.*data-domain="\([^"]*\)".*/[\1]/p;s/.*data-node="\([^"]*\)".*/\1/p' | tr '\n' ' ')" \
    "[rackA] n1 n2 n3 [rackB] n4 n5 n6 "
check "n5 and n6 shown as spares, n1 healthy" sh -c "grep -q 'data-node=\"n5\" data-state=\"spare\"' '$W/dom1.html' &&
    grep -q 'data-node=\"n6\" data-state=\"spare\"' '$W/dom1.html' && grep -q 'data-node=\"n1\" data-state=\"healthy\"' '$W/dom1.html'"
check "the spare pool panel lists n5 and n6" sh -c "grep -q 'data-spare=\"n5\"' '$W/dom1.html' && grep -q 'data-spare=\"n6\"' '$W/dom1.html'"
check "the breaker is shown armed" grep -q '<td>armed</td>' "$W/dom1.html"

# ---- faults
job=$(sbatch --parsable --requeue -N1 -w n2 -o /dev/null --wrap 'sleep 600')
check "a job runs on n2" wait_for 20 sh -c "scontrol show job -o $job | grep -q 'JobState=RUNNING'"
is "XID 79 on n2 accepted" "$(xid n2 79 "$job")" 202
check "n2: repaired, health check failed, stays isolated" wait_for 20 state_is n2 "unrepaired: health check failed, node stays isolated"
is "XID 48 on n3 accepted" "$(xid n3 48)" 202
check "n3: isolated, its slow repair step running" wait_for 20 state_is n3 repairing
scontrol update NodeName=n4 State=DRAIN Reason="bad DIMM, ticket 4711"
is "XID 79 on n4 (drained by an administrator) accepted" "$(xid n4 79)" 202
check "n4: held, left alone" wait_for 10 state_is n4 "held: left alone"
# a kernel-log line that is markup: node names are restricted at the intake
# (letters, digits, '.', '-', '_'), so the text an agent controls is the event's
XSS="<img src=x onerror=document.title='pwned'><script>document.title='pwned2'</script>"
is "an event whose raw line is markup accepted (recorded only)" \
    "$(post n1 "{\"kind\":\"xid\",\"code\":43,\"gpu\":1,\"action\":\"ignore\",\"source\":\"kmsg\",\"raw\":\"$XSS\"}")" 202
check "n1: recorded" wait_for 10 state_is n1 recorded
curl -s -H "$RH" "$URL/v1/summary" >"$W/summary.json"
check "/v1/summary: n2 isolated, n3 repairing, n4 held, n1 suspect" jqt '
    [.nodes[] | {(.node): .state}] | add | .n2 == "isolated" and .n3 == "repairing" and .n4 == "held" and .n1 == "suspect"' "$W/summary.json"
check "/v1/nodes: every lab node with its rack and the scheduler's state" sh -c "curl -s -H '$RH' '$URL/v1/nodes' |
    jq -e '[.[] | select(.scheduler_state != null and (.domain | test(\"^rack[AB]\$\")))] | length == 6' >/dev/null"

browse dom "$URL/?token=$(cat "$W/read.token")" >"$W/dom2.html"
check "n2 shown isolated after its XID" cell "$W/dom2.html" n2 isolated
check "n3 shown repairing (its ladder step is running)" cell "$W/dom2.html" n3 repairing
check "n4 shown held" cell "$W/dom2.html" n4 held
check "n1 shown suspect (an open incident, recorded)" cell "$W/dom2.html" n1 suspect
# ---- the accounting of a controller minutes old: the window from its first record, the
# fleet from the scheduler's node list, rates over so little history not stated but said so
check "/v1/summary: the accounting's window starts at the controller's first record, not 30 days back" \
    jqt '.accounting.window.since == .accounting.window.history_since and .accounting.window.s < 3600' "$W/summary.json"
check "/v1/summary: availability and MTBI not stated, 'not enough history' said" jqt '.accounting.availability == null and
    .accounting.mtbi_s == null and (.accounting.unmeasured.mtbi_s | startswith("not enough history"))' "$W/summary.json"
check "the page shows 'not enough history' where the figures would be" grep -q '>not enough history<' "$W/dom2.html"
"$VIGIL" report --controller "$URL" --read-token-file "$W/read.token" --json >"$W/report.json"
is "report --controller: the fleet is the scheduler's 6 nodes (not the 4 with incidents), the window from the first record" \
    "$(jq -c '[.nodes, .window.since == .window.history_since, (.unmeasured.availability | startswith("not enough history"))]' "$W/report.json")" \
    "[6,true,true]"
"$VIGIL" report --controller "$URL" --read-token-file "$W/read.token" --nodes 8 >"$W/report.txt"
check "report --controller --nodes 8: the override, and the terminal says why MTBI is not stated" \
    sh -c "grep -q ', 8 nodes,' '$W/report.txt' && grep -q '^MTBI: not enough history: ' '$W/report.txt'"
check "the promoted spares shown healthy, in production" sh -c "grep -q 'data-node=\"n5\" data-state=\"healthy\"' '$W/dom2.html' &&
    grep -q 'data-node=\"n6\" data-state=\"healthy\"' '$W/dom2.html'"
check "rackA: 2 of 3 out" in_dom "$W/dom2.html" "rackA · 2 of 3 out"
id2=$(curl -s -H "$RH" "$URL/v1/incidents?node=n2&limit=1" | jq -r '.[0].id')
tr '<' '\n' <"$W/dom2.html" | sed -n "/data-incident=\"$id2\"/,/^\/ol>/p" >"$W/inc2.txt"
check "n2's incident listed: #$id2 n2: xid 79 gpu 0" grep -q "#$id2 n2: xid 79 gpu 0" "$W/inc2.txt"
steps=$(sed -n 's/^li data-step="\([^"]*\)".*/\1/p' "$W/inc2.txt")
is "… with its timeline: every step taken" "$(echo "$steps" | sort | tr '\n' ',')" \
    "detected,health check after quick,isolated,jobs_requeued,remediated,repair quick,spare_promoted,"
is "… in the order taken (the node out before its jobs are requeued; the health check after the repair step)" \
    "$(echo "$steps" | grep -v '^remediated$' | tr '\n' ',')" \
    "detected,isolated,jobs_requeued,spare_promoted,repair quick,health check after quick,"
check "the open incidents counted in the heading" in_dom "$W/dom2.html" "Open incidents (4)"
check "markup in an event's raw line is shown as text" in_dom "$W/dom2.html" \
    "&lt;img src=x onerror=document.title='pwned'&gt;&lt;script&gt;document.title='pwned2'&lt;/script&gt;"
check "… never as an element: no <img>, no injected <script>, the title unchanged" sh -c "
    ! grep -q '<img' '$W/dom2.html' && ! grep -q '<script>document' '$W/dom2.html' && grep -q '<title>vigil</title>' '$W/dom2.html'"
browse "$W/dash.png" "$URL/?token=$(cat "$W/read.token")"
check "a screenshot: a PNG of nonzero size" sh -c "[ -s '$W/dash.png' ] && [ \"\$(head -c 8 '$W/dash.png' | od -An -tx1 | tr -d ' ')\" = 89504e470d0a1a0a ]"

# ---- the same lab in /metrics
curl -s -H "$RH" "$URL/metrics" >"$W/metrics"
m() { awk -v k="$1" '$1 == k {print $2}' "$W/metrics"; }
is "vigil_nodes by state: isolated, repairing, held, suspect, healthy" \
    "$(m 'vigil_nodes{state="isolated"}') $(m 'vigil_nodes{state="repairing"}') $(m 'vigil_nodes{state="held"}') $(m 'vigil_nodes{state="suspect"}') $(m 'vigil_nodes{state="healthy"}')" \
    "1 1 1 1 2"
is "ladder counters: quick ran once and passed; its health check failed" \
    "$(m 'vigil_repair_steps_total{step="quick",result="ok"}') $(m 'vigil_health_checks_total{result="failed"}')" "1 1"
is "n2's job requeued: the fault-to-requeued histogram counted it" "$(m vigil_fault_to_requeued_seconds_count)" 1
if command -v promtool >/dev/null; then
    promtool check metrics <"$W/metrics" >"$W/promtool.out" 2>&1
    is "promtool check metrics on the lab's exposition" "$?" 0
    sed 's/^/# promtool: /' "$W/promtool.out"
else
    skip "promtool is not installed"
fi
# ---- a node repaired and back: `returned`, from its incident, with the time
# (the ladder repairs one node at a time: n3's slow step, the controller's
# child, is ended first, so n6's turn comes; SIGKILL: the step inherits the
# controller's blocked SIGTERM)
for c in $(pgrep -P "$SERVE_PID"); do kill -KILL "$c" 2>/dev/null; done
n3_left_out() { ! state_is n3 isolated && [ -n "$(state_of n3)" ]; }
check "n3: its repair step ended, the node left out of service" wait_for 15 n3_left_out
is "XID 79 on n6 accepted" "$(xid n6 79)" 202
check "n6: repaired, health check passed, back in service (incident closed)" wait_for 30 state_is n6 closed
id6=$(curl -s -H "$RH" "$URL/v1/incidents?node=n6&limit=1" | jq -r '.[0].id')
back=$(curl -s -H "$RH" "$URL/v1/incidents?node=n6&limit=1" | jq -r '.[0].steps.returned.at')
curl -s -H "$RH" "$URL/v1/summary" >"$W/summary3.json"
check "/v1/summary: n6 returned, from incident #$id6 at $back" jqt --argjson id "$id6" --arg at "$back" '
    .nodes[] | select(.node == "n6") | .state == "returned" and .returned.incident == $id and .returned.at == $at' \
    "$W/summary3.json"
check "/v1/summary: one node returned among the states; n2 (its health check failed) still isolated" jqt '
    .states.returned == 1 and ([.nodes[] | select(.node == "n2")][0].state == "isolated")' "$W/summary3.json"
browse dom "$URL/?token=$(cat "$W/read.token")" >"$W/dom3.html"
check "n6 shown returned" cell "$W/dom3.html" n6 returned
tr '<' '\n' <"$W/dom3.html" | grep -A12 'data-node="n6"' >"$W/n6.txt"
check "… with the incident it came back from (#$id6) and when ($back)" sh -c "
    grep -q 'data-returned=\"$id6\"' '$W/n6.txt' && grep -q '>#$id6 $(echo "$back" | cut -c12-16)\$' '$W/n6.txt' &&
    grep -q 'returned $(echo "$back" | sed 's/T/ /; s/Z/ UTC/') from incident #$id6' '$W/n6.txt'"
check "the legend lists the returned state" grep -q 'class="s-returned">returned<' "$W/dom3.html"
stop_serve
check "no sanitizer report from the controller" sh -c "! grep -q 'ERROR: AddressSanitizer\|runtime error' '$W/serve.log'"
done_testing
