#!/usr/bin/env bash
# The naive baseline: the same checks as a sandprobe run, but one sandbox launch per check, the
# way a hand-written shell harness would do it. Reads lines "FAMILY ARG..." on stdin and runs
#   LAUNCH_PREFIX... --nonce naive FAMILY ARG...
# for each, where LAUNCH_PREFIX is the profile's argv up to the probe's own arguments.
# Prints the number of launches. Usage: bench/naive_harness.sh LAUNCH_PREFIX... < checks
set -uo pipefail
launches=0
while read -r -a check; do
  [ ${#check[@]} -eq 0 ] && continue
  "$@" --nonce naive "${check[@]}" >/dev/null 2>&1
  launches=$((launches + 1))
done
echo "$launches"
