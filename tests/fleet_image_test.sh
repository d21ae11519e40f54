#!/usr/bin/env bash
# The fleet audit's image, run as the DaemonSet's pod would run it, against the same audit on
# the host (issue 29, item 3):
#   1. packs the .deb from a build tree (cpack) and builds sandprobe/sandprobe:VERSION from it
#      (docker/build-sandprobe-image.sh: a debootstrap minbase root, docker import);
#   2. starts it with `docker run` flags derived from deploy/kubernetes/daemonset.yaml
#      (tests/fleet_pod_docker_args.py: host network/UTS/PID/IPC, the docker socket and the
#      node directory as hostPath binds at their own path, the command, args and env), so the
#      image's node-audit.sh runs a full audit (all five suites) of each profile the DaemonSet
#      names (docker-hardened, gvisor) through the host's docker socket, with its witnesses in
#      the host's namespaces; waits for its `done` file, as Sonobuoy does, then removes it;
#   3. runs the same audits (profile, policy, suites) from the build tree on the host and
#      compares the reports check by check: the same checks, the same verdicts, the same exit
#      code. A check allowed to differ must be listed in KNOWN_DIFFERENCES below with its reason,
#      and a listed difference that did not occur is reported too (the list stays true).
# The node directory is relocated from /var/lib/sandprobe-fleet to a fresh /var/tmp directory
# (hostPath, mountPath and env together, so it is still mounted at its own path).
#
# usage: tests/fleet_image_test.sh BUILD_DIR
# Exit 0: held; 1: failed (said on stderr); 77: skipped (not root, no docker, no cached
# debootstrap root, no runsc), which fails under SANDPROBE_REQUIRE_BACKENDS=1.
# 60-130 s here, by the machine's load: 30-45 s for the image (cached root, apt lists current),
# 25-45 s for the node audit of five profiles x five suites in the container, the same on the host.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
build=$(cd "${1:?usage: fleet_image_test.sh BUILD_DIR}" && pwd)
py=/usr/bin/python3  # Debian's, with python3-yaml

fail() { echo "fleet_image_test: FAIL: $*" >&2; exit 1; }
skip() {
  if [ "${SANDPROBE_REQUIRE_BACKENDS:-}" = 1 ]; then
    fail "$* (SANDPROBE_REQUIRE_BACKENDS=1: a missing prerequisite fails)"
  fi
  echo "fleet_image_test: SKIP: $*" >&2
  exit 77
}

[ "$(id -u)" -eq 0 ] || skip "needs root (debootstrap root, docker)"
"$src/scripts/debroot.sh" cached --variant minbase >/dev/null \
  || skip "no cached clean root: scripts/setup.sh --with debroot makes it"
docker info >/dev/null 2>&1 || skip "no docker daemon on this host"
"$py" -c 'import yaml' 2>/dev/null || skip "no python3-yaml"
[ -x "$build/sandprobe" ] || fail "$build/sandprobe not built"

daemonset=$src/deploy/kubernetes/daemonset.yaml
profiles=$("$py" -c 'import sys, yaml
[d] = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "DaemonSet"]
print(" ".join(d["spec"]["template"]["spec"]["containers"][0]["args"]))' "$daemonset")
case " $profiles " in *" gvisor "*)
  docker info --format '{{json .Runtimes}}' | grep -q '"runsc"' \
    || skip "the DaemonSet audits gvisor, and runsc is not registered with this dockerd (scripts/setup.sh --with gvisor)" ;;
esac

