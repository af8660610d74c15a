#!/bin/sh
# audit.sh — CLI contract of `vigil audit` on the fixture roots: exit codes,
# exact finding counts per severity (bundled database, fixed --now), bad input
# giving exit 2 with one line naming the file, and `audit merge`.
. "$(dirname "$0")/lib.sh"
R=tests/fixtures/roots
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
A="$VIGIL audit --now 2026-09-01"
exits_with "clean-current: no findings, exit 0" 0 $A --root $R/clean-current
is "clean-current: table says clean" "$($A --root $R/clean-current | grep -c 'No known vulnerabilities')" 1
exits_with "run535: findings >= high, exit 1" 1 $A --root $R/ubuntu2204-h100-run535
exits_with "run535: --fail-on none, exit 0" 0 $A --root $R/ubuntu2204-h100-run535 --fail-on none
$A --root $R/ubuntu2204-h100-run535 --json >"$T/run535.json"
is "run535: summary" "$(tr -d ' \n' <"$T/run535.json" | grep -o '"summary":{[^}]*}')" \
   '"summary":{"critical":7,"high":35,"medium":47,"low":27,"outdated":16,"fixed_by_distribution":0,"undecided_by_distribution":0,"unknown":0,"components":25}'
is "run535: driver found from /proc (no package)" "$($A --root $R/ubuntu2204-h100-run535 --components | grep -c '^nvidia-driver .*535.129.03  */proc/driver/nvidia/version')" 1
check "run535: CVE-2024-0132 on the container toolkit" grep -q '"id": "CVE-2024-0132"' "$T/run535.json"
check "run535: backport marker on distro packages" sh -c "$A --root $R/ubuntu2204-h100-run535 | grep -q 'may be backported by the distribution'"
check "run535: markdown has severity headings" sh -c "$A --root $R/ubuntu2204-h100-run535 --format markdown | grep -q '^### CRITICAL (7)'"
$A --root $R/multi-cuda --json >"$T/multi.json"
is "multi-cuda: three toolkits" "$(grep -c '"name": "cuda-toolkit"' "$T/multi.json")" 3
is "multi-cuda: --components lists 8" "$($A --root $R/multi-cuda --components | tail -n +2 | wc -l)" 8
exits_with "unreadable root: exit 2" 2 $A --root "$T/nope"
mkdir -p "$T/bad/var/lib/dpkg" && printf 'Package: a\nStatus: install ok installed\n\001\002garbage\n' >"$T/bad/var/lib/dpkg/status"
exits_with "corrupt status file: exit 2" 2 $A --root "$T/bad"
is "corrupt status file: one line naming file:line" "$($A --root "$T/bad" 2>&1 >/dev/null)" \
   "vigil: $T/bad/var/lib/dpkg/status:3: binary data (byte 0x01), not a dpkg status file"
printf '{"advisories": [' >"$T/bad.json"
exits_with "malformed database: exit 2" 2 $A --root $R/clean-current --db "$T/bad.json"
exits_with "bad --fail-on: exit 2" 2 $A --fail-on severe
$A --root $R/clean-current --json >"$T/fleet-clean.json"
cp "$T/run535.json" "$T/multi.json" "$T/fleet-clean.json" "$T/fleet/" 2>/dev/null || { mkdir "$T/fleet"; cp "$T/run535.json" "$T/multi.json" "$T/fleet-clean.json" "$T/fleet/"; }
exits_with "merge: skew and findings, exit 1" 1 $VIGIL audit merge "$T/fleet"
exits_with "merge of one clean report: exit 0" 0 $VIGIL audit merge "$T/fleet-clean.json"
is "merge: 3 nodes" "$($VIGIL audit merge "$T/fleet" --json | grep -c '"gpu-')" 3
check "merge: runc version skew flagged" sh -c "$VIGIL audit merge '$T/fleet' | grep -E '^runc .*SKEW' >/dev/null"
exits_with "merge: a non-report is exit 2" 2 $VIGIL audit merge "$T/bad.json"

# Distribution evidence: the distribution's own record, then the package's changelog, then upstream.
$A --root $R/debian12-backport --json --fail-on none >"$T/deb.json"
is "debian12-backport: glibc CVE-2023-4911 fixed per its changelog" \
   "$(jq -r '.fixed_by_distribution[] | select(.id == "CVE-2023-4911") | .evidence + " " + .evidence_ref' "$T/deb.json")" \
   "changelog 2.36-9+deb12u3"
