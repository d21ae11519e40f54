#!/usr/bin/env bash
# README command 1: set everything up, then run sandprobe's main job on the default sandbox
# (docker-hardened against the tier-low policy). Reports land in out/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
mkdir -p out
exec build/sandprobe run --sandbox sandboxes/docker-hardened.json --require-backend \
  --json out/report.json --junit out/TEST-sandprobe.xml "$@"
