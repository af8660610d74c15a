#!/bin/sh
# layers.sh — the include graph follows the stages.  Each folder of src/ has a
# rank; a file may include headers of its own folder or of a folder with a
# lower rank, never one of equal or higher rank (that would go up a layer or
# close a cycle).  Also: nothing outside src/orch/ and src/lab/ spawns a Slurm
# command, and a GPU or NIC vendor library is named only in its own backend
# file.
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/lib.sh

rank() {
    case "$1" in
        util) echo 0 ;;
        core) echo 1 ;;
        signal | inventory) echo 2 ;;
        catalog | advisory | wire | orch | bmc) echo 3 ;;
        security | score) echo 4 ;;
        controller | agent | lab | burnin) echo 5 ;;
        drill) echo 6 ;;
        report) echo 7 ;;
        cmd) echo 8 ;;
        *) echo "" ;;
    esac
}

bad=""
unknown=""
for f in src/*/*.c src/*/*.h; do
    dir=$(basename "$(dirname "$f")")
    r=$(rank "$dir")
    [ -n "$r" ] || { unknown="$unknown $dir"; continue; }
    for inc in $(sed -n 's/^#include "\([a-z_]*\)\/[^"]*".*/\1/p' "$f" | sort -u); do
        [ "$inc" = "$dir" ] && continue
        ri=$(rank "$inc")
        if [ -z "$ri" ] || [ "$ri" -ge "$r" ]; then bad="$bad $f→$inc"; fi
    done
done
is "every folder of src/ has a rank" "$unknown" ""
is "no include goes up a layer or sideways (no cycles)" "$bad" ""

# The Slurm command names appear only in the orchestrator and the lab (and in
# the audit of Slurm itself: its version collector and its security checks;
# and `vigil lab`, the command of the lab).
audit_of_slurm='^src/(inventory/col_slurm|security/sec_slurm|security/checks|cmd/lab)\.c$'
slurm=$(grep -lE '"(scontrol|squeue|sinfo|sbatch|srun|scancel|slurmd|slurmstepd|slurmctld)"' src/*/*.c |
    grep -vE '^src/(orch|lab)/' | grep -vE "$audit_of_slurm" | tr '\n' ' ')
is "Slurm commands are spawned only by src/orch/ and src/lab/" "$slurm" ""
conf=$(grep -l 'SLURM_CONF\|SLURMD_NODENAME' src/*/*.c | grep -vE '^src/(orch|lab)/' | grep -vE "$audit_of_slurm" |
    tr '\n' ' ')
is "Slurm's environment is read only by src/orch/ and src/lab/" "$conf" ""
# A vendor library — its symbols' prefix or its file name — is named only in
# its backend file (a new library: one line here).  The lab and the drill's
# injections drive the fake libraries of the tests, and the inventory's
# collectors name the packages whose versions the audit checks: they may
# name them.
vendor_lib() {   # library, pattern, backend file(s) (an extended regex)
    hits=$(grep -lE "$2" src/*/*.c src/*/*.h |
        grep -vxE "$3|src/lab/[a-z_]*\.[ch]|src/drill/inject\.[ch]|src/inventory/col_[a-z_]*\.c" | tr '\n' ' ')
    is "$1 is named only in its backend file" "$hits" ""
}
vendor_lib NVML 'nvml[A-Z][A-Za-z0-9_]*|NVML_[A-Z]|libnvidia-ml' 'src/signal/nvml\.c'
vendor_lib amdsmi 'amdsmi_[a-z]|AMDSMI_[A-Z]|libamd_smi' 'src/signal/amd[a-z_]*\.[ch]'
vendor_lib rocm_smi 'rsmi_[a-z]|RSMI_[A-Z]|librocm_smi' 'src/signal/amd[a-z_]*\.[ch]'
vendor_lib verbs 'ibv_[a-z]|IBV_[A-Z]|libibverbs' 'src/signal/verbs\.c'
shell=$(grep -lE '"/bin/sh"|"sh", *"-c"|system\(|popen\(' src/*/*.c | tr '\n' ' ')
is "no process is spawned through a shell" "$shell" ""
done_testing
