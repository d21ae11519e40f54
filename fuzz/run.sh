#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for SECONDS (default 10) from the seed
# corpus in the repo. New inputs go to a scratch corpus, so the repo is never written. Prints
# each target's executions and new inputs; a crash, leak or timeout fails the script and prints
# the sanitizer's report (the input is kept in ARTIFACTS, default the scratch dir).
# Usage: fuzz/run.sh BUILD_DIR [SECONDS] [TARGET...]   (targets: frames load waivers report_read run_registry)
# FUZZ_SEED: libFuzzer's -seed (default 0: a random one, printed as "INFO: Seed:"). The CTest
# smoke fixes it so a CI failure is the same input again; bench/fuzz_long.sh explores at random.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:?usage: fuzz/run.sh BUILD_DIR [SECONDS] [TARGET...]}"
seconds="${2:-10}"
shift $(( $# >= 2 ? 2 : $# ))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(frames load waivers report_read run_registry)
cmake -S "$here" -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
scratch="$(mktemp -d)"
artifacts="${ARTIFACTS:-$scratch/artifacts}"
mkdir -p "$artifacts"
trap 'rm -rf "$scratch"' EXIT
status=0
for target in "${targets[@]}"; do
  mkdir -p "$scratch/$target"
  echo "fuzz_$target: ${seconds}s"
  if ! "$build/fuzz_$target" -seed="${FUZZ_SEED:-0}" -max_total_time="$seconds" -max_len=70000 -timeout=10 \
       -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/$target-" \
       "$scratch/$target" "$here/corpus/$target" 2>"$scratch/$target.log"; then
    echo "fuzz_$target FAILED:"; tail -n 40 "$scratch/$target.log"; status=1
  fi
  # libFuzzer names the count number_of_executed_units (older: _runs).
  grep -E "stat::(number_of_executed_(runs|units)|average_exec_per_sec|new_units_added|peak_rss_mb)" \
    "$scratch/$target.log" || true
done
[ "$status" -eq 0 ] || echo "inputs that failed: $artifacts"
exit "$status"
