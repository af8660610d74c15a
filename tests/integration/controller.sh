#!/bin/sh
# controller.sh — `vigil serve` acting on a real Slurm cluster (the lab: 4
# compute nodes + 1 hot spare, munge): an XID 79 on a node of a running
# 3-node --requeue job makes the controller DOWN the node with a "vigil:"
# reason, requeue the job and promote the spare, and the job runs again on a
# node set that includes the spare, with a complete incident timeline.  Then
# ownership (an administrator's drain is left alone), the rack rule (3 of a
# 4-node domain → the whole domain), the blast-radius breaker, and recovery of
# an incident accepted but not acted on before a crash.
# Events are posted the way an agent posts them (token auth).
. "$(dirname "$0")/lib.sh"
W=$(mktemp -d "${TMPDIR:-/tmp}/vigil-ctl.XXXXXX")
chmod 755 "$W"   # munged refuses a socket under a 0700 parent
LAB_DIR=$W/lab
SERVE_PID=
stop_serve() { [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null; SERVE_PID=; }
lab_up 5 --spares 1 --no-vigil --dir "$LAB_DIR" >/dev/null || { nok "lab up"; rm -rf "$W"; exit 1; }
trap 'stop_serve; scancel -u root >/dev/null 2>&1; lab_down; rm -rf "$W"' EXIT   # after lab_up, which sets its own
umask 077; node_tokens "$W" 'n[1-5]' >/dev/null
echo "read-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')" >"$W/read.token"; umask 022
RH="Authorization: Bearer $(cat "$W/read.token")"   # reads need the read token
echo 0 >"$W/seq"

start_serve() { # policy text
    printf '%s\n' "$1" >"$W/policy.conf"
    rm -f "$W/port"
    "$VIGIL" serve --listen 127.0.0.1:0 --port-file "$W/port" --db "$W/incidents.db" --auth token \
        --secret-file "$W/secret" --read-token-file "$W/read.token" --policy "$W/policy.conf" 2>>"$W/serve.log" &
    SERVE_PID=$!
    i=0; while [ ! -s "$W/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
    URL="http://127.0.0.1:$(cat "$W/port")"
}
post_xid() { # node code [jobs] → HTTP status (the message number lives in a file: callers use $(…));
    # jobs: what the node's agent lists from slurmd's spool
    SEQ=$(( $(cat "$W/seq") + 1 )); echo $SEQ >"$W/seq"
    vcurl "$1" -o /dev/null -w '%{http_code}' \
        --data-binary "{\"node\":\"$1\",\"seq\":$SEQ,\"events\":[{\"kind\":\"xid\",\"code\":$2,\"pci\":\"0000:18:00.0\",\"gpu\":0,\"action\":\"reboot\",\"source\":\"kmsg\"${3:+,\"jobs\":\"$3\"}}]}" \
        "$URL/v1/events"
}
node_field() { scontrol show node -o "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }
reason() { scontrol show node -o "$1" | sed -n 's/.* Reason=\(.*\) \[.*/\1/p'; }
wait_for() { # seconds command… — polls until the command succeeds
    t=$(( $(date +%s) + $1 )); shift
    while ! "$@" >/dev/null 2>&1; do [ "$(date +%s)" -ge "$t" ] && return 1; sleep 0.2; done
}
is_down() { node_field "$1" State | grep -q 'DOWN\|DRAIN'; }
job_field() { scontrol show job -o "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }
job_running_again() { [ "$(job_field "$1" JobState)" = RUNNING ] && [ "$(job_field "$1" Restarts)" -ge 1 ]; }
incident_field() { curl -s -H "$RH" "$URL/v1/incidents?node=$1&limit=1" | grep -o "\"$2\":[^,}]*" | head -1; }
reset_nodes() {
    stop_serve
    scontrol delete ReservationName=vigil_spares >/dev/null 2>&1
    scancel -u root >/dev/null 2>&1
    for n in n1 n2 n3 n4 n5; do scontrol update NodeName=$n State=RESUME >/dev/null 2>&1; done
    rm -f "$W/incidents.db"*
    wait_for 20 sh -c '[ "$(sinfo -h -o %t | sort -u)" = idle ]'
}

# ---- 1. XID 79 on a node of a running job: DOWN, requeue, spare, RUNNING again
start_serve "spares = n5
breaker = 100% / 600s"
check "the spare pool is a reservation holding n5" wait_for 10 sh -c 'scontrol show reservation vigil_spares | grep -q "Nodes=n5 "'
filler=$(sbatch --parsable --exclusive -N1 -w n4 --wrap 'sleep 600' -o /dev/null)
job=$(sbatch --parsable --exclusive --requeue -N3 --open-mode=append -o "$W/job.out" --wrap 'srun sleep 600')
check "3-node job running" wait_for 20 sh -c "[ \"\$(scontrol show job -o $job | grep -o 'JobState=[A-Z]*')\" = JobState=RUNNING ]"
nodes=$(job_field "$job" NodeList)
is "job on n[1-3] (n4 busy, n5 reserved)" "$nodes" "n[1-3]"
is "XID 79 accepted" "$(post_xid n2 79 "$job")" 202
check "n2 DOWN or DRAIN" wait_for 10 is_down n2
case "$(reason n2)" in vigil:*) ok "n2's reason starts with vigil:" ;; *) nok "n2's reason: '$(reason n2)'" ;; esac
check "job RUNNING again after a requeue" wait_for 40 job_running_again "$job"
is "job now runs on the spare" "$(job_field "$job" NodeList)" "n[1,3,5]"
check "spare left the pool" sh -c '! scontrol show reservation vigil_spares 2>/dev/null | grep -q "Nodes=n5"'
inc=$(curl -s -H "$RH" "$URL/v1/incidents?node=n2")
for step in detected isolated jobs_requeued spare_promoted; do
    case "$inc" in *"\"$step\":{\"at\":\"20"*) ok "timeline has $step" ;; *) nok "timeline has $step: $inc" ;; esac
