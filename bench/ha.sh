#!/bin/sh
# ha.sh — the highly-available controller (several `vigil serve` on one
# PostgreSQL store) under load, each figure beside a baseline measured in the
# same run, on the same machine:
#  - intake on PostgreSQL (a private server, fsync on: durable as SQLite's)
#    next to the same load on SQLite: 200 keep-alive connections posting back
#    to back for SECONDS (bench/serve.sh's closed loop): events acknowledged
#    per second and p99 (targets >= 5,000/s, p99 < 50 ms on PostgreSQL);
#  - takeover: two controllers on one PostgreSQL store, the leader killed
#    (SIGKILL) TAKEOVERS times (default 20), ms until the other's /healthz says
#    `role leader` (the killed one started again as a follower before the
#    next round); in every round an XID 79 posted to the survivor right after
#    the kill, ms from the kill until the scheduler shows the node out (DOWN/DRAIN)
#    (target <= 5.5 s), and at the end each such node's incidents counted
#    through the API (exactly one: none lost, none done twice).  Baseline: one
#    controller on SQLite killed the same way and started again at once (what
#    a supervisor does): ms until its /healthz answers, and until the same
#    XID 79, posted as an agent retries it, has its node out.  Beside
#    them the failover times of the usual alternatives, as their documents
#    give them;
#  - heartbeats of a fleet: NODES (default 12,500) agents beating once a
#    second against one controller (SQLite; beats are kept in memory), the
#    scheduler listing every node: the controller's CPU seconds per 1,000
#    beats, its RSS, p99 acknowledgement, the nodes declared silent while all
#    beat (must be 0), and the cores 12,500 beats/s need — next to a tenth of
#    the fleet beating just before (the controller's CPU while idle as long
#    taken off both); halfway, the fleet's last node crashes (its beats stop):
#    ms from its last beat until the controller declares it silent (target
#    <= 3 s), the only node declared.
# The scheduler is a one-node lab whose slurm.conf also lists the bench nodes.
# Knobs: BENCH_HA_S (intake seconds, 10), BENCH_HA_TAKEOVERS (20),
# BENCH_HA_XIDS (rounds with an XID 79, all), BENCH_HA_BEAT_S (15),
# BENCH_HA_NODES (12500), BENCH_HA_BEAT_CONNS (250); BENCH_HA_LOGS=DIR keeps
# the controllers' logs there; BENCH_HA_PARTS: the parts to run, of
# "intake takeover beats" (all by default).
cd "$(dirname "$0")/.." || exit 2
S=${BENCH_HA_S:-10} N=${BENCH_HA_TAKEOVERS:-20} X=${BENCH_HA_XIDS:-$N}
BS=${BENCH_HA_BEAT_S:-15} BN=${BENCH_HA_NODES:-12500} BC=${BENCH_HA_BEAT_CONNS:-250}
PARTS=${BENCH_HA_PARTS:-intake takeover beats}
for p in $PARTS; do
    case $p in intake | takeover | beats) ;; *) echo "ha: BENCH_HA_PARTS: '$p' is not a part (intake, takeover, beats)"; exit 2 ;; esac
