#!/bin/sh
# package.sh — `make deb`: the Debian package holds the binary, the bundled
# data where the installed binary finds it, the docs, a real man page and the
# systemd units pointing at /usr/bin/vigil; its dependencies are what
# dpkg-shlibdeps computes for the binary plus what it loads and runs, all real
# Debian packages; the unpacked binary runs (version, scan with the bundled
# catalog).  Installed (as root): the system user vigil and its 0700 state
# directory, the units said to be disabled and how to enable them, the
# controller runs as vigil, and a purge removes the state; installed again
# where the vigil user is already there (Debian keeps it after a purge).
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/lib.sh
T=$(mktemp -d "${TMPDIR:-/tmp}/vigil-deb.XXXXXX")
trap 'rm -rf "$T"' EXIT
deb=$(scripts/mkdeb.sh 2>"$T/mkdeb.err")
check "make deb builds a package" test -s "$deb"
info=$(dpkg-deb --field "$deb" Package Version Architecture Depends)
case "$info" in *"Package: vigil"*) ok "package name vigil" ;; *) nok "package fields: $info" ;; esac
deps=$(dpkg-deb --field "$deb" Depends | tr ',' '\n' | sed 's/^ *//; s/ .*//')
for dep in $deps $(dpkg-deb --field "$deb" Recommends Suggests | sed 's/^[A-Za-z]*: //' | tr ',' '\n' | sed 's/^ *//; s/ .*//'); do
    check "dependency $dep is a Debian package" sh -c "apt-cache show $dep >/dev/null 2>&1 || dpkg -s $dep >/dev/null 2>&1"
done
dpkg-deb -x "$deb" "$T/root"
# what the binary links, computed here again: each of those packages is a dependency
mkdir -p "$T/shlibs/debian"
printf 'Source: vigil\n\nPackage: vigil\nArchitecture: any\n' >"$T/shlibs/debian/control"
linked=$(cd "$T/shlibs" && dpkg-shlibdeps -O "$T/root/usr/bin/vigil" 2>/dev/null | sed -n 's/^shlibs:Depends=//p' |
    tr ',' '\n' | sed 's/^ *//; s/ .*//')
missing=""
for p in $linked; do echo "$deps" | grep -qx "$p" || missing="$missing $p"; done
check "dpkg-shlibdeps finds the libraries the binary links (libyaml-0-2 among them)" sh -c "echo '$linked' | grep -qx libyaml-0-2"
is "every package dpkg-shlibdeps computes is a dependency" "$missing" ""
# what it loads with dlopen by name (the controller's libmicrohttpd, the clients' libcurl…)
missing=""
for so in $(grep -rhoE 'dlopen\("lib[^"]+"' src | sed 's/dlopen("//; s/"$//' | sort -u); do
    p=$(dpkg -S "*/$so" 2>/dev/null | head -1 | sed 's/:.*//')
    if [ -z "$p" ]; then missing="$missing $so(no package)"; else echo "$deps" | grep -qx "$p" || missing="$missing $p"; fi
done
is "every library vigil loads with dlopen is a dependency" "$missing" ""
check "munged, which the units' default --auth munge asks, is a dependency" sh -c "echo '$deps' | grep -qx munge"
check "the binary is /usr/bin/vigil" test -x "$T/root/usr/bin/vigil"
is "the unpacked binary finds its data in /usr/share/vigil" \
    "$(env -u VIGIL_DATA "$T/root/usr/bin/vigil" version --json | jq -r .data_dir)" "$T/root/usr/share/vigil"
