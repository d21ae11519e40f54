#!/usr/bin/env bash
# Builds the two images sandbox profiles use:
#   sandprobe/probe:latest  FROM scratch + the static probe at /sandprobe-probe
#   sandprobe/agent:latest  FROM scratch + busybox-static, users root/agent, /workspace
# Usage: docker/build-images.sh PROBE_BINARY
#
# Each image is built from its own temporary context holding only what it copies, with the
# legacy builder (DOCKER_BUILDKIT=0: Debian's docker.io ships no buildx). Layer caching makes a
# rebuild with unchanged inputs a quick no-op; no registry is contacted (FROM scratch only).
# Every image carries the label sandprobe.image=1, so they can be listed and removed by label.
set -euo pipefail

die() { echo "build-images.sh: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: build-images.sh PROBE_BINARY"
probe=$1
busybox=${SANDPROBE_BUSYBOX:-/bin/busybox}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ ! -f "$probe" ] || [ ! -x "$probe" ]; then
  die "probe binary not found or not executable: $probe"
fi
[ -f "$busybox" ] || die "busybox not found: $busybox (apt-get install busybox-static)"
# The images have no loader or libc: a dynamic binary would fail only at run time, obscurely.
for bin in "$probe" "$busybox"; do
  if LC_ALL=C readelf -lW "$bin" 2>/dev/null | grep -q 'INTERP'; then
    die "$bin is dynamically linked; FROM scratch images need a static binary"
  fi
done
command -v docker >/dev/null || die "docker CLI not found (apt-get install docker.io)"
if ! err=$(docker info 2>&1 >/dev/null); then
  die "docker daemon unreachable (docker info failed): ${err##*$'\n'}"
fi

ctx=$(mktemp -d "${TMPDIR:-/tmp}/sandprobe-images.XXXXXX")
trap 'rm -rf "$ctx"' EXIT
mkdir "$ctx/probe" "$ctx/agent"
# Fresh copies get fresh mtimes; that is fine, the legacy builder's COPY cache keys on content.
cp "$probe" "$ctx/probe/sandprobe-probe"
chmod 0755 "$ctx/probe/sandprobe-probe"
cp "$busybox" "$ctx/agent/busybox"
chmod 0755 "$ctx/agent/busybox"

build() {  # build TAG DOCKERFILE CONTEXT
  local tag=$1 dockerfile=$2 context=$3 log
  echo "build-images.sh: building $tag" >&2
  if ! log=$(DOCKER_BUILDKIT=0 docker build --force-rm --label sandprobe.image=1 \
               -t "$tag" -f "$dockerfile" "$context" 2>&1); then
    printf '%s\n' "$log" >&2
    die "docker build $tag failed (see output above)"
  fi
}

build sandprobe/probe:latest "$here/probe.Dockerfile" "$ctx/probe"
build sandprobe/agent:latest "$here/agent.Dockerfile" "$ctx/agent"
echo "build-images.sh: sandprobe/probe:latest and sandprobe/agent:latest are up to date" >&2
