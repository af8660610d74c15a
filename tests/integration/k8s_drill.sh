#!/bin/sh
# k8s_drill.sh — `vigil drill --orchestrator k8s` on the Kubernetes API test
# double, whose kubelet runs containers as local processes (--exec): the
# drill creates a batch/v1 Job of 4 GPU pods (label vigil.dev/drill), waits
# until they run, injects XID 79 through a one-shot privileged pod bound to
# the victim (it runs `vigil inject --local` against that node's kernel-log
# file, which the harness's agent for the node follows), and measures detect
# (the controller's incident), isolate (the node's VigilHealthy condition),
# restart (the replacement pods' Ready times: on the spare n5, not on the
# victim) from the API's own stamps; resume is unknown (no shared log), and
# with --shared-workdir (the run directory a hostPath every node shares)
# measured from the trainer's log there.  The
# Job is deleted, the victim left cordoned to the controller.  kubectl proves
# the new parts of the double (jobs, pods -o wide, logs, the pod's status).
# Faults: no kubeconfig (exit 2), the API answering 503 mid-drill (a clear
# error, the Job still deleted).  The workload as a JobSet (kubectl proves
# the double's JobSet: apply, get, its failure policy restarting the gang,
# delete), the checkpoints on a PersistentVolumeClaim (ReadWriteMany; a
# missing or ReadWriteOnce claim refused): the drill restarts the gang of
# the failed attempt only and the trainer resumes from the claim.  No real
# API server runs here.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/vigil-k8sdrill.XXXXXX")
AGENT_PIDS= DRILL_PID=
. "$ROOT/tests/k8s/harness.sh"
stop_agents() { for p in $AGENT_PIDS; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; AGENT_PIDS=; }
trap 'kill $DRILL_PID 2>/dev/null; stop_agents; stop_serve; stop_kapi; [ -n "$KEEP" ] || rm -rf "$W"' EXIT

need_kubectl

# the kubelet finds vigil on its PATH, as the image would have it
KAPI_EXEC=$W/containers
make_ca; TOKEN="drill-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"   # vigil speaks HTTPS only (no --insecure-http here)
export PATH="$(dirname "$VIGIL"):$PATH" VIGIL_K8S_IMAGE=vigil:test
mkdir -p "$W/nodes"
umask 077; node_tokens "$W" 'n[1-5]' >/dev/null
echo "read-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')" >"$W/read.token"; umask 022
export VIGIL_READ_TOKEN="$(cat "$W/read.token")"

fresh() { # a fresh cluster with the fixture's Jobs deleted (kubectl), the controller, an agent per GPU node
    stop_agents; stop_serve; stop_kapi
    : >"$W/api.log"
    start_kapi --token "$TOKEN"
    kubeconfig "$W/kc" "$TOKEN"
    export KUBECONFIG="$W/kc"
    wait_for 5 running 4
    kubectl delete jobs train other >"$W/out" 2>&1
    printf 'spares = n5\nbreaker = 100%% / 600s\n' >"$W/policy.conf"
    rm -f "$W/port" "$W/incidents.db"*
    "$VIGIL" serve --orchestrator k8s --kubeconfig "$W/kc" --listen 127.0.0.1:0 --port-file "$W/port" \
        --db "$W/incidents.db" --auth token --secret-file "$W/secret" --read-token-file "$W/read.token" \
        --policy "$W/policy.conf" 2>>"$W/serve.log" &
    SERVE_PID=$!
    wait_for 5 test -s "$W/port"
    URL="http://127.0.0.1:$(cat "$W/port")"
    for n in n1 n2 n3 n4; do
        : >"$W/nodes/$n.kmsg"
        "$VIGIL" agent --node "$n" --kmsg "$W/nodes/$n.kmsg" --controller "$URL" --auth token --token-file "$W/$n.token" \
            --spool "$W/$n.spool" --interval 0 --no-nvml-events --retry-max 0.5 >/dev/null 2>>"$W/agent-$n.log" &
        AGENT_PIDS="$AGENT_PIDS $!"
    done
}

