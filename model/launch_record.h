// LaunchRecord: the facts of one sandbox launch, as the reports keep them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/frame_reader.h"
#include "model/leftover_process.h"

namespace sandprobe {

struct LaunchRecord {
  std::string id;        // "L1", "L2", ... unique within a run
  std::string instance;  // the sandbox instance name ({instance})
  std::string purpose;   // "probe", "cleanup", "start", "stop", "sweep", "requires"
  std::vector<std::string> argv;  // as run, placeholders expanded
  std::optional<int> exit_code;   // set when the process exited
  std::optional<int> signal;      // set when a signal ended it
  bool timed_out = false;         // the harness killed it at its timeout
  std::int64_t wall_ms = 0;
  std::string stdout_tail;  // capped; raw bytes (reports sanitize)
  std::string stderr_tail;
  std::string error;        // harness-level failure, e.g. "execve(bwrap): ENOENT"
  // How the run's deadline (--timeout) cut this launch short: "not started: the run's deadline
  // had passed" or "timeout cut from 60000 ms to 1200 ms by the run's deadline" (only when it
  // then timed out); "" when it was not cut (launch/deadline.h).
  std::string cut_short;
  // The program that ran (LaunchResult::executable*): absolute path as resolved in the
  // child's PATH and exec'd, SHA-256 of the file, and why it is easy to forge ("" if not).
  // All "" when the launch did not start.
  std::string executable;
  std::string executable_sha256;
  std::string executable_warning;
  ProbeFrames frames;       // only for purpose == "probe"
  // Processes of this launch that outlived its direct child and were SIGKILLed by the
  // launcher (LaunchResult::leftovers_killed): proof that something kept running after the
  // invocation ended. The report has "leftover_processes" only when this is non-empty.
  std::vector<LeftoverProcess> leftover_processes;
  // Only when the harness's timeout ended the launch: its process tree at that moment, read
  // before the kill (LaunchResult::alive_at_timeout). "alive_at_timeout" in the report.
  std::vector<LeftoverProcess> alive_at_timeout;
  // Processes that outlived the launch and were left running because the policy says they
  // survive it (LaunchResult::leftovers_spared). "spared_processes" in the report.
  std::vector<LeftoverProcess> spared_processes;
  // LaunchResult::executable_forgeable: executable_warning is a reason to distrust the
  // program's frames, not only a note of where PATH found it. Judged at run time only (the
  // report keeps the warning text; a re-judge reads verdicts, not frames).
  bool executable_forgeable = false;
};

}  // namespace sandprobe
