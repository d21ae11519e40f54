#!/usr/bin/env bash
# Builds the two images sandbox profiles use:
#   sandprobe/probe:latest  FROM scratch + the static probe at /sandprobe-probe
#   sandprobe/agent:latest  FROM scratch + busybox-static, users root/agent, /workspace
# Usage: build-images.sh [PROBE_BINARY]
#   Without PROBE_BINARY the probe is found beside this script: the package's
#   /usr/lib/sandprobe/sandprobe-probe for /usr/share/sandprobe/docker/build-images.sh, the build
#   tree's build/probe/sandprobe-probe for docker/build-images.sh in a checkout.
#
# Each image is built from its own temporary context holding only what it copies, with the
# legacy builder (DOCKER_BUILDKIT=0: Debian's docker.io ships no buildx). Layer caching makes a
# rebuild with unchanged inputs a quick no-op; no registry is contacted (FROM scratch only).
# Every image carries the label sandprobe.image=1, so they can be listed and removed by label.
#
# SANDPROBE_IMAGE_CLI=podman builds the same images into rootful podman's own store instead
# (sandboxes/podman-*.json), from the same sources, with no docker on the machine: podman's
# built-in builder, its RUN steps under runc with cgroupfs and file events (no systemd or
# journald needed; the flags sandboxes/podman-hardened.json passes).
set -euo pipefail

die() { echo "build-images.sh: $*" >&2; exit 1; }

[ $# -le 1 ] || die "usage: build-images.sh [PROBE_BINARY]"
busybox=${SANDPROBE_BUSYBOX:-/bin/busybox}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ $# -eq 1 ]; then
  probe=$1
else
  # The installed layout first (cmake/Install.cmake), then a checkout's build tree.
  probe=""
  for candidate in "$here/../../../lib/sandprobe/sandprobe-probe" "$here/../build/probe/sandprobe-probe"; do
    if [ -f "$candidate" ]; then probe=$candidate; break; fi
  done
  [ -n "$probe" ] || die "no probe beside this script (looked for ../../../lib/sandprobe/sandprobe-probe and ../build/probe/sandprobe-probe): pass its path"
fi

# Exit 0 when the ELF file has a PT_INTERP program header (a dynamic executable), 1 when not, 2
# when it is no 64-bit little-endian ELF file. Read with od (coreutils), not readelf: binutils
# is no dependency of the package.
has_interp() {
  local file=$1 magic phoff phentsize phnum i type
  magic=$(od -An -t x1 -N 6 "$file" | tr -d ' \n')
  [ "$magic" = 7f454c460201 ] || return 2
  phoff=$(od -An -t u8 -j 32 -N 8 "$file" | tr -d ' ')
  phentsize=$(od -An -t u2 -j 54 -N 2 "$file" | tr -d ' ')
  phnum=$(od -An -t u2 -j 56 -N 2 "$file" | tr -d ' ')
  for ((i = 0; i < phnum; i++)); do
    type=$(od -An -t u4 -j $((phoff + i * phentsize)) -N 4 "$file" | tr -d ' ')
    [ "$type" = 3 ] && return 0  # PT_INTERP
  done
  return 1
}

if [ ! -f "$probe" ] || [ ! -x "$probe" ]; then
  die "probe binary not found or not executable: $probe"
fi
[ -f "$busybox" ] || die "busybox not found: $busybox (apt-get install busybox-static)"
# The images have no loader or libc: a dynamic binary would fail only at run time, obscurely.
for bin in "$probe" "$busybox"; do
  rc=0; has_interp "$bin" || rc=$?
  case $rc in
    0) die "$bin is dynamically linked; FROM scratch images need a static binary (busybox: apt-get install busybox-static)" ;;
    2) die "$bin is no x86-64 ELF executable" ;;
  esac
done
case ${SANDPROBE_IMAGE_CLI:-docker} in
  docker)
    cli=(docker)
    build_cli=(env DOCKER_BUILDKIT=0 docker build)
    command -v docker >/dev/null || die "docker CLI not found (install docker: docker.io or docker-ce)"
    if ! err=$(docker info 2>&1 >/dev/null); then
      die "docker daemon unreachable (docker info failed): ${err##*$'\n'}"
    fi ;;
  podman)
    cli=(podman --runtime runc --cgroup-manager cgroupfs --events-backend file)
    build_cli=("${cli[@]}" build --runtime runc)
    command -v podman >/dev/null || die "podman not found (apt-get install podman runc)"
    if ! err=$("${cli[@]}" info 2>&1 >/dev/null); then
      die "podman info failed: ${err##*$'\n'}"
    fi ;;
  *) die "SANDPROBE_IMAGE_CLI=${SANDPROBE_IMAGE_CLI}: docker or podman" ;;
esac

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
  echo "build-images.sh: building $tag (${cli[0]})" >&2
  if ! log=$("${build_cli[@]}" --force-rm --label sandprobe.image=1 \
               -t "$tag" -f "$dockerfile" "$context" 2>&1); then
    printf '%s\n' "$log" >&2
    die "${cli[0]} build $tag failed (see output above)"
  fi
}

build sandprobe/probe:latest "$here/probe.Dockerfile" "$ctx/probe"
build sandprobe/agent:latest "$here/agent.Dockerfile" "$ctx/agent"
echo "build-images.sh: sandprobe/probe:latest and sandprobe/agent:latest are up to date" >&2

# sandprobe/tinyproxy-allowlist (sandboxes/docker-proxy-allowlist.json), when Debian's tinyproxy
# is installed (apt-get install tinyproxy-bin): the binary, the shared libraries and loader ldd
# names for it, and its allowlist configuration from beside this script.
tinyproxy=${SANDPROBE_TINYPROXY:-/usr/bin/tinyproxy}
if [ -x "$tinyproxy" ]; then
  root="$ctx/tinyproxy/root"
  mkdir -p "$root/usr/bin" "$root/etc/tinyproxy"
  cp "$tinyproxy" "$root/usr/bin/tinyproxy"
  for lib in $(ldd "$tinyproxy" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
  cp "$here/tinyproxy-allowlist.conf" "$root/etc/tinyproxy/tinyproxy.conf"
  cp "$here/tinyproxy-allowlist.filter" "$root/etc/tinyproxy/filter"
  build sandprobe/tinyproxy-allowlist:latest "$here/tinyproxy.Dockerfile" "$ctx/tinyproxy"
  echo "build-images.sh: sandprobe/tinyproxy-allowlist:latest is up to date" >&2
else
  echo "build-images.sh: no $tinyproxy (apt-get install tinyproxy-bin): sandprobe/tinyproxy-allowlist not built" >&2
fi