# ---- bad input ---------------------------------------------------------------------
exits_with "no kubeconfig: exit 2" 2 env -u KUBECONFIG HOME="$W/nohome" KUBERNETES_SERVICE_HOST= \
    "$VIGIL" drill --orchestrator k8s --kubeconfig "$W/missing.kc" --json
"$VIGIL" drill --orchestrator k8s --kubeconfig "$W/missing.kc" >/dev/null 2>"$W/err"
check "… the message names the file" grep -q "missing.kc" "$W/err"
exits_with "--kmsg must be absolute: exit 2" 2 "$VIGIL" drill --orchestrator k8s --kmsg relative/kmsg

# ---- the double's kubelet runs containers: kubectl's view of a Job of its own -----------
fresh
is "kubectl delete jobs: the fixture's pods are gone" "$(aget /api/v1/namespaces/default/pods | jq '[.items[] | select(.metadata.ownerReferences[0].kind == "Job")] | length')" 0
# (created with JSON: kubectl create sends built-in types as protobuf, which the double does not speak)
acurl -o /dev/null -H 'Content-Type: application/json' --data-binary "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",
  \"metadata\":{\"name\":\"probe\"},\"spec\":{\"parallelism\":1,\"completions\":1,\"template\":{\"spec\":{\"restartPolicy\":\"Never\",
  \"containers\":[{\"name\":\"probe\",\"image\":\"vigil:test\",\"command\":[\"$(basename "$VIGIL")\",\"trainer\",\"--ckpt-dir\",\"ck\",
  \"--steps\",\"10\",\"--step-ms\",\"500\"]}]}}}}" "$API/apis/batch/v1/namespaces/default/jobs"
check "a Job's pod runs (kubectl get pods -o wide: STATUS, NODE)" \
    wait_for 10 sh -c "kubectl get pods -l job-name=probe -o wide --no-headers | grep -q ' Running .* n[1-4] '"
pod=$(kubectl get pods -l job-name=probe -o name | head -1)
kubectl get "$pod" -o json >"$W/pod.json"
is "a running pod: Ready True with a lastTransitionTime, its container running" \
    "$(jq -r '[(.status.conditions[] | select(.type == "Ready") | .status, (.lastTransitionTime | test("Z$"))), (.status.containerStatuses[0].state | keys[0])] | join(" ")' "$W/pod.json")" \
    "True true running"
check "… then Succeeded, its container terminated with exit code 0, reason Completed" \
    wait_for 20 sh -c "kubectl get $pod -o json | jq -e '.status.phase == \"Succeeded\" and (.status.containerStatuses[0].state.terminated | .exitCode == 0 and .reason == \"Completed\") and (.status.conditions[] | select(.type == \"Ready\") | .status == \"False\" and .reason == \"PodCompleted\")'"
check "kubectl logs: the trainer's output" sh -c "kubectl logs $pod | grep -q 'done 10 steps'"
check "kubectl get jobs: the Job completed" wait_for 5 sh -c "kubectl get job probe -o json | jq -e '.status.succeeded == 1 and .status.completionTime != null'"
kubectl delete job probe >/dev/null 2>&1
# an Indexed Job (30 s of steps: its pods still run when one is deleted): each pod its index
# (annotation, label, JOB_COMPLETION_INDEX through the downward API)
acurl -o /dev/null -H 'Content-Type: application/json' --data-binary "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",
  \"metadata\":{\"name\":\"indexed\"},\"spec\":{\"parallelism\":2,\"completions\":2,\"completionMode\":\"Indexed\",\"template\":{\"spec\":{\"restartPolicy\":\"Never\",
  \"containers\":[{\"name\":\"t\",\"image\":\"vigil:test\",\"env\":[{\"name\":\"VIGIL_NTASKS\",\"value\":\"2\"}],
  \"command\":[\"$(basename "$VIGIL")\",\"trainer\",\"--ckpt-dir\",\"ck\",\"--steps\",\"300\",\"--step-ms\",\"100\"]}]}}}}" "$API/apis/batch/v1/namespaces/default/jobs"
