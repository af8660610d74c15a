#!/bin/sh
# audit_amd.sh — `vigil audit` on an AMD Instinct node and AMD's advisories
# end to end: AMD's CVE JSON 5 records imported by `vigil advisories import`
# (the bundled ones, data/sources/amd-cve), the cmax-node root (two MI300X,
# ROCm 6.1.2 and an install whose version cannot be read, AMD's DKMS driver,
# the VBIOS) audited with the bundled database: ROCm findings for MI300X
# with AMD's fixed release, the advisories AMD names no release for listed as
# unknown with AMD's words (never a pass), the exit status they give, and a
# node without AMD GPUs untouched.  No lab: a second or two.
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
R=$top/tests/fixtures/roots
W=$(mktemp -d "${TMPDIR:-/tmp}/vigil-audit-amd.XXXXXX")
trap 'rm -rf "$W"' EXIT
export VIGIL_NOW=2026-12-01

# ---- the importer ----
json=$("$VIGIL" advisories import --new --out "$W/db.json" "$top/data/sources/amd-cve" --json -v)
is "AMD's six records: six advisories, 27 ranges" \
    "$(echo "$json" | jq -r '[.files, .new_advisories, .ranges_added] | map(tostring) | join(" ")')" "6 6 27"
is "… AMD's fixes that name no ROCm release listed, with the record and the part" \
    "$(echo "$json" | jq -r '.unparsed_names[] | select(test("MI300A"))' | sed 's|.*/||' | head -2 | tr '\n' ';')" \
    "CVE-2026-0428.json: MI300A: \"BKC 26\" (unaffected);CVE-2026-0481.json: MI300A: \"DME v1.4.1.2 and v1.4.0.1\" (unaffected);"
is "… the Radeon rows skipped" "$(echo "$json" | jq -r '.products_skipped')" "4"
exits_with "a CVE JSON 5 record without containers.cna: exit 2" 2 sh -c \
    "jq 'del(.containers.cna)' '$top/data/sources/amd-cve/CVE-2026-0428.json' >'$W/bad.json' && \"\$VIGIL\" advisories import --new --out '$W/x.json' '$W/bad.json'"
err=$("$VIGIL" advisories import --new --out "$W/x.json" "$W/bad.json" 2>&1)
is "… naming the file and the field" "$(echo "$err" | grep -c 'bad.json: containers.cna: missing')" "1"

# ---- the audit of an MI300X node with the bundled database ----
json=$("$VIGIL" audit --root "$R/cmax-node" --json --fail-on none)
is "cmax-node: ROCm 6.1.2 on MI300X, AMD's CVEs with the fixed release" \
    "$(echo "$json" | jq -r '[.findings[] | select(.component == "rocm") | "\(.id)<\(.fixed)@\(.model)"] | sort | join(" ")')" \
    "CVE-2023-31324<6.4@MI300X CVE-2024-36323<6.3@MI300X CVE-2026-0428<6.3.1@MI300X"
is "… what AMD names no release for: unknown, with AMD's words" \
    "$(echo "$json" | jq -r '[.unknown[] | select(.installed == "6.1.2") | .note] | sort | join(" | ")')" \
    "CVE-2024-21950: AMD plans no fix for MI300X (the record says 'No fix planned' and names no release) | CVE-2026-0481: AMD names the fix for MI300X as 'DME v1.4.1.2 and v1.4.0.1', not a ROCm release"
is "… the install whose version cannot be read: every MI300X advisory unknown, none a pass" \
    "$(echo "$json" | jq -r '[.unknown[] | select(.installed == "unknown")] | length') $(echo "$json" | jq -r '[.findings[] | select(.installed == "unknown")] | length')" \
    "5 0"
is "… the summary counts them" "$(echo "$json" | jq -r '.summary.unknown')" "7"
is "… the driver and the VBIOS inventoried" \
    "$(echo "$json" | jq -r '[.components[] | select(.name == "amdgpu-driver" or .name == "amd-vbios") | "\(.name)=\(.version)"] | join(" ")')" \
    "amdgpu-driver=6.12.12 amd-vbios=113-M3000100-102"
exits_with "--fail-on high: exit 1 (the HIGH ROCm findings)" 1 "$VIGIL" audit --root "$R/cmax-node" --fail-on high
out=$("$VIGIL" audit --root "$R/cmax-node" --fail-on none)
is "table: an 'Advisory status unknown' section" "$(echo "$out" | grep -c '^Advisory status unknown (7)')" "1"
is "… and the summary line" "$(echo "$out" | grep -c 'fixed by the distribution, 0 not decided by it, 7 unknown$')" "1"
json=$("$VIGIL" audit --root "$R/clean-current" --json --fail-on none)
is "a node without AMD GPUs or ROCm: no ROCm finding, nothing unknown" \
    "$(echo "$json" | jq -r '[.findings[] | select(.component == "rocm")] | length') $(echo "$json" | jq -r '.unknown | length')" \
    "0 0"
done_testing