is "debian12-backport: no slurm or munge finding (all named in their changelogs)" \
   "$(jq '[.findings[] | select(.component == "slurm" or .component == "munge")] | length' "$T/deb.json")" 0
is "debian12-backport: slurm below-minimum dropped (its changelog names CVE-2025-43904)" \
   "$(jq '[.outdated[] | select(.component == "slurm")] | length' "$T/deb.json")" 0
is "debian12-backport: CVE-2024-6387 is no finding: Debian's bundled data (copied 2023-04-02) predates it" \
   "$(jq '[.findings[] | select(.id == "CVE-2024-6387")] | length' "$T/deb.json")" 0
is "debian12-backport: ... it is listed as not decided by the distribution, saying why" \
   "$(jq -r '.undecided_by_distribution[] | select(.id == "CVE-2024-6387") | "undecided " + (.note | test("Debian.s security data here was copied on 2023-04-02, before this CVE \\(published 2024-07-01\\)") | tostring)' "$T/deb.json")" \
   "undecided true"
is "debian12-backport: ... counted apart, not as a high finding" \
   "$(jq -c '[.summary.high, .summary.undecided_by_distribution]' "$T/deb.json")" "[0,1]"
exits_with "debian12-backport: --fail-on high passes (nothing decided is high)" 0 $A --root $R/debian12-backport --fail-on high
# "outdated" advice for a distribution's package names the distribution's package, never upstream's 9.9p2
is "debian12-backport: openssh below-minimum advises no upstream version" \
   "$(jq -r '.outdated[] | select(.component == "openssh") | .fixed // "none"' "$T/deb.json")" "none"
check "debian12-backport: ... and says the distribution's package is the fix, naming the undecided CVE" \
   sh -c "jq -r '.outdated[] | select(.component == \"openssh\") | .note' '$T/deb.json' | grep -q 'CVE-2024-6387 not shown fixed by Debian:12.*not to upstream 9.9p2'"
$A --root $R/ubuntu2204-unpatched --json --fail-on none >"$T/jammy-old.json"
is "ubuntu2204-unpatched: openssh below-minimum advises Ubuntu's fixed package (USN-6859-1)" \
   "$(jq -r '.outdated[] | select(.component == "openssh") | .fixed' "$T/jammy-old.json")" "1:8.9p1-3ubuntu0.10"
$A --root $R/debian12-unpatched --json --fail-on none >"$T/deb-old.json"
is "debian12-unpatched: CVE-2023-41914 found (changelog stops at 22.05.8-4)" \
   "$(jq -r '.findings[] | select(.id == "CVE-2023-41914") | .evidence' "$T/deb-old.json")" "upstream"
exits_with "debian12-unpatched: exit 1" 1 $A --root $R/debian12-unpatched
$A --root $R/ubuntu2404-backport --json --fail-on none >"$T/noble.json"
is "ubuntu2404-backport: CVE-2024-6387 fixed by USN-6859-1" \
   "$(jq -r '.fixed_by_distribution[] | select(.id == "CVE-2024-6387") | .evidence + " " + .evidence_ref + " " + .fixed' "$T/noble.json")" \
   "distro-advisory USN-6859-1 1:9.6p1-3ubuntu13.3"
is "ubuntu2404-backport: not a finding" "$(jq '[.findings[] | select(.id == "CVE-2024-6387" or .id == "USN-6859-1")] | length' "$T/noble.json")" 0
$A --root $R/ubuntu2204-unpatched --json --fail-on none >"$T/jammy.json"
is "ubuntu2204-unpatched: USN-6859-1 found, fix from the USN, rated high from the upstream record" \
   "$(jq -r '.findings[] | select(.id == "USN-6859-1") | [.evidence, .fixed, .severity, (.cves|join(","))] | join(" ")' "$T/jammy.json")" \
   "distro-advisory 1:8.9p1-3ubuntu0.10 high CVE-2024-6387"
is "ubuntu2204-unpatched: the upstream CVE-2024-6387 is not reported twice" \
   "$(jq '[.findings[] | select(.id == "CVE-2024-6387")] | length' "$T/jammy.json")" 0
