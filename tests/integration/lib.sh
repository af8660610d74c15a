# lib.sh — sourced by the integration suites: TAP helpers.
# Each suite prints "ok N - what" / "not ok N - what" lines; tests/run sums them.
# $VIGIL is the sanitized vigil binary, $FAKE_NVML the fake NVML library.
: "${VIGIL:=$(cd "$(dirname "$0")/../.." && pwd)/build/vigil-san}"
_tap_n=0
ok()   { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $*"; }
nok()  { _tap_n=$((_tap_n + 1)); echo "not ok $_tap_n - $*"; }
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
