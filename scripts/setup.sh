#!/usr/bin/env bash
# Prepares a Debian 12 machine (as root) for sandprobe: Debian packages, a running dockerd,
# the build, and the docker images the profiles use. Idempotent and quick when all is there.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[setup] %s\n' "$*" >&2; }

# One Boost for the whole build: 1.74 (Debian 12's default; 1.81's -dev packages conflict).
PACKAGES=(
  cmake g++ make pkg-config
  libboost1.74-dev libboost-filesystem1.74-dev
  nlohmann-json3-dev libfmt-dev libcli11-dev libpugixml-dev libutfcpp-dev libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  docker.io bubblewrap busybox-static firejail runsc
  libxml2-utils python3 python3-jsonschema procps iproute2
  clang libclang-rt-14-dev
  qemu-system-x86 linux-image-amd64 cpio kmod file
  help2man dpkg-dev
)

install_packages() {
  local missing=()
  for package in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' \
      || missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# dockerd is not running on a fresh machine (and no init system starts it): start it in the
# background and wait until the daemon answers.
start_dockerd() {
  if docker info >/dev/null 2>&1; then return 0; fi
  log "starting dockerd (log: /var/log/sandprobe-dockerd.log)"
  nohup dockerd >/var/log/sandprobe-dockerd.log 2>&1 </dev/null &
  for _ in $(seq 1 120); do
    docker info >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  log "dockerd did not answer within 60 s; last lines of its log:"
  tail -n 20 /var/log/sandprobe-dockerd.log >&2 || true
  return 1
}

# gVisor for sandboxes/gvisor.json: register runsc as a docker runtime (ptrace platform: no KVM
# needed). dockerd re-reads `runtimes` on SIGHUP, so running containers are untouched; only a
# dockerd this script started (its stdout is our log) is signalled, and only when the config
# changed. Best effort: without runsc the gvisor profile's preflight skips with the reason.
register_runsc() {
  command -v runsc >/dev/null 2>&1 || { log "runsc not installed; gvisor profile will skip"; return 0; }
  local config=/etc/docker/daemon.json
  mkdir -p /etc/docker
  local changed
  changed=$(python3 - "$config" "$(command -v runsc)" <<'PY'
import json, os, sys
path, runsc = sys.argv[1], sys.argv[2]
config = {}
if os.path.exists(path):
    with open(path) as f:
        text = f.read().strip()
        config = json.loads(text) if text else {}
want = {"path": runsc, "runtimeArgs": ["--platform=ptrace", "--network=none"]}
if config.get("runtimes", {}).get("runsc") == want:
    print("no")
else:
    config.setdefault("runtimes", {})["runsc"] = want
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
  if [ -n "$pid" ] && [ "$(readlink "/proc/$pid/fd/1" 2>/dev/null)" = /var/log/sandprobe-dockerd.log ]; then
    log "registered runsc in $config; reloading dockerd (pid $pid, SIGHUP)"
    kill -HUP "$pid"
    for _ in $(seq 1 20); do
      docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q runsc && return 0
      sleep 0.5
    done
    log "dockerd did not pick up runsc after SIGHUP"
  else
    log "registered runsc in $config; restart your dockerd to use it (not started by this script)"
  fi
}

# The agent sandboxes of sandboxes/srt.json and sandboxes/codex.json, from the npm registry into
# a prefix of their own (pinned: the profiles, policies and tests are written against these
# versions). Idempotent: npm runs only when a pinned version is missing. srt needs bubblewrap
# (above), socat and ripgrep; node and npm come from Debian (nodejs npm) where no node is on the
# machine (a machine with another node, e.g. NodeSource's, which bundles npm, keeps it: Debian's
# npm conflicts with it). srt 0.0.83 declares node >= 22.12 but runs its CLI on node 18/20 (checked
# on 20). srt's settings are copied next to it: its profile needs an absolute path (see
# sandboxes/srt.json). Nothing here is downloaded at run time: `codex sandbox` needs no login and
# opens no connection, and srt's proxy forwards to no domain.
AGENT_PREFIX=/opt/sandprobe-agents
# The last is no sandbox: Microsoft's SARIF Multitool (a self-contained .NET binary in the npm
# package; needs libicu, which libxml2 already pulls in), reports_test validates --sarif with it.
AGENT_PACKAGES=(@anthropic-ai/sandbox-runtime@0.0.83 @openai/codex@0.169.0 @microsoft/sarif-multitool@5.7.0)
install_agent_sandboxes() {
  local need=()
  command -v socat >/dev/null 2>&1 || need+=(socat)
  command -v rg >/dev/null 2>&1 || need+=(ripgrep)
  command -v npm >/dev/null 2>&1 || need+=(nodejs npm)
  if [ ${#need[@]} -gt 0 ]; then
    log "installing: ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  fi
  local missing=() spec name version installed
  for spec in "${AGENT_PACKAGES[@]}"; do
    name=${spec%@*}
    version=${spec##*@}
    installed=$(node -p "require('$AGENT_PREFIX/node_modules/$name/package.json').version" 2>/dev/null || true)
    [ "$installed" = "$version" ] || missing+=("$spec")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing from npm into $AGENT_PREFIX: ${missing[*]}"
    mkdir -p "$AGENT_PREFIX"
    npm install --prefix "$AGENT_PREFIX" --no-audit --no-fund --save-exact --loglevel=error "${AGENT_PACKAGES[@]}" >&2
  fi
  mkdir -p "$AGENT_PREFIX/codex-home"
  cmp -s sandboxes/srt/settings.json "$AGENT_PREFIX/srt-settings.json" \
    || install -m 0644 sandboxes/srt/settings.json "$AGENT_PREFIX/srt-settings.json"
}

# The microVM guest of sandboxes/microvm*.json: Debian's generic kernel (the cloud kernel has no
# 9p for the workspace share) and a busybox initramfs, built once into a directory of its own;
# rebuilt when the guest's sources or the kernel changed.
MICROVM_DIR=/var/lib/sandprobe-microvm
build_microvm_guest() {
  local stamp
  stamp=$(cat scripts/microvm/init scripts/microvm/launch scripts/microvm/build-initramfs.sh \
            /bin/busybox <(ls /boot) | sha256sum | cut -d' ' -f1)
  [ "$(cat "$MICROVM_DIR/stamp" 2>/dev/null)" = "$stamp" ] && return 0
  log "building the microVM guest in $MICROVM_DIR"
  scripts/microvm/build-initramfs.sh "$MICROVM_DIR"
  echo "$stamp" > "$MICROVM_DIR/stamp"
}

build() {
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build -j"$(nproc)"
}

install_packages
install_agent_sandboxes
# Before dockerd starts on a fresh machine, so it reads the runtime at start-up.
register_runsc
start_dockerd
build
build_microvm_guest
docker/build-images.sh build/probe/sandprobe-probe
log "ready"
