// The pids cgroup of one launch (LaunchEnvelope::pids_max), because RLIMIT_NPROC does not bind
// root. Part of the launcher (launch/launcher.cc is the only user): the child joins it itself
// before exec by writing "0" to procs_path() (launch/launch_child_setup.h; "0" moves the
// writer on v1 and v2 alike). Joining in the child rather than clone3(CLONE_INTO_CGROUP): the
// launcher forks through Boost.Process, and nothing of the launched program runs before exec,
// so the only difference is the few instructions the child runs outside the cgroup.
//
// Two layouts, told apart by <root>/cgroup.controllers (present only on a unified mount):
//
//  v1 (and hybrid hosts): <root>/pids/sandprobe/<pid>-<start ticks>-<n>, as the pids
//     hierarchy is shared by the whole machine.
//
//  v2: only inside the harness's own cgroup (the "0::" line of /proc/self/cgroup), never
//     elsewhere. v2's "no internal processes" rule lets a cgroup hand the pids controller to
//     its children only while it has no processes itself, and the harness is in it. So the
//     first launch moves the harness (and any of its own children still there, e.g. a canary
//     process) into a leaf <own>/sandprobe-harness, writes "+pids" to <own>/cgroup.subtree_control,
//     and makes each launch's cgroup beside it: <own>/sandprobe-launch-<pid>-<start ticks>-<n>.
//     When that is refused (the controller not delegated to <own>, other processes that are
//     not the harness's in <own>: EBUSY, a read-only cgroupfs), the harness moves back and every
//     launch runs without the cgroup, its envelope note saying why. The empty leaf stays after
//     the run (the harness cannot remove the cgroup it is in); the next run reuses it. To get
//     the envelope on a systemd host, give sandprobe a delegated cgroup of its own:
//     `systemd-run --scope -p Delegate=yes sandprobe run ...`.
//
// A name carries the harness's pid and start time so that `sandprobe sweep` removes exactly
// what a killed harness left (RemoveLeftLaunchCgroups), never another harness's cgroups.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "model/status.h"

namespace sandprobe {

// The cgroup filesystem and this process's cgroup file; tests point both into a fake tree,
// and give mkdir/rmdir that do what the kernel does there (make or drop the interface files).
struct CgroupFs {
  std::string root = "/sys/fs/cgroup";
  std::string self_cgroup = "/proc/self/cgroup";
  std::function<int(const std::string&)> mkdir;  // empty: mkdir(2), mode 0755; -1 and errno
  std::function<int(const std::string&)> rmdir;  // empty: rmdir(2)
};

enum class CgroupLayout { kV1, kV2 };
// kV2 when <root>/cgroup.controllers exists, else kV1.
CgroupLayout DetectCgroupLayout(const std::string& root);

// The leaf the harness moves itself into on v2, under its own cgroup.
inline constexpr const char* kHarnessLeaf = "sandprobe-harness";

// The directory and name prefix of this process's launch cgroups, joined:
// "/sys/fs/cgroup/pids/sandprobe/4242-981234-" (v1) or
// "/sys/fs/cgroup/user.slice/x.scope/sandprobe-launch-4242-981234-" (v2). Nothing is made.
// The run registry records it, so that a sweep finds what a killed harness left.
StatusOr<std::string> LaunchCgroupPrefix(const CgroupFs& fs = {});

// One launch's cgroup: none until Make(), gone (with everything inside) after Remove() or
// destruction.
class PidsCgroup {
 public:
  explicit PidsCgroup(CgroupFs fs = {}) : fs_(std::move(fs)) {}
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
  // Gives up the cgroup without removing it, returning its directory ("" unless made()): for
  // a launch that leaves processes running in it on purpose; the caller removes it later
  // (RemoveCgroupDir).
  std::string Release();

 private:
  CgroupFs fs_;
  std::string dir_, procs_;  // empty unless made()
};

// Kills every process in cgroup `dir` (cgroup.kill where the kernel has it, else each member
// of cgroup.procs through a pidfd, confirmed a member after the pin), child cgroups first,
// then removes it. "" or what failed: "rmdir(<dir>): EBUSY".
std::string RemoveCgroupDir(const std::string& dir, const CgroupFs& fs = {});

// What a killed harness left, for `sandprobe sweep`.
struct LeftCgroups {
  std::vector<std::string> removed;  // in a dry run: what would be removed
  std::vector<std::string> errors;
};
// The launch cgroups of the harness (pid, start ticks) under `recorded_prefix` (what
// LaunchCgroupPrefix gave that harness): each emptied and removed. A prefix outside
// `fs.root`, or not named for that harness, is refused (it came from a file in /var/tmp).
LeftCgroups RemoveLeftLaunchCgroups(const std::string& recorded_prefix, int pid,
                                    unsigned long long start_ticks, bool dry_run,
                                    const CgroupFs& fs = {});

}  // namespace sandprobe