done
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
T=$(mktemp -d /tmp/vigil-bench-ha-XXXXXX)
chmod 755 "$T"   # the PostgreSQL server runs as another user under it
V=build/vigil L=build/tests/httpload
export VIGIL_DATA=data PG_DURABLE=1
[ -x "$L" ] || { echo "ha: build/tests/httpload missing (make bench builds it)"; exit 1; }
command -v psql >/dev/null || { echo "ha: skipped (no PostgreSQL client: Debian package postgresql)"; exit 0; }
PIDS=
cleanup() {
    for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
    wait 2>/dev/null
    tests/pg.sh stop "$T/pg"
    $V lab down --dir "$T/lab" >/dev/null 2>&1
    [ -n "$BENCH_HA_LOGS" ] && cp "$T"/ctl*.log "$BENCH_HA_LOGS"/ 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' HUP INT PIPE TERM   # the cleanup on these too
ms() { date +%s%3N; }
# until COND… holds (every 10 ms) or 20 s pass: 0 if it held
until_() { t=$(ms); until "$@"; do [ $(($(ms) - t)) -gt 20000 ] && return 1; sleep 0.01; done; }
# lab NODES — a one-node lab whose slurm.conf lists NODES bench nodes besides (slurmctld pings each
# absent one: a fleet's worth costs it a third of a core, so parts 1 and 2 run with 1,000)
lab() {
    old=$(pgrep -f "$T/lab/")   # its daemons
    $V lab down --dir "$T/lab" >/dev/null 2>&1
    for p in $old; do until_ sh -c "! kill -0 $p 2>/dev/null"; done   # gone: their ports free again
    env=$($V lab up 1 --no-vigil --dir "$T/lab" --conf-extra "NodeName=bench[0-$(($1 - 1))] NodeAddr=127.0.0.1 CPUs=1 RealMemory=100") ||
        { echo "ha: the lab (the scheduler) did not come up"; exit 1; }
    eval "$env"
}
if part intake || part takeover; then
    lab 1000
    DB=$(tests/pg.sh start "$T/pg") || { echo "ha: the private PostgreSQL did not start"; exit 1; }
fi
umask 077
$V token --new-secret "$T/secret" || exit 1
echo "read-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')" >"$T/read"
umask 022
AUTH="secret:$T/secret" RH="Authorization: Bearer $(cat "$T/read")"
printf 'breaker = 100%% / 600s\n' >"$T/policy.conf"
field() { sed -n "s/.*$2=\([0-9.]*\).*/\1/p" "$1"; }

# start K DB [options…] — controller K in the background: its pid in $T/pidK, its port in $T/portK once it listens
start() {
    k=$1 db=$2; shift 2
    rm -f "$T/port$k"
    $V serve --listen 127.0.0.1:0 --port-file "$T/port$k" --db "$db" --auth token --secret-file "$T/secret" \
        --read-token-file "$T/read" --policy "$T/policy.conf" "$@" 2>>"$T/ctl$k.log" &
    echo $! >"$T/pid$k"
    PIDS="$PIDS $!"
}
pid_of() { cat "$T/pid$1"; }
url_of() { [ -s "$T/port$1" ] && echo "http://127.0.0.1:$(cat "$T/port$1")"; }
listening() { i=0; while [ ! -s "$T/port$1" ]; do [ $i -gt 2000 ] && return 1; sleep 0.01; i=$((i + 1)); done; }
role_of() { u=$(url_of "$1") && curl -s --max-time 1 "$u/healthz" | awk '$1 == "role" { print $2 }'; }
healthy() { u=$(url_of "$1") && [ "$(curl -s --max-time 1 "$u/healthz" | head -1)" = ok ]; }
role_is() { [ "$(role_of "$1")" = "$2" ]; }
# out of service in the scheduler's record: DOWN or DRAIN, with vigil's reason
isolated() { scontrol -o show node "$1" 2>/dev/null | grep -q 'State=[^ ]*\(DOWN\|DRAIN\).* Reason=vigil:'; }
# xid K NODE SEQ — XID 79 on NODE posted to controller K as NODE's agent: the HTTP status
xid() {
    curl -s -o /dev/null -w '%{http_code}' --max-time 2 -H "Authorization: Bearer $($V token --secret-file "$T/secret" --node "$2" | awk '{print $2}')" \
        -H "X-Vigil-Node: $2" -H "X-Vigil-Time: $(ms)" -H "X-Vigil-Nonce: 00000000000000a1-$3" \
        --data-binary "{\"node\":\"$2\",\"seq\":$3,\"events\":[{\"kind\":\"xid\",\"code\":79,\"pci\":\"0000:18:00.0\",\"gpu\":0,\"action\":\"drain-rma\",\"source\":\"kmsg\"}]}" \
        "$(url_of "$1")/v1/events"
}
# as an agent does: again every 50 ms until acknowledged
xid_until_acked() { j=0; until [ "$(xid "$@")" = 202 ] || [ $j -ge 400 ]; do sleep 0.05; j=$((j + 1)); done; }
incidents() { curl -s -H "$RH" "$(url_of "$1")/v1/incidents?node=$2" | jq 'if type == "array" then length else .incidents | length end'; }
stop() { kill -9 "$(pid_of "$1")" 2>/dev/null; wait "$(pid_of "$1")" 2>/dev/null; }
# stats FILE — the median and the max of the numbers in FILE
stats() { sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR) printf "%d %d", v[int((NR + 1) / 2)], v[NR]; else printf "- -" }'; }

metric_of() { curl -s -H "$RH" "$(url_of "$1")/metrics" | sed -n "s/^$2 //p"; }
cpu_of() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }   # utime + stime, in ticks
HZ=$(getconf CLK_TCK)

