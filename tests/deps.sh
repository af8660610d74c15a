#!/bin/sh
# Installs the Debian packages that building, testing and the lab need,
# when any is missing.  Used by `make check`, `make bench`, `make demo` and .ci/run.
PKGS="gcc make pkg-config libc6-dev libjansson-dev libsqlite3-dev libcurl4-openssl-dev
libmicrohttpd-dev libmunge-dev libcmocka-dev munge slurmctld slurmd slurm-client
clang libclang-rt-14-dev rpm procps iproute2 util-linux sqlite3 curl ca-certificates jq chromium"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
    echo "vigil: missing Debian packages:$missing — run as root, or: apt-get install -y --no-install-recommends$missing" >&2
    exit 1
fi
echo "vigil: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends $missing >/dev/null || {
    echo "vigil: apt-get install failed for:$missing" >&2; exit 1; }