check "an Indexed Job's pods carry indexes 0 and 1 (kubectl -L batch.kubernetes.io/job-completion-index)" \
    wait_for 10 sh -c "[ \"\$(kubectl get pods -l job-name=indexed -L batch.kubernetes.io/job-completion-index --no-headers | awk '{print \$NF}' | sort | tr '\n' ' ')\" = '0 1 ' ]"
check "… each process got its index: vigil trainer says rank 0/2 and 1/2" \
    wait_for 10 sh -c "for p in \$(kubectl get pods -l job-name=indexed -o name); do kubectl logs \$p; done | grep -c 'start rank [01]/2 restart 0' | grep -qx 2"
first=$(kubectl get pods -l job-name=indexed -o json | jq -r '.items[] | select(.metadata.annotations["batch.kubernetes.io/job-completion-index"] == "1") | .metadata.name')
kubectl delete pod "$first" >/dev/null 2>&1
check "… a deleted pod is replaced with its index" \
    wait_for 10 sh -c "kubectl get pods -l job-name=indexed -o json | jq -e '[.items[] | select(.metadata.annotations[\"batch.kubernetes.io/job-completion-index\"] == \"1\") | .metadata.name] | length == 1 and .[0] != \"$first\"'"
kubectl delete job indexed >/dev/null 2>&1

# ---- a drill: XID 79 on a node of a running 4-pod Job ---------------------------------
"$VIGIL" drill --orchestrator k8s --kubeconfig "$W/kc" --controller "$URL" --nodes 4 --gpus-per-node 8 \
    --kmsg "$W/nodes/{node}.kmsg" --deadline 60 --workdir "$W/drill" --json --html "$W/drill.html" \
    >"$W/drill.json" 2>"$W/drill.err" &
DRILL_PID=$!
wait "$DRILL_PID"; rc=$?; DRILL_PID=
is "the drill recovered: exit 0" "$rc" 0
J=$W/drill.json
jq . "$J" >/dev/null 2>&1 || { nok "drill --json is JSON: $(head -c 300 "$J"; tail -3 "$W/drill.err")"; exit 1; }
is "orchestrator k8s" "$(jq -r .orchestrator "$J")" k8s
victim=$(jq -r '.runs[0].victim' "$J")
echo "# victim $victim; $(jq -c '.runs[0] | {detect: .detect.after_s, by: .detect.by, isolate: .isolate.after_s, restart: .restart.after_s, nodes: .restart.nodes}' "$J")"
is "detect: the controller's incident" "$(jq -r '.runs[0].detect.by' "$J")" vigil
is "isolate and restart are the API's stamps, to the second" \
    "$(jq -r '[.runs[0].isolate.resolution_s, .runs[0].restart.resolution_s] | join(" ")' "$J")" "1 1"
check "detect <= isolate <= restart" jq -e '.runs[0] | .detect.after_s <= .isolate.after_s and .isolate.after_s <= .restart.after_s and .detect.after_s >= 0' "$J"
is "isolate = the node's VigilHealthy lastTransitionTime" "$(jq -r '.runs[0].isolate.api_time | sub("\\.000Z$"; "Z")' "$J")" \
    "$(node_json "$victim" | jq -r '.status.conditions[] | select(.type == "VigilHealthy") | .lastTransitionTime')"
check "restarted with the spare n5, not on the failed node" \
    jq -e '.runs[0].restart | .spare == true and .same_node == false and (.nodes | split(",") | index("n5"))' "$J"