# ---- 1. intake: SQLite, then PostgreSQL ----------------------------------------------
if part intake; then
    children_cpu() { awk '{ print $16 + $17 }' /proc/$$/stat; }   # cutime + cstime of this shell
    pg_cpu() { cat /proc/[0-9]*/stat 2>/dev/null | awk '$2 == "(postgres)" { t += $14 + $15 } END { print t + 0 }'; }
    # intake NAME DB — the closed-loop load on a controller on DB: $T/intake_NAME holds httpload's figures,
    # then mpc= (messages per commit), ctl=, pg= and load= (CPU ms per 1,000 events: the controller's, PostgreSQL's,
    # the load client's: this shell's waited-for children, read just before and after it)
    intake() {
        start 1 "$2" --dry-run
        listening 1 && until_ healthy 1
        case "$2" in host=*) until_ role_is 1 leader ;; esac   # on PostgreSQL: once elected
        c0=$(cpu_of "$(pid_of 1)") g0=$(pg_cpu) l0=$(children_cpu)
        $L post "$(cat "$T/port1")" 200 "$S" 1 "$AUTH" 20 >"$T/intake_$1"
        l1=$(children_cpu) c1=$(cpu_of "$(pid_of 1)") g1=$(pg_cpu)
        awk -v m="$(metric_of 1 vigil_store_messages_total)" -v c="$(metric_of 1 vigil_store_commits_total)" \
            -v ok="$(field "$T/intake_$1" ok)" -v ctl=$((c1 - c0)) -v pg=$((g1 - g0)) -v load=$((l1 - l0)) -v hz="$HZ" 'BEGIN {
            k = (ok > 0 ? ok : 1) / 1000
            printf " mpc=%.1f ctl=%.0f pg=%.0f load=%.0f\n", (c > 0 ? m / c : 0), ctl * 1000 / hz / k, pg * 1000 / hz / k,
                load * 1000 / hz / k }' >>"$T/intake_$1"
        stop 1
    }
    intake sqlite "$T/intake.db"
    psql "$DB" -qAtc 'CREATE DATABASE intake' && psql "$DB" -qAtc 'CREATE DATABASE intake2' || exit 1
    intake pg "$(echo "$DB" | sed 's/dbname=postgres/dbname=intake/')"
    # the same server without fsync (as the tests run it): what the disk costs, apart from the rest
    PG_DURABLE=0 tests/pg.sh restart "$T/pg" && intake nosync "$(echo "$DB" | sed 's/dbname=postgres/dbname=intake2/')"
    tests/pg.sh restart "$T/pg" || exit 1
    printf 'ha: intake, %s s per run, 200 connections, token auth, durable 202s (PostgreSQL with fsync on); load average before: %s\n' \
        "$S" "$(cut -d' ' -f1-3 /proc/loadavg)"
    printf '%-44s %-8s %-7s %-14s %-9s %-13s %s\n' "" "figure" "p99 ms" "target" "msg/commit" "CPU ms/1000 ev" \
        "baseline: SQLite, same load"
    row() {
        printf '%-44s %-8s %-7s %-14s %-9s %-13s %s\n' "$1" "$(field "$T/intake_$2" events_per_s)" "$(field "$T/intake_$2" p99_ms)" \
            "$3" "$(field "$T/intake_$2" mpc)" "$(field "$T/intake_$2" ctl)+$(field "$T/intake_$2" pg)+$(field "$T/intake_$2" load)" "$4"
    }
    row "PostgreSQL: events acknowledged/s" pg ">= 5000, < 50" "$(field "$T/intake_sqlite" events_per_s)/s, p99 $(field "$T/intake_sqlite" p99_ms) ms"
    row "PostgreSQL, fsync off: events acknowledged/s" nosync "-" ""
    row "SQLite (the baseline): events acknowledged/s" sqlite "-" ""
    echo "  (CPU: the controller's + PostgreSQL's + the load client's, per 1,000 events acknowledged, all on the same cores)"
    awk -v p="$(field "$T/intake_pg" events_per_s)" -v s="$(field "$T/intake_sqlite" events_per_s)" -v pp="$(field "$T/intake_pg" p99_ms)" \
        -v sp="$(field "$T/intake_sqlite" p99_ms)" -v n="$(field "$T/intake_nosync" events_per_s)" 'BEGIN {
        printf "ratio: PostgreSQL / SQLite acknowledged events/s = %.2f; p99 = %.2f; PostgreSQL fsync off / SQLite = %.2f\n",
            (s > 0 ? p / s : 0), (sp > 0 ? pp / sp : 0), (s > 0 ? n / s : 0) }'