work=$(mktemp -d /var/tmp/fleet-image-test.XXXXXX)
name=fleet-image-test-$(basename "$work" | cut -d. -f2 | tr 'A-Z' 'a-z')
cleanup() {
  docker rm -f "$name" >/dev/null 2>&1 || true
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT

start=$(date +%s)
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/pkg" >"$work/cpack.log" 2>&1 \
  || { cat "$work/cpack.log" >&2; fail "cpack failed"; }
deb=$(ls "$work/pkg"/sandprobe_*.deb | head -n1)
tag=$("$src/docker/build-sandprobe-image.sh" "$deb" 2>"$work/image.log") \
  || { tail -n 30 "$work/image.log" >&2; fail "build-sandprobe-image.sh failed"; }
image=$("$py" -c 'import sys, yaml
[d] = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "DaemonSet"]
print(d["spec"]["template"]["spec"]["containers"][0]["image"])' "$daemonset")
[ "$tag" = "$image" ] || fail "the script built $tag; the DaemonSet runs $image"
size=$(docker image inspect --format '{{.Size}}' "$tag")
echo "fleet_image_test: $tag: $((size / 1000000)) MB, built in $(( $(date +%s) - start )) s" >&2

# The pod, as docker runs it. NODE_NAME is what the downward API would give: this host's name.
node_dir=$work/node
node=$(hostname)
mapfile -t args < <("$py" "$here/fleet_pod_docker_args.py" "$daemonset" "$node" \
  --relocate "/var/lib/sandprobe-fleet=$node_dir" --name "$name" --label "sandprobe.fleet-test=$name")
[ "${#args[@]}" -gt 0 ] || fail "no docker run arguments derived from $daemonset"
# What the kubelet does for each hostPath before starting the pod: create a DirectoryOrCreate,
# refuse a Socket that is not one.
while read -r type path; do
  case $type in
    DirectoryOrCreate) mkdir -p "$path" ;;
    Socket) [ -S "$path" ] || fail "hostPath $path (type Socket) is no socket" ;;
    *) fail "hostPath type $type not handled by this test" ;;
  esac
done < <("$py" "$here/fleet_pod_docker_args.py" "$daemonset" "$node" \
  --relocate "/var/lib/sandprobe-fleet=$node_dir" --host-paths)
# Beyond the DaemonSet's columns, three profiles that show what the pod's witnesses see of the
# node, appended to its args (node-audit.sh takes a profile name or file):
#   docker-hostpid, docker-hostnet: a sandbox in the node's PID / network namespace must be
#     caught from the pod as from the host (the canary process, the canary listeners), which is
#     what hostPID and hostNetwork are for;
#   docker-host-shadow (docker-hardened as root with the node's /etc/shadow bound in, made
#     here): the pod's host witnesses must read the node's /etc/shadow (node-audit.sh's
#     --host-root /proc/1/root), not the image's, or the node's file reads as a decoy and
#     passes (the blind spot before --host-root).
mkdir -p "$node_dir/profiles"
shadow_profile() {  # shadow_profile POLICY_FILE OUT
  "$py" - "$src/sandboxes/docker-hardened.json" "$1" "$2" <<'MAKE'
import re, sys
text = open(sys.argv[1]).read()
subs = [('"name": "docker-hardened"', '"name": "docker-host-shadow"'),
        ('"policy": "../policies/tier-low.json"', f'"policy": "{sys.argv[2]}"'),
        ('"--user", "1000:1000"', '"--user", "0:0"'),
        ('"-v", "{workspace}:/workspace",', '"-v", "{workspace}:/workspace", "-v", "/etc/shadow:/etc/shadow:ro",')]
for old, new in subs:
    if text.count(old) != 1:
        sys.exit(f"docker-hardened.json changed: {old!r} is not there once")
    text = text.replace(old, new)
open(sys.argv[3], "w").write(text)
MAKE
}
shadow_profile /usr/share/sandprobe/policies/tier-low.json "$node_dir/profiles/docker-host-shadow.json" \
  || fail "could not make docker-host-shadow"
