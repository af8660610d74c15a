#!/bin/sh
# security.sh — `vigil audit --security` and `vigil score` end to end: the
# fixture roots (exit codes, JSON, bad input), a real local Slurm cluster
# audited AS A NON-ROOT USER (nobody) through `scontrol show config` — finding
# PrivateData unset, then clean once the lab sets it — and the HTML scorecard
# rendered by headless Chromium (a PNG screenshot).
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.." || exit 2
FIX=tests/fixtures/security
SC=tests/fixtures/score
sh $FIX/setup.sh
tmp=$(mktemp -d)
chmod 0755 "$tmp"

exits_with "good root: exit 0" 0 "$VIGIL" audit --security --root $FIX/good --config $FIX/good/etc/vigil/security.conf
exits_with "bad root: exit 1" 1 "$VIGIL" audit --security --root $FIX/bad --config $FIX/bad/etc/vigil/security.conf
exits_with "bad root, --fail-on critical: still 1 (munge key)" 1 "$VIGIL" audit --security --root $FIX/bad --fail-on critical
exits_with "bad root, --fail-on none: 0" 0 "$VIGIL" audit --security --root $FIX/bad --fail-on none
"$VIGIL" audit --security --root $FIX/bad --json >"$tmp/bad.json"
is "JSON: 22 fails on the bad root (18, storage: exports, tenant separation; devices: rshim; nvlink: IMEX channel0 0666)" "$(grep -c '"status": "fail"' "$tmp/bad.json")" "22"
is "JSON: one security array" "$(grep -c '"security": \[' "$tmp/bad.json")" "1"
"$VIGIL" audit --security --root $FIX/bad --format markdown >"$tmp/bad.md"
check "markdown: evidence of the munge key" grep -q 'evidence: `/etc/munge/munge.key: 0644 munge:munge`' "$tmp/bad.md"
printf 'target bmc 127.0.0.1\n' >"$tmp/t.conf"
"$VIGIL" audit --security --targets "$tmp/t.conf" >/dev/null 2>"$tmp/err"; rc=$?
is "bad --targets file: exit 2" "$rc" "2"
is "one line naming file:line" "$(cat "$tmp/err")" "vigil: $tmp/t.conf:1: target: expected \`target NAME HOST PORT\`"
exits_with "--security with --db: exit 2" 2 "$VIGIL" audit --security --db x
exits_with "missing --root: exit 2" 2 "$VIGIL" audit --security --root /nonexistent/root

# vigil score
"$VIGIL" score $SC/good/*.json --questionnaire $SC/good/questionnaire.txt --json >"$tmp/good-score.json"; rc=$?
is "score good: exit 0" "$rc" "0"
check "score good: Platinum" grep -q '"tier": "Platinum"' "$tmp/good-score.json"
"$VIGIL" score $SC/bad/*.json --questionnaire $SC/bad/questionnaire.txt --html "$tmp/bad.html" >"$tmp/bad-score.txt"; rc=$?
is "score bad: exit 1 (below Bronze)" "$rc" "1"
check "score bad: Underperforming" grep -q '^vigil score — tier Underperforming' "$tmp/bad-score.txt"
exits_with "score of a non-report: exit 2" 2 "$VIGIL" score data/rubric.json
exits_with "score without evidence: exit 2" 2 "$VIGIL" score
"$VIGIL" score $SC/good/*.json --questionnaire $SC/good/questionnaire.txt --html "$tmp/good.html" >/dev/null
check "HTML written" test -s "$tmp/good.html"

if command -v chromium >/dev/null; then
    prof=$(mktemp -d)
    timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
        --disable-component-update --disable-sync --user-data-dir="$prof" --screenshot="$tmp/good.png" \
        --window-size=1200,1600 "file://$tmp/good.html" >/dev/null 2>&1
    rm -rf "$prof"
    is "chromium: PNG magic" "$(head -c 8 "$tmp/good.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" "89504e470d0a1a0a"
    size=$(stat -c %s "$tmp/good.png" 2>/dev/null || echo 0)
    check "chromium: screenshot is non-trivial ($size bytes > 50 KB)" test "$size" -gt 51200
else
    skip "chromium not installed: no screenshot"
fi

# A real Slurm cluster, audited by an ordinary user through scontrol show config.
if [ "$(id -u)" != 0 ] || ! command -v slurmctld >/dev/null || ! command -v setpriv >/dev/null; then
    skip "the lab needs root, slurmctld and setpriv"; rm -rf "$tmp"; exit 0
fi
cp "$VIGIL" "$tmp/vigil" && chmod 0755 "$tmp/vigil"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups env SLURM_CONF="$SLURM_CONF" ASAN_OPTIONS=detect_leaks=0 "$tmp/vigil" "$@"; }
lab_up 2 --no-vigil || { nok "lab up 2"; exit 1; }
as_nobody audit --security --only slurm --json >"$tmp/lab1.json"
check "as nobody: the config came from scontrol show config" grep -q '"slurm_config": "scontrol show config"' "$tmp/lab1.json"
as_nobody audit --security --only slurm >"$tmp/lab1.txt"; rc=$?
check "as nobody: PrivateData unset is a fail" grep -Eq '^fail +high +slurm.private-data +PrivateData lacks jobs,usage,users' "$tmp/lab1.txt"
is "as nobody: exit 1" "$rc" "1"
check "lab: requeue hold of 6 s seen" grep -Eq 'slurm.cred-expire +a requeued job is held 6 s' "$tmp/lab1.txt"
lab_down
lab_up 2 --no-vigil --conf-extra PrivateData=jobs,usage,users,accounts || { nok "lab up 2 with PrivateData"; exit 1; }
as_nobody audit --security --only slurm >"$tmp/lab2.txt"
check "as nobody: PrivateData set is clean" grep -Eq '^pass +high +slurm.private-data' "$tmp/lab2.txt"
lab_down
rm -rf "$tmp"
# shared storage (storage family): run as this user, on the fixture roots
check "storage: no_root_squash export named" sh -c "'$VIGIL' audit --security --only storage --root tests/fixtures/security/bad --fail-on none | grep -q 'no_root_squash'"
exits_with "storage: the good root passes" 0 "$VIGIL" audit --security --only storage --root tests/fixtures/security/good
done_testing
