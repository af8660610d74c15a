#!/bin/sh
# cli.sh — what a new user meets first, on the command line: `vigil --version`,
# every command's and every action's own help (`vigil CMD --help`, `vigil help
# CMD`, `vigil CMD ACTION --help`), a date that is not in the calendar refused
# by every date option (exit 2, naming the option), `vigil scan` of the live
# kernel log without the right to read it saying what to do, and `vigil check`
# with no configuration saying what it did and did not check.
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/lib.sh
T=$(mktemp -d "${TMPDIR:-/tmp}/vigil-cli.XXXXXX")
trap 'rm -rf "$T"' EXIT

# ---- the version ----
out=$("$VIGIL" --version 2>&1)
is "vigil --version: exit 0" "$?" 0
case "$out" in "vigil "[0-9]*" (data: "*")") ok "vigil --version prints the version ($out)" ;; *) nok "vigil --version printed '$out'" ;; esac
is "vigil version prints the same" "$("$VIGIL" version 2>&1)" "$out"
exits_with "vigil version --help: exit 0" 0 "$VIGIL" version --help

# ---- help: every command, and every action of a command that has actions ----
cmds=$("$VIGIL" help | sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p')
check "vigil help lists the commands" test "$(echo "$cmds" | wc -l)" -ge 17
bad=""
for c in $cmds; do
    out=$("$VIGIL" "$c" --help 2>"$T/err")
    rc=$?
    case "$rc:$out" in "0:usage: vigil $c"*) ;; *) bad="$bad $c(exit $rc)" ;; esac
    [ -s "$T/err" ] && bad="$bad $c(stderr)"
    [ "$("$VIGIL" help "$c" 2>&1)" = "$out" ] || bad="$bad help-$c"
done
is "every command: CMD --help and help CMD print its usage on stdout, exit 0" "$bad" ""
bad=""
for a in "advisories import" "advisories list" "advisories check" "audit merge" "audit fleet" \
    "lab up" "lab status" "lab down" "lab env"; do
    # shellcheck disable=SC2086 # the action is two words
    out=$("$VIGIL" $a --help 2>"$T/err")
    rc=$?
    case "$rc:$out" in "0:usage: vigil $a "*) ;; *) bad="$bad [$a](exit $rc)" ;; esac
    [ -s "$T/err" ] && bad="$bad [$a](stderr)"
    # shellcheck disable=SC2086
    [ "$("$VIGIL" help $a 2>&1)" = "$out" ] || bad="$bad [help $a]"
done
is "every action: CMD ACTION --help and help CMD ACTION print that action's usage, exit 0" "$bad" ""
check "lab up --help says what up prints" sh -c "'$VIGIL' lab up --help | grep -q 'dashboard'"
exits_with "help of a command that does not exist: exit 2" 2 "$VIGIL" help frobnicate

# ---- dates that are not in the calendar, in every date option ----
# date_refused "description" OPTION VALUE command args… — exit 2, one line naming the option and the value
date_refused() {
    d=$1 opt=$2 val=$3; shift 3
    "$@" "$opt" "$val" >/dev/null 2>"$T/err"
    rc=$?
    if [ "$rc" = 2 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -q -- "$opt '$val'" "$T/err"; then ok "$d"
    else nok "$d (exit $rc: $(cat "$T/err"))"; fi
}
date_refused "audit --now 2026-13-45" --now 2026-13-45 "$VIGIL" audit --root "$T"
date_refused "audit --now 2026-02-30" --now 2026-02-30 "$VIGIL" audit --root "$T"
date_refused "advisories check --date 2026-13-45" --date 2026-13-45 "$VIGIL" advisories check slurm 22.05.8
date_refused "advisories check --date 2026-04-31" --date 2026-04-31 "$VIGIL" advisories check slurm 22.05.8
date_refused "report --since 2026-13-45" --since 2026-13-45 "$VIGIL" report --db "$T/none.db"
date_refused "report --until 2026-02-29 (not a leap year)" --until 2026-02-29 "$VIGIL" report --db "$T/none.db"
date_refused "scan --boot-time 2026-02-30T00:00:00Z" --boot-time 2026-02-30T00:00:00Z "$VIGIL" scan /dev/null
exits_with "a real leap day is taken (audit --now 2024-02-29)" 0 "$VIGIL" audit --root "$T" --now 2024-02-29 --fail-on none

# ---- vigil check with no configuration: what ran, and which file it looked for ----
mkdir "$T/bare"
VIGIL_NVML_LIB=$T/none/libnvidia-ml.so.1 "$VIGIL" check --root "$T/bare" >"$T/check.out" 2>"$T/check.err"
is "check, no config, nothing to check: exit 0" "$?" 0
check "check, no config: never '0 checks passed'" sh -c "! grep -q '0 checks passed' '$T/check.out'"
check "check, no config: says nothing was checked, names the file it looked for and the built-in checks" \
    grep -q '^[^ ]*: nothing checked: no /etc/vigil/vigil.conf, and none of the built-in checks (gpu, ib, driver, mount, pcie, fabric) finds anything' "$T/check.out"
VIGIL_NVML_LIB=$FAKE_NVML FAKE_NVML_STATE=$T/bare/nvml "$VIGIL" check --root tests/fixtures/sysfs/h100 --node n1 \
    >"$T/check.out" 2>/dev/null
is "check, no config, a healthy node: exit 0" "$?" 0
check "check, no config: the built-in checks that ran, and the file it looked for" \
    grep -Eq '^ok n1: [0-9]+ built-in checks passed \(gpu, ib, driver, mount, pcie\) in [0-9]+ ms; no /etc/vigil/vigil.conf$' "$T/check.out"

# ---- vigil scan of /dev/kmsg without the right to read it ----
if [ "$(id -u)" = 0 ] && command -v runuser >/dev/null && ! runuser -u nobody -- dd if=/dev/kmsg count=0 status=none 2>/dev/null; then
    runuser -u nobody -- "$VIGIL" scan >/dev/null 2>"$T/scan.err"
    is "scan of /dev/kmsg as a user who may not read it: exit 2" "$?" 2
    is "… one line" "$(wc -l <"$T/scan.err")" 1
    check "… that says what to do: root or CAP_SYSLOG, or scan a saved log" \
        grep -q 'reading the kernel log needs root or CAP_SYSLOG.*run it as root.*vigil scan FILE' "$T/scan.err"
    if [ "$(cat /proc/sys/kernel/dmesg_restrict)" = 1 ]; then
        check "… and names kernel.dmesg_restrict" grep -q 'kernel.dmesg_restrict is 1 here' "$T/scan.err"
    else
        skip "kernel.dmesg_restrict is 0 here"
    fi
else
    skip "needs root (to run as nobody) and a /dev/kmsg that nobody may not read"
fi
done_testing
