#!/bin/sh
# amd.sh — AMD Instinct GPUs end to end.  Without a lab: Debian's real
# librocm-smi64 on this GPU-less machine (no AMD GPU, nothing on stderr, the
# NVIDIA GPUs read beside it); `vigil check` through the fake AMD SMI (RAS
# counts per block, retired pages at the threshold, an XGMI link down) and
# through the driver's sysfs alone under --root; `vigil scan` on the real
# amdgpu logs of an MI50's uncorrectable error, an MI300X's page fault and an
# MI210 that failed to initialise.  With a scheduler to list its node, an
# agent polling the fake AMD SMI's counts.  Then a lab of 9 MI300X nodes × 8 GPUs
# (Slurm Gres=gpu:mi300x:8, the fake AMD SMI per node, an agent per node, the
# controller): the 64-GPU drill with the AMD fault, then each AMD injection
# kind as the controller records it; and a mixed lab (--gpu nvidia,amd): each
# vendor's fault on its own nodes, the other's refused, a drill hitting an AMD
# node.
. "$(dirname "$0")/lib.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/vigil-amd.XXXXXX"); chmod 755 "$T"
trap 'lab_down; rm -rf "$T"' EXIT
FIX=$(cd "$(dirname "$0")/../fixtures" && pwd)
: "${FAKE_AMDSMI:=$(cd "$(dirname "$0")/../.." && pwd)/build/tests/libamd_smi.so.26}"

# ---- Debian's real librocm-smi64, no AMD GPU here ----
if [ -r /usr/lib/librocm_smi64.so.1 ] && [ ! -d /sys/module/amdgpu ]; then
    printf 'gpus=3\n' >"$T/nvml"
    VIGIL_ROCM_SMI_LIB=/usr/lib/librocm_smi64.so.1 VIGIL_NVML_LIB=$FAKE_NVML FAKE_NVML_STATE=$T/nvml \
        "$VIGIL" status --json >"$T/st.json" 2>"$T/st.err"
    is "real rocm_smi: the NVIDIA GPUs are read beside it" \
        "$(jq -r '.items[] | select(.item == "GPUs (NVML)") | .detail | split(" ×")[0]' "$T/st.json")" 3
    is "real rocm_smi: no AMD line (no AMD GPU is not a fault)" \
        "$(jq '[.items[] | select(.item | test("AMD"))] | length' "$T/st.json")" 0
    is "real rocm_smi: its own 'Exception caught: rsmi_init.' never reaches stderr" "$(cat "$T/st.err")" ""
    printf '* || gpu count=3\n' >"$T/c3.conf"
    VIGIL_ROCM_SMI_LIB=/usr/lib/librocm_smi64.so.1 VIGIL_NVML_LIB=$FAKE_NVML FAKE_NVML_STATE=$T/nvml \
        "$VIGIL" check --config "$T/c3.conf" --json >"$T/c3.json" 2>"$T/c3.err"
    is "real rocm_smi: vigil check carries on (exit 0)" "$?" 0
    is "… quietly" "$(cat "$T/c3.err")" ""
else
    skip "Debian's librocm-smi64-1 is not installed (or this machine has an AMD GPU)"
fi

# ---- the fake AMD SMI through the real dlopen path ----
printf 'gpus=8\ngpu3.ue.umc=2\ngpu5.xgmi_down=2\ngpu6.bad_reserved=3\ngpu6.bad_failed=1\n' >"$T/amd"
printf '* || gpu count=8 ecc_dbe=0 remap_failure=no nvlink=all-up\n' >"$T/c8.conf"
VIGIL_AMDSMI_LIB=$FAKE_AMDSMI FAKE_AMDSMI_STATE=$T/amd "$VIGIL" check --config "$T/c8.conf" --json >"$T/c8.json"
is "AMD SMI: check exit 1 (faults)" "$?" 1
is "AMD SMI: the faults with AMD's verdicts" \
    "$(jq -r '[.events[] | "\(.kind):\(.action):\(.gpu)"] | sort | join(" ")' "$T/c8.json")" \
    "amd-bad-pages:drain-rma:6 amd-ras-ue:reboot:3 amd-xgmi-down:reboot:5"
