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
out=$("$VIGIL" advisories check runc 1.1.11 --eco dpkg --package runc --json)
check "check: a distro package says the fix may be backported" sh -c "printf '%s' '$out' | grep -q '\"backport_possible\": true'"
exits_with "check: unknown ecosystem exits 2" 2 "$VIGIL" advisories check runc 1.0 --eco pip
exits_with "unknown action exits 2" 2 "$VIGIL" advisories frobnicate

"$VIGIL" advisories import --new --out "$tmp/db.json" data/sources/nvidia-csaf data/sources/osv data/sources/amd-cve data/sources/curated \
    data/sources/lifecycle.json >"$tmp/out" 2>&1
is "import: rebuilds the bundled database" "$?" 0
is "import: 228 files" "$(grep -c "imported 228 files" "$tmp/out")" 1
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
done_testing
