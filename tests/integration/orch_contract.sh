#!/bin/sh
# orch_contract.sh — one orchestrator contract (orch.h), the same checks
# (tests/unit/test_orch_contract.c) run four ways: against the in-memory
# fakes the unit tests use (plain, and Slurm's DOWN that requeues), against
# a real Slurm lab (4 nodes, no vigil daemons) and against the Kubernetes API
# double over HTTPS, whose kubelet runs the pods' commands.  Each world
# gives the checks an administrator's isolation (Slurm: scontrol's drain;
# Kubernetes: kubectl cordon) and a node whose daemon answers (Slurm: n1's
# slurmd; Kubernetes: n1's address and kubelet port set to where the double
# listens).  Every result line is this suite's, named by the backend.
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD
. tests/integration/lib.sh
BIN=$ROOT/build/tests/test_orch_contract
W=$(mktemp -d "${TMPDIR:-/tmp}/vigil-contract.XXXXXX")
KAPI_PID= LAB_DIR=
. "$ROOT/tests/k8s/harness.sh"
trap 'stop_kapi; lab_down; rm -rf "$W"' EXIT

# contract LABEL VAR=VALUE… — the checks in that environment; their lines become this suite's
contract() {
    label=$1; shift
    env "$@" CMOCKA_MESSAGE_OUTPUT=TAP "$BIN" >"$W/$label.tap" 2>"$W/$label.err"
    rc=$? fails=0 passed=0
    while IFS= read -r line; do
        case "$line" in
            "ok "*) ok "$label: ${line#ok * - }"; passed=$((passed + 1)) ;;
            "not ok "*) nok "$label: ${line#not ok * - }"; fails=$((fails + 1)) ;;
            "#"*) echo "$line" ;;
        esac
    done <"$W/$label.tap"
    if [ "$rc" != 0 ] && [ "$fails" = 0 ]; then nok "$label: the checks exited $rc: $(tail -3 "$W/$label.err" | tr '\n' ' ')"; fi
    [ "$passed" -gt 0 ] || nok "$label: no check ran"
}

# ---- the fakes ---------------------------------------------------------------
contract fake VIGIL_ORCH=fake
contract fake-slurm VIGIL_ORCH=fake-slurm

# ---- Slurm -------------------------------------------------------------------
if [ "$(id -u)" != 0 ] || [ ! -x /usr/sbin/slurmctld ]; then
    skip "slurm: the lab needs root and slurmctld"
elif ! lab_up 4 --spares 1 --no-vigil >/dev/null; then
    nok "slurm: the lab did not come up"
else
    trap 'stop_kapi; lab_down; rm -rf "$W"' EXIT   # lab_up set its own
    scontrol update NodeName=n3 State=DRAIN Reason="admin: maintenance"
    contract slurm VIGIL_ORCH=slurm VIGIL_ORCH_CONFIG="$SLURM_CONF" VIGIL_ORCH_ADMIN=n3 VIGIL_ORCH_ALIVE=n1 \
        VIGIL_ORCH_JOBS_FROM="$LAB_DIR/spool/%n"
    is "slurm: no job of the checks left" "$(squeue -h -n vigil-contract,vigil-contract-set | wc -l)" 0
    lab_down
    LAB_DIR=
fi

# ---- Kubernetes ----------------------------------------------------------------
if ! command -v kubectl >/dev/null; then
    skip "k8s: kubectl is not installed"
else
    need_kubectl
    KAPI_EXEC=$W/containers
    make_ca
    TOKEN="contract-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
    start_kapi --token "$TOKEN"
    kubeconfig "$W/kc" "$TOKEN"
    export KUBECONFIG="$W/kc"
    kubectl cordon n3 >/dev/null
    kubectl patch node n1 --subresource=status --type=merge -p \
        "{\"status\":{\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"127.0.0.1\"}],\"daemonEndpoints\":{\"kubeletEndpoint\":{\"Port\":$KPORT}}}}" >/dev/null
    contract k8s VIGIL_ORCH=k8s VIGIL_ORCH_CONFIG="$W/kc" VIGIL_ORCH_ADMIN=n3 VIGIL_ORCH_ALIVE=n1 VIGIL_K8S_IMAGE=contract:1
    is "k8s: no workload of the checks left" "$(kubectl get jobs,jobsets -o name | grep -c vigil-contract)" 0
    stop_kapi
fi

done_testing
