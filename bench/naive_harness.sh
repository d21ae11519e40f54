#!/usr/bin/env bash
# The naive baseline: the same checks as a sandprobe run, but one sandbox launch per check, the
# way a hand-written shell harness would do it. Reads lines "FAMILY ARG..." on stdin and runs
#   LAUNCH_PREFIX... --nonce naive FAMILY ARG...
# for each, where LAUNCH_PREFIX is the profile's argv up to the probe's own arguments.
# Prints the number of launches.
#
# Usage: bench/naive_harness.sh [--instance NAME [--cleanup ARGV... --]] LAUNCH_PREFIX... < checks
#
# One-shot profiles that name their sandbox (docker run --name {instance}, no --rm: the
# container outlives the probe for `inspect`, and the profile's cleanup removes it) need a
# fresh name per launch, or every launch after the first fails on the name conflict. With
# --instance, NAME is replaced by NAME-nK (K = the check's number) wherever it occurs in the
# prefix and in the cleanup argv, and the cleanup argv (the profile's `cleanup`, e.g.
# docker rm -f NAME) runs after each launch, as a per-check harness must.
set -uo pipefail
instance=""
cleanup=()
if [ "${1:-}" = "--instance" ]; then
  instance=$2
  shift 2
  if [ "${1:-}" = "--cleanup" ]; then
    shift
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do
      cleanup+=("$1")
      shift
    done
    [ $# -gt 0 ] && shift  # the "--"
  fi
fi
prefix=("$@")

# Prints nothing; fills the array named by $1 with the remaining arguments, NAME -> $name.
renamed() {
  local -n out=$1
  shift
  out=()
  local arg
  for arg in "$@"; do
    if [ -n "$instance" ]; then out+=("${arg//"$instance"/"$name"}"); else out+=("$arg"); fi
  done
}

launches=0
while read -r -a check; do
  [ ${#check[@]} -eq 0 ] && continue
  launches=$((launches + 1))
  name="$instance-n$launches"
  renamed argv "${prefix[@]}"
  "${argv[@]}" --nonce naive "${check[@]}" >/dev/null 2>&1
  if [ ${#cleanup[@]} -gt 0 ]; then
    renamed clean "${cleanup[@]}"
    "${clean[@]}" >/dev/null 2>&1
  fi
done
echo "$launches"