env -u VIGIL_DATA "$T/root/usr/bin/vigil" scan --json tests/fixtures/logs/fallen-off-bus.log >"$T/scan.json" 2>/dev/null
check "the unpacked binary classifies with the bundled catalog" sh -c "jq -se '[.[] | select(.kind == \"fallen-off-bus\" and .action == \"reboot\")] | length >= 1' '$T/scan.json' >/dev/null"
check "the systemd units run /usr/bin/vigil" sh -c "grep -q '^ExecStart=/usr/bin/vigil agent' '$T/root/lib/systemd/system/vigil-agent.service' && grep -q '^ExecStart=/usr/bin/vigil serve' '$T/root/lib/systemd/system/vigil-serve.service'"
check "the controller's unit runs as vigil with a 0700 state directory" sh -c "grep -qx 'User=vigil' '$T/root/lib/systemd/system/vigil-serve.service' && grep -qx 'Group=vigil' '$T/root/lib/systemd/system/vigil-serve.service' && grep -qx 'StateDirectoryMode=0700' '$T/root/lib/systemd/system/vigil-serve.service'"
check "the controller's unit documents itself with the controller doc, which is packaged" sh -c "grep -qx 'Documentation=file:/usr/share/doc/vigil/controller.md' '$T/root/lib/systemd/system/vigil-serve.service'"
check "the agent (root) keeps its spool out of vigil's directory" sh -c "grep -qx 'StateDirectory=vigil-agent' '$T/root/lib/systemd/system/vigil-agent.service' && grep -q -- '--spool /var/lib/vigil-agent/agent.spool' '$T/root/lib/systemd/system/vigil-agent.service' && ! grep -q '^User=' '$T/root/lib/systemd/system/vigil-agent.service'"
check "the maintainer scripts are executable and adduser is a dependency" sh -c "dpkg-deb -I '$deb' postinst | grep -q 'adduser --system --group' && dpkg-deb -I '$deb' postrm | grep -q purge && dpkg-deb --field '$deb' Depends | grep -qw adduser"
check "the docs are in /usr/share/doc/vigil" test -s "$T/root/usr/share/doc/vigil/controller.md"
man1=$T/root/usr/share/man/man1/vigil.1.gz
check "the man page renders without a warning (man -l)" sh -c "MANWIDTH=80 man --warnings -l '$man1' 2>&1 >'$T/man.txt' | grep -q . && exit 1; test -s '$T/man.txt'"
is "the man page has the sections of a manual page" "$(zcat "$man1" | sed -n 's/^\.SH //p' | tr '\n' ' ')" \
    "NAME SYNOPSIS DESCRIPTION OPTIONS COMMANDS EXIT STATUS ENVIRONMENT FILES EXAMPLES SEE ALSO "
