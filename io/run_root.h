// The run root: where sandprobe keeps what must outlive one process on this machine: the run
// dirs of the run registry (launch/run_registry.h) and the journal of report writes in flight
// (io/report_temp.h), both read back by `sandprobe sweep` and the start-up sweep of every run.
#pragma once

#include <string>

namespace sandprobe {

// /var/tmp, not /tmp: many sandboxes put a tmpfs on /tmp, which would hide the canary from a
// sandbox that otherwise sees the whole host. SANDPROBE_RUN_ROOT (an absolute path) replaces it
// for `run` and `sweep` alike: runs under another root are invisible to each other's sweeps
// (tests that kill a runner use one so a concurrent run does not sweep their evidence first).
inline constexpr const char* kRunDirParent = "/var/tmp";
inline constexpr const char* kRunRootEnv = "SANDPROBE_RUN_ROOT";
std::string RunDirParent();

}  // namespace sandprobe
