// Killing processes the harness did not start itself (what `sandprobe sweep` finds by token,
// what a persistence probe left on the host, what is left in a launch's pids cgroup) without
// the pid-reuse race of a /proc scan followed by kill(pid): each process is pinned with a
// pidfd first, then confirmed to still be the one meant (its argv, its parent, its cgroup, read
// after the pin), and only then signalled through the pidfd. A pid recycled since the scan is
// never hit: the pidfd names the old process, and a signal to it fails with ESRCH.
//
// On Linux < 5.3 (no pidfd_open) the pid itself is used and the small race of kill(2) remains.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/leftover_process.h"

namespace sandprobe {

// One process held by a pidfd (or by its bare pid where pidfds are missing). Move-only.
class PinnedProcess {
 public:
  // nullopt when the process is gone (or was never there).
  static std::optional<PinnedProcess> Open(int pid);
  PinnedProcess(PinnedProcess&& other) noexcept;
  PinnedProcess& operator=(PinnedProcess&& other) noexcept;
  PinnedProcess(const PinnedProcess&) = delete;
  PinnedProcess& operator=(const PinnedProcess&) = delete;
  ~PinnedProcess();

  int pid() const { return pid_; }
  // 0, or the errno of pidfd_send_signal (ESRCH: it has exited).
  int Signal(int signal_number) const;
  // True once the process has exited (a zombie counts), within `limit`.
  bool WaitExit(std::chrono::milliseconds limit) const;

 private:
  PinnedProcess(int pid, int fd) : pid_(pid), fd_(fd) {}
  int pid_ = 0;
  int fd_ = -1;  // -1: no pidfd (old kernel)
};

// What a kill of several processes did.
struct KillOutcome {
  std::vector<LeftoverProcess> killed;  // pid and argv (read after the pin, before the kill)
  std::vector<std::string> errors;      // "kill(42, SIGKILL): EPERM", "process 42 did not die ..."
};

// Pins `pid`, asks `confirm(pid)` (after the pin) whether it is still the process meant, and
// if so SIGKILLs it and waits up to `wait` for its death. Nothing happens to a process that
// is gone or no longer confirmed.
KillOutcome KillPinned(int pid, const std::function<bool(int)>& confirm,
                       std::chrono::milliseconds wait = std::chrono::seconds(3));

// Kills `root` and every process below it: the root is pinned, confirmed and stopped
// (SIGSTOP), then its descendants are pinned and stopped round by round (each confirmed as a
// child of a process already stopped, so it cannot be a recycled pid nor escape by forking)
// until a round finds no new one; then every pinned process gets SIGKILL. Never touches a pid
// in `untouchable`. A descendant whose parent exited before the walk reached it has been
// reparented out of the tree and is not found here (a pids cgroup is what holds those).
KillOutcome KillProcessTree(int root, const std::function<bool(int)>& confirm,
                            const std::set<int>& untouchable = {},
                            std::chrono::milliseconds wait = std::chrono::seconds(3));

}  // namespace sandprobe
