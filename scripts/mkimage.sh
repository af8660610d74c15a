#!/bin/sh
# mkimage.sh — `make image`: vigil's container image, an OCI archive built
# from Debian packages only, no base image pulled: mmdebstrap makes a
# minimal Debian 12 root (the Essential packages) with vigil's own .deb
# (`make deb`) and what it loads at run time (libcurl for the Kubernetes
# API, munge and slurm-client for Slurm, librocm-smi64 for AMD GPUs,
# ca-certificates), from the apt sources this machine uses
# (/etc/apt/sources.list*); umoci turns it into an image whose entrypoint is
# vigil (`docker run IMAGE version`, default `status`), labelled with its
# version, revision and source (org.opencontainers.image.*, as config labels
# and manifest annotations); skopeo writes the archive.  Prints its path:
# build/vigil_VERSION_ARCH.oci.tar, tag vigil:VERSION
# (`skopeo inspect oci-archive:PATH`).  As root (mmdebstrap and umoci unpack
# own the files they write).  VIGIL_IMAGE_SOURCE names the source (default:
# the git remote "origin", if there is one).
set -eu
cd "$(dirname "$0")/.."
VERSION=$(sed -n 's/^#define VIGIL_VERSION "\(.*\)"/\1/p' src/cmd/version.c)
ARCH=$(dpkg --print-architecture)
DEB=build/vigil_${VERSION}_$ARCH.deb
OUT=build/image
ARCHIVE=build/vigil_${VERSION}_$ARCH.oci.tar
[ -f "$DEB" ] || { echo "mkimage: $DEB is missing (make deb)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "mkimage: run as root (mmdebstrap and umoci unpack write files owned by root)" >&2; exit 2; }

# the apt sources this machine's apt uses, as they are
set --
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -s "$f" ] && set -- "$@" "$f"
done
[ $# -gt 0 ] || { echo "mkimage: no apt sources on this machine (/etc/apt/sources.list*)" >&2; exit 2; }

export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}"
CREATED=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
REVISION=$(git rev-parse HEAD 2>/dev/null || echo unknown)
[ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] && REVISION="$REVISION-modified"
SOURCE=${VIGIL_IMAGE_SOURCE:-$(git remote get-url origin 2>/dev/null || true)}

rm -rf "$OUT" "$ARCHIVE"
mkdir -p "$OUT"
umoci init --layout "$OUT/oci"
umoci new --image "$OUT/oci:$VERSION"
umoci unpack --image "$OUT/oci:$VERSION" "$OUT/bundle"
rmdir "$OUT/bundle/rootfs"
# Essential only, then vigil and its run-time libraries; no documentation or
# manual pages; the build machine's apt sources are not left in the image.
mmdebstrap --quiet --variant=essential \
    --include=libcurl4,ca-certificates,munge,slurm-client,librocm-smi64-1 \
    --include="$PWD/$DEB" --hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --customize-hook='rm -rf "$1"/etc/apt/sources.list "$1"/etc/apt/sources.list.d' \
    bookworm "$OUT/bundle/rootfs" "$@"
set -- --config.label "org.opencontainers.image.title=vigil" \
    --config.label "org.opencontainers.image.version=$VERSION" \
    --config.label "org.opencontainers.image.revision=$REVISION" \
    --config.label "org.opencontainers.image.created=$CREATED" \
    --config.label "org.opencontainers.image.description=vigil: GPU-cluster reliability (node agent, controller, audit, drills)" \
    --manifest.annotation "org.opencontainers.image.title=vigil" \
    --manifest.annotation "org.opencontainers.image.version=$VERSION" \
    --manifest.annotation "org.opencontainers.image.revision=$REVISION" \
    --manifest.annotation "org.opencontainers.image.created=$CREATED"
[ -n "$SOURCE" ] && set -- "$@" --config.label "org.opencontainers.image.source=$SOURCE" \
    --manifest.annotation "org.opencontainers.image.source=$SOURCE"
umoci repack --image "$OUT/oci:$VERSION" --history.created "$CREATED" --history.created_by "mmdebstrap bookworm + $DEB" \
    "$OUT/bundle"
umoci config --image "$OUT/oci:$VERSION" --created "$CREATED" --history.created "$CREATED" \
    --architecture "$ARCH" --os linux --config.entrypoint /usr/bin/vigil --config.cmd status \
    --config.env PATH=/usr/sbin:/usr/bin:/sbin:/bin --config.workingdir /var/lib/vigil "$@"
umoci gc --layout "$OUT/oci"
skopeo copy --quiet "oci:$OUT/oci:$VERSION" "oci-archive:$ARCHIVE:vigil:$VERSION"
rm -rf "$OUT/bundle"
echo "$ARCHIVE"
