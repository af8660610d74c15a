#!/bin/sh
# prometheus.sh — /metrics as the real Prometheus tools read it: promtool
# lints the exposition, and a real Prometheus server scrapes a running
# `vigil serve` with the read token (authorization: Bearer from a file) and
# answers queries on vigil's series; without the token the target is down.
# The Grafana dashboard (deploy/grafana/vigil.json): every series its panels
# query is one vigil exports, and the server accepts every panel's query.
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/lib.sh
if ! command -v promtool >/dev/null || ! command -v prometheus >/dev/null; then
    skip "prometheus and promtool are not installed"; exit 0
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/vigil-prom.XXXXXX")
SERVE=; PROM=
# the scheduler the controller takes its nodes from: a one-node lab (n1)
sched_up n2 || { nok "scheduler (lab) up"; rm -rf "$T"; exit 1; }
trap '[ -n "$PROM" ] && kill $PROM 2>/dev/null; [ -n "$SERVE" ] && kill $SERVE 2>/dev/null; wait 2>/dev/null; lab_down; rm -rf "$T"' EXIT
umask 077
node_tokens "$T" n1 >/dev/null
echo "read-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')" >"$T/read.token"
umask 022
# a repair ladder, so its counters have series (one per rung and result)
printf 'repair reset = true {node} {gpu}\nrepair reboot = true {node}\nhealthcheck = true {node}\n' >"$T/policy.conf"
"$VIGIL" serve --listen 127.0.0.1:0 --port-file "$T/port" --db "$T/db" --auth token --secret-file "$T/secret" \
    --read-token-file "$T/read.token" --policy "$T/policy.conf" --dry-run 2>"$T/serve.log" &
SERVE=$!
i=0; while [ ! -s "$T/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
PORT=$(cat "$T/port")
vcurl n1 -o /dev/null \
    --data-binary '{"node":"n1","seq":1,"events":[{"kind":"xid","code":79,"gpu":0,"action":"reboot","source":"kmsg"}]}' \
    "http://127.0.0.1:$PORT/v1/events"
curl -s -H "Authorization: Bearer $(cat "$T/read.token")" "http://127.0.0.1:$PORT/metrics" >"$T/metrics"
check "/metrics has vigil's series" grep -q '^vigil_incidents_total 1' "$T/metrics"
promtool check metrics <"$T/metrics" >"$T/promtool.out" 2>&1
is "promtool check metrics: the exposition is valid" "$?" 0
[ -s "$T/promtool.out" ] && sed 's/^/# promtool: /' "$T/promtool.out"

# a real Prometheus scraping it every second, with and without the read token
cat >"$T/prometheus.yml" <<YML
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: vigil
    authorization:
      type: Bearer
      credentials_file: $T/read.token
    static_configs:
      - targets: ['127.0.0.1:$PORT']
  - job_name: vigil-no-token
    static_configs:
      - targets: ['127.0.0.1:$PORT']
YML
promtool check config "$T/prometheus.yml" >/dev/null 2>&1
is "promtool check config: the scrape configuration is valid" "$?" 0
PPORT=$((20000 + $$ % 20000))
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" --web.listen-address="127.0.0.1:$PPORT" \
    >"$T/prometheus.log" 2>&1 &
PROM=$!
q() { curl -s -G "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1" | jq -r '.data.result[0].value[1] // empty'; }
i=0; while { [ -z "$(q 'up{job="vigil"}')" ] || [ -z "$(q 'up{job="vigil-no-token"}')" ]; } && [ $i -lt 150 ]; do sleep 0.2; i=$((i + 1)); done
is "Prometheus scrapes vigil with the read token (up = 1)" "$(q 'up{job="vigil"}')" 1
is "… and without it the target is down (up = 0)" "$(q 'up{job="vigil-no-token"}')" 0
is "… and answers a query on vigil's series" "$(q 'vigil_incidents_total{job="vigil"}')" 1
check "… including the executor's" test -n "$(q 'vigil_action_retries_pending{job="vigil"}')"
check "the latency histograms are exposed" sh -c "grep -q '^vigil_fault_to_isolated_seconds_bucket{le=\"+Inf\"} ' '$T/metrics' && grep -q '^vigil_repair_seconds_count ' '$T/metrics'"
is "open incidents by state: dry-run (the controller acts on nothing)" "$(q 'vigil_open_incidents{job="vigil",state="dry-run"}')" 1
is "nodes by state: n1 suspect" "$(q 'vigil_nodes{job="vigil",state="suspect"}')" 1
check "the ladder's counters: a series per rung and result" sh -c "grep -q '^vigil_repair_steps_total{step=\"reset\",result=\"ok\"} 0' '$T/metrics' &&
    grep -q '^vigil_repair_steps_total{step=\"reboot\",result=\"failed\"} 0' '$T/metrics'"
is "… and Prometheus has the RMA hand-offs counter" "$(q 'vigil_rma_handoffs_total{job="vigil"}')" 0
check "the requeue and MTTR histograms are exposed" sh -c "grep -q '^vigil_fault_to_requeued_seconds_count ' '$T/metrics' &&
    grep -q '^vigil_detected_to_returned_seconds_bucket{le=\"+Inf\"} ' '$T/metrics'"

# the Grafana dashboard: only vigil's series, and queries Prometheus accepts
G=deploy/grafana/vigil.json
jqt() { jq -e "$@" >/dev/null; }
check "$G is JSON with panels, each with a query" jqt '(.panels | length) > 0 and all(.panels[]; (.targets | length) > 0 and all(.targets[]; (.expr | length) > 0))' "$G"
jq -r '.. | objects | .expr? // empty' "$G" >"$T/exprs"
grep -o 'vigil_[a-z0-9_]*' "$T/exprs" | sort -u >"$T/names"
missing=""
for name in $(cat "$T/names"); do grep -q "^$name[{ ]" "$T/metrics" || missing="$missing $name"; done
is "every one of the $(wc -l <"$T/names") series the dashboard queries is in a live scrape" "$missing" ""
bad=""
while IFS= read -r e; do
    st=$(curl -s -G "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$e" | jq -r .status)
    [ "$st" = success ] || bad="$bad [$e: $st]"
done <"$T/exprs"
is "Prometheus accepts each of the dashboard's $(wc -l <"$T/exprs") queries" "$bad" ""
is "… and one answers with vigil's data (open incidents)" "$(q 'sum(vigil_incidents_open{job="vigil"})')" 1
done_testing
