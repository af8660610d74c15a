#!/bin/sh
# heartbeat.sh — crash detection by heartbeat on a real lab (4 nodes + 1
# spare, an agent per node beating every second, the controller): a crashed
# node (slurmd and agent killed) and a frozen one (SIGSTOP) write no log line,
# yet vigil detects them, confirms through slurmd's port (refused / never
# read), DOWNs them with a vigil reason and the job runs again; an agent that
# dies alone on a healthy node is noticed but nothing is isolated; and when
# every agent falls silent at once the controller holds and alerts instead of
# isolating the cluster.  The drills' saved reports feed `vigil report
# --jobs`: the goodput of their trainer jobs (restarts, lost steps) against
# what the drills saw.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ] || ! command -v slurmctld >/dev/null; then
    echo "ok 1 # skip needs root and slurmctld"; exit 0
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/vigil-hb.XXXXXX"); chmod 755 "$T"
lab_up 5 --spares 1 || { nok "lab up"; rm -rf "$T"; exit 1; }
trap 'lab_down; rm -rf "$T"' EXIT
RH="Authorization: Bearer $VIGIL_READ_TOKEN"
metric() { curl -s -H "$RH" "$VIGIL_CONTROLLER/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
wait_for() { # seconds command…
    t=$(( $(date +%s) + $1 )); shift
    while ! "$@" >/dev/null 2>&1; do [ "$(date +%s)" -ge "$t" ] && return 1; sleep 0.2; done
}
daemon_pid() { "$VIGIL" lab status --dir "$LAB_DIR" --json | jq -r --arg d "$1" --arg n "$2" '.daemons[] | select(.name == $d and .node == $n and .alive) | .pid'; }
agent_pid() { daemon_pid agent "$1"; }
reason() { scontrol show node -o "$1" | sed -n 's/.* Reason=\(.*\) \[.*/\1/p'; }
named_by_down() { # incidents job — a node-silent incident says the DOWN requeued job
    echo "$1" | jq -e --arg j "$2" '[.[] | select(.kind == "node-silent") | .steps.jobs_requeued.detail // ""
        | test("(^|[ ,])" + $j + "[,:].*requeued by the DOWN")] | any' >/dev/null
}

check "every agent beats" wait_for 10 sh -c "[ \"\$(curl -s -H '$RH' $VIGIL_CONTROLLER/metrics | awk '\$1 == \"vigil_heartbeat_nodes\" {print \$2}')\" = 5 ]"
# one forged beat (a valid MUNGE credential, as an agent sends it: in the header, over the body's digest)
# for a node Slurm does not have: before, the ghost then counted as a second silent node and held every
# real crash below ("2 of 6 went silent at once")
body='{"node":"ghost1"}'
ghost=$(printf 'vigil-1 node=ghost1 sha256=%s' "$(printf '%s' "$body" | sha256sum | cut -c1-64)" |
    munge -S "$LAB_DIR/munge/munge.socket")
is "a beat for ghost1, a node Slurm does not list: refused (403)" \
    "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: MUNGE $ghost" --data-binary "$body" \
        "$VIGIL_CONTROLLER/v1/heartbeat")" 403
is "… and the monitor still tracks the five nodes" "$(metric vigil_heartbeat_nodes)" 5

