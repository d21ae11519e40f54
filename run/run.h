// RunProfile: one `sandprobe run` of one sandbox profile, from loading to verdicts.
//
// Load -> prepare (run dir, canaries) -> witnesses up -> plan -> launches -> housekeeping
// (close, teardown, sweep) -> witnesses down -> judge; the phases are the methods of the Run
// in run.cc. The caller writes the reports and turns the verdicts into an exit code.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "gate/check_selection.h"
#include "launch/launcher.h"
#include "load/run_inputs.h"
#include "run/probe_builds.h"
#include "run/run_environment.h"
#include "model/run_report.h"
#include "model/status.h"
#include "witnesses/witness_host_view.h"

namespace sandprobe {

struct RunOptions {
  std::string profile_path;
  std::string policy_path;  // empty: the policy the profile names
  // The suites to expand against the policy, merged into one plan (MergeSuites): a family
  // two suites name is planned once, and the shared launch serves all of them.
  std::vector<std::string> suite_paths;
  // The profile, policy and suites already loaded from the paths above (`sandprobe run` loads
  // every sandbox's before the first run: PreloadRunInputs); unset: the run loads them itself.
  std::optional<RunInputs> inputs;
  // --probe-dir: the host directory holding the profile's probe (whatever its runtime); empty:
  // the data layout's directory for that runtime (load/data_dir.h ProbeDirFor, from
  // `layout_probe_dir`, the native probe's: DataPaths::probe_dir).
  std::string probe_dir;
  std::string layout_probe_dir;
  // What this build made (BuiltProbes(), linked into the sandprobe binary): the run injects
  // only a probe that hashes to its row, and refuses a launch whose hello is not that probe's
  // (run/probe_dir.h). Empty: no runtime's probe can be verified, and a run of one is refused.
  std::span<const ProbeBuild> probe_builds;
  // When the backend's preflight fails: false (the default) -> every check it keeps from being
  // judged is error, exit 3; true (--allow-missing-backend) -> skip, with the reason, and the
  // report's backend_skipped says so. A backend that answered in the run and then went away is
  // error either way.
  bool allow_missing_backend = false;
  bool keep_run_dir = false;  // keep /var/tmp/sandprobe-<run_id> for debugging
  // --host-root: where the witnesses read the host's own files and mount table (a node's root
  // from a pod: witnesses/witness_host_view.h); default: the harness's own.
  HostView host;
  std::string tool_version;
  const std::atomic<bool>* cancel = nullptr;  // set on SIGINT/SIGTERM
  // -j: shared launches at once (the shared launch is split by family group); exclusive
  // launches run alone, but for those with an overlap chain (LaunchBatch::overlap_chain), which
  // run beside the others and take no slot.
  int jobs = 1;
  // --timeout: the whole run's limit; 0 = none. Launches still running are killed, the rest
  // never start; their checks are errors and the report says interrupted. Housekeeping
  // (start, inspect, cleanup, teardown, sweep, requires) shares the same deadline: each step
  // gets what is left, and the report names the steps it cut (RunReport::cut_short).
  std::chrono::seconds run_timeout{0};
  // --check / --skip: which of the planned checks run (SelectChecks, after ExpandChecks).
  CheckSelection selection;
  // The watchdog: no launch started or ended for this long stops the run (0: the longest
  // launch timeout + 3 min of housekeeping), and after `stall_grace` more calls on_stalled.
  std::chrono::seconds stall_after{0};
  std::chrono::seconds stall_grace{30};
  std::function<void(const std::string& why)> on_stalled;
  // Live progress (a TTY line): checks decided, all checks, the launches running now.
  // Called from the launches' threads, one call at a time.
  std::function<void(std::size_t done, std::size_t total, const std::string& running)> on_progress;
};

// A non-ok Status is either invalid input (StatusCode::kInvalidInput: a profile, policy or
// suite that does not load, a probe that is not the one this build made, before a launch by its
// hash or after by its hello; exit 2) or a harness failure before any verdict (kHarness: no run
// dir, no probe binary, a witness that cannot start; exit 3). Everything else that goes wrong
// later is in the report.
StatusOr<RunReport> RunProfile(const RunOptions& options, const RunEnvironment& env);
// The same in the real environment (RealRunEnvironment(launcher)).
StatusOr<RunReport> RunProfile(const RunOptions& options, Launcher& launcher);

}  // namespace sandprobe
