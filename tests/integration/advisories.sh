#!/bin/sh
# advisories.sh — `vigil advisories import|list|check` end to end: the bundled
# database answers, importing regenerates the same advisories, bad input
# exits 2 naming the file, findings exit 1.
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.." || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

exits_with "check: vulnerable driver exits 1" 1 "$VIGIL" advisories check nvidia-driver 535.183.00 --date 2026-01-01
out=$("$VIGIL" advisories check nvidia-driver 535.183.00 --date 2026-01-01 --json)
is "check --json names CVE-2024-0126 fixed in 535.216.01" \
    "$(printf '%s' "$out" | grep -c '"fixed": "535.216.01"')" 1
exits_with "check: current R580 is clean on 2026-07-01" 0 "$VIGIL" advisories check nvidia-driver 580.159.03 --date 2026-07-01
out=$("$VIGIL" advisories check nvidia-driver 535.309.01 --date 2026-07-01 --json)
is "check: R535 is end-of-life after June 2026" "$(printf '%s' "$out" | grep -c '"kind": "eol"')" 1
"$VIGIL" advisories check runc 1.1.11 --eco dpkg --package runc --json >"$tmp/dpkg.json"
check "check: a distro package says the fix may be backported" grep -q '"backport_possible": true' "$tmp/dpkg.json"
exits_with "check: unknown ecosystem exits 2" 2 "$VIGIL" advisories check runc 1.0 --eco pip
exits_with "unknown action exits 2" 2 "$VIGIL" advisories frobnicate

"$VIGIL" advisories import --new --out "$tmp/db.json" --manifest data/sources/MANIFEST data/sources/lifecycle.json \
    >"$tmp/out" 2>&1
is "import: rebuilds the bundled database (as data/regenerate does)" "$?" 0
is "import: 303 files, the withdrawn Go record skipped" "$(grep -c "imported 303 files (1 skipped)" "$tmp/out")" 1
is "import: same advisory count as data/advisories.json" \
    "$("$VIGIL" advisories list --db "$tmp/db.json" | wc -l)" "$("$VIGIL" advisories list | wc -l)"
"$VIGIL" advisories import --db "$tmp/db.json" data/sources/osv >"$tmp/out2" 2>&1
is "import again: only duplicates" "$(grep -c 'new advisories 0, new ranges 0' "$tmp/out2")" 1