check "table: EVIDENCE column with the USN" sh -c "$A --root $R/ubuntu2204-unpatched | grep -E '^openssh .*CVE-2024-6387 .*USN-6859-1' >/dev/null"
# QEMU against Ubuntu's USN-7094-1 (data/sources/osv/ubuntu), matched by release
# and source package "qemu" for the binary qemu-system-x86.  Versions from that
# record: 1:6.2+dfsg-2ubuntu6.23 is the last jammy version its Ubuntu:22.04:LTS
# "versions" list names before the fixed 1:6.2+dfsg-2ubuntu6.24;
# 1:8.2.2+ds-0ubuntu1 (cmax-node) is in its Ubuntu:24.04:LTS "versions" list;
# 1:8.2.2+ds-0ubuntu1.4 is its noble fixed version.
is "ubuntu2204-unpatched: qemu-system-x86 1:6.2+dfsg-2ubuntu6.23 gets USN-7094-1 with jammy's CVEs" \
   "$(jq -r '.findings[] | select(.component == "qemu") | [.id, .evidence, .evidence_ref, .fixed, (.cves|join(","))] | join(" ")' "$T/jammy.json")" \
   "USN-7094-1 distro-advisory USN-7094-1 1:6.2+dfsg-2ubuntu6.24 CVE-2023-3019,CVE-2024-7730"
check "table: qemu row with USN-7094-1" sh -c "$A --root $R/ubuntu2204-unpatched | grep -E '^qemu .*1:6.2\+dfsg-2ubuntu6.24 +USN-7094-1' >/dev/null"
is "ubuntu2404-backport: qemu-system-x86 at USN-7094-1's fixed 1:8.2.2+ds-0ubuntu1.4, no qemu finding" \
   "$(jq '[.findings[] | select(.component == "qemu" or .id == "USN-7094-1")] | length' "$T/noble.json")" 0
is "cmax-node: qemu 1:8.2.2+ds-0ubuntu1 (noble as released) gets USN-7094-1" \
   "$($A --root $R/cmax-node --json --fail-on none | jq -r '.findings[] | select(.component == "qemu") | [.id, .evidence, .fixed, (.cves|join(","))] | join(" ")')" \
   "USN-7094-1 distro-advisory 1:8.2.2+ds-0ubuntu1.4 CVE-2024-4693,CVE-2024-7730"
check "markdown: Fixed by the distribution section" sh -c "$A --root $R/debian12-backport --format markdown | grep -q '^### Fixed by the distribution (7)'"

# An rpm root (RHEL 9) whose openssh-server carries Red Hat's real changelog
# (tests/fixtures/rhel9-rpm.changelogs): entry 8.7p1-42 names CVE-2024-6387.
# The rpm program is wrapped to log its arguments: the changelogs are read in
# one run, only for packages with an upstream-decided finding.
mkdir -p "$T/rpm" "$T/bin"
cp -r $R/rhel9-rpm/. "$T/rpm/"
if sh tests/fixtures/make-rpmdb.sh "$T/rpm" tests/fixtures/rhel9-rpm.packages >/dev/null 2>&1; then
    printf '#!/bin/sh\nprintf "%%s\\n" "$*" >>"%s/rpm.log"\nexec %s "$@"\n' "$T" "$(command -v rpm)" >"$T/bin/rpm"
    chmod +x "$T/bin/rpm"
    PATH="$T/bin:$PATH" $A --root "$T/rpm" --json --fail-on none >"$T/rpm.json"
    is "rhel9-rpm: CVE-2024-6387 fixed per openssh's rpm changelog, not upstream" \
       "$(jq -r '.fixed_by_distribution[] | select(.id == "CVE-2024-6387") | [.evidence, .evidence_ref, .note] | join(" / ")' "$T/rpm.json")" \
       "changelog / 8.7p1-42 / fixed by the distribution (changelog 8.7p1-42, rpm -q --changelog openssh-server)"
    is "rhel9-rpm: CVE-2024-6387 is not a finding" "$(jq '[.findings[] | select(.id == "CVE-2024-6387")] | length' "$T/rpm.json")" 0
    is "rhel9-rpm: CVE-2025-26465 (not in the changelog; published 2025-02-18) is a finding: the package's newest entry is months older" \
       "$(jq -r '.findings[] | select(.id == "CVE-2025-26465") | .evidence + " " + (.backport_possible|tostring) + " " + (.note | test("newest changelog entry \\(2024-[0-9-]+\\) is [0-9]+ days older than this CVE") | tostring)' "$T/rpm.json")" \
       "upstream false true"
    is "rhel9-rpm: one rpm run reads the changelogs" "$(grep -c -- '^-q .*--qf \*\*vigil' "$T/rpm.log")" 1
    check "rhel9-rpm: openssh-server's changelog read" grep -q -- '^-q .*--qf \*\*vigil.* openssh-server' "$T/rpm.log"
    check "rhel9-rpm: none read for packages without an upstream finding (rdma-core, nvidia-fabric-manager)" \
        sh -c "! grep -E -- '^-q .*(rdma-core|nvidia-fabric-manager)' '$T/rpm.log'"
    is "rhel9-rpm: a relative --root (rpm wants an absolute one) gives the same verdict" \
       "$(cd "$T" && $A --root rpm --json --fail-on none | jq -r '.fixed_by_distribution[] | select(.id == "CVE-2024-6387") | .evidence_ref')" \
       "8.7p1-42"
    is "rhel9-rpm: the running kernel's kernel-core is not installed: CVE-2024-1086 compared upstream, the note says why" \
       "$(jq -r '.findings[] | select(.id == "CVE-2024-1086") | [.evidence, .source, .note] | join(" / ")' "$T/rpm.json")" \
       "upstream / /proc/sys/kernel/osrelease / upstream 5.14.0-427.13.1.el9_4.x86_64 compared: no installed kernel-core or kernel package carries the running 5.14.0-427.13.1.el9_4.x86_64"