nodesc=""
for c in $("$VIGIL" help | sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p'); do
    zcat "$man1" | sed -n '/^\.SH COMMANDS/,/^\.SH EXIT/p' | grep -q "^\.B $c\( \|$\)" || nodesc="$nodesc $c"
done
is "the man page describes every command" "$nodesc" ""
check "the man page is not the commands' --help put end to end" sh -c "! zcat '$man1' | grep -q 'usage: vigil'"
is "the man page carries the package's version" "$(zcat "$man1" | sed -n 's/^\.TH VIGIL 1 [0-9-]* "\(vigil [^"]*\)".*/\1/p')" \
    "vigil $(dpkg-deb --field "$deb" Version)"
check "/etc/default files and the site policy are conffiles" sh -c "dpkg-deb -I '$deb' conffiles | grep -qx /etc/default/vigil-agent && dpkg-deb -I '$deb' conffiles | grep -qx /etc/vigil/policy.tsv"
if command -v lintian >/dev/null; then
    lintian -I --tag-display-limit 0 "$deb" >"$T/lintian.txt" 2>&1
    is "lintian: no error" "$(grep -c '^E:' "$T/lintian.txt")" 0
    is "lintian: nothing about the man page or the dependencies" \
        "$(grep -E '^[EWI]: .*(manpage|groff|man page|depends|shlib)' "$T/lintian.txt")" ""
else
    skip "lintian is not installed"
fi
# installed for real, run from its path, removed cleanly
if [ "$(id -u)" = 0 ] && ! dpkg -s vigil >/dev/null 2>&1; then
    had_user=$(getent passwd vigil)
    dpkg -i "$deb" >"$T/install.log" 2>&1
    is "dpkg -i installs it" "$?" 0
    check "postinst says the units are not enabled, and how to enable them" sh -c "grep -q 'vigil-agent.service and vigil-serve.service are installed but not enabled' '$T/install.log' && grep -q 'systemctl enable --now vigil-agent' '$T/install.log' && grep -q 'systemctl enable --now vigil-serve' '$T/install.log'"
    pw=$(getent passwd vigil)
    if [ -n "$had_user" ]; then
        is "postinst keeps the vigil user that was there" "$pw" "$had_user"
    else
        case "$pw" in vigil:*:/var/lib/vigil:/usr/sbin/nologin) ok "postinst made the system user vigil ($pw)" ;; *) nok "getent passwd vigil: '$pw'" ;; esac
        check "the user is a system user with its own group" sh -c "[ \"\$(id -u vigil)\" -lt 1000 ] && [ \"\$(id -gn vigil)\" = vigil ]"
    fi
    is "/var/lib/vigil is vigil's, mode 700" "$(stat -c '%U:%G %a' /var/lib/vigil 2>&1)" "vigil:vigil 700"
    # the controller as vigil, from the installed path, with its default store
    runuser -u vigil -- env -u VIGIL_DATA /usr/bin/vigil serve --listen 127.0.0.1:0 --auth none --dry-run \
        --port-file /var/lib/vigil/port >"$T/serve.log" 2>&1 &
    sp=$!
    wait_for 'test -s /var/lib/vigil/port'
    port=$(cat /var/lib/vigil/port 2>/dev/null)
    is "serve as vigil answers /healthz" "$(curl -s "http://127.0.0.1:$port/healthz")" ok
    kill "$sp" 2>/dev/null; wait "$sp" 2>/dev/null
    is "serve as vigil wrote its default store, owned by vigil" "$(stat -c %U /var/lib/vigil/incidents.db 2>&1)" vigil
    is "the installed vigil runs" "$(env -u VIGIL_DATA /usr/bin/vigil version --json | jq -r .data_dir)" /usr/share/vigil
    env -u VIGIL_DATA /usr/bin/vigil status --json >"$T/status.json" 2>/dev/null
    check "the installed vigil status answers" sh -c "jq -e '.items | length > 5' '$T/status.json' >/dev/null"
    if command -v systemd-analyze >/dev/null; then
        systemd-analyze verify /lib/systemd/system/vigil-agent.service /lib/systemd/system/vigil-serve.service >"$T/verify.txt" 2>&1
        check "systemd-analyze verify: no error on the units" sh -c "! grep -qi 'error\|failed' '$T/verify.txt'"
    else
        skip "systemd-analyze is not installed"
    fi
    dpkg -P vigil >"$T/purge.log" 2>&1
    is "dpkg -P removes it" "$?" 0
    check "nothing left: binary, data, conffiles, state" sh -c "[ ! -e /usr/bin/vigil ] && [ ! -e /usr/share/vigil ] && [ ! -e /etc/default/vigil-agent ] && [ ! -e /etc/vigil/policy.tsv ] && [ ! -e /var/lib/vigil ]"
    # Debian leaves system users in place on purge (postrm)
    check "the purge leaves the vigil user, as Debian does" sh -c "getent passwd vigil >/dev/null"
    # so it is installed again where the vigil user is already there
    dpkg -i "$deb" >"$T/install2.log" 2>&1
    is "installed again, the vigil user already there: dpkg -i installs it" "$?" 0
    is "… postinst keeps that user as it was" "$(getent passwd vigil)" "$pw"
    is "… /var/lib/vigil is vigil's, mode 700" "$(stat -c '%U:%G %a' /var/lib/vigil 2>&1)" "vigil:vigil 700"
    dpkg -P vigil >"$T/purge2.log" 2>&1
    is "… and dpkg -P removes it again" "$?" 0
    # the test removes the user it made, to leave this machine as it found it
    if [ -z "$had_user" ]; then userdel vigil 2>/dev/null; fi
else
    skip "installing needs root and no vigil package installed already"
fi
done_testing
