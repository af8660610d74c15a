#!/bin/sh
# image.sh — `make image`: the OCI archive is built from Debian packages
# (mmdebstrap from this machine's apt sources, vigil's .deb, umoci, skopeo;
# no base image), skopeo inspect reads its labels (version, revision,
# created) and entrypoint, and the image runs as a container runtime would
# run it: unpacked with umoci, its own entrypoint and arguments from the
# runtime config, in a chroot of its root with fresh mount and PID
# namespaces (podman cannot run here).  vigil version and vigil status run
# there; vigil serve starts and answers /healthz (libmicrohttpd, SQLite), and
# the libraries vigil loads at run time are in the image (libcurl, MUNGE and
# Slurm's client; Debian's rocm_smi for AMD nodes).  Builds once: about 1.5
# minutes, most of it mmdebstrap fetching packages.  As root.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/vigil-image.XXXXXX")
SERVE_PID=
cleanup() {
    [ -n "$SERVE_PID" ] && kill -9 "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null
    rm -rf "$W"
}
trap cleanup EXIT
[ "$(id -u)" = 0 ] || { skip "make image needs root (mmdebstrap, umoci unpack)"; exit 0; }
for t in mmdebstrap umoci skopeo unshare; do
    command -v "$t" >/dev/null || { nok "$t is installed (tests/deps.sh installs it)"; exit 1; }
done

t0=$(date +%s)
(cd "$ROOT" && make --no-print-directory image) >"$W/make.log" 2>&1
rc=$?
echo "# make image: $(( $(date +%s) - t0 )) s"
is "make image: exit 0" "$rc" 0
[ "$rc" = 0 ] || { tail -20 "$W/make.log" | sed 's/^/# /'; exit 1; }
VERSION=$(sed -n 's/^#define VIGIL_VERSION "\(.*\)"/\1/p' "$ROOT/src/cmd/version.c")
A=$ROOT/build/vigil_${VERSION}_$(dpkg --print-architecture).oci.tar
is "… prints the archive's path" "$(tail -1 "$W/make.log")" "${A#$ROOT/}"
echo "# $(du -h "$A" | cut -f1) $A"

# ---- skopeo reads it
skopeo inspect "oci-archive:$A" >"$W/inspect.json" 2>"$W/err"
is "skopeo inspect oci-archive: exit 0" "$? $(cat "$W/err")" "0 "
lab() { jq -r --arg k "org.opencontainers.image.$1" '.Labels[$k] // "none"' "$W/inspect.json"; }
is "labelled with its version" "$(lab version)" "$VERSION"
is "… its revision, the commit it was built from" "$(lab revision | cut -c1-40)" "$(git -C "$ROOT" rev-parse HEAD)"
is "… and when (the commit's time)" "$(lab created)" "$(date -u -d "@$(git -C "$ROOT" log -1 --format=%ct)" +%Y-%m-%dT%H:%M:%SZ)"
is "… linux/amd64 or this machine's" "$(jq -r '"\(.Os)/\(.Architecture)"' "$W/inspect.json")" "linux/$(dpkg --print-architecture)"
skopeo inspect --raw "oci-archive:$A" >"$W/manifest.json"
is "the manifest carries the same annotations" \
    "$(jq -r '.annotations["org.opencontainers.image.version"] + " " + (.annotations["org.opencontainers.image.revision"] | .[0:40])' "$W/manifest.json")" \
    "$VERSION $(git -C "$ROOT" rev-parse HEAD)"
is "one layer, no base image" "$(jq '.layers | length' "$W/manifest.json")" 1
skopeo inspect --config "oci-archive:$A" >"$W/config.json"
is "entrypoint vigil, default command status" "$(jq -c '[.config.Entrypoint, .config.Cmd]' "$W/config.json")" '[["/usr/bin/vigil"],["status"]]'

# ---- run it as a runtime would: its entrypoint in a chroot of its root, fresh mount and PID namespaces
skopeo copy --quiet "oci-archive:$A" "oci:$W/oci:vigil" && umoci unpack --image "$W/oci:vigil" "$W/bundle" >/dev/null 2>&1
is "umoci unpack: a runtime bundle" "$? $(jq -r '.process.args | join(" ")' "$W/bundle/config.json")" "0 /usr/bin/vigil status"
R=$W/bundle/rootfs
run() { # [args…] — the image's entrypoint with these arguments (none: its default command), as the bundle says;
         # with RUN_EXEC=exec (in a subshell) the caller's process becomes unshare, whose end ends the container
    [ $# -gt 0 ] || set -- $(jq -r '.process.args[1:][]' "$W/bundle/config.json")
    $RUN_EXEC unshare --kill-child --mount --pid --fork --mount-proc="$R/proc" \
        env -i $(jq -r '.process.env[]' "$W/bundle/config.json") \
        chroot "$R" "$(jq -r '.process.args[0]' "$W/bundle/config.json")" "$@"
}
out=$(run version)
is "docker run IMAGE version: vigil's version, its data from the package" "$? $out" "0 vigil $VERSION (data: /usr/share/vigil)"
run >"$W/status" 2>&1   # the default command
rc=$?
check "docker run IMAGE (status): it runs, each line a check (exit 0 or 1: this machine has no GPU)" \
    sh -c "[ $rc -le 1 ] && grep -q 'advisories .* advisories' '$W/status' && grep -q 'scheduler .*k8s' '$W/status'"
sed 's/^/#   /' "$W/status" | head -12
for lib in libcurl.so.4 libmicrohttpd.so.12 libmunge.so.2 libyaml-0.so.2; do
    check "… $lib in the image (vigil loads it)" sh -c "ls '$R'/usr/lib/*-linux-gnu/$lib >/dev/null 2>&1"
done
check "… Debian's rocm_smi for AMD nodes (/usr/lib/librocm_smi64.so.1)" test -e "$R/usr/lib/librocm_smi64.so.1"
for bin in munged scontrol; do check "… $bin in the image (Slurm on Kubernetes)" test -x "$R/usr/sbin/$bin" -o -x "$R/usr/bin/$bin"; done
check "… no apt sources of the machine it was built on" test ! -e "$R/etc/apt/sources.list.d"
echo "secret-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')" >"$R/tmp/secret"; chmod 600 "$R/tmp/secret"
(RUN_EXEC=exec run serve --listen 127.0.0.1:0 --port-file /tmp/port --db /var/lib/vigil/incidents.db --auth token \
    --secret-file /tmp/secret) >"$W/serve.log" 2>&1 &
SERVE_PID=$!   # unshare: killing it kills the controller in the container
i=0; while [ ! -s "$R/tmp/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
is "vigil serve starts in the image and answers /healthz" \
    "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$(cat "$R/tmp/port" 2>/dev/null)/healthz")" 200
kill -9 "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null; SERVE_PID=   # unshare --fork ignores SIGTERM; its SIGKILL kills the container (--kill-child)
in_image() { n=0; for p in /proc/[0-9]*; do [ "$(readlink "$p/root" 2>/dev/null)" = "$R" ] && n=$((n + 1)); done; echo $n; }
check "stopped: no process of the container is left" wait_for '[ "$(in_image)" = 0 ]' 10
done_testing