done
is "the job the agent listed, requeued by the DOWN (no second requeue)" \
    "$(echo "$inc" | jq -r '.[0].steps.jobs_requeued.detail')" "$job: requeued by the DOWN"
is "a job list that is not job ids is refused" "$(post_xid n1 79 '12;rm')" 400
check "metrics count the orchestrator's calls" sh -c "curl -s -H '$RH' $URL/metrics | grep -q '^vigil_orchestrator_calls_total{orchestrator=\"slurm\"} [1-9]'"
scancel "$filler" "$job"

# ---- 2. ownership: an administrator's drain is left alone
scontrol update NodeName=n3 State=DRAIN Reason="bad DIMM, ticket 4711"
is "XID on an admin-drained node accepted" "$(post_xid n3 79)" 202
check "incident held: not ours" wait_for 10 sh -c "curl -s -H '$RH' '$URL/v1/incidents?node=n3' | grep -q 'left alone'"
is "admin's reason untouched" "$(reason n3)" "bad DIMM, ticket 4711"

# ---- 3. rack rule: 3 of a 4-node domain unavailable → the whole domain
reset_nodes
start_serve "domain rackA = n[1-4]
domain_max_unavailable = 2
breaker = 100% / 600s"
post_xid n1 79 >/dev/null; post_xid n2 79 >/dev/null
wait_for 10 sh -c "is_down() { scontrol show node -o \$1 | grep -q 'State=[A-Z+]*\(DOWN\|DRAIN\)'; }; is_down n1 && is_down n2"
check "two of rackA down: n4 still up" sh -c "! scontrol show node -o n4 | grep -q 'State=[A-Z+]*\(DOWN\|DRAIN\)'"
post_xid n3 79 >/dev/null
check "third of rackA: n4 isolated with the domain" wait_for 10 is_down n4
case "$(reason n4)" in *"domain rackA: 3 of 4"*) ok "n4's reason names the domain rule" ;; *) nok "n4's reason: '$(reason n4)'" ;; esac

# ---- 4. breaker: an XID on every node isolates at most the configured share
reset_nodes
start_serve "breaker = 40% / 600s"
for n in n1 n2 n3 n4 n5; do post_xid $n 79 >/dev/null; done
wait_for 10 sh -c "[ \$(curl -s -H '$RH' '$URL/v1/incidents' | grep -o '\"state\":\"[a-z]*' | grep -c 'isolated\|held') -eq 5 ]"
down=0; for n in n1 n2 n3 n4 n5; do is_down $n && down=$((down + 1)); done
is "breaker: 2 of 5 nodes isolated (40%)" "$down" 2
check "breaker: holds counted and alerted" sh -c "curl -s -H '$RH' $URL/metrics | grep -q '^vigil_breaker_holds_total 3' && grep -q 'ALERT' '$W/serve.log'"

# ---- 5. an incident accepted but not acted on before a crash is acted on after restart
reset_nodes
start_serve "breaker = 100% / 600s"
post_xid n4 79 >/dev/null
wait_for 10 is_down n4
kill -9 "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null; SERVE_PID=
scontrol update NodeName=n4 State=RESUME
store_sql "update incidents set state='open'; delete from steps where step!='detected';" "$W/incidents.db"
start_serve "breaker = 100% / 600s"
check "restarted controller finishes the pending incident" wait_for 10 is_down n4