is "AMD SMI: the UE names its block" "$(jq -r '.checks[] | select(.name == "gpu ecc_dbe") | .detail' "$T/c8.json")" \
    "GPU 3 (0000:42:00.0): 2 volatile double-bit ECC errors (umc:2)"
printf '* || gpu count=2\n' >"$T/c2.conf"
VIGIL_AMDSMI_LIB=$FAKE_AMDSMI FAKE_AMDSMI_STATE=$T/amd "$VIGIL" check --root "$FIX/sysfs/amd-mi300x" \
    --config "$T/c2.conf" --json >"$T/root.json"
is "--root: the driver's sysfs alone (the library is the live host's, not the tree's)" \
    "$(jq -r '[.checks[] | select(.name == "gpu count") | .detail, (.events[]? | .source)] | join(" ")' "$T/root.json")" \
    "2 GPUs, expected 2"

# ---- vigil reset-gpu: the vendor's reset, under a deadline ----
printf 'gpus=8\n' >"$T/amd"
VIGIL_AMDSMI_LIB=$FAKE_AMDSMI FAKE_AMDSMI_STATE=$T/amd "$VIGIL" reset-gpu --gpu 3 >"$T/r.out" 2>&1
is "reset-gpu: exit 0" "$?" 0
is "… the library was asked to reset GPU 3" "$(cat "$T/amd.resets")" "gpu=3"
printf 'gpus=8\ngpu3.hang=amdsmi_reset_gpu\n' >"$T/amd"
VIGIL_AMDSMI_LIB=$FAKE_AMDSMI FAKE_AMDSMI_STATE=$T/amd "$VIGIL" reset-gpu --gpu 3 --timeout 1 >/dev/null 2>"$T/r.err"
is "reset-gpu: a reset that never returns: exit 1" "$?" 1
check "… said so, naming the library" grep -q "AMD SMI did not answer within .* ms (resetting GPU)" "$T/r.err"
printf 'gpus=2\n' >"$T/nvml"
VIGIL_NVML_LIB=$FAKE_NVML FAKE_NVML_STATE=$T/nvml "$VIGIL" reset-gpu --gpu 0 >/dev/null 2>"$T/r.err"
is "reset-gpu on NVIDIA: exit 1" "$?" 1
check "… NVML has no reset call" grep -q "NVML has no GPU reset call" "$T/r.err"
exits_with "reset-gpu: --gpu is required" 2 "$VIGIL" reset-gpu

# ---- vigil scan on the three real amdgpu logs ----
scan() { "$VIGIL" scan --json "$FIX/logs/$1" 2>/dev/null | jq -r '.kind' | sort -u | tr '\n' ' '; }
is "scan: an MI50's uncorrectable error, its reset, its SMU" "$(scan amdgpu-mi50-ue-reset.log)" \
    "amdgpu-gpu-reset amdgpu-smu amdgpu-ue "
is "scan: an MI300X process's page fault" "$(scan amdgpu-mi300x-page-fault.log)" "amdgpu-vm-fault "
is "scan: an MI210 that failed to initialise" "$(scan amdgpu-init-failed.log)" "amdgpu-init-failed "
"$VIGIL" scan "$FIX/logs/amdgpu-mi300x-page-fault.log" >/dev/null 2>&1
is "scan: a page fault is the job's: exit 0 (recorded, nothing to drain)" "$?" 0

# ---- --gpu is an option of its own ----
"$VIGIL" lab up 2 --gpu 8 --dir "$T/nolab" >/dev/null 2>"$T/gpu.err"
is "lab up --gpu 8: exit 2, not read as --gpus-per-node" "$?" 2
check "… saying what --gpu takes" grep -q "is not nvidia, amd or nvidia,amd" "$T/gpu.err"