shadow_profile "$src/policies/tier-low.json" "$work/docker-host-shadow.json" || fail "could not make docker-host-shadow"
extra=(docker-hostpid docker-hostnet "$node_dir/profiles/docker-host-shadow.json")
args+=("${extra[@]}")
# node-audit.sh reads the node through /proc/1/root. On a node pid 1 is its init; this machine's
# pid 1 refuses /proc/1/root even to root, so the pod reads the node through this script's own
# root instead (hostPID shows it; the same mount namespace as the host runs below).
args=(-e "SANDPROBE_HOST_ROOT=/proc/$$/root" "${args[@]}")
echo "fleet_image_test: docker run ${args[*]}" >&2
audit_start=$(date +%s)
docker run "${args[@]}" >/dev/null || fail "docker run of the pod spec failed"
results=$node_dir/results
for _ in $(seq 1 600); do
  [ -s "$results/done" ] && break
  if [ "$(docker inspect --format '{{.State.Running}}' "$name" 2>/dev/null)" != true ]; then
    docker logs "$name" 2>&1 | tail -n 40 >&2
    fail "the pod's container stopped before writing $results/done"
  fi
  sleep 1
done
[ -s "$results/done" ] || { docker logs "$name" 2>&1 | tail -n 40 >&2; fail "no done file after 600 s"; }
echo "fleet_image_test: node audit in the container: $(( $(date +%s) - audit_start )) s" >&2
# Sonobuoy's contract: done names the results, and the container keeps running (no restart).
tarball=$(cat "$results/done")
[ -f "$tarball" ] || fail "done names $tarball, which does not exist"
sleep 2
[ "$(docker inspect --format '{{.State.Running}}' "$name")" = true ] \
  || fail "the container exited after its audit: a DaemonSet would restart it and audit again"
docker logs "$name" >"$work/pod.log" 2>&1
docker rm -f "$name" >/dev/null

# The same audits from the build tree on the host.
suites=(--suite default --suite network --suite persistence --suite privileges --suite resources)
for profile in $profiles docker-hostpid docker-hostnet docker-host-shadow; do
  rc=0
  sandbox=$profile
  [ "$profile" = docker-host-shadow ] && sandbox=$work/docker-host-shadow.json
  "$build/sandprobe" run --sandbox "$sandbox" "${suites[@]}" --require-backend --no-progress \
    --no-color --json "$work/host-$profile.json" >"$work/host-$profile.log" 2>&1 || rc=$?
  echo "$rc" >"$work/host-$profile.exit"
done

"$py" - "$results" "$node" "$work" "$profiles docker-hostpid docker-hostnet docker-host-shadow" "$work/pod.log" "$profiles" <<'PY'
import json, sys
results, node, work, profiles, pod_log = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(), sys.argv[5]
# (profile, check id) -> why the pod's verdict may differ from the host's. Keep it true: an
# entry that did not differ is reported. The DaemonSet's own columns have none.
KNOWN_DIFFERENCES = {}
# The DaemonSet's own columns must be decided in full (no error, no inconclusive); the three
# profiles added by this test are compared with the host's verdicts only (docker-host-shadow's
# root in a uid-1000 workspace leaves priv.cwd inconclusive on both sides).
daemonset_columns = set(sys.argv[6].split())
# Verdicts that rest on the machine's momentary load, not on where the harness runs.
def timing(check_id):
    return check_id.startswith("limits.cpu")