# ---- 6. repair and return: a passing health check returns the node to the spare pool
reset_nodes
start_serve "spares = n5
breaker = 100% / 600s
remediate = true {node} {gpu}
healthcheck = true {node}"
wait_for 10 sh -c 'scontrol show reservation vigil_spares | grep -q "Nodes=n5 "'
post_xid n2 79 >/dev/null
check "repaired node returned to the pool" wait_for 15 sh -c 'scontrol show reservation vigil_spares | grep -q "Nodes=n2 "'
check "repaired node resumed" wait_for 10 sh -c "scontrol show node -o n2 | grep -q 'State=IDLE' && ! scontrol show node -o n2 | grep -q 'State=[A-Z+]*\(DOWN\|DRAIN\)'"
inc=$(curl -s -H "$RH" "$URL/v1/incidents?node=n2")
for step in remediated returned; do
    case "$inc" in *"\"$step\":{\"at\":\"20"*) ok "timeline has $step" ;; *) nok "timeline has $step: $inc" ;; esac
done
case "$inc" in *'"state":"closed"'*) ok "incident closed" ;; *) nok "incident closed: $inc" ;; esac
# ---- 7. a failing health check keeps the node out, with the reason in the incident
reset_nodes
start_serve "breaker = 100% / 600s
healthcheck = false"
post_xid n3 79 >/dev/null
check "failed health check recorded" wait_for 15 sh -c "curl -s -H '$RH' '$URL/v1/incidents?node=n3' | grep -q 'health check failed, node stays isolated'"
check "node stays isolated" is_down n3

# ---- 8. slurmctld down when the XID arrives: the action fails, is retried,
# and the node goes DOWN once slurmctld is back (no human, no second XID)
reset_nodes
start_serve "breaker = 100% / 600s"
ctld=$(cat "$LAB_DIR/run/slurmctld.pid")
kill "$ctld"
wait_for 15 sh -c "! kill -0 $ctld 2>/dev/null"
is "XID 79 accepted while slurmctld is down" "$(post_xid n2 79)" 202
check "incident failed, retrying (the scheduler's words kept)" wait_for 30 sh -c \
    "curl -s -H '$RH' '$URL/v1/incidents?node=n2' | grep -q '\"state\":\"failed\",\"detail\":\"retrying in [0-9]* s (attempt [0-9]*): .*slurm'"
check "metrics show a pending retry" sh -c "curl -s -H '$RH' $URL/metrics | grep -q '^vigil_action_retries_pending 1'"
# slurmctld comes back (tagged as a lab daemon, so lab down stops it)
VIGIL_LAB_DAEMON=$LAB_DIR slurmctld -f "$SLURM_CONF"
check "n2 DOWN after slurmctld returned" wait_for 90 is_down n2
case "$(reason n2)" in vigil:*) ok "the retried action wrote vigil's reason" ;; *) nok "n2's reason: '$(reason n2)'" ;; esac
check "incident isolated after the retry" wait_for 10 sh -c "curl -s -H '$RH' '$URL/v1/incidents?node=n2' | grep -q '\"state\":\"isolated'"

# ---- 9. thousands of record-only incidents queued ahead of an XID 79 never
# delay it: they are recorded without a word to Slurm (XID 63, which the
# controller's catalog says to ignore, on 3,000 different PCI functions)
reset_nodes
start_serve "breaker = 100% / 600s"
evs=$(awk 'BEGIN { for (i = 0; i < 3000; i++) printf "%s{\"kind\":\"xid\",\"code\":63,\"pci\":\"0000:%02x:%02x.0\",\"gpu\":1,\"source\":\"kmsg\"}", i ? "," : "", int(i / 32), i % 32 }')
for n in n3 n4; do
    SEQ=$(( $(cat "$W/seq") + 1 )); echo $SEQ >"$W/seq"
    printf '{"node":"%s","seq":%d,"events":[%s]}' "$n" "$SEQ" "$evs" >"$W/backlog.json"
    code=$(vcurl "$n" -o /dev/null -w '%{http_code}' --data-binary @"$W/backlog.json" "$URL/v1/events")
    is "3,000 record-only events from $n accepted" "$code" 202
done
calls0=$(curl -s -H "$RH" "$URL/metrics" | awk '/^vigil_orchestrator_calls_total/ {print $2}')
is "XID 79 behind the backlog accepted" "$(post_xid n2 79)" 202
check "n2 DOWN behind 6,000 record-only incidents" wait_for 30 is_down n2
check "all 6,000 recorded" wait_for 60 sh -c "[ \$(curl -s -H '$RH' $URL/metrics | awk '/^vigil_recorded_total/ {print \$2}') -ge 6000 ]"
calls1=$(curl -s -H "$RH" "$URL/metrics" | awk '/^vigil_orchestrator_calls_total/ {print $2}')
check "the backlog cost no orchestrator call per incident ($calls0 → $calls1)" test $((calls1 - calls0)) -lt 20
done_testing
