#!/bin/sh
# mkdeb.sh — `make deb`: a Debian package of vigil built from this tree with
# dpkg-deb (no debhelper needed): /usr/bin/vigil (stripped), the bundled data
# in /usr/share/vigil, the docs, the man page (docs/vigil.1), the agent and
# controller as systemd units (disabled until the operator enables them: the
# postinst says so) with their settings in /etc/default as conffiles, and the
# maintainer scripts that make the `vigil` system user the controller runs as.
# Depends: the libraries the binary links, as dpkg-shlibdeps (dpkg-dev)
# computes them, and what it loads or runs but does not link (DLOPENED, RUNS).
# Prints the package's path.
set -eu
cd "$(dirname "$0")/.."
VERSION=$(sed -n 's/^#define VIGIL_VERSION "\(.*\)"/\1/p' src/cmd/version.c)
ARCH=$(dpkg --print-architecture)
# the package is staged as debian/vigil of a source tree of its own, the layout
# dpkg-shlibdeps reads (it also needs that tree's debian/control)
SRC=build/deb
ROOT=$SRC/debian/vigil
# libraries vigil loads with dlopen (src/util/*so.c), by package: the controller's
# HTTP server (libmicrohttpd), the agent's and the clients' HTTP (libcurl), the TLS
# key check (GnuTLS), a store on PostgreSQL (libpq)
DLOPENED="libmicrohttpd12, libcurl4, libgnutls30, libpq5"
# programs the default configuration runs: munged, which --auth munge (the units'
# default) asks for every credential
RUNS="munge"
rm -rf "$ROOT"
install -D -m 0755 build/vigil "$ROOT/usr/bin/vigil"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$ROOT/usr/bin/vigil"
MAINT="vigil developers <maintainers@vigil.dev>"
mkdir -p "$ROOT/usr/share/vigil" "$ROOT/usr/share/doc/vigil" "$ROOT/usr/share/man/man1" "$ROOT/lib/systemd/system" \
    "$ROOT/DEBIAN"
cp -r data/. "$ROOT/usr/share/vigil/"
cp README.md docs/*.md "$ROOT/usr/share/doc/vigil/"
# the changelog of a native package, and the copyright file
{
    printf 'vigil (%s) unstable; urgency=medium\n\n' "$VERSION"
    git log -n 20 --format='  * %s' 2>/dev/null | cut -c1-78 || echo "  * Built from a source tree without history."
    printf '\n -- %s  %s\n' "$MAINT" "$(date -R -u -d @"${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")"
} | gzip -9n >"$ROOT/usr/share/doc/vigil/changelog.gz"
cat >"$ROOT/usr/share/doc/vigil/copyright" <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: vigil

Files: *
Copyright: the vigil developers
License: other
 No license has been chosen for vigil yet; ask the developers before
 redistributing.

Files: usr/share/vigil/sources/*
Copyright: the publishers named in usr/share/vigil/sources/SOURCES
License: other
 Published advisory records (NVIDIA CSAF bulletins, GitHub advisory database
 and Ubuntu OSV records), copied unchanged under their publishers' terms.
COPYRIGHT
# the man page, written by hand (docs/vigil.1), with this build's version and date
sed "s/^\.TH VIGIL 1 .*/.TH VIGIL 1 $(date -u -d @"${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}" +%Y-%m-%d) \"vigil $VERSION\" \"User Commands\"/" \
    docs/vigil.1 | gzip -9n >"$ROOT/usr/share/man/man1/vigil.1.gz"
# settings the units read, kept across upgrades
mkdir -p "$ROOT/etc/default"
cat >"$ROOT/etc/default/vigil-agent" <<'AGENT'
# Settings of vigil-agent.service (docs: /usr/share/doc/vigil/agent.md).
# The controller's URL, e.g. http://head-node:8470; empty: the agent acts alone.
VIGIL_CONTROLLER=
VIGIL_AGENT_OPTS="--auth munge"
AGENT
cat >"$ROOT/etc/default/vigil-serve" <<'SERVE'
# Settings of vigil-serve.service (docs: /usr/share/doc/vigil/controller.md).
# The controller runs as the system user vigil (state in /var/lib/vigil): a
# --read-token-file must be owned by vigil, mode 0600, and Slurm must let vigil
# drain nodes and requeue jobs (controller.md, "Running as the vigil user").
VIGIL_SERVE_OPTS="--auth munge"
SERVE
# the site policy every verdict goes through (scan, check, the agent): empty
# of rules, so the bundled catalog decides until the operator adds one
mkdir -p "$ROOT/etc/vigil"
cat >"$ROOT/etc/vigil/policy.tsv" <<'POLICY'
# vigil site policy (/usr/share/doc/vigil/catalog.md, "Site policy"): a line
# overrides the fault catalog's action for a signal everywhere — vigil scan,
# vigil check and the agent.  Examples:
#   xid 63 action=ignore
#   kind ib-down action=reboot
POLICY
printf '/etc/default/vigil-agent\n/etc/default/vigil-serve\n/etc/vigil/policy.tsv\n' >"$ROOT/DEBIAN/conffiles"
for u in vigil-agent vigil-serve; do
    sed -e 's|/usr/local/bin/vigil|/usr/bin/vigil|g' -e 's|/usr/local/share/doc/vigil|/usr/share/doc/vigil|g' \
        "dist/$u.service" >"$ROOT/lib/systemd/system/$u.service"