fi

# ---- 2. takeover: two controllers on PostgreSQL; baseline one on SQLite restarted -----
if part takeover; then
    psql "$DB" -qAtc 'CREATE DATABASE ha' || exit 1
    HA=$(echo "$DB" | sed 's/dbname=postgres/dbname=ha/')
    start 1 "$HA"; start 2 "$HA"
    listening 1 && listening 2 || { echo "ha: the controllers did not start"; exit 1; }
    leader() { for k in 1 2; do role_is $k leader && echo $k && return 0; done; return 1; }
    until_ leader >/dev/null || { echo "ha: no controller leads"; tail -3 "$T/ctl1.log" "$T/ctl2.log"; exit 1; }
    : >"$T/takeover" && : >"$T/act" && : >"$T/xnodes"
    every=$(( N / (X > 0 ? X : 1) )); [ "$every" -lt 1 ] && every=1
    r=1
    while [ $r -le "$N" ]; do
        l=$(leader) || { echo "ha: round $r: no leader"; break; }
        f=$((3 - l)) node=
        [ $((r % every)) = 0 ] && [ "$(wc -l <"$T/xnodes")" -lt "$X" ] && node=bench$((999 - r))
        t0=$(ms)
        stop "$l"
        [ -n "$node" ] && { xid_until_acked "$f" "$node" "$r" & }
        until_ role_is "$f" leader || { echo "ha: round $r: the survivor did not take over in 20 s"; break; }
        echo $(($(ms) - t0)) >>"$T/takeover"
        if [ -n "$node" ]; then
            if until_ isolated "$node"; then echo $(($(ms) - t0)) >>"$T/act"; else echo "ha: round $r: $node not isolated in 20 s"; fi
            echo "$node" >>"$T/xnodes"
        fi
        start "$l" "$HA"
        listening "$l" && until_ role_is "$l" follower || { echo "ha: round $r: the restarted controller does not follow"; break; }
        r=$((r + 1))
    done
    lost=0 twice=0
    for n in $(cat "$T/xnodes"); do
        c=$(incidents "$(leader)" "$n")
        [ "${c:-0}" -lt 1 ] && lost=$((lost + 1)); [ "${c:-0}" -gt 1 ] && twice=$((twice + 1))
    done
    stop 1; stop 2
    # the baseline: one controller on SQLite, SIGKILL and started again at once; the nodes out returned to
    # service first (carrying the reasons of the controllers above, they would rightly be taken for theirs)
    [ -s "$T/xnodes" ] && scontrol update NodeName="$(paste -sd, "$T/xnodes")" State=RESUME
    start 3 "$T/single.db"
    listening 3 && until_ healthy 3
    : >"$T/restart" && : >"$T/act1" && : >"$T/xnodes1"
    r=1
    while [ $r -le "$N" ]; do
        node=
        [ $((r % every)) = 0 ] && [ "$(wc -l <"$T/xnodes1")" -lt "$X" ] && node=bench$((499 - r))
        t0=$(ms)
        stop 3
        start 3 "$T/single.db"
        [ -n "$node" ] && { listening 3 && xid_until_acked 3 "$node" "$r" & }
        listening 3 && until_ healthy 3 || { echo "ha: round $r: the restarted controller does not answer"; break; }
        echo $(($(ms) - t0)) >>"$T/restart"
        if [ -n "$node" ]; then
            if until_ isolated "$node"; then echo $(($(ms) - t0)) >>"$T/act1"; else echo "ha: round $r: $node not isolated in 20 s"; fi
            echo "$node" >>"$T/xnodes1"
        fi
        r=$((r + 1))
    done
    lost1=0 twice1=0
    for n in $(cat "$T/xnodes1"); do
        c=$(incidents 3 "$n")
        [ "${c:-0}" -lt 1 ] && lost1=$((lost1 + 1)); [ "${c:-0}" -gt 1 ] && twice1=$((twice1 + 1))
    done
    stop 3
    set -- $(stats "$T/takeover"); tk_med=$1 tk_max=$2
    set -- $(stats "$T/act"); ac_med=$1 ac_max=$2
    set -- $(stats "$T/restart"); rs_med=$1 rs_max=$2
    set -- $(stats "$T/act1"); a1_med=$1 a1_max=$2
    printf 'ha: takeover, %s rounds (SIGKILL of the leader), %s with an XID 79 posted right after the kill\n' \
        "$(wc -l <"$T/takeover")" "$(wc -l <"$T/act")"
    printf '%-52s %-16s %-10s %s\n' "" "median / max" "target" "baseline: one controller on SQLite restarted at once"
    printf '%-52s %-16s %-10s %s / %s ms (until /healthz answers)\n' "ms from SIGKILL until the other says role leader" \
        "$tk_med / $tk_max" "-" "$rs_med" "$rs_max"
    printf '%-52s %-16s %-10s %s / %s ms\n' "ms from SIGKILL until the XID 79's node is out (DOWN)" "$ac_med / $ac_max" "<= 5500" \
        "$a1_med" "$a1_max"
    printf '%-52s %-16s %-10s %s lost, %s done twice of %s\n' "XID 79 nodes: incidents lost, done twice" \
        "$lost, $twice of $(wc -l <"$T/xnodes")" "0, 0" "$lost1" "$twice1" "$(wc -l <"$T/xnodes1")"
    awk -v a="$tk_med" -v b="$rs_med" -v c="$ac_med" -v d="$a1_med" 'BEGIN {
        printf "ratio: takeover / restart (median) = %.2f; kill to node out, HA / restart = %.2f\n", (b > 0 ? a / b : 0), (d > 0 ? c / d : 0) }'
    # the reference figures, constants from the documents named
    echo "reference: Kubernetes (kube-controller-manager --leader-elect-lease-duration, default 15s): \"the duration that non-leader"
    echo "  candidates will wait after observing a leadership renewal until attempting to acquire leadership\": 15000 ms"
    echo "reference: Slurm (slurm.conf(5), SlurmctldTimeout): \"the interval, in seconds, that the backup controller waits for the"
    echo "  primary controller to respond before assuming control. The default value is 120 seconds\": 120000 ms"
    awk -v a="$tk_med" 'BEGIN { if (a > 0) printf "ratio: takeover (median) / Kubernetes lease = %.2f; / Slurm SlurmctldTimeout = %.3f\n", a / 15000, a / 120000 }'
