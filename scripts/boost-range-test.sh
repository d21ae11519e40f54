#!/usr/bin/env bash
# The build takes a Boost newer than Debian 12's default: in a throwaway overlay of the cached
# debootstrap root (scripts/debroot.sh; never on this machine, where libboost1.74-dev and
# libboost1.81-dev conflict), installs libboost1.81-dev, then the rest of the build dependencies
# by scripts/setup.sh (which keeps an installed libboost1.NN-dev), configures and builds the CLI
# and the probe, checks that CMake found 1.81, and runs the host profile (the launcher is
# Boost.Process: a launch that ran and was judged, exit 1 on the baseline's fail).
#
# usage: scripts/boost-range-test.sh [BOOST_VERSION]   (default 1.81; Debian 12 has 1.74 and 1.81)
# Exit 0 pass, 1 fail, 77 skip (no cached root, not root). A cold build of two targets, unless this
# machine's ccache (CCACHE_DIR, else ~/.ccache) is there: it is bound into the root, so the sources
# that include no Boost header come from the cache (same compiler, same relative paths) and only
# the Boost users (launch/, the docker engine witness) compile against the other Boost.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
boost=${1:-1.81}

skip() {
  if [ "${SANDPROBE_REQUIRE_BACKENDS:-}" = 1 ]; then echo "boost-range-test: FAIL: $*" >&2; exit 1; fi
  echo "boost-range-test: SKIP: $*" >&2; exit 77
}
[ "$(id -u)" -eq 0 ] || skip "needs root (mounts, pivot_root)"
root=$("$here/debroot.sh" cached --variant minbase) \
  || skip "no cached clean root: scripts/setup.sh --with debroot makes it"

cache=${SANDPROBE_TEST_ROOT_CACHE:-/var/cache/sandprobe-test-root}/apt
mkdir -p "$cache/archives/partial" "$cache/lists/partial"
work=$(mktemp -d /var/tmp/boost-range-test.XXXXXX)
trap 'rm -rf --one-file-system "$work"' EXIT
# The tracked files of the checkout as they are on disk (no build trees).
(cd "$src" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf "$work/src.tar") 2>/dev/null \
  || (cd "$src" && tar --exclude='./build*' --exclude=./out --exclude=./.git -cf "$work/src.tar" .)

ccache_dir=${CCACHE_DIR:-$HOME/.ccache}
binds=()
launcher=""
if command -v ccache >/dev/null && [ -d "$ccache_dir" ]; then
  binds=(--bind "$ccache_dir:/ccache")
  launcher=ccache
fi

cat > "$work/in-root.sh" <<'INROOT'
set -euo pipefail
boost=$1 launcher=$2
export DEBIAN_FRONTEND=noninteractive
mkdir -p /src && tar -xf /work/src.tar -C /src && cd /src
apt-get update -qq
apt-get install -y -qq --no-install-recommends "libboost$boost-dev" "libboost-filesystem$boost-dev" \
  ${launcher:+ccache} >/dev/null
launch_args=()
if [ -n "$launcher" ]; then
  export CCACHE_DIR=/ccache CCACHE_BASEDIR=/src CCACHE_NOHASHDIR=1
  launch_args=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
scripts/setup.sh --without docker --no-build
dpkg-query -W -f='${db:Status-Abbrev} ${Package} ${Version}\n' 'libboost1.*-dev' \
  | awk '$1 == "ii" { print $2, $3 }'
if dpkg-query -W -f='${Status}\n' libboost1.74-dev 2>/dev/null | grep -q 'install ok installed'; then
  echo "libboost1.74-dev got installed beside $boost" >&2; exit 20
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launch_args[@]}" >/dev/null
grep -E '^Boost_DIR:|^boost_headers_DIR:' build/CMakeCache.txt
grep -q "Boost-$boost" build/CMakeCache.txt || { echo "CMake did not find Boost $boost" >&2; exit 21; }
cmake --build build -j"$(nproc)" --target sandprobe sandprobe-probe >/work/build.log 2>&1 \
  || { tail -n 40 /work/build.log >&2; exit 23; }
[ -z "$launcher" ] || ccache --show-stats 2>/dev/null | grep -Ei 'hits|misses' | head -4
build/sandprobe --version
rc=0
build/sandprobe run --sandbox host --no-progress --no-color --json /work/host.json >/work/host.log 2>&1 || rc=$?
echo "host run: exit $rc"
[ "$rc" = 1 ] || { tail -n 30 /work/host.log >&2; exit 22; }
INROOT

start=$(date +%s)
rc=0
"$here/debroot.sh" run "$root" --bind "$work:/work" \
  --bind "$cache/archives:/var/cache/apt/archives" --bind "$cache/lists:/var/lib/apt/lists" \
  ${binds[@]+"${binds[@]}"} -- bash /work/in-root.sh "$boost" "$launcher" || rc=$?
echo "boost-range-test: Boost $boost in a clean root: exit $rc, $(( $(date +%s) - start )) s" >&2
[ "$rc" -eq 0 ] || { echo "boost-range-test: FAIL (20: 1.74 installed too, 21: not found by CMake, 22: the host run, 23: the build)" >&2; exit 1; }
python3 - "$work/host.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
verdicts = [c["verdict"] for c in report["checks"]]
assert "fail" in verdicts and "error" not in verdicts, verdicts
print(f"boost-range-test: the host run judged {len(verdicts)} checks, {verdicts.count('fail')} fail "
      "(the host is no sandbox), none in error", file=sys.stderr)
PY
echo "boost-range-test: ok" >&2