done
# the system user the controller runs as, and its state directory
cat >"$ROOT/DEBIAN/postinst" <<'POSTINST'
#!/bin/sh
# postinst — the system user and group vigil (vigil-serve.service runs as it)
# and its state directory /var/lib/vigil, 0700, unless the administrator set
# other owners with dpkg-statoverride.
set -e
if [ "$1" = configure ] && [ -z "$2" ]; then
    # a first install: the units are there, not enabled (the operator picks which node runs which)
    cat <<'MSG'
vigil: the units vigil-agent.service and vigil-serve.service are installed but not enabled.
vigil: set the controller's URL in /etc/default/vigil-agent, then on every node:
vigil:     systemctl enable --now vigil-agent
vigil: and once per cluster, on the node that runs the controller (/etc/default/vigil-serve):
vigil:     systemctl enable --now vigil-serve
vigil: see /usr/share/doc/vigil/agent.md and controller.md.
MSG
fi
if [ "$1" = configure ]; then
    if ! getent passwd vigil >/dev/null; then
        adduser --system --group --quiet --home /var/lib/vigil --no-create-home \
            --shell /usr/sbin/nologin --gecos "vigil controller" vigil
    fi
    mkdir -p /var/lib/vigil
    if ! dpkg-statoverride --list /var/lib/vigil >/dev/null 2>&1; then
        chown vigil:vigil /var/lib/vigil
        chmod 0700 /var/lib/vigil
    fi
fi
exit 0
POSTINST
cat >"$ROOT/DEBIAN/postrm" <<'POSTRM'
#!/bin/sh
# postrm — on purge, the state of the controller (incidents.db) and of the
# agent (its spool).  The vigil user and group are left in place, as Debian
# does for system users: files elsewhere may still carry their ids, and a
# reused id would hand those files to another account.
set -e
if [ "$1" = purge ]; then
    rm -rf /var/lib/vigil /var/lib/vigil-agent
fi
exit 0
POSTRM
chmod 0755 "$ROOT/DEBIAN/postinst" "$ROOT/DEBIAN/postrm"
# what the binary links, computed (libc6, libjansson4, libyaml-0-2 ... with their versions)
printf 'Source: vigil\n\nPackage: vigil\nArchitecture: any\n' >"$SRC/debian/control"
SHLIBS=$(cd "$SRC" && dpkg-shlibdeps -O debian/vigil/usr/bin/vigil | sed -n 's/^shlibs:Depends=//p')
[ -n "$SHLIBS" ] || { echo "mkdeb: dpkg-shlibdeps found no library" >&2; exit 1; }
SIZE=$(du -sk "$ROOT" | cut -f1)
cat >"$ROOT/DEBIAN/control" <<CONTROL
Package: vigil
Version: $VERSION
Architecture: $ARCH
Maintainer: $MAINT
Installed-Size: $SIZE
Depends: adduser, $SHLIBS, $DLOPENED, $RUNS
Recommends: slurm-client
Suggests: ipmitool, openssh-client
Section: admin
Priority: optional
Description: keeps GPU training clusters running, and proves it
 vigil audits a GPU node's software against published CVEs, checks tenant
 isolation, detects failed GPUs and nodes (kernel log, NVML, heartbeats),
 isolates them through Slurm with hot spares and requeue, and measures the
 whole recovery with a timed drill and a scorecard.
CONTROL
dpkg-deb --root-owner-group --build "$ROOT" "build/vigil_${VERSION}_$ARCH.deb" >/dev/null
echo "build/vigil_${VERSION}_$ARCH.deb"
