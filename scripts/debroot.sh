#!/usr/bin/env bash
# Throwaway Debian 12 roots for the tests and measurements that need "a clean machine": the .deb
# installed with apt-get, a cold scripts/run.sh, a build against another Boost. As root.
#
#   scripts/debroot.sh base [--variant minbase|default]
#       Prints the path of a cached pristine bookworm root, made once with debootstrap from the
#       Debian mirror this machine's apt uses (SANDPROBE_DEBIAN_MIRROR overrides it) under
#       /var/cache/sandprobe-test-root/ (SANDPROBE_TEST_ROOT_CACHE overrides it). Minutes the
#       first time, instant after. The root is never written to after it is made.
#   scripts/debroot.sh cached [--variant minbase|default]
#       Prints that path if the root is already made, else nothing and exit 1 (no debootstrap).
#   scripts/debroot.sh run BASE [--copy HOST:PATH]... [--bind HOST[:PATH]]... [--keep DIR] -- CMD...
#       Runs CMD as root in a copy-on-write overlay of BASE (the base stays pristine), in a mount
#       namespace of its own: /proc, /sys, /dev (with /dev/pts), the host's resolv.conf, the --bind
#       mounts (a socket or file, or a directory) and the --copy copies (cp -a into the overlay).
#       Every mount lives only in that namespace, so none outlives the command, whatever happens
#       to it; the overlay's upper directory is deleted afterwards unless --keep DIR names where
#       to leave it. The exit code is CMD's.
#       The overlay becomes the namespace's root by pivot_root, not chroot: the kernel refuses
#       user namespaces (bwrap) to a chrooted process. A policy-rc.d in the root refuses every
#       service start, so a package's postinst (docker.io's) starts no daemon from the root.
#
# No service is started in the root: processes it needs (a dockerd) are the host's, reached
# through a bound socket. Paths that a host daemon resolves (docker -v SRC:DST) must exist on the
# host at the same path: bind such a directory at its own path (--bind /var/tmp/x).
set -euo pipefail

die() { echo "debroot.sh: $*" >&2; exit 2; }
log() { echo "debroot.sh: $*" >&2; }

CACHE=${SANDPROBE_TEST_ROOT_CACHE:-/var/cache/sandprobe-test-root}
SUITE=bookworm

mirror() {
  if [ -n "${SANDPROBE_DEBIAN_MIRROR:-}" ]; then echo "$SANDPROBE_DEBIAN_MIRROR"; return; fi
  local uri
  uri=$(apt-get indextargets --format '$(RELEASE) $(REPO_URI)' 'Identifier: Packages' 2>/dev/null \
          | awk -v s="$SUITE" '$1 == s { print $2; exit }')
  echo "${uri:-http://deb.debian.org/debian/}"
}

parse_variant() {  # sets $variant from [--variant V]
  variant=minbase
  while [ $# -gt 0 ]; do
    case $1 in
      --variant) [ $# -ge 2 ] || die "--variant needs a value"; variant=$2; shift 2 ;;
      *) die "unknown argument: $1" ;;
    esac
  done
  case $variant in minbase|default) ;; *) die "--variant minbase|default, not $variant" ;; esac
}

cmd_cached() {
  parse_variant "$@"
  local root="$CACHE/$SUITE-$variant"
  [ -f "$root/.sandprobe-complete" ] || exit 1
  echo "$root"
}

cmd_base() {
  parse_variant "$@"
  local root="$CACHE/$SUITE-$variant"
  if [ -f "$root/.sandprobe-complete" ]; then echo "$root"; return; fi
  [ "$(id -u)" -eq 0 ] || die "making a root needs root (debootstrap)"
  command -v debootstrap >/dev/null || die "debootstrap not installed (apt-get install debootstrap)"
  mkdir -p "$CACHE"
  # Made beside its final path and renamed when complete: a debootstrap that died leaves no
  # half root that looks usable.
  local tmp
  tmp=$(mktemp -d "$CACHE/.making-$variant.XXXXXX")
  local args=()
  [ "$variant" = minbase ] && args+=(--variant=minbase)
  log "debootstrap $SUITE ($variant) from $(mirror) into $root (minutes, once)"
  if ! debootstrap "${args[@]}" "$SUITE" "$tmp" "$(mirror)" >"$tmp.log" 2>&1; then
    tail -n 20 "$tmp.log" >&2
    rm -rf --one-file-system "$tmp"
    die "debootstrap failed (log above)"
  fi
  # apt in the root reads the same archive areas a Debian 12 machine has.
  local uri
  uri=$(mirror)
  printf '%s\n' "deb ${uri%/} $SUITE main" "deb ${uri%/} $SUITE-updates main" \
    > "$tmp/etc/apt/sources.list"
  local security
  security=$(apt-get indextargets --format '$(RELEASE) $(REPO_URI)' 'Identifier: Packages' \
               2>/dev/null | awk -v s="$SUITE-security" '$1 == s { print $2; exit }')
  [ -n "$security" ] && echo "deb ${security%/} $SUITE-security main" >> "$tmp/etc/apt/sources.list"
  rm -f "$tmp.log"
  touch "$tmp/.sandprobe-complete"
  rm -rf --one-file-system "$root"
  mv "$tmp" "$root"
  echo "$root"
}

