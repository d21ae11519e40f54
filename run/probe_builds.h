// The probes this build made, as the build knows them: for each runtime, the build id stamped
// into the probe, the SHA-256 of the built file and the families it implements. Generated at
// build time (cmake/ProbeBuilds.cmake) and linked into the sandprobe binary only, which hands
// it to each run (RunOptions::probe_builds): the harness knows what it injects without asking
// the probe, so it can check the file before a launch and the hello after (issue 25: the
// probe that ran is ours), and plan only the families the probe can express.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "contract/probe_runtime.h"

namespace sandprobe {

struct ProbeBuild {
  ProbeRuntime runtime;
  std::string build_id;               // the hello's "build_id"
  std::string sha256;                 // of the file the build put in the runtime's probe dir
  std::vector<std::string> families;  // sorted; the hello's "families"
};

// Generated (build/generated/probe_builds.cc): every probe of this build, one per runtime.
std::span<const ProbeBuild> BuiltProbes();

// The row of `runtime` in `builds`, or null when this build made no probe for it.
inline const ProbeBuild* FindProbeBuild(std::span<const ProbeBuild> builds, ProbeRuntime runtime) {
  for (const ProbeBuild& build : builds) {
    if (build.runtime == runtime) return &build;
  }
  return nullptr;
}

}  // namespace sandprobe