is "resume: unknown (no shared log), not never" "$(jq -r '.runs[0].resume | "\(.unknown) \(.after_s)"' "$J") $(jq -r .runs[0].never "$J")" "true null null"
is "… the statistics say unknown, not never" "$(jq -r '.resume | "\(.unknown) \(.never)"' "$J")" "1 0"
check "injected through a pod: t0 from the node's own record" jq -e '.runs[0].injection.target == "orch" and (.runs[0].injection.detail | test("Xid .*: 79,"))' "$J"
grep -q "POST /api/v1/namespaces/default/pods 201" "$W/api.log" && ok "the inject pod was created (POST pods)" || nok "the inject pod was created"
check "… and read back through pods/log" grep -q 'GET /api/v1/namespaces/default/pods/vigil-exec-.*/log 200' "$W/api.log"
is "… and deleted: no inject pod left" "$(kubectl get pods -l vigil.dev/exec -o name | wc -l)" 0
is "the Job is deleted (propagationPolicy Background)" "$(jq -r '.runs[0].job_deleted' "$J") $(kubectl get jobs -o name | wc -l)" "true 0"
check "… DELETE with propagationPolicy=Background" grep -q 'DELETE /apis/batch/v1/namespaces/default/jobs/vigil-drill-.*propagationPolicy=Background\|DELETE /apis/batch/v1/namespaces/default/jobs/vigil-drill-[0-9-]* 200' "$W/api.log"
check "the pods went with it" wait_for 5 sh -c "[ \$(kubectl get pods -l vigil.dev/drill -o name | wc -l) -eq 0 ]"
check "the victim is left cordoned, for the controller to repair" node_has "$victim" '.spec.unschedulable == true'
check "… the report says so" jq -e '.runs[0].left | test("SchedulingDisabled.*the controller repairs it")' "$J"
check "the agent on the victim read the injected line" grep -q "Xid" "$W/nodes/$victim.kmsg"
check "HTML report written" grep -q 'resume unknown' "$W/drill.html"
"$VIGIL" report "$J" >"$W/report.txt" 2>&1
check "vigil report reads the k8s drill back: resume unknown" grep -q "unknown" "$W/report.txt"


# ---- the nodes share the workdir (a shared filesystem as hostPath): resume is seen ---------
exits_with "--shared-workdir without --workdir: exit 2" 2 "$VIGIL" drill --orchestrator k8s --kubeconfig "$W/kc" --shared-workdir
exits_with "--shared-workdir with a relative --workdir: exit 2" 2 "$VIGIL" drill --orchestrator k8s --kubeconfig "$W/kc" \
    --workdir rel --shared-workdir
fresh
"$VIGIL" drill --orchestrator k8s --kubeconfig "$W/kc" --controller "$URL" --nodes 4 --gpus-per-node 8 \
    --kmsg "$W/nodes/{node}.kmsg" --deadline 60 --workdir "$W/drill3" --shared-workdir --json >"$W/drill3.json" 2>"$W/drill3.err"
is "shared workdir: the drill recovered, exit 0" "$?" 0
J3=$W/drill3.json
echo "# $(jq -c '.runs[0] | {detect: .detect.after_s, isolate: .isolate.after_s, restart: .restart.after_s, resume: .resume.after_s, from: .resume.from_step}' "$J3")"
# restart is the API's stamp to the second (its after_s the second's end); resume is the trainer's own line, to the ms
check "resume measured: not before the restart's API stamp, from a checkpoint (step > 0)" \
    jq -e '.runs[0] | (.resume.unknown | not) and .resume.at >= .restart.api_time and .resume.from_step > 0' "$J3"
is "… no stage never reached, none unknown" "$(jq -r '"\(.runs[0].never) \(.resume.unknown)"' "$J3")" "null 0"
check "… restarted with the spare n5" jq -e '.runs[0].restart.spare == true' "$J3"
check "the trainer's log is in the shared run directory, rank 0 resumed there" \
    sh -c "grep -q 'resumed from step' '$W'/drill3/*/run-1/job.log"

# ---- JobSet (jobset.x-k8s.io/v1alpha2), a custom resource: kubectl proves the double's --------------
fresh
cat >"$W/jobset.yaml" <<JOBSET
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: pair}
spec:
  failurePolicy: {maxRestarts: 3}
  replicatedJobs:
    - name: workers
      replicas: 2
      template:
        spec:
          parallelism: 1
          completions: 1
          backoffLimit: 0
          template:
            spec:
              restartPolicy: Never
              containers: [{name: t, image: vigil:test, command: [$(basename "$VIGIL"), trainer, --ckpt-dir, ck, --steps, "1000", --step-ms, "100"]}]