if [ "$(id -u)" != 0 ] || ! command -v slurmctld >/dev/null; then
    skip "the AMD labs need root and slurmctld"
    done_testing
fi

# ---- the agent polls the counts: a UE count is a fault when it rises, once ----
# (the controller believes only the nodes its scheduler lists)
sched_up n7 || { nok "a scheduler listing n7"; done_testing; }
trap 'lab_down; rm -rf "$T"' EXIT
node_tokens "$T" n7 >/dev/null
secret "$T/read.token" read
READ_TOKEN="$T/read.token"
: >"$T/kmsg"
printf 'gpus=4\n' >"$T/amd"
start_serve 0
export VIGIL_AMDSMI_LIB="$FAKE_AMDSMI" FAKE_AMDSMI_STATE="$T/amd"
start_agent --interval 0.2 --window 0.5
printf 'gpus=4\ngpu1.ue.umc=1\n' >"$T/amd.new" && mv "$T/amd.new" "$T/amd"
wait_for 'test "$(incidents kind=amd-ras-ue)" -ge 1'
sleep 2   # proving that nothing comes: ten reads of the same count, four fold windows
is "a UE count with no log line: one incident, not one per read" \
    "$(inc '"\(length) \(map(.count) | add) \(map(.pci) | min)"' kind=amd-ras-ue)" "1 1 0000:1c:00.0"
printf 'gpus=4\ngpu1.ue.umc=2\n' >"$T/amd.new" && mv "$T/amd.new" "$T/amd"
wait_for 'test "$(inc "map(.count) | add" kind=amd-ras-ue)" -ge 2'
is "… the count rises: the fault again" "$(inc 'map(.count) | add' kind=amd-ras-ue)" 2
stop_agent
stop_serve
unset VIGIL_AMDSMI_LIB FAKE_AMDSMI_STATE
lab_down

# ---- 9 MI300X nodes × 8 GPUs, one a spare ----
lab_up 9 --spares 1 --gpus-per-node 8 --gpu amd || { nok "lab up 9 × 8 MI300X"; done_testing; }
is "Slurm knows 8 MI300X per node" "$(scontrol show node n1 | sed -n 's/^ *Gres=//p')" "gpu:mi300x:8"
check "gres.conf types them" grep -q "^NodeName=n1 Name=gpu Type=mi300x File=.*/dev/dri/renderD\[128-135\]" \
    "$LAB_DIR/etc/gres.conf"
is "each node its own XGMI hive" "$(grep -h xgmi_hive "$LAB_DIR/nodes/n1/amdsmi-state" "$LAB_DIR/nodes/n2/amdsmi-state" | sort -u | wc -l)" 2
"$VIGIL" drill --lab --dir "$LAB_DIR" --nodes 8 --runs 1 --deadline 90 --json >"$T/d.json" 2>"$T/d.err"
is "64-GPU MI300X drill: recovered" "$?" 0
is "drill: the AMD lab's fault" "$(jq -r .fault "$T/d.json")" "amd-ue"
is "drill: 64 GPUs, one rank each" "$(jq -c '[.gpus, .ranks]' "$T/d.json")" "[64,64]"
is "drill: detected by vigil" "$(jq -r '.runs[0].detect.by' "$T/d.json")" vigil
check "drill: running again on the spare" jq -e '.runs[0].restart.spare == true' "$T/d.json"
echo "# AMD drill: detect $(jq '.runs[0].detect.after_s' "$T/d.json") s, isolate $(jq '.runs[0].isolate.after_s' "$T/d.json") s"

