#!/usr/bin/env bash
# README command 2: set up everything (every optional backend and tool: `setup.sh --with all`),
# build everything, then run every test (unit and integration against the real backends).
# Backends are required: a missing docker or bwrap fails the tests, never skips.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --with all
export SANDPROBE_REQUIRE_BACKENDS=1
# Real-backend tests measure a shared, noisy machine (CPU quotas, timing): a failing test
# gets one more try; a test that fails twice fails the run.
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 600 --repeat until-pass:2 "$@"
