// The probe directory a run hands to its sandboxes ({probe_dir}).
//
// Sandboxes may start as an unprivileged host user (bwrap-strict runs bwrap as `nobody`), so
// the probe must be reachable by any uid: every directory on its path searchable by others and
// the binary readable and executable by others. A checkout below a private directory (/root,
// mode 0700) is not; then the run uses a copy in its own run directory (mode 0755), which the
// run removes with everything else. A copy, not a hard link: a sandbox that could write the
// probe must not be able to change the build's binary.
#pragma once

#include <string>

#include "model/status.h"

namespace sandprobe {

// True when `path` and every directory above it let any uid reach it (o+x on directories,
// `other_bits` on `path` itself, e.g. S_IROTH | S_IXOTH).
bool ReachableByAnyUid(const std::string& path, unsigned other_bits);

// `probe_dir` when its sandprobe-probe is reachable by any uid, else a copy under `run_dir`.
StatusOr<std::string> ProbeDirForSandboxes(const std::string& probe_dir, const std::string& run_dir);

}  // namespace sandprobe