cmd_run() {
  [ "$(id -u)" -eq 0 ] || die "run needs root (mounts, chroot)"
  [ $# -ge 1 ] || die "usage: debroot.sh run BASE [options] -- CMD..."
  local base=$1; shift
  [ -f "$base/.sandprobe-complete" ] || die "$base is not a root made by debroot.sh base"
  local copies=() binds=() keep=""
  while [ $# -gt 0 ]; do
    case $1 in
      --copy) [ $# -ge 2 ] || die "--copy HOST:PATH"; copies+=("$2"); shift 2 ;;
      --bind) [ $# -ge 2 ] || die "--bind HOST[:PATH]"; binds+=("$2"); shift 2 ;;
      --keep) [ $# -ge 2 ] || die "--keep DIR"; keep=$2; shift 2 ;;
      --) shift; break ;;
      *) die "unknown argument: $1 (the command comes after --)" ;;
    esac
  done
  [ $# -ge 1 ] || die "no command after --"
  # Not named sandprobe-*: under /var/tmp that is a run directory, which `sandprobe sweep`
  # removes when no live sandprobe owns it (it removed a running root's overlay once).
  local work
  if [ -n "$keep" ]; then
    mkdir -p "$keep"; work=$(cd "$keep" && pwd)
  else
    work=$(mktemp -d "${TMPDIR:-/var/tmp}/debroot-run.XXXXXX")
  fi
  mkdir -p "$work/upper" "$work/work" "$work/root"
  # The namespace's script: its mounts are private to it and vanish with it.
  local inner rc=0
  inner=$(cat <<'INNER'
set -euo pipefail
base=$1 work=$2; shift 2
ncopy=$1; shift; copies=("${@:1:$ncopy}"); shift "$ncopy"
nbind=$1; shift; binds=("${@:1:$nbind}"); shift "$nbind"
root=$work/root
mount -t overlay overlay -o "lowerdir=$base,upperdir=$work/upper,workdir=$work/work" "$root"
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount --rbind /dev "$root/dev"
mount --make-rslave "$root/dev"
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
# A destination is resolved inside the root (/var/run is a link to /run there): followed from
# here, an absolute link would lead out of the root onto the host's own path.
inside() { chroot "$root" readlink -m "$1"; }
for spec in ${copies[@]+"${copies[@]}"}; do
  src=${spec%%:*} dst=$(inside "${spec#*:}")
  mkdir -p "$root$(dirname "$dst")"
  cp -a "$src" "$root$dst"
done
for spec in ${binds[@]+"${binds[@]}"}; do
  src=${spec%%:*} dst=${spec#*:}
  [ "$spec" = "$src" ] && dst=$src
  dst=$(inside "$dst")
  if [ -d "$src" ]; then mkdir -p "$root$dst"; else mkdir -p "$root$(dirname "$dst")"; touch "$root$dst"; fi
  mount --bind "$src" "$root$dst"
done
# No package's maintainer script may start a service from here (invoke-rc.d asks this).
printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
chmod 0755 "$root/usr/sbin/policy-rc.d"
mkdir -p "$root/.oldroot"
cd "$root"
pivot_root . .oldroot
umount -l /.oldroot
cd /
exec /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" ${SANDPROBE_REQUIRE_BACKENDS:+SANDPROBE_REQUIRE_BACKENDS=$SANDPROBE_REQUIRE_BACKENDS} "$@"
INNER
)
  unshare --mount --propagation private bash -c "$inner" debroot-run "$base" "$work" \
    "${#copies[@]}" ${copies[@]+"${copies[@]}"} "${#binds[@]}" ${binds[@]+"${binds[@]}"} "$@" || rc=$?
  # The namespace is gone with its last process: nothing is mounted under $work any more.
  if [ -z "$keep" ]; then
    if findmnt -rn -o TARGET | grep -q "^$work/"; then
      log "something is still mounted under $work; left in place"
    else
      rm -rf --one-file-system "$work"
    fi
  fi
  return "$rc"
}

[ $# -ge 1 ] || die "usage: debroot.sh base|cached|run ..."
sub=$1; shift
case $sub in
  base) cmd_base "$@" ;;
  cached) cmd_cached "$@" ;;
  run) cmd_run "$@" ;;
  *) die "unknown command: $sub (base, cached, run)" ;;
esac