else
    for n in 1 2 3 4 5 6 7 8; do skip "rhel9-rpm: rpm/rpmbuild not installed"; done
fi

# An AlmaLinux 9.4 rpm root matched against AlmaLinux's own OSV records
# (data/sources/osv/almalinux): openssh 8.7p1-38.el9 is before ALSA-2024:4312's
# 8.7p1-38.el9_4.1 (a finding), glibc 2.34-100.el9_4.2 is past ALSA-2023:5453's
# 2.34-60.el9_2.7 (fixed by the distribution, although upstream 2.34 < 2.39).
# The running kernel 5.14.0-427.13.1.el9_4.x86_64 is its kernel-core package,
# whose real changelog (tests/fixtures/alma9-rpm.changelogs) names
# CVE-2024-1086 in entry 5.14.0-424.el9: fixed by the distribution, not an
# upstream finding (no AlmaLinux kernel record is bundled).
mkdir -p "$T/alma"
cp -r $R/alma9-rpm/. "$T/alma/"
if sh tests/fixtures/make-rpmdb.sh "$T/alma" tests/fixtures/alma9-rpm.packages >/dev/null 2>&1; then
    $A --root "$T/alma" --json --fail-on none >"$T/alma.json"
    is "alma9-rpm: openssh's source package from its SOURCERPM, release AlmaLinux:9" \
       "$(jq -r '.components[] | select(.name == "openssh") | [.package, .source_package, .distro] | join(" ")' "$T/alma.json")" \
       "openssh-server openssh AlmaLinux:9"
    is "alma9-rpm: ALSA-2024:4312 found, fixed in 8.7p1-38.el9_4.1, rated high (Important)" \
       "$(jq -r '.findings[] | select(.id == "ALSA-2024:4312") | [.evidence, .fixed, .severity, (.cves|join(","))] | join(" ")' "$T/alma.json")" \
       "distro-advisory 8.7p1-38.el9_4.1 high CVE-2024-6387"
    is "alma9-rpm: the upstream CVE-2024-6387 is not reported twice" \
       "$(jq '[.findings[] | select(.id == "CVE-2024-6387")] | length' "$T/alma.json")" 0
    is "alma9-rpm: glibc CVE-2023-4911 fixed by ALSA-2023:5453" \
       "$(jq -r '.fixed_by_distribution[] | select(.id == "CVE-2023-4911") | [.evidence, .evidence_ref, .fixed] | join(" ")' "$T/alma.json")" \
       "distro-advisory ALSA-2023:5453 2.34-60.el9_2.7"
    is "alma9-rpm: no glibc finding" "$(jq '[.findings[] | select(.component == "glibc")] | length' "$T/alma.json")" 0
    exits_with "alma9-rpm: the ALSA finding fails the audit (exit 1)" 1 $A --root "$T/alma"
    check "alma9-rpm: table names the ALSA and its errata page" \
        sh -c "$A --root '$T/alma' --fail-on none | grep -E '^openssh .*CVE-2024-6387 .*ALSA-2024:4312 .*errata.almalinux.org/9/ALSA-2024-4312.html' >/dev/null"
    is "alma9-rpm: the running kernel is its kernel-core package (source kernel, upstream 5.14.0)" \
       "$(jq -r '.components[] | select(.name == "linux-kernel") | [.version, .package, .source_package, .upstream, .ecosystem, .source, .distro] | join(" ")' "$T/alma.json")" \
       "5.14.0-427.13.1.el9_4 kernel-core kernel 5.14.0 rpm rpm:/var/lib/rpm AlmaLinux:9"
    is "alma9-rpm: CVE-2024-1086 fixed per kernel-core's changelog (entry 5.14.0-424.el9)" \
       "$(jq -r '.fixed_by_distribution[] | select(.id == "CVE-2024-1086") | [.component, .evidence, .evidence_ref, .note] | join(" / ")' "$T/alma.json")" \
       "linux-kernel / changelog / 5.14.0-424.el9 / fixed by the distribution (changelog 5.14.0-424.el9, rpm -q --changelog kernel-core)"
    is "alma9-rpm: no linux-kernel finding" "$(jq '[.findings[] | select(.component == "linux-kernel")] | length' "$T/alma.json")" 0
    check "alma9-rpm: table lists the kernel under Fixed by the distribution" \
        sh -c "$A --root '$T/alma' --fail-on none | grep -E '^linux-kernel +5.14.0-427.13.1.el9_4 +CVE-2024-1086 +6.8 +changelog 5.14.0-424.el9' >/dev/null"