fi

# ---- 3. the heartbeats of a fleet ----------------------------------------------------
part beats || exit 0
lab "$BN"
SC=$(pgrep -f "slurmctld -D -f $T/lab/") || SC=
start 4 "$T/beat.db" --dry-run --max-per-client $((BC + 50)) --max-connections $((BC + 100))
listening 4 && until_ healthy 4
P=$(cat "$T/port4") PID=$(pid_of 4) LN=$((BN / 10))
metric() { metric_of 4 "$1"; }
cpu() { cpu_of "$PID"; }
rss() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$PID/status"; }
c0=$(cpu); sleep "$BS"; c1=$(cpu)   # idle for as long: what the controller spends without beats
rss_idle=$(rss)
# the scheduler's list read: a beat from the first node is taken
printf '{"node":"bench0","jobs":""}' >"$T/beat.tpl"
until_ sh -c "$L bulk $P 1 1 /v1/heartbeat $AUTH bench0 $T/beat.tpl | grep -q answered_2xx=1" ||
    { echo "ha: the controller does not take beats"; exit 1; }
# the baseline: a tenth of the fleet; then at once (no node of it falls silent) the whole fleet
c2=$(cpu)
$L beat "$P" $((BC / 10)) "$BS" "$AUTH" "$LN" 1 >"$T/beats_low"
c3=$(cpu) sc0=$([ -n "$SC" ] && cpu_of "$SC")
# halfway, the fleet's last node crashes (its beats stop): the time from its last beat until the
# controller declares it silent (its probe confirmed it down, or found only the agent gone)
HTTPLOAD_QUIET_AFTER_MS=$((BS * 500)) $L beat "$P" "$BC" "$BS" "$AUTH" "$BN" 1 >"$T/beats" 2>"$T/beats.err" &
LP=$!
declared() { [ $(($(metric vigil_heartbeat_confirmed_total) + $(metric vigil_heartbeat_agent_only_total))) -gt 0 ]; }
last_beat() { sed -n 's/.*last_beat_ms=\([0-9]*\).*/\1/p' "$T/beats.err"; }
detect=-
# waited for, looking every 100 ms (more often, the looking would take the fleet's CPU); the time is
# the node-silent incident's own (the controller's clock when it decided)
until_ grep -q last_beat_ms "$T/beats.err" && rss_beat=$(rss) &&
    until declared || [ $(($(ms) - $(last_beat))) -gt 20000 ]; do sleep 0.1; done