# each injection as the controller records it (no kernel-log line for an XGMI link: the counters tell)
incident() { # NODE KIND → its action, once the lab's controller has it
    _rt="$LAB_DIR/etc/read.token"
    wait_for "curl -s -H \"Authorization: Bearer \$(cat $_rt)\" '$VIGIL_CONTROLLER/v1/incidents?node=$1' | jq -e '.[] | select(.kind == \"$2\")' >/dev/null" 20
    curl -s -H "Authorization: Bearer $(cat "$_rt")" "$VIGIL_CONTROLLER/v1/incidents?node=$1" |
        jq -r "[.[] | select(.kind == \"$2\") | .action][0]"
}
"$VIGIL" inject amd-bad-pages --node n2 --gpu 1 --lab >/dev/null
is "amd-bad-pages: the driver's threshold line → RMA" "$(incident n2 amdgpu-bad-pages)" drain-rma
"$VIGIL" inject amd-ring-timeout --node n3 --gpu 4 --lab >/dev/null
is "amd-ring-timeout: requeue (the ladder climbs when it comes back)" "$(incident n3 amdgpu-ring-timeout)" reset-gpu
"$VIGIL" inject amd-init-fail --node n5 --gpu 7 --lab >/dev/null
is "amd-init-fail: Fatal error during GPU init → out" "$(incident n5 amdgpu-init-failed)" reboot
"$VIGIL" inject amd-xgmi-down --node n6 --gpu 2 --lab >/dev/null
is "amd-xgmi-down: no log line, the polled link status" "$(incident n6 amd-xgmi-down)" reboot
check "amd-ue: the polled UE count too, beside the log line" grep -q "amd-ras-ue .*(reboot) from amdsmi" \
    "$LAB_DIR/log/agent-$(jq -r '.runs[0].victim' "$T/d.json").out"
is "n2 is out of service" "$(sinfo -h -N -n n2 -o %t | sort -u)" "down"
"$VIGIL" inject clear --lab >/dev/null
is "clear: the AMD SMI states back" "$(cat "$LAB_DIR/nodes/n6/amdsmi-state" | grep -c xgmi_down)" 0
lab_down

# ---- a mixed lab: NVIDIA and AMD nodes in turn ----
lab_up 4 --spares 1 --gpus-per-node 8 --gpu nvidia,amd || { nok "lab up 4 × nvidia,amd"; done_testing; }
is "mixed: n1 NVIDIA, n2 AMD" "$(for n in n1 n2; do scontrol show node $n | sed -n 's/^ *Gres=//p'; done | tr '\n' ' ')" \
    "gpu:8 gpu:mi300x:8 "
# burn-in: each node's pass runs the suite of the GPUs it has, with the stand-in tools
STANDINS=$(cd "$(dirname "$0")/../standins" && pwd)
bi() { PATH="$STANDINS:$PATH" "$VIGIL" burnin --lab --dir "$LAB_DIR" --no-drain --json "$@"; }
bi --nodes n1,n2 >"$T/bi.json"
is "mixed burn-in: each node the suite of its GPUs, said so" \
    "$(jq -c '[.nodes[] | [.node, .result, (.vendors | join(",")), .picked]]' "$T/bi.json")" \
    '[["n1","pass","nvidia","the GPUs found"],["n2","pass","amd","the GPUs found"]]'
is "… the AMD node's quick suite: the probe, InfiniBand, RVS peqt, TransferBench a2a" \
    "$(jq -r '.nodes[1].tests | map(.name) | join(" ")' "$T/bi.json")" "nvml ib-port rvs-peqt transferbench-a2a"
is "… the NVIDIA node's: vigil-gpu's" "$(jq -r '.nodes[0].tests | map(.name) | join(" ")' "$T/bi.json")" \
    "nvml ib-port h2d-bw gemm-small"
bi --nodes n2 --suite standard >"$T/bis.json"
is "the AMD node's standard suite: rccl-tests' real MI300X sweep passes at AMD's floor" \
    "$(jq -r '.nodes[0].tests[] | select(.name == "nccl-allreduce") | [.result, .detail] | join(": ")' "$T/bis.json")" \
    "pass: busbw at 8G in-place 317.66 GB/s >= 304 GB/s"