else
    for n in 1 2 3 4 5 6 7 8 9 10 11; do skip "alma9-rpm: rpm/rpmbuild not installed"; done
fi

# The acceptance test: on this machine, no finding that the package's own changelog refutes.
if [ -r /var/lib/dpkg/status ] && [ -d /usr/share/doc ]; then
    $VIGIL audit --json --fail-on none >"$T/self.json" 2>/dev/null
    refuted=""
    for pair in $(jq -r '.components as $c | .findings[] | . as $f
                         | ($c[] | select(.name == $f.component and .package != "") | .package) + "=" + $f.id' "$T/self.json"); do
        pkg=${pair%%=*} id=${pair#*=}
        cl=/usr/share/doc/$pkg/changelog.Debian.gz
        [ -r "$cl" ] && zcat "$cl" | grep -q -- "$id" && refuted="$refuted $pkg:$id"
    done
    is "this machine: no finding its own changelogs refute" "$refuted" ""
else
    skip "this machine: not a dpkg system"
fi
is "debian12-backport: glibc's source package from the dpkg Source field" \
   "$(jq -r '.components[] | select(.name == "glibc") | .source_package' "$T/deb.json")" "glibc"

# The running kernel as the distribution's package, matched against its kernel USN.
$A --root $R/ubuntu2404-kernel --json --fail-on none >"$T/k.json"
is "ubuntu2404-kernel: 6.8.0-120-generic maps to linux 6.8.0-120.120 (upstream 6.8.12)" \
   "$(jq -r '.components[] | select(.name == "linux-kernel") | [.version, .source_package, .upstream, .distro] | join(" ")' "$T/k.json")" \
   "6.8.0-120.120 linux 6.8.12 Ubuntu:24.04"
is "ubuntu2404-kernel: USN-8373-1, fixed in 6.8.0-124.124" \
   "$(jq -r '.findings[] | select(.component == "linux-kernel") | [.id, .fixed, .evidence] | join(" ")' "$T/k.json")" \
   "USN-8373-1 6.8.0-124.124 distro-advisory"
check "ubuntu2404-kernel: the livepatch module is reported" sh -c "jq -r '.components[].detail' '$T/k.json' | grep -q 'livepatch lp_6_8_0_120 enabled'"
is "ubuntu2404-kernel-patched: no kernel finding at 6.8.0-124.124" \
   "$($A --root $R/ubuntu2404-kernel-patched --json | jq '[.findings[] | select(.component == "linux-kernel")] | length')" 0
is "debian12-kernel: 6.1.0-18-amd64 maps to the image package's linux 6.1.76-1" \
   "$($A --root $R/debian12-kernel --components --json | jq -r '.[] | select(.name == "linux-kernel") | [.version, .package, .source_package] | join(" ")')" \
   "6.1.76-1 linux-image-6.1.0-18-amd64 linux"
done_testing
