#!/bin/sh
# mkdeb.sh — `make deb`: a Debian package of vigil built from this tree with
# dpkg-deb (no debhelper needed): /usr/bin/vigil, the bundled data in
# /usr/share/vigil, the docs, and the agent and controller as systemd units
# (disabled until the operator enables them).  Prints the package's path.
set -eu
cd "$(dirname "$0")/.."
VERSION=$(sed -n 's/^#define VIGIL_VERSION "\(.*\)"/\1/p' src/cmd/version.c)
ARCH=$(dpkg --print-architecture)
ROOT=build/deb/vigil_${VERSION}_$ARCH
rm -rf "$ROOT"
install -D -m 0755 build/vigil "$ROOT/usr/bin/vigil"
mkdir -p "$ROOT/usr/share/vigil" "$ROOT/usr/share/doc/vigil" "$ROOT/lib/systemd/system" "$ROOT/DEBIAN"
cp -r data/. "$ROOT/usr/share/vigil/"
cp README.md docs/*.md "$ROOT/usr/share/doc/vigil/"
for u in vigil-agent vigil-serve; do
    sed -e 's|/usr/local/bin/vigil|/usr/bin/vigil|g' -e 's|/usr/local/share/doc/vigil|/usr/share/doc/vigil|g' \
        "dist/$u.service" >"$ROOT/lib/systemd/system/$u.service"
done
SIZE=$(du -sk "$ROOT" | cut -f1)
cat >"$ROOT/DEBIAN/control" <<CONTROL
Package: vigil
Version: $VERSION
Architecture: $ARCH
Maintainer: vigil developers <vigil@localhost>
Installed-Size: $SIZE
Depends: libc6, libjansson4, libsqlite3-0, libmicrohttpd12, libmunge2, zlib1g
Recommends: munge, libcurl4
Suggests: slurm-client
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
