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
  docker.io bubblewrap busybox-static
  libxml2-utils python3 python3-jsonschema procps iproute2
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

build() {
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build -j"$(nproc)"
}

install_packages
start_dockerd
build
docker/build-images.sh build/probe/sandprobe-probe
log "ready"