first=$(curl -s -H "$RH" "http://127.0.0.1:$P/v1/incidents?node=bench$((BN - 1))&kind=node-silent" | jq -r '.[0].first // empty')
[ -n "$first" ] && detect=$(($(date -u -d "$first" +%s%3N) - $(last_beat)))
wait $LP; c4=$(cpu)
sc1=$([ -n "$SC" ] && cpu_of "$SC")
silent=$(metric vigil_heartbeat_silent_nodes) held=$(metric vigil_heartbeat_held_nodes)
confirmed=$(metric vigil_heartbeat_confirmed_total) agent_only=$(metric vigil_heartbeat_agent_only_total)
holds=$(metric vigil_heartbeat_holds_total) tracked=$(metric vigil_heartbeat_nodes)
nincidents=$(curl -s -H "$RH" "http://127.0.0.1:$P/v1/incidents" | jq 'if type == "array" then length else .incidents | length end')
stop 4
printf 'ha: heartbeats, %s nodes x 1 beat/s offered (%s beats/s) for %s s over %s connections, token auth\n' "$BN" "$BN" "$BS" "$BC"
printf '%-52s %-13s %-10s %s\n' "" "figure" "target" "baseline: $LN nodes, $((BC / 10)) connections"
awk -v ok="$(field "$T/beats" ok)" -v req="$(field "$T/beats" requests)" -v lok="$(field "$T/beats_low" ok)" -v s="$BS" \
    -v bn="$BN" -v ln="$LN" -v hz="$HZ" -v idle=$((c1 - c0)) -v low=$((c3 - c2)) -v busy=$((c4 - c3)) \
    -v p99="$(field "$T/beats" p99_ms)" -v lp99="$(field "$T/beats_low" p99_ms)" -v rss="$rss_beat" -v ri="$rss_idle" \
    -v sc="$([ -n "$SC" ] && echo $((sc1 - sc0)) || echo -1)" 'BEGIN {
    rate = ok / s; per = (busy - idle) / hz / (ok > 0 ? ok : 1) * 1000; lper = (low - idle) / hz / (lok > 0 ? lok : 1) * 1000
    printf "%-52s %-13.0f %-10s %.0f of %d\n", "beats acknowledged/s (offered " bn "/s)", rate, ">= " bn, lok / s, ln
    printf "%-52s %-13.3f %-10s %.3f\n", "controller CPU s per 1,000 beats (less idle)", per, "-", lper
    printf "%-52s %-13.2f %-10s %.2f (idle: %.2f)\n", "controller CPU (cores) while beaten", busy / hz / s, "-", low / hz / s, idle / hz / s
    printf "%-52s %-13.2f %-10s\n", "cores needed for " bn " beats/s (extrapolated)", per * bn / 1000, "< 1"
    printf "%-52s %-13s %-10s %s\n", "p99 beat acknowledgement, ms from when due", p99, "-", lp99
    printf "%-52s %-13s %-10s idle: %s\n", "controller RSS while beaten (kB)", rss, "-", ri
    if (rate < bn * 0.98)
        printf "note: the load client, on the same cores, got %.0f beats/s out of %d offered: the per-beat CPU figure is what counts\n", req / s, bn
    if (sc >= 0) printf "(the scheduler on the same cores, pinging the %d absent bench nodes: %.2f cores)\n", bn, sc / hz / s
    printf "ratio: CPU per beat, whole fleet / a tenth = %.2f; p99 = %.1f\n", (lper > 0 ? per / lper : 0), (lp99 > 0 ? p99 / lp99 : 0) }'
printf '%-52s %-13s %-10s\n' "nodes tracked / silent / held at the end" "$tracked / $silent / $held" "$BN / 1 / 0"
printf '%-52s %-13s %-10s\n' "declared silent (confirmed, agent-only, holds)" "$confirmed, $agent_only, $holds" "1, 0, 0"
printf '%-52s %-13s %-10s\n' "incidents opened (the crashed node's: no false one)" "$nincidents" "1"
printf '%-52s %-13s %-10s\n' "ms from a node's last beat until it is declared silent" "$detect" "<= 3000"
