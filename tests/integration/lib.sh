# lib.sh — sourced by the integration suites: TAP helpers.
# Each suite prints "ok N - what" / "not ok N - what" lines; tests/run sums them.
# $VIGIL is the sanitized vigil binary, $FAKE_NVML the fake NVML library.
: "${VIGIL:=$(cd "$(dirname "$0")/../.." && pwd)/build/vigil-san}"
_tap_n=0 _tap_failed=0
ok()   { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $*"; }
skip() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n # skip $*"; }
nok()  { _tap_n=$((_tap_n + 1)); _tap_failed=$((_tap_failed + 1)); echo "not ok $_tap_n - $*"; }
# done_testing — a suite's last line: its exit status says whether every test
# passed (1 when one failed), whatever the command before it returned.
done_testing() {
    if [ "$_tap_failed" = 0 ]; then exit 0; fi
    exit 1
}
# check "description" command args…  — passes when the command exits 0.
check() { d=$1; shift; if "$@"; then ok "$d"; else nok "$d"; fi; }
# is "description" got expected
is() { if [ "$2" = "$3" ]; then ok "$1"; else nok "$1 (got '$2', expected '$3')"; fi; }
# exits_with "description" code command args…
exits_with() { d=$1; want=$2; shift 2; "$@" >/dev/null 2>&1; got=$?; is "$d" "$got" "$want"; }
# lab_up N [vigil lab up options…] — a real local Slurm cluster for this suite:
# LAB_DIR is a fresh directory, SLURM_CONF and VIGIL_LAB are exported, and
# lab_down runs on EXIT.  Returns non-zero (after printing why) when it fails.
lab_up() {
    LAB_DIR=$(mktemp -d "${TMPDIR:-/tmp}/vigil-lab.XXXXXX") || return 1
    trap lab_down EXIT
    _lab_env=$("$VIGIL" lab up "$@" --dir "$LAB_DIR") || { echo "# lab up failed"; return 1; }
    eval "$_lab_env"
}
# lab_down — stops the suite's lab and removes LAB_DIR (safe to call twice).
lab_down() {
    [ -n "$LAB_DIR" ] && [ -d "$LAB_DIR" ] && "$VIGIL" lab down --dir "$LAB_DIR"
    return 0
}

# sched_up HOSTLIST — a scheduler for a suite whose controller hears from
# nodes it runs no agent of: a one-node lab (no vigil) whose slurm.conf also
# lists HOSTLIST (not n1, the lab's own) at 127.0.0.1, nodes with no slurmd (the controller takes
# reports only from nodes the scheduler lists).  Sets LAB_DIR and
# SLURM_CONF, and (as lab_up) `trap lab_down EXIT`: a suite with a trap of
# its own sets it after, calling lab_down.
sched_up() { lab_up 1 --no-vigil --conf-extra "NodeName=$1 NodeAddr=127.0.0.1 CPUs=1 RealMemory=100" >/dev/null; }

# --- token auth, as each node's agent speaks it -------------------------------
# secret FILE [PREFIX] — a fresh random token in FILE (mode 0600).
secret() { (umask 077; echo "${2:-token}-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')" >"$1"); }
# node_tokens DIR HOSTLIST — the cluster secret in DIR/secret and each node's
# own token in DIR/NODE.token (vigil token); vcurl reads them from DIR.
node_tokens() {
    TOKENS=$1
    [ -f "$1/secret" ] || "$VIGIL" token --new-secret "$1/secret" || return 1
    "$VIGIL" token --secret-file "$1/secret" --node "$2" --out "$1/%n.token"
}
# vcurl NODE [curl options…] — curl -s with NODE's credentials: its token
# ($TOKENS/NODE.token), its name, the time and a nonce (this suite's
# instance, a counter in microseconds).
VCURL_INSTANCE=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
vcurl() {
    _vn=$1; shift
    curl -s -H "Authorization: Bearer $(cat "$TOKENS/$_vn.token" 2>/dev/null)" -H "X-Vigil-Node: $_vn" \
        -H "X-Vigil-Time: $(date +%s%3N)" -H "X-Vigil-Nonce: $VCURL_INSTANCE-$(date +%s%6N)" "$@"
}

# --- `vigil serve` acting on a suite's lab: token auth and a read token ------
# lab_serve DIR POLICY DB LOG [vigil options before `serve`] — DIR holds the
# cluster `secret` and the nodes' tokens (node_tokens), and `read.token`
# (secret writes it); sets SERVE_PID and URL.
lab_serve() {
    _d=$1 _pol=$2 _db=$3 _log=$4; shift 4
    rm -f "$_d/serve.port"
    "$VIGIL" "$@" serve --listen 127.0.0.1:0 --port-file "$_d/serve.port" --db "$_db" --auth token \
        --secret-file "$_d/secret" --read-token-file "$_d/read.token" --policy "$_pol" --heartbeat 0 2>>"$_log" &
    SERVE_PID=$!
    i=0; while [ ! -s "$_d/serve.port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
    URL="http://127.0.0.1:$(cat "$_d/serve.port")"
}

# --- a real `vigil serve` and `vigil agent` for the agent suites -------------
# The suite sets T (its temporary directory) and writes the tokens
# (node_tokens "$T" …); AUTH, when set, replaces token auth on both sides
# (e.g. "--auth munge --munge-socket S").
# serve: $T/incidents.db, $T/serve.log, PORT; agent: node $AGENT_NODE (n7),
# kernel log $T/kmsg, spool $T/agent.spool, stderr $T/agent.log, stdout
# $T/agent.out (its --json lines), AGENT_PID.
start_serve() { # PORT (0 = any) [serve options…]
    _p=$1; shift
    rm -f "$T/port"
    # shellcheck disable=SC2086 # AUTH is a list of options
    "$VIGIL" serve --listen "127.0.0.1:$_p" --port-file "$T/port" --db "$T/incidents.db" \
        ${AUTH:---auth token --secret-file $T/secret} ${READ_TOKEN:+--read-token-file "$READ_TOKEN"} --dry-run "$@" \
        2>>"$T/serve.log" &
    SERVE_PID=$!
    i=0; while [ ! -s "$T/port" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
    PORT=$(cat "$T/port" 2>/dev/null)
}
stop_serve() { kill -9 "$SERVE_PID" 2>/dev/null; wait "$SERVE_PID" 2>/dev/null; SERVE_PID=; }
start_agent() { # [agent options…]
    : >"$T/agent.log"
    # shellcheck disable=SC2086
    "$VIGIL" agent --node "${AGENT_NODE:-n7}" --kmsg "$T/kmsg" --controller "http://127.0.0.1:$PORT" \
        ${AUTH:---auth token --token-file $T/${AGENT_NODE:-n7}.token} --spool "$T/agent.spool" --retry-max 0.5 "$@" \
        >>"$T/agent.out" 2>>"$T/agent.log" &
    AGENT_PID=$!
    wait_for 'grep -q "agent: node ${AGENT_NODE:-n7}" "$T/agent.log"'
}
stop_agent() { kill "$AGENT_PID" 2>/dev/null; wait "$AGENT_PID" 2>/dev/null; AGENT_PID=; }
# wait_for 'shell condition' [SECONDS] — evaluates it every 20 ms for up to
# SECONDS (default 10), quietly; non-zero when it never held
wait_for() {
    _n=$(( ${2:-10} * 50 )) i=0
    while ! eval "$1" 2>/dev/null; do [ $i -ge $_n ] && return 1; sleep 0.02; i=$((i + 1)); done
}
xid() { # CODE BUS → one /dev/kmsg-format line (the NVRM Xid format of tests/fixtures/logs/kmsg-records.log)
    printf '6,%d,%d,-;NVRM: Xid (PCI:0000:%s:00): %d, pid=1, name=python, test\n' 1 1000 "$2" "$1"
}

# --- reading the controller as an operator does: its read API -----------------
# API_URL (default http://127.0.0.1:$PORT, start_serve's), API_TOKEN (the read
# token's file; default $READ_TOKEN) and API_CURL (more curl options, e.g.
# "--cacert FILE") say which controller.
# api_get PATH [curl options…] — the body; non-zero unless answered 200.
api_get() {
    _ap=$1 _at=; shift
    read -r _at <"${API_TOKEN:-$READ_TOKEN}" 2>/dev/null
    # shellcheck disable=SC2086 # API_CURL is a list of options
    curl -sf --max-time 30 ${API_CURL:-} -H "Authorization: Bearer $_at" "$@" "${API_URL:-http://127.0.0.1:$PORT}$_ap"
}
# api_metric NAME — the value of one /metrics series (NAME as printed, labels included).
api_metric() { api_get /metrics | awk -v n="$1" '$1 == n { print $2 }'; }
# incidents_json [QUERY] — every incident /v1/incidents?QUERY selects (node=,
# open=1, kind=, code=, pci=, gpu=), following each page's Link to the last,
# as one JSON array, newest first; non-zero (nothing printed) when a page
# fails.  Cheap enough for a wait_for poll when the query selects a few.
incidents_json() { inc . "$1"; }
# inc 'JQ FILTER' [QUERY] — jq -r FILTER over that array, e.g.
# inc 'map(select(.count > 1)) | length' code=95; empty when a read failed.
inc() {
    _ij=${T:-${TMPDIR:-/tmp}}/.incidents.$$
    _next="/v1/incidents?limit=1000${2:+&$2}" _k=10000
    while [ -n "$_next" ]; do
        _k=$((_k + 1))
        api_get "$_next" -D "$_ij.h" >"$_ij.p$_k" || { rm -f "$_ij".*; return 1; }
        _next=$(sed -n 's/^[Ll]ink: <\([^>]*\)>; rel="next"\r\{0,1\}$/\1/p' "$_ij.h")
    done
    jq -crs "add | ($1)" "$_ij".p*
    _rc=$?
    rm -f "$_ij".*
    return $_rc
}
# incidents [QUERY] — how many incidents the controller has (that QUERY selects).
incidents() { inc length "$1"; }
# store_sql SQL [DB] — sqlite3 on the store file itself (DB, default
# $T/incidents.db): only for what is about the file (a checkpoint, a state
# rewound by hand, a retention count), never to read what the API answers.
store_sql() { sqlite3 "${2:-$T/incidents.db}" "$1"; }