printf '{"document": {"csaf_version": "2.0"},\n  "product_tree": [' >"$tmp/trunc.json"
"$VIGIL" advisories import --db "$tmp/db.json" "$tmp/trunc.json" >/dev/null 2>"$tmp/err"
is "import: truncated JSON exits 2" "$?" 2
check "import: the message names file and line" grep -q "trunc.json:2:" "$tmp/err"
is "import: one line" "$(wc -l <"$tmp/err")" 1
head -c 3000 /dev/urandom >"$tmp/garbage.json"
exits_with "import: binary garbage exits 2" 2 "$VIGIL" advisories import --db "$tmp/db.json" "$tmp/garbage.json"
printf '{"document": {"csaf_version": "2.0", "tracking": {"id": "1"}}}' >"$tmp/nofields.json"
"$VIGIL" advisories import --db "$tmp/db.json" "$tmp/nofields.json" >/dev/null 2>"$tmp/err"
is "import: a CSAF document missing fields is skipped (exit 0)" "$?" 0
check "import: ... with a warning naming the field" grep -q "nofields.json: product_tree: missing" "$tmp/err"
printf '{"hello": 1}' >"$tmp/other.json"
exits_with "import: an unknown format exits 2" 2 "$VIGIL" advisories import --db "$tmp/db.json" "$tmp/other.json"
exits_with "list: a corrupt database exits 2" 2 "$VIGIL" advisories list --db "$tmp/garbage.json"
n=$("$VIGIL" advisories list --component runc --json | grep -c '"component": "runc"')
check "list --component runc --json lists runc advisories" test "$n" -ge 5
check "check --distro: Ubuntu's record decides a jammy openssh" sh -c "'$VIGIL' advisories check openssh 1:8.9p1-3ubuntu0.7 --eco dpkg --package openssh-server --source-package openssh --distro Ubuntu:22.04 | grep -q 'USN-6859-1'"
check "check --distro: USN-7094-1 decides a noble qemu (source package qemu)" sh -c "'$VIGIL' advisories check qemu 1:8.2.2+ds-0ubuntu1.2 --eco dpkg --package qemu-system-x86 --source-package qemu --distro Ubuntu:24.04 | grep -q 'USN-7094-1'"
exits_with "check --distro: qemu at USN-7094-1's noble fixed version is clean" 0 "$VIGIL" advisories check qemu 1:8.2.2+ds-0ubuntu1.4 --eco dpkg --package qemu-system-x86 --source-package qemu --distro Ubuntu:24.04
exits_with "check --distro: the USN's fixed version is clean of it" 0 "$VIGIL" advisories check linux-kernel 6.8.0-124.124 --eco dpkg --package linux-image-6.8.0-124-generic --source-package linux --distro Ubuntu:24.04
# NIC firmware per model (bulletin 5699): a ConnectX-4 Lx is affected by
# CVE-2025-23351 only, fixed in 14.32.1908 (its own train), never 14.46.3008
out=$("$VIGIL" advisories check connectx-firmware 14.32.1900 --model "ConnectX-4 Lx" --json)
is "check --model: ConnectX-4 Lx is not flagged for CVE-2025-23350" "$(printf '%s' "$out" | grep -c 'CVE-2025-23350')" 0
is "check --model: ... and CVE-2025-23351 is fixed in 14.32.1908" \
    "$(printf '%s' "$out" | grep -A4 '"id": "CVE-2025-23351"' | grep -c '"fixed": "14.32.1908"')" 1
is "check without a model: every row counts (both CVEs)" \
    "$("$VIGIL" advisories check connectx-firmware 14.32.1900 --json | grep -c '"id": "CVE-2025-2335[01]"')" 2
# how current the database is, per source
"$VIGIL" advisories status --date 2026-09-01 --json >"$tmp/status.json"
is "status: one row per MANIFEST source" "$(jq '.sources | length' "$tmp/status.json")" 8
is "status: NVIDIA's copy of 2026-08-18 is current on 2026-09-01" \
    "$(jq -r '.sources[] | select(.name == "nvidia-csaf") | "\(.snapshot_age_days) \(.stale)"' "$tmp/status.json")" "14 false"
is "status: the Go database's records carry no date: the copy's age stands" \
    "$(jq -r '.sources[] | select(.name == "go-vulndb") | "\(.age_days) \(.age_from_snapshot)"' "$tmp/status.json")" "11 true"
is "status: the database's stamp" "$(jq -r '.generated | test("^20[0-9-]+T")' "$tmp/status.json")" true
"$VIGIL" advisories status --date 2026-12-03 >"$tmp/status.txt"
is "status: stale sources exit 1" "$?" 1
check "status: a warning names the stale copy and its age" grep -q "warning: nvidia-csaf: copied 107 days ago (2026-08-18)" "$tmp/status.txt"
exits_with "status: --max-age must be a number of days" 2 "$VIGIL" advisories status --max-age soon
printf 'ok\tp\tr\t-\t-\tabout\nBad Name\tp\tr\t-\t-\tabout\n' >"$tmp/MANIFEST"
"$VIGIL" advisories import --new --out "$tmp/m.json" --manifest "$tmp/MANIFEST" >/dev/null 2>"$tmp/err"
is "import --manifest: a bad line exits 2" "$?" 2
check "import --manifest: ... naming file and line" grep -q "MANIFEST:2: name:" "$tmp/err"
done_testing
