// RunDir: the directory one run owns — its workspace (shared with the sandbox), the host
// canary, and owner.json, its entry in the run registry (launch/run_registry.h).
//
// What becomes of it when the run ends is decided, not defaulted: removed; kept for debugging
// (--keep-run-dir, marked so no sweep takes it); or left for a sweep, when something the run
// made may still exist (a cleanup and the sweep failed, or the deadline cut them). Then the
// registry entry is the only record of the orphan: `sandprobe sweep` (and the next run, which
// sweeps dead runs first) lists and removes it once this process has exited.
#pragma once

#include <string>

#include "model/status.h"

namespace sandprobe {

enum class RunDirFate {
  kRemove,         // the run cleaned up after itself
  kKeep,           // --keep-run-dir: marked kept, never swept
  kLeaveForSweep,  // objects may remain: the registry entry stays for `sandprobe sweep`
};

class RunDir {
 public:
  // Creates <parent>/sandprobe-<run_id>/workspace (mode 0777: sandboxes run the probe as any
  // uid) and claims it (owner.json), before anything is launched.
  static StatusOr<RunDir> Create(const std::string& parent, const std::string& run_id,
                                 const std::string& profile_path);
  RunDir(RunDir&& other) noexcept;
  RunDir& operator=(RunDir&&) = delete;
  ~RunDir();  // applies the fate; kRemove unless Finish said otherwise

  void Finish(RunDirFate fate) { fate_ = fate; }
  const std::string& root() const { return root_; }
  std::string workspace() const { return root_ + "/workspace"; }

 private:
  explicit RunDir(std::string root) : root_(std::move(root)) {}
  std::string root_;
  RunDirFate fate_ = RunDirFate::kRemove;
};

}  // namespace sandprobe
