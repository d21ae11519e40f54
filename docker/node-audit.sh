#!/bin/sh
# The node audit: the command of sandprobe/sandprobe (docker/build-sandprobe-image.sh) and of the
# DaemonSet in deploy/kubernetes/, one pod per node. For each sandbox profile named on the
# command line it runs one `sandprobe run` on this node and writes its JSON report to
#   $SANDPROBE_RESULTS_DIR/<node>--<profile>.json   (and <node>--<profile>.exit: its exit code)
# then packs the reports for Sonobuoy and holds (see below). Merge the reports of every node with
# `sandprobe matrix REPORT.json... --markdown F --json F --html F`.
#
# usage: node-audit.sh PROFILE...   (a profile name or file; default docker-hardened)
# environment:
#   NODE_NAME              the node (the downward API's spec.nodeName); default: hostname
#   SANDPROBE_NODE_DIR     a node directory mounted at the same path inside the pod (required).
#                          The node's docker daemon resolves a profile's `-v SRC:DST` on the node,
#                          not in this pod: the probe directory and the runs' workspaces (and so
#                          the host canary and the persistence witnesses) must sit where the node
#                          sees them, at the same path.
#   SANDPROBE_RESULTS_DIR  where the reports go (default /tmp/sonobuoy/results, Sonobuoy's)
#   SANDPROBE_SUITES       the suites, space-separated (default: all five)
#   SANDPROBE_POLICY       a policy to judge every profile against (default: each profile's own)
#   SANDPROBE_HOLD         1 (default): after the reports, sleep instead of exiting, since a
#                          DaemonSet restarts a container that exits and the audit would repeat;
#                          0: exit with the worst exit code of the runs.
set -u

die() { echo "node-audit: $*" >&2; exit 2; }

node=${NODE_NAME:-$(hostname)}
node_dir=${SANDPROBE_NODE_DIR:-}
results=${SANDPROBE_RESULTS_DIR:-/tmp/sonobuoy/results}
suites=${SANDPROBE_SUITES:-default network persistence privileges resources}
# The node's own files and mount table, what a sandbox's view is compared with: the pod's root is
# its image's, the node's is its init's (hostPID). Set it empty to read the pod's own.
host_root=${SANDPROBE_HOST_ROOT-/proc/1/root}
[ -n "$node_dir" ] || die "SANDPROBE_NODE_DIR is not set: a node directory mounted at its own path (hostPath)"
[ -d "$node_dir" ] || die "SANDPROBE_NODE_DIR=$node_dir is no directory (is the hostPath mounted?)"
[ $# -ge 1 ] || set -- docker-hardened

mkdir -p "$node_dir/probe" "$node_dir/run" "$results" || die "mkdir under $node_dir or $results failed"
# The probe where the node's daemon can bind it from: a copy of the package's.
cp /usr/lib/sandprobe/sandprobe-probe "$node_dir/probe/sandprobe-probe" \
  || die "copying the probe into $node_dir/probe failed"
# The images the docker profiles run, built on the node's daemon (FROM scratch, no registry).
if [ -S /var/run/docker.sock ]; then
  /usr/share/sandprobe/docker/build-images.sh || die "build-images.sh on the node's docker failed"
fi

suite_args=""
for suite in $suites; do suite_args="$suite_args --suite $suite"; done
worst=0
for profile in "$@"; do
  name=$(basename "$profile" .json)
  report="$results/$node--$name.json"
  echo "node-audit: $node: sandprobe run --sandbox $profile$suite_args" >&2
  # shellcheck disable=SC2086  # suite_args is word lists on purpose
  SANDPROBE_RUN_ROOT=$node_dir/run sandprobe run --sandbox "$profile" $suite_args \
    ${SANDPROBE_POLICY:+--policy "$SANDPROBE_POLICY"} ${host_root:+--host-root "$host_root"} \
    --probe-dir "$node_dir/probe" --require-backend --no-progress --no-color --json "$report"
  rc=$?
  echo "$rc" > "$results/$node--$name.exit"
  [ "$rc" -gt "$worst" ] && worst=$rc
  echo "node-audit: $node: $name: exit $rc, $report" >&2
done

# Sonobuoy's contract for a plugin: the results' path written to <results>/done.
tarball="$results/sandprobe-$node.tar.gz"
(cd "$results" && tar -czf "$tarball" --exclude "$(basename "$tarball")" --exclude done -- "$node"--*) \
  || die "packing the reports into $tarball failed"
echo "$tarball" > "$results/done"
echo "node-audit: $node: done (worst exit $worst)" >&2

if [ "${SANDPROBE_HOLD:-1}" = 1 ]; then
  exec sleep infinity
fi
exit "$worst"
