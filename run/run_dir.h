// RunDir: the directory one run owns — its workspace (shared with the sandbox), the host
// canary, and owner.json, its entry in the run registry (launch/run_registry.h).
//
// Who may write what (issue 25, safe as root on a shared machine): the run dir is the harness
// user's, mode 0755 (the sandbox's uid must reach the workspace, the probe dir and the canary:
// a host-view sandbox must be stopped from reading the canary by the sandbox, not by this
// directory's mode); owner.json is 0600; the workspace is 0700 and belongs to the sandbox's uid
// alone (run/workspace_owner.h). Nothing in it is writable by another local user.
//
// What becomes of it when the run ends is decided, not defaulted: removed; kept for debugging
// (--keep-run-dir, marked so no sweep takes it); or left for a sweep, when something the run
// made may still exist (a cleanup and the sweep failed, or the deadline cut them). Then the
// registry entry is the only record of the orphan: `sandprobe sweep` (and the next run, which
// sweeps dead runs first) lists and removes it once this process has exited.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "load/profile.h"
#include "model/status.h"

namespace sandprobe {

enum class RunDirFate {
  kRemove,         // the run cleaned up after itself
  kKeep,           // --keep-run-dir: marked kept, never swept
  kLeaveForSweep,  // objects may remain: the registry entry stays for `sandprobe sweep`
};

class RunDir {
 public:
  // Creates <parent>/sandprobe-<run_id> and its workspace as above, and claims it (owner.json),
  // before anything is launched. A run dir that exists already is an error, never reused.
  static StatusOr<RunDir> Create(const std::string& parent, const std::string& run_id, const Profile& profile);
  RunDir(RunDir&& other) noexcept;
  RunDir& operator=(RunDir&&) = delete;
  ~RunDir();  // applies the fate; kRemove unless Finish said otherwise

  // Records the profile's sweep commands, expanded for this run (run/recorded_sweep.h), so a
  // sweep of this run if it dies never reads the profile file. Call before the first launch.
  Status RecordSweeps(const Profile& profile, const std::string& probe_dir) const;

  // The filesystem of the workspace as the host sees it (statvfs): {"path", "bytes_free",
  // "inodes_free", "read_only", "full"}. "full": under kFullBelowBytes or no inode left. A
  // probe's write there that fails for space is the harness's disk, not the sandbox's policy.
  nlohmann::json DiskFacts() const;
  // Below this much space for unprivileged users the run root counts as full: more than any
  // write of a probe into the workspace (a nonce, a token file) and the harness's own files.
  static constexpr unsigned long long kFullBelowBytes = 1 << 20;

  void Finish(RunDirFate fate) { fate_ = fate; }
  const std::string& root() const { return root_; }
  std::string workspace() const { return root_ + "/workspace"; }

 private:
  RunDir(std::string root, std::string run_id) : root_(std::move(root)), run_id_(std::move(run_id)) {}
  std::string root_;
  std::string run_id_;
  RunDirFate fate_ = RunDirFate::kRemove;
};

}  // namespace sandprobe
