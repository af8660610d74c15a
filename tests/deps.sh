#!/bin/sh
# Installs the Debian packages that are missing: `tests/deps.sh` for building
# and the tests (`make check`, `make bench`, .ci/run), `tests/deps.sh demo`
# for building and running the lab only (`make demo`: no test tools, no browser).
RUN="gcc make pkg-config libc6-dev libjansson-dev libsqlite3-dev libcurl4-openssl-dev zlib1g-dev
libmicrohttpd-dev libgnutls28-dev libyaml-dev libmunge-dev libpq-dev munge slurmctld slurmd slurm-client procps util-linux curl ca-certificates jq"
TEST="openssl libcmocka-dev clang libclang-rt-14-dev rpm iproute2 sqlite3 chromium lintian dpkg-dev man-db python3 prometheus faketime
mmdebstrap umoci skopeo librocm-smi64-1 libibverbs1 postgresql"
PKGS="$RUN"
[ "${1:-}" = demo ] || PKGS="$RUN $TEST"
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
if ! { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends $missing >/dev/null; }; then
    echo "vigil: apt-get install failed for:$missing" >&2
    exit 1
fi
exit 0
