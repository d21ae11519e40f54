#!/usr/bin/env bash
# The .deb on a clean Debian 12, installed and run by the CI templates' own commands: packs the
# .deb from a build tree (cpack) and, in a throwaway overlay of the cached debootstrap root
# (scripts/debroot.sh), runs
#   the `audit` job of docs/ci/github-actions.yml, cell sandbox=bwrap-strict, as root: its shell
#     steps as the runner runs them (scripts/ci-template-steps.py), the .deb where
#     download-artifact puts it: `apt-get install ./sandprobe_*.deb` (Depends and Recommends from
#     Debian's archive), the installed build-images.sh, `sandprobe run --sandbox bwrap-strict`
#   `sandprobe run --sandbox docker-hardened` from the installed package, through the host's
#     docker socket bound into the root (the docker CLI comes from the package's Recommends)
#   the `sandprobe-audit` job of docs/ci/gitlab-ci.yml, cell SANDBOX=bwrap-strict, as a user who
#     is not root and may sudo (a shell runner's user), the .deb where `needs:` puts it
# then compares each run's verdicts and exit code with the same run of the build tree's sandprobe
# on this host: the installed package must judge every check as the build tree does.
#
# usage: scripts/deb-root-test.sh BUILD_DIR
# Exit 0: all of it held; 1: something differed or failed (said on stderr); 77: skipped (no cached
# root, not root, no docker), which is a failure under SANDPROBE_REQUIRE_BACKENDS=1.
#
# Docker's daemon resolves `-v SRC:DST` on the host, not in the root: the docker-hardened run in
# the root gets --probe-dir and SANDPROBE_RUN_ROOT in a directory bound at its own path, so the
# probe (copied from the installed /usr/lib/sandprobe) and the workspaces are where the daemon
# looks. The bwrap runs use the installed probe directory as it is.
#
# apt's package lists and downloaded .debs are kept in /var/cache/sandprobe-test-root/apt (bound
# into the root): the archive is contacted once, later runs only check the lists are current.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: deb-root-test.sh BUILD_DIR}" && pwd)

fail() { echo "deb-root-test: FAIL: $*" >&2; exit 1; }
skip() {
  if [ "${SANDPROBE_REQUIRE_BACKENDS:-}" = 1 ]; then
    fail "$* (SANDPROBE_REQUIRE_BACKENDS=1: a missing prerequisite fails)"
  fi
  echo "deb-root-test: SKIP: $*" >&2
  exit 77
}

[ "$(id -u)" -eq 0 ] || skip "needs root (mounts, pivot_root)"
root=$("$here/debroot.sh" cached --variant minbase) \
  || skip "no cached clean root: scripts/setup.sh --with debroot makes it"
docker info >/dev/null 2>&1 || skip "no docker daemon on this host"
command -v python3 >/dev/null || skip "no python3 (compares the reports)"
[ -x "$build/sandprobe" ] || fail "$build/sandprobe not built"

cache=${SANDPROBE_TEST_ROOT_CACHE:-/var/cache/sandprobe-test-root}/apt
mkdir -p "$cache/archives/partial" "$cache/lists/partial"
work=$(mktemp -d /var/tmp/deb-root-test.XXXXXX)
trap 'rm -rf --one-file-system "$work"' EXIT
mkdir -p "$work/pkg" "$work/shared"

cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/pkg" >"$work/cpack.log" 2>&1 \
  || { cat "$work/cpack.log" >&2; fail "cpack failed"; }
deb=$(ls "$work/pkg"/sandprobe_*.deb 2>/dev/null | head -n1)
[ -n "$deb" ] || fail "cpack wrote no sandprobe_*.deb in $work/pkg"

shared=$work/shared
# The templates' cells as scripts (python3-yaml on the host), and where their artifacts land.
steps="$here/ci-template-steps.py"
mkdir -p "$shared/gh/temp/sandprobe-deb" "$shared/gl/out" "$shared/docker"
cp "$deb" "$shared/gh/temp/sandprobe-deb/"
cp "$deb" "$shared/gl/out/"
python3 "$steps" github "$here/../docs/ci/github-actions.yml" audit sandbox=bwrap-strict \
  "$shared/gh.sh" --var RUNNER_TEMP="$shared/gh/temp" --var GITHUB_STEP_SUMMARY="$shared/gh/summary.md" \
  || fail "the GitHub template's audit job could not be turned into a script"
python3 "$steps" gitlab "$here/../docs/ci/gitlab-ci.yml" sandprobe-audit SANDBOX=bwrap-strict \
  "$shared/gl.sh" || fail "the GitLab template's audit job could not be turned into a script"

# The script run inside the root. Everything it writes for the host stays under $shared.
cat > "$shared/in-root.sh" <<'INROOT'
set -u
shared=$1
export DEBIAN_FRONTEND=noninteractive
step() { echo "== $*" >&2; }

step "GitHub Actions: audit, sandbox=bwrap-strict, as root"
(cd "$shared/gh" && bash "$shared/gh.sh") >"$shared/gh/log" 2>&1
echo $? >"$shared/gh/rc"
dpkg-query -W -f='${Package} ${Version}\n' sandprobe bubblewrap docker.io busybox-static \
  >"$shared/installed.txt" 2>&1
command -v sandprobe >"$shared/which.txt"
sandprobe list >"$shared/list.txt" 2>&1

step "sandprobe run --sandbox docker-hardened (host dockerd through the socket)"
mkdir -p "$shared/docker/probe" "$shared/docker/run"
cp /usr/lib/sandprobe/sandprobe-probe "$shared/docker/probe/"
SANDPROBE_RUN_ROOT=$shared/docker/run sandprobe run --sandbox docker-hardened --require-backend \
  --probe-dir "$shared/docker/probe" --no-progress --no-color \
  --json "$shared/docker/report.json" >"$shared/docker/log" 2>&1
