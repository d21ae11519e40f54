// The pids cgroup of one launch (LaunchEnvelope::pids_max): a cgroup v1 directory
// <root>/<runner pid>-<n> with pids.max set, because RLIMIT_NPROC does not bind root. Part of
// the launcher (runner/launcher.cc is the only user): the child joins it itself before exec,
// through procs_path() (runner/launch_child_setup.h).
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "runner/status.h"

namespace sandprobe {

// Where every launch's pids cgroup is made (the directory itself is made when missing).
inline constexpr const char* kPidsCgroupRoot = "/sys/fs/cgroup/pids/sandprobe";

// One launch's cgroup: none until Make(), gone (with everything inside) after Remove() or
// destruction.
class PidsCgroup {
 public:
  // `root` other than kPidsCgroupRoot is for tests.
  explicit PidsCgroup(std::string root = kPidsCgroupRoot) : root_(std::move(root)) {}
  ~PidsCgroup() { Remove(); }
  PidsCgroup(const PidsCgroup&) = delete;
  PidsCgroup& operator=(const PidsCgroup&) = delete;

  // Makes the cgroup with this pids.max. The error is the launch's envelope note, and the
  // launch runs without the cgroup: "pids cgroup unavailable: mkdir(<dir>): EROFS".
  Status Make(std::int64_t pids_max);
  bool made() const { return !dir_.empty(); }
  // The file the child writes "0" to, to join; empty unless made().
  const std::string& procs_path() const { return procs_; }
  // Every process still inside is killed (one that left the launch's process group with
  // setsid included), then the cgroup is removed. Does nothing unless made().
  void Remove();

 private:
  std::string root_;
  std::string dir_, procs_;  // empty unless made()
};

}  // namespace sandprobe
