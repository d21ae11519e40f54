#!/usr/bin/env bash
# Builds sandprobe/sandprobe:VERSION, an image of sandprobe itself for the fleet audit
# (deploy/kubernetes/, docs/fleet.md), with no registry pull: the .deb is installed with apt-get
# into a throwaway overlay of a Debian 12 minbase root (scripts/debroot.sh: debootstrap from
# Debian's archive, cached), and that root is `docker import`ed.
#
# What the root holds beyond minbase, and why:
#   the .deb and its Depends (--no-install-recommends: no bubblewrap, no docker engine)
#   busybox-static   the userland of sandprobe/agent, which build-images.sh builds on the node
#   /usr/bin/docker  the docker CLI only, taken out of Debian's docker.io package (the rest of
#                    that package is the engine: the node's own dockerd is reached through its
#                    socket, never run in the image)
# Documentation, man pages and locales of the other packages, apt's lists and caches are left
# out. The image's command is the node audit (docker/node-audit.sh), as the DaemonSet runs it.
#
# usage: build-sandprobe-image.sh SANDPROBE_DEB [TAG]   (as root; TAG: sandprobe/sandprobe:VERSION)
# Prints the tag on stdout. Every image carries the label sandprobe.image=1.
# SANDPROBE_TEST_ROOT_CACHE / SANDPROBE_DEBIAN_MIRROR: as for scripts/debroot.sh.
set -euo pipefail

die() { echo "build-sandprobe-image.sh: $*" >&2; exit 1; }
log() { echo "build-sandprobe-image.sh: $*" >&2; }

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: build-sandprobe-image.sh SANDPROBE_DEB [TAG]"
deb=$(readlink -f "$1")
[ -f "$deb" ] || die "no such .deb: $1"
[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, mounts in scripts/debroot.sh)"
command -v dpkg-deb >/dev/null || die "dpkg-deb not found (a Debian machine is assumed)"
version=$(dpkg-deb -f "$deb" Version) || die "dpkg-deb -f $deb Version failed: not a .deb?"
[ "$(dpkg-deb -f "$deb" Package)" = sandprobe ] || die "$deb is not the sandprobe package"
tag=${2:-sandprobe/sandprobe:$version}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# A checkout (docker/../scripts) and the package (share/sandprobe/docker/../scripts) alike.
debroot=$here/../scripts/debroot.sh
[ -x "$debroot" ] || die "scripts/debroot.sh not found beside this script ($debroot)"
command -v docker >/dev/null || die "docker CLI not found"
docker info >/dev/null 2>&1 || die "docker daemon unreachable (docker info failed)"

root=$("$debroot" base --variant minbase)
cache=${SANDPROBE_TEST_ROOT_CACHE:-/var/cache/sandprobe-test-root}/apt
mkdir -p "$cache/archives/partial" "$cache/lists/partial"
work=$(mktemp -d /var/tmp/sandprobe-image-build.XXXXXX)
# Not named sandprobe-*/ at the top: `sandprobe sweep` owns /var/tmp/sandprobe-<run id>.
trap 'rm -rf --one-file-system "$work"' EXIT
mkdir -p "$work/shared"
cp "$deb" "$work/shared/sandprobe.deb"

# Run inside the root. apt's lists and archives are bound from the cache, so they are not in the
# overlay the tar below packs.
cat > "$work/shared/in-root.sh" <<'INROOT'
set -eu
shared=$1
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "$shared/sandprobe.deb" busybox-static >/dev/null
# The docker CLI alone, out of Debian's docker.io (its Depends are the engine's).
cd /var/cache/apt/archives
apt-get download -qq docker.io
dpkg-deb --fsys-tarfile docker.io_*.deb | tar -x -C / ./usr/bin/docker
/usr/bin/docker --version >/dev/null
# What an image does not need: other packages' documentation, manuals, locales; apt's state
# beyond dpkg's own database.
find /usr/share/doc -mindepth 1 -maxdepth 1 ! -name sandprobe -exec rm -rf {} +
rm -rf /usr/share/man/?? /usr/share/man/??_* /usr/share/info /usr/share/locale/* /var/log/*.log \
       /var/cache/apt/*.bin \
       /var/cache/debconf/*-old /var/lib/dpkg/*-old /usr/sbin/policy-rc.d /.sandprobe-complete
find /usr/share/man -name '*.gz' ! -name 'sandprobe*' -delete
# The build machine's resolver is no business of the image (the engine binds its own).
: > /etc/resolv.conf
rmdir /.oldroot 2>/dev/null || true
# --one-file-system: /proc, /sys, /dev and the bound directories are other filesystems.
tar -C / --one-file-system --numeric-owner -cf "$shared/rootfs.tar" .
INROOT

start=$(date +%s)
"$debroot" run "$root" --bind "$work/shared" \
  --bind "$cache/archives:/var/cache/apt/archives" \
  --bind "$cache/lists:/var/lib/apt/lists" \
  -- bash "$work/shared/in-root.sh" "$work/shared" >&2 || die "installing into the root failed (output above)"
log "root made in $(( $(date +%s) - start )) s"

# The image's configuration: docker import takes Dockerfile instructions with --change.
previous=$(docker image inspect --format '{{.Id}}' "$tag" 2>/dev/null || true)
docker import \
  --change 'LABEL sandprobe.image=1' \
  --change "LABEL org.opencontainers.image.version=$version" \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8' \
  --change 'ENTRYPOINT ["/usr/share/sandprobe/docker/node-audit.sh"]' \
  --change 'CMD ["docker-hardened"]' \
  --message "sandprobe $version: $(basename "$deb") on Debian 12 minbase" \
  "$work/shared/rootfs.tar" "$tag" >/dev/null || die "docker import $tag failed"
# The image this tag named before is nothing's now (a running container keeps it: then it stays).
current=$(docker image inspect --format '{{.Id}}' "$tag")
if [ -n "$previous" ] && [ "$previous" != "$current" ]; then
  docker image rm "$previous" >/dev/null 2>&1 || log "the previous $tag ($previous) is still in use; left"
fi
log "$tag: $(docker image inspect --format '{{.Size}}' "$tag") bytes"
echo "$tag"
