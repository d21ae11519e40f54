#!/usr/bin/env bash
# Every libFuzzer target for MINUTES each (default 5), one after another: the long run the CI's
# fuzz_smoke (10 s per target) cannot afford. Prints per target the executions, new inputs and
# whether it crashed; failing inputs are kept in OUT (default ./fuzz-artifacts) and the script
# exits 1. Needs clang. Not a test: shared, noisy machines run it by hand.
# Usage: bench/fuzz_long.sh [MINUTES] [OUT] [TARGET...]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
minutes="${1:-5}"
out="$(realpath -m "${2:-fuzz-artifacts}")"
shift $(( $# >= 2 ? 2 : $# ))
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
mkdir -p "$out"
start=$(date +%s)
set +e
ARTIFACTS="$out" "$here/fuzz/run.sh" "$build" $(( minutes * 60 )) "$@" 2>&1 | tee "$out/fuzz_long.log"
status=${PIPESTATUS[0]}
set -e
echo "fuzz_long: $(( ($(date +%s) - start) / 60 )) min, exit $status (failing inputs, if any: $out)"
exit "$status"
