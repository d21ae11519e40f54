#!/usr/bin/env bash
# README command 1: set up what a run needs (packages, a running dockerd, the CLI and the probe,
# the images; see scripts/setup.sh), then run sandprobe's main job on the default sandbox
# (docker-hardened against the tier-low policy). Reports land in out/; extra arguments go to
# `sandprobe run`. Tests, benchmarks and the optional backends are scripts/test.sh's.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
mkdir -p out
SUDO=()
[ "$(id -u)" -eq 0 ] || SUDO=(sudo)
exec "${SUDO[@]}" build/sandprobe run --sandbox sandboxes/docker-hardened.json --require-backend \
  --json out/report.json --junit out/TEST-sandprobe.xml --summary out/summary.md "$@"