for fault in node-crash node-freeze; do
    "$VIGIL" drill --lab --dir "$LAB_DIR" --nodes 3 --runs 1 --fault $fault --deadline 60 --json >"$T/$fault.json" 2>"$T/$fault.err"
    is "$fault: the job recovered (drill exit 0)" "$?" 0
    jq -r --arg f $fault '"# \($f): detected by \(.runs[0].detect.by) after \(.runs[0].detect.after_s) s: \(.runs[0].detect.detail)"' "$T/$fault.json"
    is "$fault: detected by vigil (its heartbeat monitor), not by Slurm" "$(jq -r '.runs[0].detect.by' "$T/$fault.json")" vigil
    v=$(jq -r '.runs[0].victim' "$T/$fault.json")
    inc=$(curl -s -H "$RH" "$VIGIL_CONTROLLER/v1/incidents?node=$v&limit=5")
    check "$fault: a node-silent incident for $v, isolated by vigil" sh -c "echo '$inc' | jq -e '[.[] | select(.kind == \"node-silent\" and .steps.isolated)] | length >= 1' >/dev/null"
    check "$fault: the incident names job $(jq -r '.runs[0].job' "$T/$fault.json"), as the node's last heartbeat listed it" \
        named_by_down "$inc" "$(jq -r '.runs[0].job' "$T/$fault.json")"
    check "$fault: detected before Slurm's own timeout would have" jq -e '.runs[0].detect.after_s < 10' "$T/$fault.json"
    check "$fault: running again with the victim left out" jq -e '.runs[0].restart.same_node == false' "$T/$fault.json"
done
is "two nodes confirmed down through their slurmd" "$(metric vigil_heartbeat_confirmed_total)" 2
check "the fault-to-isolated histogram counted both" test "$(metric vigil_fault_to_isolated_seconds_count)" -ge 2
# the accounting over the store: both outages, repaired (the drill resumed them), by cause
"$VIGIL" report --db "$LAB_DIR/serve/incidents.db" --policy "$LAB_DIR/etc/vigil-policy.conf" --nodes 5 --json >"$T/acct.json"
is "report --db: exit 0" "$?" 0
check "report --db: two node-silent interruptions among the causes" sh -c "jq -e '[.causes[] | select(.cause == \"node-silent\")][0].count >= 2' '$T/acct.json' >/dev/null"
check "report --db: a measured MTTR and node-hours lost; minutes of history: availability not stated, said why" \
    sh -c "jq -e '.mttr_s > 0 and .node_hours_lost > 0 and .availability == null and
        (.unmeasured.availability | startswith(\"not enough history\"))' '$T/acct.json' >/dev/null"
"$VIGIL" report --db "$LAB_DIR/serve/incidents.db" >"$T/acct.txt"
check "report --db: the terminal table names the cause" grep -q '^node-silent' "$T/acct.txt"
"$VIGIL" report --db "$T/none.db" >/dev/null 2>&1
is "report --db on a missing store: exit 2" "$?" 2
"$VIGIL" report --controller "$VIGIL_CONTROLLER" --policy "$LAB_DIR/etc/vigil-policy.conf" --nodes 5 --json >"$T/acct-api.json"
is "report --controller: exit 0" "$?" 0
is "report --controller: the same incidents and causes as the store" "$(jq -c '[.incidents, .causes]' "$T/acct-api.json")" \
    "$(jq -c '[.incidents, .causes]' "$T/acct.json")"
VIGIL_READ_TOKEN= "$VIGIL" report --controller "$VIGIL_CONTROLLER" >/dev/null 2>"$T/acct-401.err"
is "report --controller without the read token: exit 2" "$?" 2
check "… naming the read token" grep -q "401: the read token" "$T/acct-401.err"
"$VIGIL" report --db "$LAB_DIR/serve/incidents.db" --policy "$LAB_DIR/etc/vigil-policy.conf" --html "$T/acct.html" >/dev/null
is "report --db --html: exit 0" "$?" 0
check "report --html: the page names the cause and the MTTR" sh -c "grep -q 'node-silent' '$T/acct.html' && grep -q 'MTTR (fault to returned)' '$T/acct.html'"
selfcontained() { ! grep -Eq '(src|href)="?(https?:)?//|<script' "$1" && grep -q '<svg' "$1"; }
check "report --html: self-contained (no src/href to elsewhere, no script, inline svg)" selfcontained "$T/acct.html"
# the goodput of the drills' trainer jobs, from their logs (each saved drill report names its run's log)
"$VIGIL" report --jobs "$T/node-crash.json" --jobs "$T/node-freeze.json" --json >"$T/goodput.json"
is "report --jobs: exit 0" "$?" 0
jq -r '.goodput.jobs[] | "# goodput: \(.restarts) restart(s), \(.steps) steps, \(.lost_steps) lost, overhead \(.restart_overhead_s) s, wall \(.wall_s) s, goodput \(.goodput)"' "$T/goodput.json"
is "report --jobs: one job per drill, each restarted once, as the drill did" \
    "$(jq -c '[.goodput.jobs[] | .restarts]' "$T/goodput.json")" \
    "$(jq -cs '[.[] | .runs[] | if .restart.at then 1 else 0 end]' "$T/node-crash.json" "$T/node-freeze.json")"
is "report --jobs: each resumed from the checkpoint the drill saw it resume from" \
    "$(jq -c '[.goodput.jobs[] | .resumes[0].resumed_from]' "$T/goodput.json")" \
    "$(jq -cs '[.[] | .runs[] | .resume.from_step]' "$T/node-crash.json" "$T/node-freeze.json")"
ck=$(jq .ckpt_every "$T/node-crash.json")
check "report --jobs: lost steps within one checkpoint interval ($ck) per restart, at least the drill's own count" jq -e \
    --argjson ck "$ck" --slurpfile a "$T/node-crash.json" --slurpfile b "$T/node-freeze.json" \
    '[.goodput.jobs, [$a[0].runs[0], $b[0].runs[0]]] | transpose | all(.[0].lost_steps <= $ck * .[0].restarts and
     .[0].lost_steps >= .[1].work_lost_steps and .[0].ckpt_every == $ck)' "$T/goodput.json"
check "report --jobs: every step counted once in the result; goodput between 0 and 1; overhead inside the wall time" \
    jq -e '.goodput.jobs | all(.productive_steps == .last_step and .steps == .productive_steps + .lost_steps and
     .goodput > 0 and .goodput < 1 and .restart_overhead_s > 0 and .restart_overhead_s < .wall_s)' "$T/goodput.json"
