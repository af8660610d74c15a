#!/bin/sh
# package.sh — `make deb`: the Debian package holds the binary, the bundled
# data where the installed binary finds it, the docs and the systemd units
# pointing at /usr/bin/vigil; its dependencies are real Debian packages; the
# unpacked binary runs (version, scan with the bundled catalog).
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/lib.sh
T=$(mktemp -d "${TMPDIR:-/tmp}/vigil-deb.XXXXXX")
trap 'rm -rf "$T"' EXIT
deb=$(scripts/mkdeb.sh 2>"$T/mkdeb.err")
check "make deb builds a package" test -s "$deb"
info=$(dpkg-deb --field "$deb" Package Version Architecture Depends)
case "$info" in *"Package: vigil"*) ok "package name vigil" ;; *) nok "package fields: $info" ;; esac
for dep in $(dpkg-deb --field "$deb" Depends | tr ',' '\n' | sed 's/^ *//; s/ .*//'); do
    check "dependency $dep is a Debian package" sh -c "apt-cache show $dep >/dev/null 2>&1 || dpkg -s $dep >/dev/null 2>&1"
done
dpkg-deb -x "$deb" "$T/root"
check "the binary is /usr/bin/vigil" test -x "$T/root/usr/bin/vigil"
is "the unpacked binary finds its data in /usr/share/vigil" \
    "$(env -u VIGIL_DATA "$T/root/usr/bin/vigil" version --json | jq -r .data_dir)" "$T/root/usr/share/vigil"
env -u VIGIL_DATA "$T/root/usr/bin/vigil" scan --json tests/fixtures/logs/fallen-off-bus.log >"$T/scan.json" 2>/dev/null
check "the unpacked binary classifies with the bundled catalog" sh -c "jq -se '[.[] | select(.kind == \"fallen-off-bus\" and .action == \"reboot\")] | length >= 1' '$T/scan.json' >/dev/null"
check "the systemd units run /usr/bin/vigil" sh -c "grep -q '^ExecStart=/usr/bin/vigil agent' '$T/root/lib/systemd/system/vigil-agent.service' && grep -q '^ExecStart=/usr/bin/vigil serve' '$T/root/lib/systemd/system/vigil-serve.service'"
check "the docs are in /usr/share/doc/vigil" test -s "$T/root/usr/share/doc/vigil/controller.md"