problems, unused = [], set(KNOWN_DIFFERENCES)
for profile in profiles:
    try:
        pod = json.load(open(f"{results}/{node}--{profile}.json"))
    except (OSError, ValueError) as e:
        problems.append(f"{profile}: no report from the pod ({e})\n{open(pod_log).read()[-3000:]}")
        continue
    host = json.load(open(f"{work}/host-{profile}.json"))
    pod_rc = int(open(f"{results}/{node}--{profile}.exit").read())
    host_rc = int(open(f"{work}/host-{profile}.exit").read())
    for what in ("policy", "suite", "suites"):
        if what in pod and pod.get(what) != host.get(what):
            a, b = pod.get(what), host.get(what)
            na = a.get("name") if isinstance(a, dict) else a
            nb = b.get("name") if isinstance(b, dict) else b
            if na != nb:
                problems.append(f"{profile}: the pod's {what} {na}, the host's {nb}")
    p = {c["id"]: c["verdict"] for c in pod["checks"]}
    h = {c["id"]: c["verdict"] for c in host["checks"]}
    if not p:
        problems.append(f"{profile}: the pod's report has no checks")
    if set(p) != set(h):
        problems.append(f"{profile}: checks only in the pod's report {sorted(set(p) - set(h))}, "
                        f"only in the host's {sorted(set(h) - set(p))}")
    bad = sorted(k for k, v in p.items() if v in ("error", "inconclusive") and not timing(k))
    if bad and profile in daemonset_columns:
        problems.append(f"{profile}: error/inconclusive in the pod: {bad}")
    differ = []
    for k in sorted(set(p) & set(h)):
        if p[k] == h[k] or timing(k):
            continue
        if (profile, k) in KNOWN_DIFFERENCES:
            unused.discard((profile, k))
            print(f"fleet_image_test: {profile}: {k}: pod {p[k]}, host {h[k]}: known: "
                  f"{KNOWN_DIFFERENCES[(profile, k)]}", file=sys.stderr)
            continue
        differ.append(f"{k}: pod {p[k]} host {h[k]}")
    if differ:
        problems.append(f"{profile}: verdicts differ: " + "; ".join(differ))
    if pod_rc != host_rc:
        problems.append(f"{profile}: the pod's run exit {pod_rc}, the host's {host_rc}")
    counts = {v: sum(1 for x in p.values() if x == v) for v in sorted(set(p.values()))}
    same = sum(1 for k in p if p[k] == h.get(k))
    load = sorted(k for k in p if timing(k) and p[k] != h.get(k))
    print(f"fleet_image_test: {profile}: {len(p)} checks {counts}, exit {pod_rc}; "
          f"{same}/{len(p)} verdicts as on the host"
          + (f" (load-dependent, not compared: {', '.join(f'{k} pod {p[k]} host {h[k]}' for k in load)})" if load else ""),
          file=sys.stderr)
for k in sorted(unused):
    problems.append(f"KNOWN_DIFFERENCES lists {k}, which did not differ: remove it")
# The node's file shown in the sandbox is the node's data to the pod too (read through
# --host-root /proc/1/root, which the pod's report names), never a decoy.
try:
    shadow = json.load(open(f"{results}/{node}--docker-host-shadow.json"))
    verdicts = {c["id"]: c["verdict"] for c in shadow["checks"]}
    for k in ("fs.read.denied:/etc/shadow", "fs.alias.denied:/etc/shadow[symlink]"):
        if verdicts.get(k) != "fail":
            problems.append(f"docker-host-shadow: {k} is {verdicts.get(k)} in the pod, not fail: the "
                            "pod's witnesses did not read the node's /etc/shadow")
    root = shadow.get("witnesses", {}).get("host_paths", {}).get("host_root")
    if root != "/proc/1/root":
        problems.append(f"docker-host-shadow: the pod's report says host_paths.host_root {root!r}, not /proc/1/root")
except (OSError, ValueError) as e:
    problems.append(f"docker-host-shadow: no report from the pod ({e})")
if problems:
    print("\n".join("fleet_image_test: FAIL: " + x for x in problems), file=sys.stderr)
    sys.exit(1)
PY
# The node's reports become one table, as docs/fleet.md says to merge them.
"$build/sandprobe" matrix "$results/$node"--*.json --json "$work/matrix.json" --markdown "$work/matrix.md" \
  >"$work/matrix.log" 2>&1 || { cat "$work/matrix.log" >&2; fail "sandprobe matrix of the pod's reports failed"; }
columns=$("$py" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["sandboxes"]))' "$work/matrix.json")
reports=$(ls "$results/$node"--*.json | wc -l)
[ "$columns" = "$reports" ] || fail "sandprobe matrix made $columns columns of $reports reports"
echo "fleet_image_test: sandprobe matrix: $(head -n1 "$work/matrix.log")" >&2
echo "fleet_image_test: ok in $(( $(date +%s) - start )) s" >&2
