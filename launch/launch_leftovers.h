// Leftovers of a launch: processes still alive when its direct child has ended. Part of the
// launcher (launch/launcher.cc is the only caller); its own file because finding them is a
// concept of its own.
//
// Two kinds:
//  - group stragglers: still in the launch's process group (`sleep 600 &`). The launcher
//    stops the group, lists it here, then SIGKILLs it.
//  - escaped orphans: left the group (double fork + setsid, a daemon). Only findable when the
//    harness is a child subreaper (BecomeChildSubreaper): then they are reparented to it, not
//    to init, and show up as its children that no launch started.
//
// Which launch does an orphan descend from? Launch() runs on several threads at once, and
// nothing in /proc records a dead parent. We considered a cgroup per launch (exact, but needs
// a writable cgroup tree the harness may not have, e.g. inside a container) and chose a
// registry of live launches, in this order of evidence:
//   1. its process group is a live launch's (it did not setsid);
//   2. its environment carries a live launch's marker (kLaunchMarkerEnv, set by the launcher in
//      every child and inherited unless a sandbox clears the environment);
//   3. its argv has a live launch's orphan tag (LaunchSpec::orphan_tag) as an element: a
//      process that clears its environment but names its instance (podman's conmon);
//   4. otherwise its start time (field 22 of /proc/<pid>/stat): the live launch that started
//      last at or before it. Exact when one launch runs at a time (a run's probe launches are
//      sequential; the witnesses' long-lived launches started earlier).
// Spawning and scanning exclude each other (LockSpawns), so a concurrent launch's child
// between fork and registration is never mistaken for an orphan.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/leftover_process.h"
#include "launch/proc_info.h"

namespace sandprobe {

// Set in every launched child's environment to its launch's marker ("<runner pid>-<seq>").
inline constexpr const char* kLaunchMarkerEnv = "SANDPROBE_LAUNCH_ID";

// A launch whose orphans may still appear.
struct LiveLaunch {
  std::uint64_t seq = 0;   // registration order
  int child_pid = 0;       // also the launch's process group id
  bool child_reaped = false;
  unsigned long long start_ticks = 0;  // the child's
  std::string marker;
  std::string orphan_tag;  // LaunchSpec::orphan_tag; empty: none
};

// The rules above, pure: the seq of the launch `orphan` descends from, or nullopt. `environ`
// is its raw /proc/<pid>/environ (empty when unreadable).
// `cmdline`: its raw /proc/<pid>/cmdline (empty when unreadable or not read).
std::optional<std::uint64_t> AttributeOrphan(const ProcStat& orphan, std::string_view environ,
                                             const std::vector<LiveLaunch>& live, std::string_view cmdline = {});

// One launch in the process-wide registry, from before its spawn until its orphans are gone.
class LaunchRegistration {
 public:
  LaunchRegistration();
  ~LaunchRegistration();
  LaunchRegistration(const LaunchRegistration&) = delete;
  LaunchRegistration& operator=(const LaunchRegistration&) = delete;

  const std::string& marker() const { return marker_; }
  // Before Register: the launch's LaunchSpec::orphan_tag.
  void set_orphan_tag(std::string tag) { orphan_tag_ = std::move(tag); }
  // Held from before fork until the child is registered (or a failed one reaped).
  static std::unique_lock<std::mutex> LockSpawns();
  void Register(int child_pid, const std::unique_lock<std::mutex>& spawn_lock);
  void MarkReaped();
  // SIGKILLs and reaps, round after round until none is left, the runner's children that
  // descend from this launch; returns those that were alive and not in the launch's own group
  // (StopAndListGroup has those), with the argv read before the kill. Does nothing unless the
  // process is a child subreaper. Call it once the group is killed (the child may still be an
  // unreaped zombie) and again after the reap, for members that died late.
  // An orphan whose argv has the element `spare_arg` (when non-empty) is left alive and added
  // to `spared` (once), and no launch takes it for its own while it lives.
  std::vector<LeftoverProcess> KillOrphans(const std::string& spare_arg = "",
                                           std::vector<LeftoverProcess>* spared = nullptr);

 private:
  std::uint64_t seq_;
  std::string marker_;
  std::string orphan_tag_;
  int child_pid_ = 0;
};

// SIGSTOPs process group `pgid` (so nothing in it forks or execs meanwhile) and lists its
// live members other than `pgid` itself, with their argv. The caller kills the group.
std::vector<LeftoverProcess> StopAndListGroup(int pgid);

}  // namespace sandprobe
