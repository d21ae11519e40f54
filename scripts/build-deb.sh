#!/usr/bin/env bash
# Builds the Debian package: the build dependencies (scripts/setup.sh --without docker --with deb
# --no-build: no docker, no daemon), a Release build of what the package holds (the CLI, the probe, the man
# page) in its own build directory, and cpack. What the CI templates' package job runs, in a
# debian:12 container or on any Debian 12 machine; as root or with sudo.
#
# usage: scripts/build-deb.sh [OUT_DIR]   (default: out/) -> OUT_DIR/sandprobe_VERSION_ARCH.deb
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out}
scripts/setup.sh --without docker --with deb --no-build
build=build-deb
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" >/dev/null
cmake --build "$build" -j"$(nproc)" --target sandprobe sandprobe-probe sandprobe_man sandprobe_completion
mkdir -p "$out"
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$out/.cpack" >/dev/null
mv "$out"/.cpack/sandprobe_*.deb "$out"/
rm -rf "$out/.cpack"
ls "$out"/sandprobe_*.deb