JOBSET
kubectl apply -f "$W/jobset.yaml" >"$W/out" 2>&1
check "kubectl apply -f a JobSet: created" grep -q 'jobset.jobset.x-k8s.io/pair created' "$W/out"
is "kubectl get jobsets" "$(kubectl get jobsets --no-headers 2>&1 | awk '{print $1}')" pair
attempt_running() { # attempt count
    [ "$(kubectl get pods -l "jobset.sigs.k8s.io/jobset-name=pair,jobset.sigs.k8s.io/restart-attempt=$1" -o json |
        jq '[.items[] | select(.status.phase == "Running")] | length')" = "$2" ]
}
check "its two replicated Jobs run, their pods labelled as the JobSet controller labels them" wait_for 10 attempt_running 0 2
is "… Jobs pair-workers-0 and pair-workers-1, owned by the JobSet" \
    "$(kubectl get jobs -o json | jq -r '[.items[] | select(.metadata.ownerReferences[0].kind == "JobSet") | .metadata.name] | sort | join(" ")')" \
    "pair-workers-0 pair-workers-1"
kubectl delete "$(kubectl get pods -l jobset.sigs.k8s.io/job-index=1 -o name | head -1)" >/dev/null 2>&1
check "one pod deleted: its Job fails, the failure policy restarts the whole gang (restarts 1)" \
    wait_for 10 sh -c "kubectl get jobset pair -o json | jq -e '.status.restarts == 1'"
check "… both Jobs made again, their pods restart-attempt 1" wait_for 10 attempt_running 1 2
is "… none of attempt 0 left" "$(kubectl get pods -l jobset.sigs.k8s.io/restart-attempt=0 -o name | wc -l)" 0
kubectl delete jobset pair >"$W/out" 2>&1
check "kubectl delete jobset: deleted" grep -q 'jobset.jobset.x-k8s.io "pair" deleted' "$W/out"
check "… its Jobs and pods with it" wait_for 5 sh -c "[ \$(kubectl get jobs -o name | wc -l) -eq 0 ] && [ \$(kubectl get pods -l jobset.sigs.k8s.io/jobset-name=pair -o name | wc -l) -eq 0 ]"

# ---- a drill whose workload is a JobSet, its checkpoints on a PersistentVolumeClaim -----------
exits_with "--workload other: exit 2" 2 "$VIGIL" drill --orchestrator k8s --kubeconfig "$W/kc" --workload deployment
exits_with "--workload on Slurm: exit 2" 2 "$VIGIL" drill --workload jobset
for pvc in ckpt:ReadWriteMany once:ReadWriteOnce; do
    printf 'apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: %s}\nspec: {accessModes: [%s], resources: {requests: {storage: 1Gi}}}\n' \
        "${pvc%%:*}" "${pvc#*:}" | kubectl apply -f - >/dev/null 2>&1
done
"$VIGIL" drill --orchestrator k8s --kubeconfig "$W/kc" --nodes 2 --workload jobset --checkpoint-pvc missing \
    --workdir "$W/drill5" --json >/dev/null 2>"$W/err"
check "a claim that does not exist: the drill says so" grep -q 'checkpoint PersistentVolumeClaim missing not found in namespace default' "$W/err"
"$VIGIL" drill --orchestrator k8s --kubeconfig "$W/kc" --nodes 2 --workload jobset --checkpoint-pvc once \
    --workdir "$W/drill5" --json >/dev/null 2>"$W/err"
