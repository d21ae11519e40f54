#!/usr/bin/env bash
# The RuntimeClass columns' profiles (sandboxes/examples/kubectl-runtimeclass-{runc,gvisor}.json)
# run end to end through tests/kubectl_standin/kubectl, which carries out their kubectl commands
# with this machine's docker (a pod = one container, RuntimeClass runc/gvisor = docker runtime
# runc/runsc), on the sandprobe/probe image built from this build tree's probe. No cluster runs
# here: this proves the profiles' argv, image, probe path, pod spec and cleanup reach a probe and
# bring every check to a verdict; not a kubelet, a CNI or a real RuntimeClass handler.
# Issue 29 measured every check erroring through such a stand-in: the profile looked for the
# probe at /opt/sandprobe/sandprobe-probe, which the image does not have. The same profile with
# that old path is run as the control: every check must be an error (the test can fail).
#
# usage: tests/fleet_kubectl_profiles_test.sh BUILD_DIR
# Exit 0 held, 1 failed, 77 skipped (not root, no docker, no runsc), a failure under
# SANDPROBE_REQUIRE_BACKENDS=1. About 30 s here.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
build=$(cd "${1:?usage: fleet_kubectl_profiles_test.sh BUILD_DIR}" && pwd)

fail() { echo "fleet_kubectl_profiles_test: FAIL: $*" >&2; exit 1; }
skip() {
  if [ "${SANDPROBE_REQUIRE_BACKENDS:-}" = 1 ]; then fail "$* (SANDPROBE_REQUIRE_BACKENDS=1)"; fi
  echo "fleet_kubectl_profiles_test: SKIP: $*" >&2
  exit 77
}
docker info >/dev/null 2>&1 || skip "no docker daemon on this host"
docker info --format '{{json .Runtimes}}' | grep -q '"runsc"' \
  || skip "runsc is not registered with dockerd (scripts/setup.sh --with gvisor): the gvisor column"
[ -x "$build/sandprobe" ] && [ -x "$build/probe/sandprobe-probe" ] || fail "$build: sandprobe and the probe not built"

work=$(mktemp -d /var/tmp/fleet-kubectl-test.XXXXXX)
trap 'rm -rf --one-file-system "$work"' EXIT
export KUBECTL_STANDIN_DIR=$work/standin
export PATH=$here/kubectl_standin:$PATH
[ "$(command -v kubectl)" = "$here/kubectl_standin/kubectl" ] || fail "the stand-in is not the kubectl on PATH"
# The image the profiles name, with this build's probe (docker/build-images.sh, FROM scratch).
"$src/docker/build-images.sh" "$build/probe/sandprobe-probe" 2>"$work/images.log" \
  || { cat "$work/images.log" >&2; fail "build-images.sh failed"; }

start=$(date +%s)
run_profile() {  # run_profile PROFILE REPORT -> exit code in REPORT.exit
  local rc=0
  (cd "$work" && "$build/sandprobe" run --sandbox "$1" --no-progress --no-color --json "$2") \
    >"$2.log" 2>&1 || rc=$?
  echo "$rc" >"$2.exit"
}
for rc in runc gvisor; do
  run_profile "$src/sandboxes/examples/kubectl-runtimeclass-$rc.json" "$work/$rc.json"
done
# The control: the probe path of issue 29.
sed -e 's|"probe_path": "/sandprobe-probe"|"probe_path": "/opt/sandprobe/sandprobe-probe"|' \
    -e "s|\"../../policies/tier-low.json\"|\"$src/policies/tier-low.json\"|" \
    "$src/sandboxes/examples/kubectl-runtimeclass-runc.json" >"$work/old-path.json"
grep -q /opt/sandprobe/sandprobe-probe "$work/old-path.json" || fail "could not make the old-path control"
run_profile "$work/old-path.json" "$work/old-path.json.report"

/usr/bin/python3 - "$work" <<'PY' || exit 1
import json, sys
work = sys.argv[1]
problems = []
def load(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError) as e:
        problems.append(f"{path}: no report ({e}): {open(path + '.log').read()[-2000:]}")
        return None
for rc in ("runc", "gvisor"):
    r = load(f"{work}/{rc}.json")
    if r is None:
        continue
    verdicts = [c["verdict"] for c in r["checks"]]
    counts = {v: verdicts.count(v) for v in sorted(set(verdicts))}
    exit_code = int(open(f"{work}/{rc}.json.exit").read())
    print(f"fleet_kubectl_profiles_test: kubectl-runtimeclass-{rc}: {len(verdicts)} checks {counts}, exit {exit_code}",
          file=sys.stderr)
    if not verdicts or counts.get("pass", 0) == 0:
        problems.append(f"{rc}: no check passed: {counts}")
    if counts.get("error") or exit_code not in (0, 1):
        bad = [c["id"] for c in r["checks"] if c["verdict"] == "error"]
        problems.append(f"{rc}: exit {exit_code}, errors {bad}\n{open(f'{work}/{rc}.json.log').read()[-2000:]}")
old = load(f"{work}/old-path.json.report")
if old is not None:
    verdicts = {c["verdict"] for c in old["checks"]}
    print(f"fleet_kubectl_profiles_test: control, probe at /opt/sandprobe/sandprobe-probe: "
          f"{len(old['checks'])} checks, verdicts {sorted(verdicts)}", file=sys.stderr)
    if verdicts != {"error"}:
        problems.append(f"the old probe path gave {sorted(verdicts)}, not only errors: the test cannot tell")
for p in problems:
    print(f"fleet_kubectl_profiles_test: FAIL: {p}", file=sys.stderr)
sys.exit(1 if problems else 0)
PY
left=$(docker ps -aq --filter label=sandprobe.kubectl-standin=1 --filter "label=sandprobe.run" | wc -l)
[ "$left" -eq 0 ] || fail "$left stand-in pods left after the runs (cleanup/sweep)"
[ -z "$(ls -A "$KUBECTL_STANDIN_DIR" 2>/dev/null)" ] || fail "emptyDir directories left: $(ls "$KUBECTL_STANDIN_DIR")"
echo "fleet_kubectl_profiles_test: ok in $(( $(date +%s) - start )) s" >&2