check "report --jobs: the totals add the jobs up" jq -e '.goodput | .totals.lost_steps == ([.jobs[].lost_steps] | add) and
     .totals.restarts == 2 and .totals.jobs == 2' "$T/goodput.json"
"$VIGIL" report --db "$LAB_DIR/serve/incidents.db" --jobs "$(jq -r .workdir "$T/node-crash.json")" >"$T/goodput.txt"
is "report --db --jobs DIR: exit 0" "$?" 0
check "report --db --jobs DIR: the accounting, then the goodput table with the run's log" sh -c \
    "grep -q '^node-silent' '$T/goodput.txt' && grep -q '^goodput of 1 job(s): ' '$T/goodput.txt' && grep -q 'run-1/job.log ' '$T/goodput.txt'"
"$VIGIL" report --db "$LAB_DIR/serve/incidents.db" --jobs "$T/node-crash.json" --html "$T/goodput.html" >/dev/null
check "report --html with --jobs: the page has the goodput section, still self-contained" sh -c \
    "grep -q 'Goodput of trainer jobs' '$T/goodput.html' && grep -q 'MTTR (fault to returned)' '$T/goodput.html' && ! grep -Eq '(src|href)=\"?(https?:)?//|<script' '$T/goodput.html'"
"$VIGIL" report --jobs "$LAB_DIR/etc/vigil-policy.conf" >/dev/null 2>"$T/goodput.err"
is "report --jobs on a file that is not a trainer log: exit 2" "$?" 2
check "… naming the file and its line" grep -q "vigil-policy.conf:1: not a line of vigil trainer" "$T/goodput.err"
printf 'not a database\n' >"$T/text.db"
"$VIGIL" report --db "$T/text.db" >/dev/null 2>"$T/text.err"
is "report --db on a file that is not a store: exit 2" "$?" 2
check "report --db on a file that is not a store: the message names it" grep -q "text.db: not a vigil incident store" "$T/text.err"

