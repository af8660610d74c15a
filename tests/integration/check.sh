#!/bin/sh
# check.sh — `vigil check` end to end: the command's contract (exit codes,
# --json, --init, a hung NVML call within the deadline) on the fixture trees
# with the fake NVML library, then as Slurm's HealthCheckProgram on a real lab
# cluster: a node with a bad fake GPU is drained with a "vigil:" reason and
# resumed when the fault clears, a hung NVML drains its node too, and a node
# drained by hand with another reason stays drained.
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
: "${FAKE_NVML:=$top/build/tests/libnvidia-ml.so.1}"
W=$(mktemp -d "${TMPDIR:-/tmp}/vigil-check.XXXXXX")
chmod 755 "$W"   # munged (in the lab below) refuses a socket under a 0700 parent
LAB_DIR=$W/lab
trap 'lab_down; rm -rf "$W"' EXIT
export VIGIL_NVML_LIB="$FAKE_NVML" FAKE_NVML_STATE="$W/state"
: >"$W/state"
H100=$top/tests/fixtures/sysfs/h100

# ---- the command on fixtures ----
"$VIGIL" check --init --root "$H100" --config "$W/init.conf" --node n1 >/dev/null 2>&1
is "--init writes expectations" "$(grep -c '^\* || ' "$W/init.conf")" "9"
check "--init: GPUs from NVML" grep -q '^\* || gpu count=8 model="NVIDIA H100 80GB HBM3"$' "$W/init.conf"
exits_with "--init refuses to overwrite" 2 "$VIGIL" check --init --root "$H100" --config "$W/init.conf"
out=$("$VIGIL" check --config "$W/init.conf" --root "$H100" --node n1)
is "healthy node exits 0" "$?" "0"
case "$out" in "ok n1: "*) ok "one ok line" ;; *) nok "one ok line (got '$out')" ;; esac
echo "gpu2.ecc_dbe_volatile=1" >"$W/state"
out=$("$VIGIL" check --config "$W/init.conf" --root "$top/tests/fixtures/sysfs/degraded" --node n1)
is "degraded node exits 1" "$?" "1"
is "one line per failed check" "$(echo "$out" | grep -c '^FAIL ')" "$(echo "$out" | wc -l | tr -d ' ')"
check "the DBE is named" sh -c "echo '$out' | grep -q '^FAIL gpu ecc_dbe: GPU 2 (0000:3a:00.0)'"
json=$("$VIGIL" check --config "$W/init.conf" --root "$H100" --node n1 --json)
is "--json: ok false" "$(echo "$json" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["ok"], d["events"][0]["kind"], d["events"][0]["action"])')" "False ecc-dbe reset-gpu"
echo "gpu3.hang=nvmlDeviceGetTotalEccErrors" >"$W/state"
start=$(date +%s)
out=$("$VIGIL" check --config "$W/init.conf" --root "$H100" --node n1 --deadline 3)
rc=$?
is "hung NVML: exits 1" "$rc" "1"
check "hung NVML: finishes within its deadline" test $(( $(date +%s) - start )) -le 5
check "hung NVML: reported" sh -c "echo '$out' | grep -q '^FAIL gpu responsive: GPU 3 unresponsive'"
: >"$W/state"
printf '* || gpu count=8\n* || gpu ecc_dbe=zero\n' >"$W/bad.conf"
err=$("$VIGIL" check --config "$W/bad.conf" 2>&1 >/dev/null)
is "malformed line exits 2" "$?" "2"
is "and names file:line" "$err" "vigil: $W/bad.conf:2: bad value for 'ecc_dbe' (expected a number)"
exits_with "missing config exits 2" 2 "$VIGIL" check --config "$W/none.conf"
exits_with "bad --deadline exits 2" 2 "$VIGIL" check --deadline -1
exits_with "unknown option exits 2" 2 "$VIGIL" check --frobnicate

# zero configuration: the built-in checks for what the node has, said on stderr
"$VIGIL" check --root tests/fixtures/sysfs/degraded >"$W/zc.out" 2>"$W/zc.err"
is "no config: the built-in checks run and find the degraded link" "$?" 1
check "no config: stderr names the built-in checks and --init" grep -q 'built-in checks for what this node has (.*pcie).*vigil check --init' "$W/zc.err"
check "no config: the failures are printed" grep -q '^FAIL pcie gpu width: 0000:2a:00.0 x8 of x16' "$W/zc.out"
check "no config: the driver and the fstab entries are among the built-in checks" grep -q '(gpu, ib, driver, mount, pcie)' "$W/zc.err"
check "no config: an fstab entry not mounted fails, naming its mount point" grep -qE '^FAIL mount /scratch: /scratch is not mounted \(built-in:[0-9]+\)$' "$W/zc.out"
check "no config: a kernel module of another version than NVML's fails" grep -q '^FAIL driver nvml: nvml reports 535.183.01, the kernel module is 535.161.08' "$W/zc.out"
"$VIGIL" check --root tests/fixtures/sysfs/h100 >"$W/zh.out" 2>&1
is "no config on a healthy node: exit 0" "$?" 0
"$VIGIL" check --root tests/fixtures/sysfs/h100 --json 2>/dev/null >"$W/zh.json"
is "no config, --json: the driver and the fstab entries checked (not the noauto one, not swap)" \
    "$(jq -c '[.checks[] | select(.name | test("^(driver|mount)")) | [.name, .ok]]' "$W/zh.json")" \
    '[["driver nvml",true],["mount /",true],["mount /scratch",true],["mount /lustre/my data",true]]'
