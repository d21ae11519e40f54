#include "families/batch_result.h"

#include <fmt/format.h>

#include "contract/frame_reader.h"

namespace sandprobe {

namespace {

// How a launch that started ended, in words: "exit 1", "killed by signal 9", "timed out".
std::string DescribeEnd(const LaunchRecord& record, const BatchResult::End& end) {
  if (record.timed_out) return "timed out";
  if (record.signal) return fmt::format("killed by signal {}", *record.signal);
  if (end.exit_code != record.exit_code) {
    return fmt::format("exit {} (the sandbox's exit status line; the sandbox process exited 0)",
                       *end.exit_code);
  }
  if (record.exit_code) return fmt::format("exit {}", *record.exit_code);
  return record.error;
}

// The launch's exit status: the process's own, unless the process exited 0 and the stream
// ended with an exit status line (contract/frame_reader.h, kExitLinePrefix), which then says what the probe
// did inside (a VM monitor exits 0 whatever its guest did). A process that failed keeps its
// own status: the line cannot hide a failing sandbox.
std::optional<int> LaunchExitCode(const LaunchRecord& record) {
  if (record.exit_code == 0 && !record.signal && record.frames.exit_status) {
    return record.frames.exit_status;
  }
  return record.exit_code;
}

// Why the launch's status is unknown to a profile that promised an exit status line; empty
// when the stream ended with a valid one or the profile takes the process's status.
std::string MissingExitLine(const LaunchRecord& record, ProbeExit probe_exit) {
  switch (probe_exit) {
    case ProbeExit::kProcess: return "";
    case ProbeExit::kExitLine:
      if (record.frames.exit_status) return "";
      return fmt::format("no valid final \"{}N\" line, and the profile takes the probe's status "
                         "from it (probe_exit: exit_line), so the status is unknown",
                         kExitLinePrefix);
  }
  return "";
}

}  // namespace

BatchResult ToBatchResult(const LaunchRecord& record, const std::string& nonce,
                          ProbeExit probe_exit) {
  BatchResult result;
  result.launch_id = record.id;
  result.nonce = nonce;
  result.frames = record.frames;
  result.wall_ms = record.wall_ms;
  for (const LeftoverProcess& p : record.leftover_processes) result.leftover_processes.push_back(p.argv);
  for (const LeftoverProcess& p : record.alive_at_timeout) result.alive_at_timeout.push_back(p.argv);
  // A launch that started is judged, whatever it printed: host witnesses (a canary that got
  // this launch's nonce) prove leaks without a single frame.
  const bool started = record.exit_code || record.signal || record.timed_out ||
                       !record.frames.facts.empty();
  if (!started) {
    result.state = record.error == "interrupted" ? BatchResult::State::kInterrupted
                                                 : BatchResult::State::kLaunchFailed;
    result.reason = record.error;
    return result;
  }
  result.state = BatchResult::State::kRan;
  result.end = {LaunchExitCode(record), record.signal, record.timed_out, record.error};
  // The sandbox's exit status is the host's own fact: complete frames followed by exit 1 or a
  // signal are not a clean run (the probe exits 0 after its done frame).
  const bool clean_exit = result.end.exit_code == 0 && !record.signal;
  // A sandbox command that anyone could have replaced (a writable directory, a stranger's file)
  // may print any frames it likes: what it says decides nothing but the leaks it proves. Where
  // PATH found it (~/.local/bin, /snap/bin) is only warned about: its path and hash are recorded.
  const bool trusted_program = !record.executable_forgeable;
  // A profile whose status comes from the exit status line (a VM) proves nothing by exit 0.
  const std::string missing_exit_line = MissingExitLine(record, probe_exit);
  result.complete = record.error.empty() && !record.timed_out && clean_exit && trusted_program &&
                    missing_exit_line.empty() && FramesComplete(record.frames);
  if (!result.complete) {
    std::string frames = DescribeFrameProblems(record.frames);
    if (!missing_exit_line.empty()) {
      frames = frames.empty() ? missing_exit_line : missing_exit_line + "; " + frames;
    }
    if (frames.empty() && !trusted_program) {
      frames = fmt::format("the sandbox command ran {}: {}", record.executable, record.executable_warning);
    }
    if (frames.empty()) frames = "all frames complete, but the sandbox did not exit 0";
    std::string stderr_line = record.stderr_tail.substr(0, record.stderr_tail.find('\n'));
    result.reason = fmt::format("{}; {}{}", DescribeEnd(record, result.end), frames,
                                stderr_line.empty() ? "" : "; stderr: " + stderr_line.substr(0, 200));
  }
  return result;
}

}  // namespace sandprobe