# an agent dies alone: the node still answers, nothing is isolated
wait_for 20 sh -c "[ \"\$(sinfo -h -N -o %t | sort -u | tr '\n' ' ')\" = 'idle ' ]"
p=$(agent_pid n3)
check "the agent on n3 runs" test -n "$p"
kill -9 "$p"
check "the silent agent on a live node is noticed" wait_for 15 sh -c "[ \"\$(curl -s -H '$RH' $VIGIL_CONTROLLER/metrics | awk '\$1 == \"vigil_heartbeat_agent_only_total\" {print \$2}')\" -ge 1 ]"
sleep 1
check "n3 is not isolated" sh -c "! scontrol show node -o n3 | grep -q 'State=[A-Z+]*\(DOWN\|DRAIN\)'"
"$VIGIL" lab down --dir "$LAB_DIR" >/dev/null 2>&1; lab_up 5 --spares 1 || { nok "lab up again"; exit 1; }
RH="Authorization: Bearer $VIGIL_READ_TOKEN"

# every agent silent at once: the controller's network, not five nodes: hold
check "every agent beats again" wait_for 10 sh -c "[ \"\$(curl -s -H '$RH' $VIGIL_CONTROLLER/metrics | awk '\$1 == \"vigil_heartbeat_nodes\" {print \$2}')\" = 5 ]"
pids=""; for n in n1 n2 n3 n4 n5; do pids="$pids $(agent_pid $n)"; done
kill -STOP $pids
check "mass silence: held and alerted" wait_for 15 sh -c "[ \"\$(curl -s -H '$RH' $VIGIL_CONTROLLER/metrics | awk '\$1 == \"vigil_heartbeat_holds_total\" {print \$2}')\" -ge 1 ]"
check "mass silence: the alert is in the controller's log" grep -q 'ALERT heartbeat: [0-9]* of 5 nodes went silent at once' "$LAB_DIR/log/serve.out"
check "mass silence: no node isolated" sh -c "! sinfo -h -N -o %t | grep -q 'down\|drain'"
kill -CONT $pids
check "the agents beat again" wait_for 10 sh -c "[ \"\$(curl -s -H '$RH' $VIGIL_CONTROLLER/metrics | awk '\$1 == \"vigil_heartbeat_silent_nodes\" {print \$2}')\" = 0 ]"

# issue 26: two nodes freeze together (two of five at once: held, nothing isolated); n2 comes back
# 5 s later, and n4, still silent, is decided again at once: confirmed through its slurmd, isolated
holds=$(metric vigil_heartbeat_holds_total)
p2="$(agent_pid n2) $(daemon_pid slurmd n2)" p4="$(agent_pid n4) $(daemon_pid slurmd n4)"
kill -STOP $p2 $p4
check "two nodes silent at once: held" wait_for 15 sh -c "[ \"\$(curl -s -H '$RH' $VIGIL_CONTROLLER/metrics | awk '\$1 == \"vigil_heartbeat_holds_total\" {print \$2}')\" -gt $holds ]"
sleep 5   # the scenario: the second node comes back five seconds later
check "… neither isolated while held" sh -c "! sinfo -h -N -o %t | grep -q 'down\|drain'"
kill -CONT $p2
check "n4, still silent after n2 came back, is confirmed and isolated by vigil" \
    wait_for 15 sh -c "scontrol show node -o n4 | grep -q 'State=DOWN.* Reason=vigil: '"
check "… n2 is not" sh -c "! scontrol show node -o n2 | grep -q 'State=[A-Z+]*\(DOWN\|DRAIN\)'"
check "… the end of the hold is in the controller's log" grep -q 'heartbeat: 1 of 5 nodes silent now (at most 1 at once): the hold ends, 1 held node(s) decided again' "$LAB_DIR/log/serve.out"
kill -CONT $p4
done_testing
