// RunProfile: one `sandprobe run` of one sandbox profile, from loading to verdicts.
//
// Load -> plan -> witnesses up -> preflight -> launches -> witnesses down -> evaluate.
// The caller writes the reports and turns the verdicts into an exit code.
#pragma once

#include <atomic>
#include <string>

#include "runner/launcher.h"
#include "runner/run_report.h"
#include "runner/status.h"

namespace sandprobe {

struct RunOptions {
  std::string profile_path;
  std::string policy_path;  // empty: the policy the profile names
  std::string suite_path;   // the suite to expand against the policy
  std::string probe_dir;    // host directory holding only sandprobe-probe
  // When the backend's preflight fails: false -> every check is skip (with the reason);
  // true -> every check is error (CI runs with backends required).
  bool require_backend = false;
  bool keep_run_dir = false;  // keep /var/tmp/sandprobe-<run_id> for debugging
  std::string tool_version;
  const std::atomic<bool>* cancel = nullptr;  // set on SIGINT/SIGTERM
};

// A non-ok Status means invalid input (exit 2): a profile, policy or suite that does not load,
// or a probe directory without the probe. Everything that goes wrong later is in the report.
StatusOr<RunReport> RunProfile(const RunOptions& options, Launcher& launcher);

}  // namespace sandprobe