check "a ReadWriteOnce claim for 2 nodes: the drill says so" grep -q 'once is not ReadWriteMany: the 2 pods on 2 nodes' "$W/err"
if [ "$(id -u)" = 0 ]; then   # the double's kubelet mounts a claim in a mount namespace: root only
    "$VIGIL" drill --orchestrator k8s --kubeconfig "$W/kc" --controller "$URL" --nodes 4 --gpus-per-node 8 \
        --workload jobset --checkpoint-pvc ckpt --kmsg "$W/nodes/{node}.kmsg" --deadline 60 --workdir "$W/drill4" \
        --shared-workdir --json >"$W/drill4.json" 2>"$W/drill4.err"
    is "JobSet drill, checkpoints on the claim: the drill recovered, exit 0" "$?" 0
    J4=$W/drill4.json
    echo "# $(jq -c '.runs[0] | {detect: .detect.after_s, isolate: .isolate.after_s, restart: .restart.after_s, resume: .resume.after_s, from: .resume.from_step}' "$J4")"
    check "… the drill made a JobSet" grep -q 'POST /apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets 201' "$W/api.log"
    check "… restarted with the spare n5" jq -e '.runs[0].restart.spare == true and .runs[0].restart.same_node == false' "$J4"
    check "… vigil restarted the gang of the attempt on the failed node only (restart-attempt=0)" \
        grep -q 'DELETE /api/v1/namespaces/default/pods labelSelector=jobset.sigs.k8s.io/jobset-name=vigil-drill-[0-9]*,jobset.sigs.k8s.io/restart-attempt=0 200 .*ua=vigil$' "$W/api.log"
    check "… resumed from a checkpoint on the claim (step > 0), after the restart" \
        jq -e '.runs[0] | (.resume.unknown | not) and .resume.from_step > 0 and .resume.at >= .restart.api_time' "$J4"
    check "… the checkpoints are on the claim, not in the run directory" \
        sh -c "ls '$W'/containers/pvc/default_ckpt/*/ckpt-* >/dev/null && ! ls '$W'/drill4/*/run-1/ckpt/ckpt-* >/dev/null 2>&1"
    is "… the JobSet deleted at the end, its Jobs with it" \
        "$(jq -r '.runs[0].job_deleted' "$J4") $(kubectl get jobsets,jobs -o name | wc -l)" "true 0"
else
    skip "a JobSet drill with a claim: the double's kubelet mounts claims as root only"
fi

# ---- the API answering 503 mid-drill: a clear error, the Job deleted once it answers ---------
fresh
"$VIGIL" drill --orchestrator k8s --kubeconfig "$W/kc" --controller "$URL" --nodes 2 --gpus-per-node 8 \
    --kmsg "$W/nodes/{node}.kmsg" --deadline 60 --workdir "$W/drill2" --json >"$W/drill2.json" 2>"$W/drill2.err" &
DRILL_PID=$!
# after the fault is in, every job read fails for a while (the controller's writes are not touched)
wait_for 60 grep -q 'POST /api/v1/namespaces/default/pods 201' "$W/api.log"
ctl POST fault '{"code":503,"method":"GET","path":"/apis/batch/v1/namespaces/default/jobs/","count":15,"message":"etcdserver: request timed out"}'
check "kubectl get jobs -l vigil.dev/drill: the drill's Job, labelled" \
    sh -c "kubectl get jobs -l vigil.dev/drill -o name | grep -q job.batch/vigil-drill-"
wait "$DRILL_PID"; rc=$?; DRILL_PID=
is "API down mid-drill: exit 1" "$rc" 1
check "… a clear error naming the outage" jq -e '.runs[0].message | test("stopped answering.*503|stopped answering.*etcdserver")' "$W/drill2.json"
is "… and the Job deleted once the API answered" "$(jq -r '.runs[0].job_deleted' "$W/drill2.json") $(kubectl get jobs -o name | wc -l)" "true 0"
stop_agents; stop_serve; stop_kapi
check "no sanitizer report" sh -c "! grep -q 'ERROR: AddressSanitizer\|runtime error' '$W/serve.log' '$W/drill.err' '$W/drill2.err' '$W'/agent-*.log '$W'/containers/*.log 2>/dev/null"
done_testing
