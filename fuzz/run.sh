#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for SECONDS (default 10) from the seed
# corpus in the repo. New inputs go to a scratch corpus, so the repo is never written.
# Usage: fuzz/run.sh BUILD_DIR [SECONDS]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:?usage: fuzz/run.sh BUILD_DIR [SECONDS]}"
seconds="${2:-10}"
cmake -S "$here" -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
status=0
for target in frames load; do
  mkdir -p "$scratch/$target"
  echo "fuzz_$target: ${seconds}s"
  if ! "$build/fuzz_$target" -max_total_time="$seconds" -max_len=70000 -timeout=10 \
       -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$scratch/" \
       "$scratch/$target" "$here/corpus/$target" 2>"$scratch/$target.log"; then
    echo "fuzz_$target FAILED:"; tail -n 40 "$scratch/$target.log"; status=1
  else
    grep -E "stat::(number_of_executed_runs|new_units_added|peak_rss_mb)" "$scratch/$target.log" || true
  fi
done
exit "$status"