is "… RVS and TransferBench pass; ib_write_bw measured, unknown (AMD publishes no InfiniBand figure)" \
    "$(jq -r '[.nodes[0].tests[] | .name + "=" + .result] | join(" ")' "$T/bis.json")" \
    "nvml=pass ib-port=pass nccl-allreduce=pass ib-write-bw=unknown rvs-peqt=pass transferbench-a2a=pass transferbench-p2p=pass rvs-gst=pass rvs-iet=pass rvs-pebb=pass rvs-pbqt=pass"
is "--vendor names the suite: the NVIDIA node runs AMD's" \
    "$(bi --nodes n1 --vendor amd | jq -c '[.nodes[0].vendors, .nodes[0].picked, (.nodes[0].tests | map(.name))]')" \
    '[["amd"],"--vendor",["nvml","ib-port","rvs-peqt","transferbench-a2a"]]'
exits_with "--vendor: a vendor vigil does not know exits 2" 2 "$VIGIL" burnin --node n1 --vendor intel
# each AMD burn-in fault: the next pass on that node fails, the test and its fault named
for k in "amd-rccl-slow standard" "amd-rvs-fail standard" "amd-xgmi-bw-low quick"; do
    set -- $k
    "$VIGIL" inject "$1" --node n2 --lab >/dev/null
    bi --nodes n2 --suite "$2" >"$T/inj.json"
    echo "$1 $(jq -r '.nodes[0] | [.result, ([.tests[] | select(.result == "fail") | .name + "/" + .kind] | join(",")),
        .reason] | join(" ")' "$T/inj.json")" >>"$T/inj.txt"
    "$VIGIL" inject clear --node n2 --lab >/dev/null
done
is "amd-rccl-slow: rccl-tests at half speed fails nccl-allreduce" "$(sed -n 1p "$T/inj.txt")" \
    "amd-rccl-slow fail nccl-allreduce/nccl-slow vigil: burnin nccl-allreduce: busbw at 8G in-place 158.83 GB/s < 304 GB/s"
is "amd-rvs-fail: RVS's GPU stress test says FALSE" "$(sed -n 2p "$T/inj.txt" | cut -c1-90)" \
    "amd-rvs-fail fail rvs-gst/rvs-fail vigil: burnin rvs-gst: gst: 2 of 5 verdicts failed: [gs"
is "amd-xgmi-bw-low: TransferBench a2a under AMD's floor" "$(sed -n 3p "$T/inj.txt")" \
    "amd-xgmi-bw-low fail transferbench-a2a/xgmi-bw-low vigil: burnin transferbench-a2a: avg GPU-GPU 23.28 GB/s < 32.9 GB/s; slowest link GPU 07 -> GPU 00 22.547 GB/s"
is "clear: the AMD node passes again, its stand-ins still AMD's" "$(bi --nodes n2 | jq -r '.nodes[0].result')" pass
exits_with "an AMD burn-in fault on an NVIDIA node is refused" 2 "$VIGIL" inject amd-xgmi-bw-low --node n1 --lab
exits_with "mixed: an AMD fault on an NVIDIA node is refused" 2 "$VIGIL" inject amd-ue --node n1 --lab
exits_with "mixed: an XID on an AMD node is refused" 2 "$VIGIL" inject xid 79 --node n2 --lab
"$VIGIL" drill --lab --dir "$LAB_DIR" --nodes 2 --fault amd-ue --deadline 60 --json >"$T/m.json" 2>"$T/m.err"
is "mixed drill (amd-ue): recovered" "$?" 0
is "mixed drill: the victim is the AMD node" "$(jq -r '.runs[0].victim' "$T/m.json")" n2
"$VIGIL" inject xid 79 --node n3 --lab >/dev/null
is "mixed: an XID on the NVIDIA node" "$(incident n3 xid)" reboot
done_testing