echo "driver=550.54.15" >"$W/state"
out=$("$VIGIL" check --root tests/fixtures/sysfs/h100 2>/dev/null)
is "no config, the library updated without a reboot: exit 1" "$?" 1
case "$out" in
"FAIL driver nvml: nvml reports 550.54.15, the kernel module is 535.183.01 (built-in:"*")") ok "and the mismatch is the one failure, named" ;;
*) nok "and the mismatch is the one failure, named (got '$out')" ;;
esac
: >"$W/state"
"$VIGIL" check --config "$W/none.conf" 2>"$W/nc.err"
is "a missing --config file: exit 2" "$?" 2
check "a missing --config names the file and --init" grep -q "none.conf: no such file (.vigil check --init --config" "$W/nc.err"

# ---- as HealthCheckProgram on a real Slurm cluster ----

if [ "$(id -u)" != 0 ] || ! command -v slurmctld >/dev/null; then
    echo "ok $((_tap_n + 1)) # skip the Slurm part needs root and slurmctld"; exit 0
fi
cat >"$W/vigil.conf" <<EOF
* || gpu count=8 model="NVIDIA H100 80GB HBM3"
* || gpu ecc_dbe=0 remap_failure=no pcie=full nvlink=all-up
EOF
# slurmd runs the program with no arguments and only SLURMD_NODENAME set:
# this wrapper gives vigil its config, the node's fake NVML state and the lab.
cat >"$W/healthcheck" <<EOF
#!/bin/sh
export VIGIL_CONFIG=$W/vigil.conf VIGIL_NVML_LIB=$FAKE_NVML SLURM_CONF=$LAB_DIR/etc/slurm.conf
export FAKE_NVML_STATE=$LAB_DIR/nodes/\$SLURMD_NODENAME/nvml-state VIGIL_DATA=${VIGIL_DATA:-$top/data}
exec $VIGIL -v check --drain --deadline 4 >>$W/hc-\$SLURMD_NODENAME.log 2>&1
EOF
chmod +x "$W/healthcheck"
"$VIGIL" lab up 3 --no-vigil --dir "$LAB_DIR" --conf-extra "HealthCheckProgram=$W/healthcheck" \
    --conf-extra HealthCheckInterval=2 --conf-extra HealthCheckNodeState=ANY >"$W/lab.env" 2>&1 ||
    { nok "lab up 3 with vigil check as HealthCheckProgram"; cat "$W/lab.env" | sed 's/^/# /'; exit 1; }
. "$W/lab.env"
ok "lab up 3 with vigil check as HealthCheckProgram"
# state "reason" of a node
node() { sinfo -h -N -n "$1" -o '%T|%E' | head -1; }
# wait_for NODE PATTERN SECONDS — until `node NODE` matches the shell pattern.
wait_for() {
    i=0
    while [ $i -lt $(($3 * 10)) ]; do
        case "$(node "$1")" in $2) return 0 ;; esac
        sleep 0.1; i=$((i + 1))
    done
    echo "# $1: $(node "$1")"; return 1
}
scontrol update nodename=n3 state=drain reason="bad DIMM, ticket 4711"
echo "gpu2.ecc_dbe_volatile=1" >"$LAB_DIR/nodes/n2/nvml-state"
echo "gpu0.remap_failure=1" >"$LAB_DIR/nodes/n3/nvml-state"
check "bad GPU: n2 drained with a vigil: reason" wait_for n2 'drain*|vigil: gpu ecc_dbe: GPU 2 (0000:3a:00.0)*' 20
check "n1 stays idle" wait_for n1 'idle|*' 1
sleep 5
is "n3, drained by hand, keeps its reason" "$(node n3)" "drained|bad DIMM, ticket 4711"
: >"$LAB_DIR/nodes/n2/nvml-state"
check "fault cleared: n2 resumed" wait_for n2 'idle|*' 20
: >"$LAB_DIR/nodes/n3/nvml-state"
sleep 5
is "n3 stays drained when its checks pass" "$(node n3)" "drained|bad DIMM, ticket 4711"
echo "gpu5.hang=nvmlDeviceGetTotalEccErrors" >"$LAB_DIR/nodes/n1/nvml-state"
check "hung NVML: n1 drained within the deadline" wait_for n1 'drain*|vigil: gpu responsive: GPU 5 unresponsive*' 20
: >"$LAB_DIR/nodes/n1/nvml-state"
check "n1 resumed" wait_for n1 'idle|*' 20
check "the health check logged its drain" grep -q 'drain n2: vigil: gpu ecc_dbe' "$W/hc-n2.log"
done_testing