echo $? >"$shared/docker/rc"

step "GitLab CI: sandprobe-audit, SANDBOX=bwrap-strict, as a user with sudo"
apt-get install -y -qq sudo >/dev/null 2>&1 || exit 10
useradd --create-home --uid 4242 runner
echo 'runner ALL=(ALL) NOPASSWD: ALL' >/etc/sudoers.d/runner
chown -R runner: "$shared/gl"
(cd "$shared/gl" && setpriv --reuid runner --regid runner --init-groups \
   env HOME=/home/runner USER=runner bash "$shared/gl.sh") >"$shared/gl/log" 2>&1
echo $? >"$shared/gl/rc"
exit 0
INROOT

start=$(date +%s)
rc=0
"$here/debroot.sh" run "$root" \
  --bind "$shared" \
  --bind /var/run/docker.sock \
  --bind "$cache/archives:/var/cache/apt/archives" \
  --bind "$cache/lists:/var/lib/apt/lists" \
  -- bash "$shared/in-root.sh" "$shared" || rc=$?
echo "deb-root-test: in the root: $(( $(date +%s) - start )) s (exit $rc)" >&2
[ "$rc" -eq 0 ] || fail "the root's script stopped with exit $rc (10: apt-get install sudo)"

cat "$shared/installed.txt" >&2
[ "$(cat "$shared/which.txt")" = /usr/bin/sandprobe ] || fail "sandprobe is not /usr/bin/sandprobe: $(cat "$shared/which.txt")"
grep -q '(docker-hardened.json)' "$shared/list.txt" || fail "the installed list names no docker-hardened: $(cat "$shared/list.txt")"
grep -q 'sandprobe/probe:latest and sandprobe/agent:latest are up to date' "$shared/gh/log" \
  || fail "the GitHub template's install step built no images: $(tail -n 20 "$shared/gh/log")"
[ -s "$shared/gh/summary.md" ] || fail "the GitHub cell wrote no step summary"
for f in gh/out/junit.xml gh/out/sandprobe.sarif gl/reports/junit.xml gl/reports/sandprobe.sarif gl/reports/summary.md; do
  [ -s "$shared/$f" ] || fail "$f missing after the template's run: $(tail -n 20 "$shared/${f%%/*}/log")"
done
owner=$(stat -c %u "$shared/gl/reports/report.json")
[ "$owner" = 4242 ] || fail "the GitLab cell's reports belong to uid $owner, not the runner's 4242 (after_script's chown)"

# The same runs from the build tree on the host: the reference verdicts.
for sandbox in bwrap-strict docker-hardened; do
  rc=0
  "$build/sandprobe" run --sandbox "$sandbox" --require-backend --no-progress --no-color \
    --json "$work/host-$sandbox.json" >"$work/host-$sandbox.log" 2>&1 || rc=$?
  echo "$rc" >"$work/host-$sandbox.rc"
done

python3 - "$shared" "$work" <<'PY'
import json, sys
shared, work = sys.argv[1], sys.argv[2]
problems = []
# (what ran in the root, its directory under shared/, the sandbox, its report there)
runs = [("GitHub template, root", "gh", "bwrap-strict", "out/report.json"),
        ("installed sandprobe, host docker", "docker", "docker-hardened", "report.json"),
        ("GitLab template, sudo", "gl", "bwrap-strict", "reports/report.json")]
for label, where, sandbox, report_path in runs:
    rc = int(open(f"{shared}/{where}/rc").read())
    log = open(f"{shared}/{where}/log").read()
    host_rc = int(open(f"{work}/host-{sandbox}.rc").read())
    try:
        root = json.load(open(f"{shared}/{where}/{report_path}"))
    except (OSError, ValueError) as e:
        problems.append(f"{label}: no report ({e}); exit {rc}\n{log[-3000:]}")
        continue
    host = json.load(open(f"{work}/host-{sandbox}.json"))
    def verdicts(report):
        return {c["id"]: c["verdict"] for c in report["checks"]}
    r, h = verdicts(root), verdicts(host)
    if rc != host_rc:
        problems.append(f"{label}: exit {rc}, the build tree's run on the host {host_rc}\n{log[-3000:]}")
    if not r:
        problems.append(f"{label}: the report has no checks")
    errors = sorted(k for k, v in r.items() if v in ("error", "inconclusive"))
    if errors:
        problems.append(f"{label}: error/inconclusive checks {errors}\n{log[-3000:]}")
    if root["profile"]["path"] != f"/usr/share/sandprobe/sandboxes/{sandbox}.json":
        problems.append(f"{label} ran {root['profile']['path']}, not the installed profile")
    # Checks whose verdict depends on the machine's momentary load are not compared.
    timing = {k for k in set(r) | set(h) if k.startswith("limits.cpu")}
    diff = sorted(k for k in (set(r) | set(h)) - timing if r.get(k) != h.get(k))
    if diff:
        problems.append(f"{label}: verdicts differ from the build tree's on the host: " +
                        ", ".join(f"{k}: root {r.get(k)} host {h.get(k)}" for k in diff))
    counts = {v: sum(1 for x in r.values() if x == v) for v in sorted(set(r.values()))}
    print(f"deb-root-test: {label}: {sandbox} exit {rc}, {len(r)} checks {counts}, "
          f"as the build tree on the host", file=sys.stderr)
if problems:
    print("\n".join("deb-root-test: FAIL: " + p for p in problems), file=sys.stderr)
    sys.exit(1)
PY
echo "deb-root-test: ok" >&2
